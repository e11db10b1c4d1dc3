//! `evalbench test`: run the cases of test files (`NAME.test.toml` beside `NAME.lua`) and report
//! as text, JSON or JUnit XML, with exit statuses for CI. The engine does the work
//! (engine/testing); this is the front end.

use crate::cli::common::{
    read_script, CliError, ServerArgs, EXIT_BACKEND, EXIT_BAD_INPUT, EXIT_ERROR_REPLY, EXIT_OK,
};
use crate::engine::display::display_text;
use crate::engine::input::{self, read_bounded_text};
use crate::engine::live::LiveBackend;
use crate::engine::testing::live::{run_case_live, LiveCase};
use crate::engine::testing::{
    self, parse_test_file, update::update_text, CaseResult, ScriptCoverage, TestFile,
};
use clap::Args;
use serde_json::{json, Value as Json};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

pub const TEST_HELP: &str = "A test file NAME.test.toml sits beside NAME.lua and holds cases:\n\n  [[case]]\n  name = \"allows the first call\"\n  keys = [\"ratelimit:alice\"]\n  argv = [\"10\", \"60\"]\n  seed = { \"ratelimit:alice\" = { type = \"string\", value = \"3\", ttl_ms = 60000 } }\n  reply = { array = [{ int = 1 }, { int = 6 }, { int = 60 }] }\n  keyspace = { \"ratelimit:alice\" = { type = \"string\", value = \"4\", ttl_ms = 60000 } }\n\nA case with [[case.step]] tables runs the script once per step (or `repeat` times) on the\nsame keyspace, the clock moved by `advance_ms` before each; every case starts at clock_ms\n(default 2026-01-01T00:00:00Z). Expectations:\n  reply           the --json form of the reply; { nil = true } for nil\n  reply_match     a glob on the reply as redis-cli prints it ('\"tok-*' for a bulk string)\n  error           the exact error text; error_match: a glob on it\n  keyspace        the keys after the run (exactly these; keyspace_match = \"partial\": at least);\n                  ttl_ms exact, [low, high] or \"any\"; no ttl_ms: the key must not expire\n  absent          keys that must not exist\n  warnings        the warning kinds the run gives (undeclared-key, partial-write, ...)\nThe README's `evalbench test` section lists every field.\n\nLive server (--server URL, or -h/-p/-a/--user as redis-cli): each case also runs on the server, on\nthe scratch database --db N, which must be empty (every key in it is removed after each case); the\nreport is the server's. A case that writes (a seed, or its script wrote in the sandbox) is sent only\nwith --yes, never to a replica; the others go as EVAL_RO. Cases that move the clock run in the sandbox only;\na function library's cases FCALL the server's own library when it holds the file's code (nothing is loaded). TTLs pass on a server: expect ttl_ms as a range.\n\nExit status: 0 every case passed, 1 a case failed, 2 a test file or script could not be read (or\nno case ran: every case skipped, or --filter matching none), 3 the server failed (or the scratch\ndatabase was not empty). A case on the server cannot leave the scratch database: SELECT of another,\nMOVE, SWAPDB, COPY ... DB, MIGRATE and FLUSHALL are refused unsent, and the case fails.\n\nExamples:\n  evalbench test                                  (every *.test.toml under the current folder)\n  evalbench test samples/rate_limiter.test.toml\n  evalbench test --junit report.xml samples/\n  evalbench test --update samples/unlock.test.toml (write what failing cases gave, for review)\n  evalbench test --coverage samples/unlock.test.toml (which lines the cases never run)\n  evalbench test --server redis://127.0.0.1:6379 --db 15 --yes samples/";

