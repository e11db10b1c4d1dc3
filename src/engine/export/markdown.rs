//! A run as Markdown (CommonMark with GitHub tables). Text from the run goes into code blocks and
//! code spans, or is backslash-escaped: a script writing `<script>` or `|` cannot become HTML or
//! break a table in a renderer.

use super::sections::{self, Layout};
use super::{Document, KeyDiff, LineTime, ScriptLine, TraceRow, WarningRow};
use std::fmt::Write;

pub fn render(doc: &Document) -> String {
    sections::write(&Markdown, doc)
}

/// A heading starts with a blank line, so a section's last sentence needs none after it.
struct Markdown;

impl Layout for Markdown {
    fn header(&self, out: &mut String, doc: &Document) {
        let _ = writeln!(out, "# evalbench run: {}\n", text(&doc.title));
        let _ = writeln!(out, "| | |\n|---|---|");
        let _ = writeln!(out, "| backend | {} |", text(&doc.backend));
        let _ = writeln!(out, "| profile | {} |", text(&doc.profile));
        let _ = writeln!(out, "| outcome | {} |", doc.outcome);
        let _ = writeln!(out, "| caller protocol | RESP{} |", doc.protocol);
        let _ = writeln!(out, "| SHA1 | {} |", code(&doc.sha1));
    }

    fn footer(&self, _out: &mut String) {}

    fn heading(&self, out: &mut String, words: &str) {
        let _ = writeln!(out, "\n## {words}\n");
    }

    fn sentence(&self, out: &mut String, words: &str) {
        let _ = writeln!(out, "{words}");
    }

    fn paragraph(&self, out: &mut String, words: &str) {
        let _ = writeln!(out, "{words}\n");
    }

    fn captioned_block(&self, out: &mut String, words: &str, lang: &str, body: &str) {
        let _ = writeln!(out, "{words}\n");
        block(out, lang, body);
        out.push('\n');
    }

    fn captioned_bullets(&self, out: &mut String, words: &str, items: &[String]) {
        let _ = writeln!(out, "{words}\n");
        for item in items {
            let _ = writeln!(out, "- {}", text(item));
        }
    }

    /// The script as it is, to copy (the trace and warnings name lines by number).
    fn script(&self, out: &mut String, lines: &[ScriptLine]) {
        let text: Vec<&str> = lines.iter().map(|l| l.text.as_str()).collect();
        block(out, "lua", &text.join("\n"));
    }

    fn list(&self, out: &mut String, name: &str, items: &[String]) {
        if items.is_empty() {
            let _ = writeln!(out, "- {name}: none");
            return;
        }
        let _ = writeln!(out, "- {name}:");
        for (i, item) in items.iter().enumerate() {
            let _ = writeln!(out, "  {}. {}", i + 1, code(item));
        }
    }

    fn trace(&self, out: &mut String, rows: &[TraceRow]) {
        out.push_str(
            "| # | line | via | command | reply | µs | |\n|--:|--:|---|---|---|--:|---|\n",
        );
        for r in rows {
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

    fn logs(&self, out: &mut String, logs: &[String]) {
        out.push_str("\nredis.log:\n\n");
        block(out, "", &logs.join("\n"));
    }

    fn keyspace(&self, out: &mut String, diff: &[KeyDiff]) {
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

    fn warnings(&self, out: &mut String, warnings: &[(&WarningRow, String)]) {
        for (w, at) in warnings {
            let _ = writeln!(out, "- **{}** {at}{}", w.kind, text(&w.message));
        }
    }

    fn line_times(&self, out: &mut String, times: &[LineTime]) {
        out.push_str("\nTime in redis.call per line:\n\n| line | calls | µs |\n|--:|--:|--:|\n");
        for t in times {
            let _ = writeln!(out, "| {} | {} | {:.3} |", t.line, t.calls, t.micros);
        }
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
