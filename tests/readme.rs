//! The documentation stays true: the generated tables in `docs/` (commands, keys, debugger words, lint rules)
//! match the code they describe (`UPDATE_DOCS=1 cargo test --test readme` rewrites them), every link of the
//! README and of `docs/` leads somewhere, and the README stays short.

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

fn updating() -> bool {
    std::env::var_os("UPDATE_DOCS").is_some() || std::env::var_os("UPDATE_README").is_some()
}

/// Replace the text between `<!-- NAME:start -->` and `<!-- NAME:end -->` of `page`, or fail when it differs.
fn check_section(page: &str, name: &str, expected: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(page);
    let readme = std::fs::read_to_string(&path).unwrap();
    let (start, end) = (
        format!("<!-- {name}:start -->\n"),
        format!("<!-- {name}:end -->"),
    );
    let from = readme.find(&start).expect("start marker") + start.len();
    let to = readme.find(&end).expect("end marker");
    if readme[from..to] != *expected {
        if updating() {
            let updated = format!("{}{}{}", &readme[..from], expected, &readme[to..]);
            std::fs::write(&path, updated).unwrap();
        } else {
            panic!("{page}'s {name} table is stale; run `UPDATE_DOCS=1 cargo test --test readme`. Expected:\n{expected}");
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
    check_section("docs/debugger.md", "debug-words", &debug_words_table());
}

#[test]
fn key_table_is_current() {
    check_section("docs/workbench.md", "keys", &key_table());
}

#[test]
fn supported_command_table_is_current() {
    check_section("docs/profiles.md", "commands", &table());
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
    check_section("docs/tools.md", "lint-rules", &lint_rules_table());
}

/// The Markdown pages a user reads: the README and every page of `docs/`.
fn pages() -> Vec<std::path::PathBuf> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages = vec![root.join("README.md")];
    let mut docs: Vec<_> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

/// GitHub's anchor of a heading: lower case, punctuation dropped (but `-` and `_`), spaces as `-`.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a page's headings (a repeated heading gets `-1`, `-2`… as on GitHub).
fn anchors(text: &str) -> Vec<String> {
    use pulldown_cmark::{Event, Parser, Tag, TagEnd};
    let mut out: Vec<String> = Vec::new();
    let mut heading: Option<String> = None;
    for event in Parser::new(text) {
        match event {
            Event::Start(Tag::Heading { .. }) => heading = Some(String::new()),
            Event::Text(t) | Event::Code(t) => {
                if let Some(h) = heading.as_mut() {
                    h.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                let base = anchor(&heading.take().unwrap_or_default());
                let seen = out
                    .iter()
                    .filter(|a| **a == base || a.starts_with(&format!("{base}-")))
                    .count();
                out.push(if seen == 0 {
                    base
                } else {
                    format!("{base}-{seen}")
                });
            }
            _ => {}
        }
    }
    out
}

/// Every link target of a page that is not a web address, with the text of the link for the message.
fn local_links(text: &str) -> Vec<String> {
    use pulldown_cmark::{Event, Parser, Tag};
    Parser::new(text)
        .filter_map(|event| match event {
            Event::Start(Tag::Link { dest_url, .. })
            | Event::Start(Tag::Image { dest_url, .. }) => Some(dest_url.to_string()),
            _ => None,
        })
        .filter(|url| !url.starts_with("http://") && !url.starts_with("https://"))
        .collect()
}

/// The broken links of `page`: a file that does not exist, or an anchor no heading of its target has.
fn broken_links(page: &std::path::Path, text: &str) -> Vec<String> {
    let dir = page.parent().unwrap();
    let mut broken = Vec::new();
    for link in local_links(text) {
        let (file, fragment) = match link.split_once('#') {
            Some((file, fragment)) => (file, Some(fragment)),
            None => (link.as_str(), None),
        };
        let target = if file.is_empty() {
            page.to_path_buf()
        } else {
            dir.join(file)
        };
        if !target.exists() {
            broken.push(format!("{}: {link}: no such file", page.display()));
            continue;
        }
        if let Some(fragment) = fragment {
            let target_text = std::fs::read_to_string(&target).unwrap_or_default();
            if !anchors(&target_text).iter().any(|a| a == fragment) {
                broken.push(format!(
                    "{}: {link}: no heading with that anchor",
                    page.display()
                ));
            }
        }
    }
    broken
}

#[test]
fn every_link_of_the_readme_and_the_docs_leads_somewhere() {
    let mut broken = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        broken.extend(broken_links(&page, &text));
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_link_checker_finds_a_missing_file_and_a_missing_anchor() {
    let page = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md");
    let text = "[a](docs/nope.md) [b](docs/live.md#no-such-heading) [c](docs/live.md) [d](https://example.com/x)";
    let broken = broken_links(&page, text);
    assert_eq!(broken.len(), 2, "{broken:?}");
    assert!(broken[0].ends_with("docs/nope.md: no such file"));
    assert!(broken[1].ends_with("docs/live.md#no-such-heading: no heading with that anchor"));
    assert_eq!(
        anchors("# The `evalbench run` command\n## Keys\n## Keys\n"),
        ["the-evalbench-run-command", "keys", "keys-1"]
    );
}

#[test]
fn the_readme_stays_a_page_a_user_reads_in_five_minutes() {
    let readme =
        std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
            .unwrap();
    let lines = readme.lines().count();
    assert!(
        lines <= 300,
        "README.md has {lines} lines: move reference material to docs/"
    );
    for page in ["docs/debugger.md", "docs/live.md", "docs/profiles.md"] {
        assert!(
            readme.contains(&format!("]({page})")),
            "the README links {page} (one of a newcomer's first questions)"
        );
    }
}
