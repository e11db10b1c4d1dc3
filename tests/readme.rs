//! The README's supported-command table must match the registry. `UPDATE_README=1 cargo test
//! --test readme` rewrites it.

use evalbench::engine::commands::implemented_by_family;

fn table() -> String {
    let mut out = String::from("| family | commands |\n|---|---|\n");
    for (family, names) in implemented_by_family() {
        if names.is_empty() {
            continue;
        }
        let upper: Vec<String> = names
            .iter()
            .map(|n| n.to_uppercase().replace('|', " "))
            .collect();
        out.push_str(&format!("| {family} | {} |\n", upper.join(" ")));
    }
    out
}

#[test]
fn supported_command_table_is_current() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md");
    let readme = std::fs::read_to_string(&path).unwrap();
    let (start, end) = ("<!-- commands:start -->\n", "<!-- commands:end -->");
    let from = readme.find(start).expect("commands:start marker") + start.len();
    let to = readme.find(end).expect("commands:end marker");
    let expected = table();
    if readme[from..to] != expected {
        if std::env::var("UPDATE_README").is_ok() {
            let updated = format!("{}{}{}", &readme[..from], expected, &readme[to..]);
            std::fs::write(&path, updated).unwrap();
        } else {
            panic!("README's command table is stale; run `UPDATE_README=1 cargo test --test readme`. Expected:\n{expected}");
        }
    }
}
