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
                for name in [
                    "ratatui",
                    "crossterm",
                    "tui_textarea",
                    "tui-textarea",
                    "syntect",
                ] {
                    if text.contains(name) {
                        offenders.push(format!("{} names {name}", path.display()));
                    }
                }
            }
        }
    }
    assert!(offenders.is_empty(), "{offenders:?}");
}

// ---- The engine's layers run one way ----
//
// The server profile and the number parsers are data and helpers at the bottom; the keyspace
// holds values; commands act on the keyspace with the profile in their call context; the Lua
// runtime, the debugger and functions sit above and call commands. An import that points up
// makes the layers one circle, where a change anywhere can break anything.

/// A path a source file names (`use` trees expanded, `super::`/`self::` resolved), as the
/// module segments from the crate root, with the line it is on.
#[derive(Debug, PartialEq)]
struct Named {
    line: usize,
    path: Vec<String>,
}

/// `text` without comments and string literals (so a comment mentioning a module is no import);
/// newlines are kept so lines still count.
fn code_only(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '/' if chars.peek() == Some(&'/') => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                let mut last = ' ';
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                    }
                    if last == '*' && c == '/' {
                        break;
                    }
                    last = c;
                }
            }
            '"' => {
                let mut escaped = false;
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                    }
                    if escaped {
                        escaped = false;
                    } else if c == '\\' {
                        escaped = true;
                    } else if c == '"' {
                        break;
                    }
                }
                out.push_str("\"\"");
            }
            _ => out.push(c),
        }
    }
    out
}

/// `a::{b, c::{d, e}}` as `a::b`, `a::c::d`, `a::c::e` (renames were cut off before).
fn expand_use_tree(tree: &str) -> Vec<String> {
    let tree: String = tree.chars().filter(|c| !c.is_whitespace()).collect();
    let Some(open) = tree.find('{') else {
        return vec![tree];
    };
    let prefix = &tree[..open];
    let body = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let mut items = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in body.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&body[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&body[start..]);
    items
        .into_iter()
        .filter(|item| !item.is_empty())
        .flat_map(expand_use_tree)
        .map(|item| {
            if item == "self" {
                prefix.trim_end_matches(':').to_string()
            } else {
                format!("{prefix}{item}")
            }
        })
        .collect()
}

/// The paths `text` (the file of `module`, e.g. `["engine", "commands", "geo"]`) names through
/// `crate::`, `super::` or `self::`, in `use` items or inline.
fn named_paths(module: &[&str], text: &str) -> Vec<Named> {
    let code = code_only(text);
    let line_of = |at: usize| code[..at].matches('\n').count() + 1;
    let mut raw: Vec<(usize, String)> = Vec::new();
    let mut rest = 0;
    while let Some(found) = code[rest..].find("use ") {
        let at = rest + found;
        rest = at + 4;
        let word_start =
            at == 0 || !code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_');
        if !word_start {
            continue;
        }
        let Some(end) = code[at..].find(';') else {
            break;
        };
        let tree = code[at + 4..at + end].replace(" as ", "@");
        for path in expand_use_tree(&tree) {
            let path = path.split('@').next().unwrap_or("").to_string();
            raw.push((line_of(at), path));
        }
        rest = at + end;
    }
    for anchor in ["crate::", "super::", "self::"] {
        let mut from = 0;
        while let Some(found) = code[from..].find(anchor) {
            let at = from + found;
            from = at + anchor.len();
            let before = code[..at].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let len = code[at..]
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(code.len() - at);
            raw.push((line_of(at), code[at..at + len].to_string()));
        }
    }
    raw.sort();
    raw.dedup();
    raw.into_iter()
        .filter_map(|(line, path)| {
            let mut segments = path.split("::").filter(|s| !s.is_empty());
            let mut resolved: Vec<String> = match segments.next()? {
                "crate" => Vec::new(),
                "self" => module.iter().map(|s| s.to_string()).collect(),
                "super" => module[..module.len().saturating_sub(1)]
                    .iter()
                    .map(|s| s.to_string())
                    .collect(),
                _ => return None,
            };
            for segment in segments {
                match segment {
                    "super" => {
                        resolved.pop();
                    }
                    "self" => {}
                    _ => resolved.push(segment.to_string()),
                }
            }
            Some(Named {
                line,
                path: resolved,
            })
        })
        .collect()
}