#[derive(Args, Debug)]
pub struct TestArgs {
    /// Test files (*.test.toml) or folders to search for them (default: the current folder).
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// One JSON document with every file's cases and differences.
    #[arg(long)]
    pub json: bool,
    /// Also write a JUnit XML report to FILE (for CI test tabs).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Write what each failing case gave as its expectation, in place (comments kept), for review.
    #[arg(long)]
    pub update: bool,
    /// Only cases whose name contains TEXT.
    #[arg(long, value_name = "TEXT")]
    pub filter: Option<String>,
    /// Count the lines of each script its cases run; list them, marking lines never run with `!`.
    #[arg(long)]
    pub coverage: bool,
    /// Run the cases on a live server too (--server URL, or -h/-p/-a/--user as redis-cli), each on
    /// the empty scratch database --db N; the report is the server's.
    #[command(flatten)]
    pub server: ServerArgs,
    /// With a server: the scratch database the cases run in. It must be empty; every key in it is
    /// removed after each case.
    #[arg(long = "db", value_name = "N")]
    pub scratch_db: Option<i64>,
    /// With a server: let cases that write (a seed, or a script that wrote in the sandbox) run on
    /// the scratch database. Without it they are skipped, and the others are sent as EVAL_RO.
    #[arg(long)]
    pub yes: bool,
    /// Print help.
    #[arg(long, action = clap::ArgAction::Help)]
    pub help: Option<bool>,
}

/// A test file's outcome: its cases, or why it could not run.
struct FileOutcome {
    path: PathBuf,
    script: Option<PathBuf>,
    error: Option<String>,
    cases: Vec<CaseResult>,
    /// Cases whose expectations `--update` rewrote.
    updated: Vec<String>,
    /// `--coverage`: the script's lines over these cases, or why they were not counted.
    coverage: Option<Result<ScriptCoverage, String>>,
    /// `--server`: the cases not sent to the server, and why.
    skipped: Vec<(String, String)>,
    /// `--server`: the server failed (connection lost, scratch db not empty): exit 3.
    backend_failed: bool,
}

/// Folders are searched this deep, and no further than this many files, so a mistaken `/` ends.
const MAX_DEPTH: usize = 16;
const MAX_FILES: usize = 10_000;

pub fn test_main(args: &TestArgs) -> Result<(i32, String), CliError> {
    let roots = if args.paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        args.paths.clone()
    };
    let mut files = Vec::new();
    for root in &roots {
        if root.is_dir() {
            let before = files.len();
            find_test_files(root, 0, &mut files);
            if files.len() == before {
                return Err(CliError::input(format!(
                    "no *.test.toml under {}: write NAME.test.toml beside NAME.lua (see evalbench test --help)",
                    root.display()
                )));
            }
        } else {
            files.push(root.clone());
        }
    }
    files.truncate(MAX_FILES);
    let mut live = connect(args)?;
    let outcomes: Vec<FileOutcome> = files
        .iter()
        .map(|p| run_file(p, args, live.as_mut()))
        .collect::<Result<_, _>>()?;
    let (passed, failed, errors) = totals(&outcomes);
    // A run that tested nothing must not pass (a CI job would go green on zero cases).
    let skipped: usize = outcomes.iter().map(|o| o.skipped.len()).sum();
    let empty = (passed + failed == 0 && errors == 0).then(|| {
        if skipped > 0 {
            format!(
                "no case ran on the server: {skipped} {} not run there (why is listed above); nothing was tested",
                if skipped == 1 { "was" } else { "were" }
            )
        } else {
            match &args.filter {
                Some(f) => format!("no case matched --filter {f:?}; nothing was tested"),
                None => "no case ran; nothing was tested".to_string(),
            }
        }
    });
    let code = if outcomes.iter().any(|o| o.backend_failed) {
        EXIT_BACKEND
    } else if errors > 0 || empty.is_some() {
        EXIT_BAD_INPUT
    } else if failed > 0 {
        EXIT_ERROR_REPLY
    } else {
        EXIT_OK
    };
    if let Some(message) = &empty {
        eprintln!("evalbench: {}", display_text(message));
    }
    if let Some(junit) = &args.junit {
        crate::engine::output::write_file(junit, junit_xml(&outcomes).as_bytes())
            .map_err(|e| CliError::input(format!("--junit: {e}")))?;
    }
    let server = live.as_ref().map(|l| server_label(l, args));
    let out = if args.json {
        let mut json = json_report(&outcomes, passed, failed, errors);
        json["server"] = json!(server);
        if let Some(message) = &empty {
            json["error"] = json!(message);
        }
        let mut text = json.to_string();
        text.push('\n');
        text
    } else {
        let mut text = server.map_or(String::new(), |s| format!("server: {s}\n"));
        text.push_str(&text_report(&outcomes, passed, failed, errors));
        text
    };
    Ok((code, out))
}

