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