/// Every `line: path` in `text` (the file of `module`) that names a module under one of
/// `forbidden` (each a path from the crate root, `engine::lua`).
fn upward_imports(module: &[&str], text: &str, forbidden: &[&str]) -> Vec<String> {
    named_paths(module, text)
        .into_iter()
        .filter(|named| {
            forbidden.iter().any(|f| {
                let f: Vec<&str> = f.split("::").collect();
                named.path.len() >= f.len() && named.path[..f.len()] == f[..]
            })
        })
        .map(|named| format!("{}: {}", named.line, named.path.join("::")))
        .collect()
}

/// The `.rs` files under `src/<dir>` (or the file `src/<dir>.rs`) with their module paths.
fn rust_files(dir: &str) -> Vec<(String, Vec<String>, String)> {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = Vec::new();
    let single = src.join(format!("{dir}.rs"));
    let mut stack = if single.is_file() {
        vec![single]
    } else {
        vec![src.join(dir)]
    };
    while let Some(path) = stack.pop() {
        if path.is_dir() {
            for entry in std::fs::read_dir(&path).unwrap().flatten() {
                stack.push(entry.path());
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path.strip_prefix(&src).unwrap().with_extension("");
            let mut module: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if module.last().is_some_and(|m| m == "mod") {
                module.pop();
            }
            let text = std::fs::read_to_string(&path).unwrap();
            out.push((rel.display().to_string(), module, text));
        }
    }
    out.sort();
    out
}

/// Each file under `src/<dir>` that names a module of `forbidden`, with where.
fn layer_breaches(dir: &str, forbidden: &[&str]) -> Vec<String> {
    rust_files(dir)
        .into_iter()
        .flat_map(|(file, module, text)| {
            let module: Vec<&str> = module.iter().map(String::as_str).collect();
            upward_imports(&module, &text, forbidden)
                .into_iter()
                .map(move |breach| format!("src/{file}.rs:{breach}"))
        })
        .collect()
}

#[test]
fn commands_import_nothing_from_lua_debug_or_function() {
    let breaches = layer_breaches(
        "engine/commands",
        &[
            "engine::lua",
            "engine::debug",
            "engine::function",
            "engine::sandbox",
        ],
    );
    assert!(
        breaches.is_empty(),
        "commands reach up into the script runtime (pass what they need in their Ctx instead):\n{}",
        breaches.join("\n")
    );
}

#[test]
fn keyspace_imports_nothing_from_commands_or_above() {
    let breaches = layer_breaches(
        "engine/keyspace",
        &[
            "engine::commands",
            "engine::lua",
            "engine::debug",
            "engine::function",
            "engine::sandbox",
        ],
    );
    assert!(
        breaches.is_empty(),
        "the keyspace reaches up into the commands (move the helper below both):\n{}",
        breaches.join("\n")
    );
}

#[test]
fn profiles_and_number_parsing_are_the_bottom_layer() {
    let above = [
        "engine::keyspace",
        "engine::commands",
        "engine::lua",
        "engine::debug",
        "engine::function",
        "engine::sandbox",
    ];
    let mut breaches = layer_breaches("engine/profile", &above);
    breaches.extend(layer_breaches("engine/number", &above));
    assert!(
        breaches.is_empty(),
        "profile data or number parsing reaches up (the type belongs in profile.rs, the code that uses it above):\n{}",
        breaches.join("\n")
    );
}

#[test]
fn the_layer_checker_finds_upward_imports_in_every_spelling() {
    let geo = ["engine", "commands", "geo"];
    let forbidden = ["engine::lua", "engine::debug", "engine::function"];
    let sample = "\
//! Uses crate::engine::lua::api in a comment only.
use super::{errors, Ctx};
use crate::engine::lua::api::current_profile;
use crate::engine::{
    keyspace::Value,
    function::{Library, self},
};
use super::super::debug::hook as h;
fn f() {
    let p = crate::engine::debug::probes::run();
    let s = \"crate::engine::lua::vm\";
    let n = super::number::parse_i64(b\"1\");
}
";
    assert_eq!(
        upward_imports(&geo, sample, &forbidden),
        vec![
            "3: engine::lua::api::current_profile",
            "4: engine::function",
            "4: engine::function::Library",
            "8: engine::debug::hook",
            "10: engine::debug::probes::run",
        ]
    );
    // The same text in a module that may look up: nothing to report.
    assert!(upward_imports(
        &["engine", "sandbox"],
        "use super::keyspace::Value;",
        &forbidden
    )
    .is_empty());
    // `self::` and a parent's `mod.rs` resolve from the file's own module.
    assert_eq!(
        upward_imports(
            &["engine", "commands"],
            "use super::lua::raw;\nuse self::geo::x;",
            &forbidden
        ),
        vec!["1: engine::lua::raw"]
    );
}
