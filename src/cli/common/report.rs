//! The text report of a run (`run`, `debug`, `function call`, the demo) and line coverage.

use crate::engine::debug::DebugSession;
use crate::engine::display::{display_bytes, display_safe, display_text};
use crate::engine::report::RunReport;
use crate::engine::RunRequest;
use serde_json::json;
use std::borrow::Cow;

/// The human report: reply as redis-cli prints it, trace, notes, timing, warnings. Text from the
/// script (replies, arguments, log lines, messages quoting keys) is escaped where it is placed, so
/// a field cannot spill over lines; a last pass over the whole report is the guarantee that no
/// control or bidi character reaches the terminal.
pub fn render_text(report: &RunReport, request: &RunRequest) -> String {
    let out = render_text_fields(report, request);
    display_text(&out).into_owned()
}

fn render_text_fields(report: &RunReport, request: &RunRequest) -> String {
    let mut out = String::new();
    out.push_str(&report.reply_for(report.protocol).to_cli());
    out.push('\n');
    if !report.trace.is_empty() {
        out.push_str(&format!("\ntrace ({} calls):\n", report.trace.len()));
        out.push_str(&format!(
            "{:>4} {:>5}  {:<40} {:<30} {:>9}\n",
            "seq", "line", "command", "reply", "µs"
        ));
        for e in &report.trace {
            let command: Vec<Cow<str>> = e.command.iter().map(|a| display_bytes(a)).collect();
            let undeclared = e.keys.iter().any(|k| !request.keys.contains(k));
            let marks = format!(
                "{}{}",
                if e.write { " W" } else { "" },
                if undeclared { " !undeclared" } else { "" }
            );
            // A live server's trace has no time per call (the script's total is the server's).
            let micros = if report.round_trip_ns.is_some() {
                "-".to_string()
            } else {
                format!("{:.3}", e.elapsed_ns as f64 / 1000.0)
            };
            out.push_str(&format!(
                "{:>4} {:>5}  {:<40} {:<30} {:>9}{}\n",
                e.seq,
                e.line,
                shorten(&command.join(" "), 40),
                shorten(&display_safe(&e.reply.to_cli().replace('\n', " ")), 30),
                micros,
                marks
            ));
        }
    }
    if !report.notes.is_empty() {
        out.push_str("\nconversion notes:\n");
        for n in &report.notes {
            out.push_str(&format!("  - {}\n", display_safe(&n.to_string())));
        }
    }
    if !report.logs.is_empty() {
        out.push_str("\nredis.log:\n");
        for l in &report.logs {
            out.push_str(&format!(
                "  [{}] line {}: {}\n",
                l.level,
                l.line,
                display_bytes(&l.message)
            ));
        }
    }
    out.push_str(&format!(
        "\ntime: {:.3} ms of the {} ms busy threshold ({:.2}%)",
        report.elapsed_ns as f64 / 1e6,
        report.busy_threshold_ms,
        report.threshold_ratio() * 100.0
    ));
    if let Some(w) = report.first_write_ns {
        out.push_str(&format!("; first write at {:.3} ms", w as f64 / 1e6));
    }
    if let Some(rt) = report.round_trip_ns {
        out.push_str(&format!(
            " (server time); round trip {:.3} ms",
            rt as f64 / 1e6
        ));
    }
    out.push('\n');
    if !report.warnings.is_empty() {
        out.push_str("\nwarnings:\n");
        for w in &report.warnings {
            let at = if w.line > 0 {
                format!("line {}: ", w.line)
            } else {
                String::new()
            };
            out.push_str(&format!("  - {at}{}\n", display_safe(&w.message)));
        }
    }
    // Which server the run imitates (last, so the report's other lines keep their places).
    if let Ok(profile) = crate::engine::profile::Profile::by_id(report.profile) {
        out.push_str(&format!(
            "\nprofile: {} (as {} {})\n",
            profile.id,
            profile.product.name(),
            profile.version_tested
        ));
    }
    out
}

fn shorten(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(width - 1).collect();
        t.push('…');
        t
    }
}

/// Executions per line with code, `!` on lines never run (the text report of `debug` and `run`).
pub fn coverage_text(
    session: &DebugSession,
    counts: &std::collections::BTreeMap<u32, u64>,
) -> String {
    let mut text = String::from("\ncoverage (line: executions, ! never run):\n");
    for line in (1..=session.line_count()).filter(|&l| session.has_code(l)) {
        let n = counts.get(&line).copied().unwrap_or(0);
        let mark = if n == 0 { "!" } else { " " };
        text.push_str(&format!(
            "{mark}{line:>4} {n:>8}  {}\n",
            display_safe(session.source_line(line).unwrap_or(""))
        ));
    }
    text
}

/// Coverage as JSON: {"line": executions} for the lines that ran, and the lines with code never run.
pub fn coverage_json(
    session: &DebugSession,
    counts: &std::collections::BTreeMap<u32, u64>,
) -> (serde_json::Value, serde_json::Value) {
    let ran: serde_json::Map<_, _> = counts
        .iter()
        .map(|(l, n)| (l.to_string(), json!(n)))
        .collect();
    let not_run: Vec<u32> = (1..=session.line_count())
        .filter(|&l| session.has_code(l) && !counts.contains_key(&l))
        .collect();
    (json!(ran), json!(not_run))
}
