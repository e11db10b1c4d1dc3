//! The engine knows nothing of the terminal: no file under src/engine names a TUI crate.

#[test]
fn engine_never_names_terminal_crates() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/engine");
    let mut stack = vec![root];
    let mut offenders = Vec::new();
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                for name in ["ratatui", "crossterm", "tui_textarea", "tui-textarea", "syntect"] {
                    if text.contains(name) {
                        offenders.push(format!("{} names {name}", path.display()));
                    }
                }
            }
        }
    }
    assert!(offenders.is_empty(), "{offenders:?}");
}
