//! The layers stay apart: the engine knows nothing of the terminal nor of the front ends, the
//! workbench does not reach into the command line, and the command line's subcommand modules share
//! only `src/cli/common`. Each rule's checker is also run on a sample text that breaks it, so a rule
//! that can never fail would show.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every .rs file under `dir`, sorted (stable messages).
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut stack = vec![dir.to_path_buf()];
    let mut files = Vec::new();
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The code of `line` without its `//` comment (a comment may name a path it does not use). A `//`
/// inside a string (a URL) cuts the line short too, which can only hide a use, never invent one.
fn code_of(line: &str) -> &str {
    line.find("//").map_or(line, |i| &line[..i])
}

/// The 1-based lines of `text` whose code names one of `paths` (as a path: `crate::cli` matches
/// `crate::cli::run` and `crate::cli;`, not `crate::client`).
fn lines_naming(text: &str, paths: &[&str]) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let code = code_of(line);
        for path in paths {
            let mut rest = code;
            while let Some(at) = rest.find(path) {
                let before_ok = rest[..at]
                    .chars()
                    .next_back()
                    .is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == ':'));
                let after = &rest[at + path.len()..];
                let after_ok = after
                    .chars()
                    .next()
                    .is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
                if before_ok && after_ok {
                    found.push((i + 1, format!("names {path}: {}", line.trim())));
                    break;
                }
                rest = &rest[at + path.len()..];
            }
        }
    }
    found
}

/// The modules of `crate::cli` a file of the CLI names, with their lines: `crate::cli::NAME`,
/// `crate::cli::{NAME, ...}`, and, at the file's top level, `super::NAME` when `super` is `cli`
/// (`depth` 0: src/cli/NAME.rs or src/cli/NAME/mod.rs) or `super::super::NAME` (`depth` 1).
fn cli_modules_named(text: &str, depth: usize) -> Vec<(usize, String)> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut found = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let code = code_of(line);
        let mut prefixes = vec!["crate::cli::".to_string(), "evalbench::cli::".to_string()];
        // Only a top-level `use` (not indented): inside `mod tests`, `super` is the file itself.
        if code.starts_with("use ") || code.starts_with("pub use ") {
            prefixes.push(format!("use {}", "super::".repeat(depth + 1)));
        }
        for prefix in &prefixes {
            let mut rest = code;
            while let Some(at) = rest.find(prefix.as_str()) {
                let after = &rest[at + prefix.len()..];
                if let Some(group) = after.strip_prefix('{') {
                    // `crate::cli::{a, b::c}`: each first segment of the group (one line).
                    let group = group.split('}').next().unwrap_or("");
                    for item in group.split(',') {
                        let name = ident(item.trim());
                        if !name.is_empty() {
                            found.push((i + 1, name));
                        }
                    }
                } else {
                    let name = ident(after);
                    if !name.is_empty() {
                        found.push((i + 1, name));
                    }
                }
                rest = after;
            }
        }
    }
    found
}

/// What a file of src/cli may name of `crate::cli`: a subcommand module its own module and
/// `common`; a file of `common` only `common`. None for the root (src/cli/mod.rs), which names all.
fn cli_file_rule(relative: &Path) -> Option<(String, usize)> {
    let parts: Vec<&str> = relative.iter().filter_map(|p| p.to_str()).collect();
    match parts.as_slice() {
        ["mod.rs"] => None,
        [file] => Some((file.trim_end_matches(".rs").to_string(), 0)),
        [module, "mod.rs"] => Some((module.to_string(), 0)),
        [module, _] => Some((module.to_string(), 1)),
        [module, ..] => Some((module.to_string(), parts.len() - 2)),
        [] => None,
    }
}

/// The names of `crate::cli` that `text`, a file of module `own` at `depth`, must not use.
fn cli_violations(own: &str, depth: usize, text: &str) -> Vec<(usize, String)> {
    cli_modules_named(text, depth)
        .into_iter()
        .filter(|(_, name)| name != own && name != "common")
        .map(|(line, name)| {
            let what = if own == "common" {
                "the shared module names"
            } else {
                "a subcommand module names"
            };
            (line, format!("{what} crate::cli::{name}"))
        })
        .collect()
}

fn offenders_under(dir: &str, check: impl Fn(&Path, &str) -> Vec<(usize, String)>) -> Vec<String> {
    let base = root().join(dir);
    let mut offenders = Vec::new();
    for path in rust_files(&base) {
        let text = std::fs::read_to_string(&path).unwrap();
        let relative = path.strip_prefix(&base).unwrap();
        for (line, what) in check(relative, &text) {
            offenders.push(format!("src/{dir}/{}:{line}: {what}", relative.display()));
        }
    }
    offenders
}

