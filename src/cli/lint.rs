//! `evalbench lint`: the engine's static analysis (engine/analysis) as compiler-style lines or JSON.

use crate::cli::common::{read_script, CliError, EXIT_ERROR_REPLY, EXIT_OK};
use crate::engine::analysis::{lint_with, rules};
use crate::engine::display::display_text;
use clap::Args;
use serde_json::json;
use std::fmt::Write as _;
use std::path::PathBuf;

pub const LINT_HELP: &str = "Each finding is FILE:LINE:COLUMN: SEVERITY[RULE]: what, then the fix. Errors are what every\nRedis refuses (syntax, globals, Lua 5.2+); warnings are risks (keys not in KEYS, writes before\nchecks, unbounded reads, ...). The README's lint table lists every rule.\n\nExit status: 0 no error (and no finding of a --deny rule), 1 otherwise, 2 a file could not be read.\n\nExamples:\n  evalbench lint samples/*.lua\n  evalbench lint --deny all script.lua              (any finding fails, for CI)\n  evalbench lint --deny key-not-from-keys --json script.lua\n  evalbench lint --profile valkey-9.1 script.lua    (commands as Valkey 9.1 has them)";

#[derive(Args, Debug)]
pub struct LintArgs {
    /// Lua scripts to check.
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,
    /// Make findings of RULE fail the run (exit 1); `all` for every rule. Repeatable.
    #[arg(long, value_name = "RULE")]
    pub deny: Vec<String>,
    /// One JSON document: per file its findings with rule, severity, line, column, message, fix.
    #[arg(long)]
    pub json: bool,
    /// Check for this server (its commands): redis-7.0 (default), redis-7.2, redis-7.4, redis-8.0, valkey-8.1, valkey-9.1.
    #[arg(long, value_name = "ID")]
    pub profile: Option<String>,
    /// Print help.
    #[arg(long, action = clap::ArgAction::Help)]
    pub help: Option<bool>,
}

pub fn lint_main(args: &LintArgs) -> Result<(i32, String), CliError> {
    for id in &args.deny {
        if id != "all" && rules::rule(id).is_none() {
            let known: Vec<&str> = rules::RULES.iter().map(|r| r.id).collect();
            return Err(CliError::input(format!(
                "--deny {id}: no such rule; the rules are: all, {}",
                known.join(", ")
            )));
        }
    }
    let denied = |rule: &str| args.deny.iter().any(|d| d == "all" || d == rule);
    let profile = match &args.profile {
        Some(id) => crate::engine::profile::Profile::by_id(id).map_err(CliError::input)?,
        None => crate::engine::profile::DEFAULT,
    };
    let mut failed = false;
    let mut text = String::new();
    let mut files = Vec::new();
    for path in &args.files {
        let script = read_script(path)?;
        let source = String::from_utf8_lossy(&script);
        // The sidecar beside the script (SCRIPT.json) tells its KEYS: KEYS[n] past them, and keys
        // of several slots, are findings too (as in the language server).
        let sidecar =
            crate::engine::formats::read_sidecar(&crate::engine::formats::sidecar_path(path)).ok();
        let findings = lint_with(
            &source,
            profile,
            sidecar.as_ref().map(|s| s.keys.as_slice()),
        );
        for f in &findings {
            if f.severity == rules::Severity::Error || denied(f.rule) {
                failed = true;
            }
            let _ = writeln!(
                text,
                "{}:{}:{}: {}[{}]: {}\n  fix: {}",
                display_text(&path.display().to_string()),
                f.line,
                f.column,
                f.severity.name(),
                f.rule,
                display_text(&f.message),
                f.fix()
            );
        }
        files.push(json!({
            "path": path.display().to_string(),
            "findings": findings.iter().map(|f| json!({
                "rule": f.rule,
                "severity": f.severity.name(),
                "line": f.line,
                "column": f.column,
                "message": f.message,
                "fix": f.fix(),
            })).collect::<Vec<_>>(),
        }));
    }
    let code = if failed { EXIT_ERROR_REPLY } else { EXIT_OK };
    if args.json {
        let mut out = json!({ "files": files }).to_string();
        out.push('\n');
        return Ok((code, out));
    }
    Ok((code, text))
}
