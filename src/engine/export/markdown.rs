//! A run as Markdown (CommonMark with GitHub tables). Text from the run goes into code blocks and
//! code spans, or is backslash-escaped: a script writing `<script>` or `|` cannot become HTML or
//! break a table in a renderer.

use super::{Document, KeyDiff};
use std::fmt::Write;

pub fn render(doc: &Document) -> String {
    let mut out = String::new();
    header(&mut out, doc);
    script(&mut out, doc);
    keys_and_argv(&mut out, doc);
    reply(&mut out, doc);
    trace(&mut out, doc);
    keyspace_changes(&mut out, doc);
    warnings(&mut out, doc);
    timing(&mut out, doc);
    out
}

/// The title and the run's facts.
fn header(out: &mut String, doc: &Document) {
    let _ = writeln!(out, "# evalbench run: {}\n", text(&doc.title));
    let _ = writeln!(out, "| | |\n|---|---|");
    let _ = writeln!(out, "| backend | {} |", text(&doc.backend));
    let _ = writeln!(out, "| profile | {} |", text(&doc.profile));
    let _ = writeln!(out, "| outcome | {} |", doc.outcome);
    let _ = writeln!(out, "| caller protocol | RESP{} |", doc.protocol);
    let _ = writeln!(out, "| SHA1 | {} |", code(&doc.sha1));
}

/// The script as it is, to copy (the trace and warnings name lines by number).
fn script(out: &mut String, doc: &Document) {
    let _ = writeln!(out, "\n## Script ({} lines)\n", doc.script.len());
    let lines: Vec<&str> = doc.script.iter().map(|l| l.text.as_str()).collect();
    block(out, "lua", &lines.join("\n"));
}

/// KEYS and ARGV.
fn keys_and_argv(out: &mut String, doc: &Document) {
    out.push_str("\n## KEYS and ARGV\n\n");
    list(out, "KEYS", &doc.keys);
    list(out, "ARGV", &doc.argv);
}

/// The reply under both protocols, the Lua value, the error line and the conversion notes.
fn reply(out: &mut String, doc: &Document) {
    out.push_str("\n## Reply\n\n");
    for (protocol, reply) in [(2, &doc.reply_resp2), (3, &doc.reply_resp3)] {
        let caller = if doc.protocol == protocol {
            " (the caller's)"
        } else {
            ""
        };
        let _ = writeln!(out, "RESP{protocol}{caller}:\n");
        block(out, "", reply);
        out.push('\n');
    }
    if let Some(value) = &doc.lua_value {
        out.push_str("The script returned (as Lua):\n\n");
        block(out, "lua", value);
        out.push('\n');
    }
    if let Some(line) = doc.error_line {
        let _ = writeln!(out, "The error was raised at line {line}.\n");
    }
    if doc.notes.is_empty() {
        out.push_str("Conversion notes: none.\n");
    } else {
        out.push_str("Conversion notes:\n\n");
        for n in &doc.notes {
            let _ = writeln!(out, "- {}", text(n));
        }
    }
}

/// Every redis.call with its timing and marks, then redis.log.
fn trace(out: &mut String, doc: &Document) {
    let _ = writeln!(out, "\n## Trace ({})\n", super::calls(doc.trace.len()));
    if doc.trace.is_empty() {
        out.push_str("No redis.call was made.\n");
    } else {
        out.push_str(
            "| # | line | via | command | reply | µs | |\n|--:|--:|---|---|---|--:|---|\n",
        );
        for r in &doc.trace {
            let marks = [(r.write, "write"), (r.undeclared, "undeclared key")]
                .iter()
                .filter(|(on, _)| *on)
                .map(|(_, m)| *m)
                .collect::<Vec<_>>()
                .join(", ");
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {:.3} | {} |",
                r.seq,
                r.line,
                r.via,
                code(&r.command),
                code(&r.reply),
                r.micros,
                marks
            );
        }
    }
    if !doc.logs.is_empty() {
        out.push_str("\nredis.log:\n\n");
        block(out, "", &doc.logs.join("\n"));
    }
}

/// What the run added, changed or removed.
fn keyspace_changes(out: &mut String, doc: &Document) {
    out.push_str("\n## Keyspace changes\n\n");
    match &doc.keyspace {
        None => out.push_str("Not known (the keyspace is the live server's).\n"),
        Some(diff) if diff.is_empty() => out.push_str("No key was added, changed or removed.\n"),
        Some(diff) => keyspace(out, diff),
    }
}

/// The run's warnings.
fn warnings(out: &mut String, doc: &Document) {
    out.push_str("\n## Warnings\n\n");
    if doc.warnings.is_empty() {
        out.push_str("None.\n");
    }
    for w in &doc.warnings {
        let at = if w.line > 0 {
            format!("line {}: ", w.line)
        } else {
            String::new()
        };
        let _ = writeln!(out, "- **{}** {at}{}", w.kind, text(&w.message));
    }
}

/// The run's timing and the time per line.
fn timing(out: &mut String, doc: &Document) {
    out.push_str("\n## Timing\n\n");
    out.push_str(&doc.timing_sentence());
    out.push('\n');
    if !doc.line_times.is_empty() {
        out.push_str("\nTime in redis.call per line:\n\n| line | calls | µs |\n|--:|--:|--:|\n");
        for t in &doc.line_times {
            let _ = writeln!(out, "| {} | {} | {:.3} |", t.line, t.calls, t.micros);
        }
    }
}

fn list(out: &mut String, name: &str, items: &[String]) {
    if items.is_empty() {
        let _ = writeln!(out, "- {name}: none");
        return;
    }
    let _ = writeln!(out, "- {name}:");
    for (i, item) in items.iter().enumerate() {
        let _ = writeln!(out, "  {}. {}", i + 1, code(item));
    }
}

fn keyspace(out: &mut String, diff: &[KeyDiff]) {
    out.push_str("| key | change | before | after |\n|---|---|---|---|\n");
    for d in diff {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} |",
            code(&d.key),
            d.change.name(),
            d.before.as_deref().map(code).unwrap_or_default(),
            d.after.as_deref().map(code).unwrap_or_default(),
        );
    }
}

/// A fenced code block whose fence is longer than any run of backticks in `body`.
pub(super) fn block(out: &mut String, lang: &str, body: &str) {
    let fence = "`".repeat((longest_backtick_run(body) + 1).max(3));
    let _ = writeln!(out, "{fence}{lang}\n{body}\n{fence}");
}

/// A code span (for a table cell: `|` escaped, which GitHub tables require even in code).
pub(super) fn code(s: &str) -> String {
    if s.is_empty() {
        return "(empty)".into();
    }
    let ticks = "`".repeat(longest_backtick_run(s) + 1);
    let pad = if s.starts_with(['`', ' ']) || s.ends_with(['`', ' ']) {
        " "
    } else {
        ""
    };
    format!("{ticks}{pad}{}{pad}{ticks}", s.replace('|', "\\|"))
}

fn longest_backtick_run(s: &str) -> usize {
    s.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

/// Plain text with Markdown's active characters backslash-escaped (no HTML, links or emphasis).
pub(super) fn text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(
            c,
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '#' | '!' | '&' | '~'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}