#[test]
fn engine_never_names_terminal_crates() {
    let offenders = offenders_under("engine", |_, text| {
        lines_naming(
            text,
            &[
                "ratatui",
                "crossterm",
                "tui_textarea",
                "tui-textarea",
                "syntect",
            ],
        )
    });
    assert!(offenders.is_empty(), "{offenders:#?}");
}

/// The engine (and the file formats it reads for everyone, engine/formats) is below both front ends.
const ENGINE_MUST_NOT_NAME: &[&str] = &["crate::cli", "crate::tui"];

#[test]
fn engine_never_uses_a_front_end() {
    let offenders = offenders_under("engine", |_, text| lines_naming(text, ENGINE_MUST_NOT_NAME));
    assert!(offenders.is_empty(), "{offenders:#?}");
}

#[test]
fn workbench_never_uses_the_command_line() {
    let offenders = offenders_under("tui", |_, text| lines_naming(text, &["crate::cli"]));
    assert!(offenders.is_empty(), "{offenders:#?}");
}

#[test]
fn subcommand_modules_share_only_common() {
    let offenders = offenders_under("cli", |relative, text| match cli_file_rule(relative) {
        Some((own, depth)) => cli_violations(&own, depth, text),
        None => Vec::new(),
    });
    assert!(offenders.is_empty(), "{offenders:#?}");
    // The rule looked at the subcommands it is about.
    let cli = root().join("cli");
    for module in ["common", "run", "debug", "test", "lint", "function"] {
        assert!(
            cli.join(format!("{module}.rs")).is_file() || cli.join(module).is_dir(),
            "src/cli/{module} is gone: update this rule"
        );
    }
}

// The checkers on texts that break each rule.

#[test]
fn engine_rule_fails_on_a_front_end_import() {
    let text = "use crate::engine::reply::Reply;\n// crate::cli in a comment is fine\nuse crate::cli::common::CliError;\nfn f() { crate::tui::run(); }\nuse crate::client::X;\n";
    let found = lines_naming(text, ENGINE_MUST_NOT_NAME);
    let lines: Vec<usize> = found.iter().map(|(l, _)| *l).collect();
    assert_eq!(lines, vec![3, 4], "{found:?}");
}

#[test]
fn workbench_rule_fails_on_a_cli_import() {
    let text = "use crate::engine::formats::Sidecar;\nuse crate::cli::debug::split_words;\n";
    assert_eq!(
        lines_naming(text, &["crate::cli"]),
        vec![(
            2,
            "names crate::cli: use crate::cli::debug::split_words;".to_string()
        )]
    );
}

#[test]
fn subcommand_rule_fails_on_another_subcommand() {
    let text = "use crate::cli::common::{CliError, EXIT_OK};\nuse crate::cli::{debug::coverage_text, common::read_script};\nfn f() { crate::cli::run::live::run_live(); }\nuse super::lint::LintArgs;\nmod tests {\n    use super::*;\n}\n";
    let found = cli_violations("test", 0, text);
    assert_eq!(
        found,
        vec![
            (2, "a subcommand module names crate::cli::debug".to_string()),
            (3, "a subcommand module names crate::cli::run".to_string()),
            (4, "a subcommand module names crate::cli::lint".to_string()),
        ]
    );
    // A file inside a subcommand's folder reaches its own module through `super`.
    assert!(cli_violations("debug", 1, "use super::{next_command, DebugArgs};\n").is_empty());
    assert_eq!(
        cli_violations("debug", 1, "use super::super::run::RunArgs;\n"),
        vec![(1, "a subcommand module names crate::cli::run".to_string())]
    );
    // The root names them all.
    assert_eq!(cli_file_rule(Path::new("mod.rs")), None);
    assert_eq!(
        cli_file_rule(Path::new("debug/live.rs")),
        Some(("debug".to_string(), 1))
    );
}