fn server_label(live: &LiveBackend, args: &TestArgs) -> String {
    format!(
        "{} {} {}, scratch db {}{}",
        live.server.product,
        live.server.version,
        live.target.display,
        args.scratch_db.unwrap_or_default(),
        if args.yes {
            ", writes allowed (--yes)"
        } else {
            ""
        }
    )
}

/// The live server of `--server` (or -h/-p/...), on its scratch database; None for the sandbox.
fn connect(args: &TestArgs) -> Result<Option<LiveBackend>, CliError> {
    let Some(mut spec) = crate::cli::common::target::server_spec(&args.server, false)? else {
        if args.yes || args.scratch_db.is_some() {
            return Err(CliError::input(
                "--yes and --db go with a live server: give --server URL (or -h/-p) too",
            ));
        }
        return Ok(None);
    };
    if args.coverage {
        return Err(CliError::input(
            "--coverage counts lines in the sandbox; a live server cannot (drop --coverage or --server)",
        ));
    }
    if args.update {
        return Err(CliError::input(
            "--update writes what the sandbox gives; drop --server to update a test file",
        ));
    }
    let db = match (args.scratch_db, args.server.db) {
        (Some(a), Some(b)) if a != b => {
            return Err(CliError::input(format!(
                "--db {a} and -n {b} name different databases: give one"
            )))
        }
        (Some(n), _) | (None, Some(n)) => n,
        (None, None) => {
            return Err(CliError::input(
                "a live server runs the cases on a scratch database: give --db N, an empty database no one else uses (every key in it is removed after each case)",
            ))
        }
    };
    spec.db = Some(db);
    let target = spec.resolve().map_err(|e| CliError::input(e.to_string()))?;
    let live = LiveBackend::connect(target).map_err(|e| CliError {
        code: EXIT_BACKEND,
        message: e.to_string(),
    })?;
    if live.server.cluster {
        return Err(CliError::input(
            "a cluster has no numbered databases: `evalbench test --server` needs a standalone server (or a replica's primary)",
        ));
    }
    crate::cli::common::interrupt::watch(&live);
    Ok(Some(live))
}

fn find_test_files(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    if depth > MAX_DEPTH || out.len() >= MAX_FILES {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let name = entry.file_name().to_string_lossy().into_owned();
        // Symbolic links are not followed: a link loop must not hang the search.
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            if !name.starts_with('.') && name != "target" && name != "node_modules" {
                find_test_files(&entry.path(), depth + 1, out);
            }
        } else if kind.is_file() && name.ends_with(".test.toml") {
            let path = entry.path();
            out.push(
                path.strip_prefix("./")
                    .map(Path::to_path_buf)
                    .unwrap_or(path),
            );
        }
    }
}

