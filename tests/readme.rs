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

/// The key table of the workbench, from the keymap (the help overlay uses the same table).
fn key_table() -> String {
    use evalbench::tui::action::Action;
    use evalbench::tui::keymap::{format_key, Context, Keymap};
    let keymap = Keymap::default();
    let mut out = String::from("| where | keys | action |\n|---|---|---|\n");
    for context in Context::ALL {
        for action in Action::ALL {
            let keys: Vec<String> = keymap
                .bindings
                .iter()
                .filter(|b| b.context == context && b.action == *action)
                .map(|b| format!("`{}`", format_key(&b.key)))
                .collect();
            if !keys.is_empty() {
                out.push_str(&format!(
                    "| {} | {} | {} |\n",
                    context.title(),
                    keys.join(" "),
                    action.description()
                ));
            }
        }
    }
    out.replace("Trace / Reply / Keyspace / Warnings", "Right-hand tabs")
}

/// Replace the text between `<!-- NAME:start -->` and `<!-- NAME:end -->`, or fail when it differs.
fn check_section(name: &str, expected: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md");
    let readme = std::fs::read_to_string(&path).unwrap();
    let (start, end) = (
        format!("<!-- {name}:start -->\n"),
        format!("<!-- {name}:end -->"),
    );
    let from = readme.find(&start).expect("start marker") + start.len();
    let to = readme.find(&end).expect("end marker");
    if readme[from..to] != *expected {
        if std::env::var("UPDATE_README").is_ok() {
            let updated = format!("{}{}{}", &readme[..from], expected, &readme[to..]);
            std::fs::write(&path, updated).unwrap();
        } else {
            panic!("README's {name} table is stale; run `UPDATE_README=1 cargo test --test readme`. Expected:\n{expected}");
        }
    }
}

/// The words of `evalbench debug`, from the REPL's own table.
fn debug_words_table() -> String {
    let mut out = String::from("| words | arguments | meaning |\n|---|---|---|\n");
    for (words, args, meaning) in evalbench::cli::debug::WORDS {
        let words: Vec<String> = words.split(' ').map(|w| format!("`{w}`")).collect();
        let args = if args.is_empty() {
            String::new()
        } else {
            format!("`{args}`")
        };
        out.push_str(&format!("| {} | {args} | {meaning} |\n", words.join(" ")));
    }
    out
}

#[test]
fn debug_words_table_is_current() {
    check_section("debug-words", &debug_words_table());
}

#[test]
fn key_table_is_current() {
    check_section("keys", &key_table());
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

/// The lint rules, from the engine's own list.
fn lint_rules_table() -> String {
    let mut out = String::from("| rule | severity | why | fix |\n|---|---|---|---|\n");
    for r in evalbench::engine::analysis::rules::RULES {
        out.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            r.id,
            r.severity.name(),
            r.explanation,
            r.fix
        ));
    }
    out
}

#[test]
fn lint_rules_table_is_current() {
    check_section("lint-rules", &lint_rules_table());
}