#[test]
fn shared_module_rule_fails_on_a_subcommand() {
    let text = "use super::CliError;\nuse crate::cli::run::RunArgs;\n";
    assert_eq!(
        cli_violations("common", 1, text),
        vec![(2, "the shared module names crate::cli::run".to_string())]
    );
    assert_eq!(
        cli_violations("common", 0, "use super::function::FunctionArgs;\n"),
        vec![(
            1,
            "the shared module names crate::cli::function".to_string()
        )]
    );
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
fn modules_under(dir: &str) -> Vec<(String, Vec<String>, String)> {
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
    modules_under(dir)
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

/// The script runtime's own layers: the Lua runtime at the bottom, functions and the static
/// analysis on it, the debugger above those, the sandbox on top running them all. The runtime
/// reaches the debugger only through the hooks table the debugger fills in (lua/debug_hooks.rs);
/// the debugger is armed by the sandbox and reads the request as data (engine/request.rs).
#[test]
fn the_script_runtime_runs_one_way() {
    let mut breaches = layer_breaches(
        "engine/lua",
        &[
            "engine::debug",
            "engine::function",
            "engine::analysis",
            "engine::sandbox",
        ],
    );
    breaches.extend(layer_breaches(
        "engine/function",
        &["engine::debug", "engine::sandbox"],
    ));
    breaches.extend(layer_breaches(
        "engine/analysis",
        &["engine::debug", "engine::function", "engine::sandbox"],
    ));
    breaches.extend(layer_breaches("engine/debug", &["engine::sandbox"]));
    assert!(
        breaches.is_empty(),
        "the script runtime reaches up (a hook in lua/debug_hooks.rs, or a data type moved below both):\n{}",
        breaches.join("\n")
    );
    // The check on a runtime file that names the debugger and the sandbox.
    let api = ["engine", "lua", "api"];
    let sample = "use crate::engine::debug::hook;\nuse super::debug_hooks::before_call;\nfn f() { let r = crate::engine::sandbox::RunRequest::new(\"\"); }\n";
    assert_eq!(
        upward_imports(&api, sample, &["engine::debug", "engine::sandbox"]),
        vec![
            "1: engine::debug::hook",
            "3: engine::sandbox::RunRequest::new"
        ]
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

/// Where `text` names an issue number (the word, then a number, maybe after `#`): a reader of the code has
/// only the repository, so a comment says why in the code's own words instead.
fn issue_number_at(text: &str) -> Option<usize> {
    let lower = text.to_lowercase();
    lower.match_indices("issue").find_map(|(at, word)| {
        let rest = lower[at + word.len()..].trim_start_matches('s');
        let rest = rest.strip_prefix(' ').unwrap_or(rest);
        let rest = rest.strip_prefix('#').unwrap_or(rest);
        rest.starts_with(|c: char| c.is_ascii_digit()).then_some(at)
    })
}

#[test]
fn no_comment_or_name_points_at_an_issue_number() {
    // The samples are put together at run time, so this file holds no such reference itself.
    let word = "issue";
    assert_eq!(
        issue_number_at(&format!("// I{} 12: the same run", &word[1..])),
        Some(3)
    );
    assert_eq!(issue_number_at(&format!("({word}s 11 and 13)")), Some(1));
    assert_eq!(issue_number_at(&format!("see {word} #9")), Some(4));
    assert_eq!(issue_number_at("an issue of the server, 3 times"), None);
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut offenders = Vec::new();
    let mut stack = vec![root.join("src"), root.join("tests")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                for (n, line) in text.lines().enumerate() {
                    if path.ends_with("architecture.rs") && line.contains("issue_number_at(\"") {
                        continue;
                    }
                    if issue_number_at(line).is_some() {
                        offenders.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
                    }
                }
            }
        }
    }
    assert!(offenders.is_empty(), "{}", offenders.join("\n"));
}

// ---- Tests leave nothing behind ----

/// The 1-based lines of `text` (a test's source) that build a path in the system's temporary
/// folder by hand: such a folder outlives the test (a panic skips any clean-up at the end), and
/// thousands piled up in /tmp. `tempfile::TempDir`, held while the test runs, removes itself.
fn hand_made_temp_paths(text: &str) -> Vec<usize> {
    code_only(text)
        .lines()
        .enumerate()
        .filter(|(_, line)| {
            line.contains("env::temp_dir")
                || (line.contains("use std::env") && line.contains("temp_dir"))
        })
        .map(|(n, _)| n + 1)
        .collect()
}

#[test]
fn tests_make_scratch_folders_that_remove_themselves() {
    let sample = "fn scratch() -> PathBuf {\n    // not std::env::temp_dir() in a comment\n    let d = std::env::temp_dir().join(\"x\");\n    d\n}\nuse std::env::{self, temp_dir};\nlet t = tempfile::tempdir().unwrap();\n";
    assert_eq!(hand_made_temp_paths(sample), vec![3, 6]);
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut offenders = Vec::new();
    for dir in ["tests", "benches"] {
        for path in rust_files(&manifest.join(dir)) {
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            for n in hand_made_temp_paths(&text) {
                offenders.push(format!(
                    "{}:{n}: a path in the temporary folder made by hand; use tempfile::TempDir",
                    path.display()
                ));
            }
        }
    }
    assert!(offenders.is_empty(), "{}", offenders.join("\n"));
}