/// A file's outcome; Err only when Ctrl-C interrupted a case on the server (after its kill and the
/// scratch db's cleanup).
fn run_file(
    path: &Path,
    args: &TestArgs,
    mut live: Option<&mut LiveBackend>,
) -> Result<FileOutcome, CliError> {
    let mut outcome = FileOutcome {
        path: path.to_path_buf(),
        script: None,
        error: None,
        cases: Vec::new(),
        updated: Vec::new(),
        coverage: None,
        skipped: Vec::new(),
        backend_failed: false,
    };
    let text = match read_bounded_text(path, &input::SETTINGS) {
        Ok(t) => t,
        Err(e) => {
            outcome.error = Some(e.to_string());
            return Ok(outcome);
        }
    };
    let file: TestFile = match parse_test_file(path, &text) {
        Ok(f) => f,
        Err(e) => {
            outcome.error = Some(e.to_string());
            return Ok(outcome);
        }
    };
    outcome.script = Some(file.script_path.clone());
    let script = match read_script(&file.script_path) {
        Ok(s) => s,
        Err(e) => {
            outcome.error = Some(format!(
                "{}: the script under test: {} (name it with script = \"...\" at the top of the file)",
                path.display(),
                e.message
            ));
            return Ok(outcome);
        }
    };
    let mut coverage = match (args.coverage, &file.function) {
        (false, _) => None,
        (true, Some(_)) => Some(Err(
            "not counted: the cases FCALL a function library, which the line counter does not follow yet".to_string(),
        )),
        (true, None) => Some(ScriptCoverage::new(&script).map_err(|e| {
            format!("not counted: the script does not compile: {e}")
        })),
    };
    for case in &file.cases {
        if args
            .filter
            .as_ref()
            .is_some_and(|f| !case.name.contains(f.as_str()))
        {
            continue;
        }
        let sandbox = testing::run_case_counting(
            &script,
            file.function.as_deref(),
            case,
            None,
            coverage.as_mut().and_then(|c| c.as_mut().ok()),
        );
        // With a server the sandbox run is the dry run; the result reported is the server's.
        let Some(live) = live.as_deref_mut() else {
            outcome.cases.push(sandbox);
            continue;
        };
        // The whole case (seed, runs, read-back, cleanup) is on the server: a Ctrl-C sends SCRIPT
        // KILL, the case ends and its scratch db is cleared before evalbench exits.
        let ran = crate::cli::common::interrupt::on_server(&[], || {
            run_case_live(
                live,
                &script,
                file.function.as_deref(),
                case,
                &sandbox,
                args.yes,
            )
        })?;
        match ran {
            Ok(LiveCase::Ran(result)) => outcome.cases.push(result),
            Ok(LiveCase::Skipped(why)) => {
                outcome.skipped.push((case.name.clone(), why));
                outcome.cases.push(sandbox);
            }
            Err(e) => {
                outcome.error = Some(format!("on the server, case {:?}: {e}", case.name));
                outcome.backend_failed = true;
                return Ok(outcome);
            }
        }
    }
    outcome.coverage = coverage;
    if args.update && outcome.cases.iter().any(|c| !c.passed()) {
        match update_text(&text, &outcome.cases) {
            Some(new_text) if new_text != text => {
                if let Err(e) = write_replacing(path, &text, &new_text) {
                    outcome.error = Some(format!("--update: {e}"));
                    return Ok(outcome);
                }
                outcome.updated = outcome
                    .cases
                    .iter()
                    .filter(|c| !c.passed() && !c.observed.is_empty())
                    .map(|c| c.name.clone())
                    .collect();
            }
            _ => {}
        }
    }
    Ok(outcome)
}

/// Atomically (`engine::output`): an interruption never leaves half a test file, a symlinked
/// test file stays a link and the file keeps its mode. `read` is the text the cases came from:
/// a file edited while they ran (an editor's save) is not replaced by an update of the old text.
fn write_replacing(path: &Path, read: &str, text: &str) -> Result<(), String> {
    match read_bounded_text(path, &input::SETTINGS) {
        Ok(now) if now == read => {}
        Ok(_) => {
            return Err(format!(
                "{} changed while its cases ran: nothing written (run --update again)",
                path.display()
            ))
        }
        Err(e) => return Err(e.to_string()),
    }
    crate::engine::output::write_file(path, text.as_bytes()).map_err(|e| e.to_string())
}

