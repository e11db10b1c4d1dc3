//! Print the traced copy evalbench sends for a script: `cargo run --example instrumented FILE`.
fn main() {
    let path = std::env::args().nth(1).expect("usage: instrumented FILE");
    let script = std::fs::read(&path).expect("read the script");
    match evalbench::engine::live::instrument::instrument(&script) {
        Some(copy) => print!("{}", String::from_utf8_lossy(&copy.text)),
        None => eprintln!("{path}: invalid shebang: the script is sent as is"),
    }
}
