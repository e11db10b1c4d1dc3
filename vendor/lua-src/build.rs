// Cargo fingerprints this crate by the Rust it compiles; the C sources it hands to mlua-sys's
// build script count too, so an edit to them rebuilds the Lua library.
fn main() {
    println!("cargo:rerun-if-changed=lua-5.1.5");
}