fn status(outcome: &FileOutcome, case: &CaseResult) -> &'static str {
    if outcome.skipped.iter().any(|(name, _)| *name == case.name) {
        "skip"
    } else if case.passed() {
        "ok"
    } else if outcome.updated.contains(&case.name) {
        "updated"
    } else {
        "FAIL"
    }
}

fn totals(outcomes: &[FileOutcome]) -> (usize, usize, usize) {
    let mut counts = (0, 0, 0);
    for o in outcomes {
        if o.error.is_some() {
            counts.2 += 1;
        }
        for c in &o.cases {
            match status(o, c) {
                "FAIL" => counts.1 += 1,
                "skip" => {}
                _ => counts.0 += 1,
            }
        }
    }
    counts
}

fn text_report(outcomes: &[FileOutcome], passed: usize, failed: usize, errors: usize) -> String {
    let mut out = String::new();
    for o in outcomes {
        let _ = writeln!(out, "{}", display_text(&o.path.display().to_string()));
        if let Some(e) = &o.error {
            let _ = writeln!(out, "  error   {}", display_text(e));
            continue;
        }
        let width = o
            .cases
            .iter()
            .map(|c| c.name.chars().count())
            .max()
            .unwrap_or(0);
        for c in &o.cases {
            let runs = if c.runs == 1 {
                "1 run".to_string()
            } else {
                format!("{} runs", c.runs)
            };
            let _ = writeln!(
                out,
                "  {:<8}{:<width$}  {runs}, {:.1} ms",
                status(o, c),
                display_text(&c.name),
                c.elapsed_ns as f64 / 1e6,
            );
            if let Some((_, why)) = o.skipped.iter().find(|(name, _)| *name == c.name) {
                let _ = writeln!(
                    out,
                    "          not run on the server: {}",
                    display_text(why)
                );
            }
            if status(o, c) == "FAIL" {
                for f in &c.failures {
                    let _ = writeln!(
                        out,
                        "          {}:{}: {}{}",
                        display_text(&o.path.display().to_string()),
                        f.line,
                        step_label(f.step),
                        display_text(&f.message)
                    );
                }
            }
        }
        if let Some(coverage) = &o.coverage {
            out.push_str(&coverage_text(o.script.as_deref(), coverage));
        }
    }
    let cases = passed + failed;
    let _ = write!(
        out,
        "{cases} case{}: {passed} passed, {failed} failed",
        if cases == 1 { "" } else { "s" }
    );
    if errors > 0 {
        let _ = write!(
            out,
            ", {errors} file{} could not run",
            if errors == 1 { "" } else { "s" }
        );
    }
    let skipped: usize = outcomes.iter().map(|o| o.skipped.len()).sum();
    if skipped > 0 {
        let _ = write!(out, ", {skipped} not run on the server");
    }
    let updated: usize = outcomes.iter().map(|o| o.updated.len()).sum();
    if updated > 0 {
        let _ = write!(out, ", {updated} updated (review the diff)");
    }
    out.push('\n');
    out
}

/// `--coverage` as text: a summary line, then every line with code, its executions over the cases
/// and `!` in front of lines never run (the layout of `run --coverage`).
fn coverage_text(script: Option<&Path>, coverage: &Result<ScriptCoverage, String>) -> String {
    let name = script.map_or(String::new(), |s| {
        display_text(&s.display().to_string()).to_string()
    });
    let coverage = match coverage {
        Ok(c) => c,
        Err(why) => return format!("  coverage of {name}: {}\n", display_text(why)),
    };
    let (run, total) = coverage.summary();
    let percent = (run * 100).checked_div(total).unwrap_or(100);
    let mut text =
        format!("  coverage of {name}: {run} of {total} lines run ({percent}%), ! never run\n");
    for line in coverage.lines() {
        let mark = if line.count == 0 { "!" } else { " " };
        let _ = writeln!(
            text,
            "  {mark}{:>4} {:>8}  {}",
            line.line,
            line.count,
            display_text(&line.source)
        );
    }
    text
}

fn step_label(step: usize) -> String {
    if step == 0 {
        String::new()
    } else {
        format!("step {step}: ")
    }
}

fn json_report(outcomes: &[FileOutcome], passed: usize, failed: usize, errors: usize) -> Json {
    json!({
        "passed": passed,
        "failed": failed,
        "file_errors": errors,
        "files": outcomes.iter().map(|o| json!({
            "path": o.path.display().to_string(),
            "script": o.script.as_ref().map(|s| s.display().to_string()),
            "error": o.error,
            "updated": o.updated,
            "skipped": o.skipped.iter().map(|(name, why)| json!({"name": name, "why": why})).collect::<Vec<_>>(),
            "cases": o.cases.iter().map(CaseResult::to_json).collect::<Vec<_>>(),
            "coverage": match &o.coverage {
                None => Json::Null,
                Some(Ok(c)) => c.to_json(),
                Some(Err(why)) => json!({ "error": why }),
            },
        })).collect::<Vec<_>>(),
    })
}

/// JUnit XML as CI servers read it: a suite per file, a case per case, `<failure>` with the
/// differences, `<error>` for a file that could not run.
fn junit_xml(outcomes: &[FileOutcome]) -> String {
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let (passed, failed, errors) = totals(outcomes);
    let _ = writeln!(
        out,
        "<testsuites name=\"evalbench test\" tests=\"{}\" failures=\"{failed}\" errors=\"{errors}\">",
        passed + failed + errors
    );
    for o in outcomes {
        let suite = xml_escape(&o.path.display().to_string());
        let failures = o.cases.iter().filter(|c| !c.passed()).count();
        let time: u64 = o.cases.iter().map(|c| c.elapsed_ns).sum();
        let _ = writeln!(
            out,
            "  <testsuite name=\"{suite}\" tests=\"{}\" failures=\"{failures}\" errors=\"{}\" time=\"{:.6}\">",
            o.cases.len().max(usize::from(o.error.is_some())),
            usize::from(o.error.is_some()),
            time as f64 / 1e9
        );
        if let Some(e) = &o.error {
            let _ = writeln!(
                out,
                "    <testcase classname=\"{suite}\" name=\"(test file)\"><error message=\"{}\"/></testcase>",
                xml_escape(e)
            );
        }
        for c in &o.cases {
            let _ = write!(
                out,
                "    <testcase classname=\"{suite}\" name=\"{}\" time=\"{:.6}\"",
                xml_escape(&c.name),
                c.elapsed_ns as f64 / 1e9
            );
            if let Some((_, why)) = o.skipped.iter().find(|(name, _)| *name == c.name) {
                let _ = writeln!(
                    out,
                    "><skipped message=\"not run on the server: {}\"/></testcase>",
                    xml_escape(why)
                );
                continue;
            }
            if c.passed() {
                out.push_str("/>\n");
                continue;
            }
            let first = c.failures.first().map(|f| f.message.as_str()).unwrap_or("");
            let all: Vec<String> = c
                .failures
                .iter()
                .map(|f| format!("line {}: {}{}", f.line, step_label(f.step), f.message))
                .collect();
            let _ = writeln!(
                out,
                ">\n      <failure message=\"{}\">{}</failure>\n    </testcase>",
                xml_escape(first),
                xml_escape(&all.join("\n"))
            );
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

/// Escape for XML text and attributes; characters XML 1.0 cannot hold become `\u{..}` text.
fn xml_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' | '\t' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_update_never_replaces_a_file_edited_while_its_cases_ran() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.test.toml");
        std::fs::write(&path, "# edited meanwhile\n").unwrap();
        assert_eq!(
            write_replacing(&path, "# as read\n", "# updated\n"),
            Err(format!(
                "{} changed while its cases ran: nothing written (run --update again)",
                path.display()
            ))
        );
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "# edited meanwhile\n"
        );
        assert_eq!(
            write_replacing(&path, "# edited meanwhile\n", "# updated\n"),
            Ok(())
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "# updated\n");
    }
}
