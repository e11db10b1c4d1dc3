//! The document's sections, their order and their words, written once for every format: a
//! format says only how a heading, a sentence or a table looks ([`Layout`]).

use super::{Document, KeyDiff, LineTime, ScriptLine, TraceRow, WarningRow};

/// How one format lays out the pieces of a document. Texts passed as `words` are the document's
/// own (no text from the run in them); everything else is escaped by the format.
pub(super) trait Layout {
    /// The title and the run's facts (and, in HTML, the page's head).
    fn header(&self, out: &mut String, doc: &Document);
    /// After the last section.
    fn footer(&self, out: &mut String);
    fn heading(&self, out: &mut String, words: &str);
    /// A sentence that ends its section (Markdown: no blank line after, the next heading has one).
    fn sentence(&self, out: &mut String, words: &str);
    /// A sentence followed by more of its section.
    fn paragraph(&self, out: &mut String, words: &str);
    /// `words`, then a block of text from the run (`lang`: its language, for highlighting).
    fn captioned_block(&self, out: &mut String, words: &str, lang: &str, body: &str);
    /// `words`, then one bullet per item of text from the run.
    fn captioned_bullets(&self, out: &mut String, words: &str, items: &[String]);
    fn script(&self, out: &mut String, lines: &[ScriptLine]);
    /// KEYS or ARGV, numbered.
    fn list(&self, out: &mut String, name: &str, items: &[String]);
    fn trace(&self, out: &mut String, rows: &[TraceRow]);
    /// redis.log's messages, after the trace.
    fn logs(&self, out: &mut String, logs: &[String]);
    fn keyspace(&self, out: &mut String, diff: &[KeyDiff]);
    /// The warnings, each with where it was (`line N: `, or empty).
    fn warnings(&self, out: &mut String, warnings: &[(&WarningRow, String)]);
    fn line_times(&self, out: &mut String, times: &[LineTime]);
}

/// The whole document in `layout`.
pub(super) fn write(layout: &impl Layout, doc: &Document) -> String {
    let mut out = String::new();
    layout.header(&mut out, doc);
    script(layout, &mut out, doc);
    keys_and_argv(layout, &mut out, doc);
    reply(layout, &mut out, doc);
    trace(layout, &mut out, doc);
    keyspace_changes(layout, &mut out, doc);
    warnings(layout, &mut out, doc);
    timing(layout, &mut out, doc);
    layout.footer(&mut out);
    out
}

/// The script, in a block that copies as it is (no line numbers inside it).
fn script(layout: &impl Layout, out: &mut String, doc: &Document) {
    layout.heading(out, "Script");
    layout.script(out, &doc.script);
}

fn keys_and_argv(layout: &impl Layout, out: &mut String, doc: &Document) {
    layout.heading(out, "KEYS and ARGV");
    layout.list(out, "KEYS", &doc.keys);
    layout.list(out, "ARGV", &doc.argv);
}

/// The reply under both protocols, the Lua value, the error line and the conversion notes.
fn reply(layout: &impl Layout, out: &mut String, doc: &Document) {
    layout.heading(out, "Reply");
    for (protocol, reply) in [(2, &doc.reply_resp2), (3, &doc.reply_resp3)] {
        let caller = if doc.protocol == protocol {
            " (the caller's)"
        } else {
            ""
        };
        layout.captioned_block(out, &format!("RESP{protocol}{caller}:"), "", reply);
    }
    if let Some(value) = &doc.lua_value {
        layout.captioned_block(out, "The script returned (as Lua):", "lua", value);
    }
    if let Some(line) = doc.error_line {
        layout.paragraph(out, &format!("The error was raised at line {line}."));
    }
    if doc.notes.is_empty() {
        layout.sentence(out, "Conversion notes: none.");
    } else {
        layout.captioned_bullets(out, "Conversion notes:", &doc.notes);
    }
}

/// Every redis.call with its timing and marks, then redis.log.
fn trace(layout: &impl Layout, out: &mut String, doc: &Document) {
    layout.heading(out, &format!("Trace ({})", super::calls(doc.trace.len())));
    if doc.trace.is_empty() {
        layout.sentence(out, "No redis.call was made.");
    } else {
        layout.trace(out, &doc.trace);
    }
    if !doc.logs.is_empty() {
        layout.logs(out, &doc.logs);
    }
}

/// What the run added, changed or removed.
fn keyspace_changes(layout: &impl Layout, out: &mut String, doc: &Document) {
    layout.heading(out, "Keyspace changes");
    match &doc.keyspace {
        None => layout.sentence(out, "Not known (the keyspace is the live server's)."),
        Some(diff) if diff.is_empty() => {
            layout.sentence(out, "No key was added, changed or removed.")
        }
        Some(diff) => layout.keyspace(out, diff),
    }
}

fn warnings(layout: &impl Layout, out: &mut String, doc: &Document) {
    layout.heading(out, "Warnings");
    if doc.warnings.is_empty() {
        layout.sentence(out, "None.");
        return;
    }
    let located: Vec<(&WarningRow, String)> = doc
        .warnings
        .iter()
        .map(|w| {
            let at = if w.line > 0 {
                format!("line {}: ", w.line)
            } else {
                String::new()
            };
            (w, at)
        })
        .collect();
    layout.warnings(out, &located);
}

/// The run's time against the busy threshold and the time per line.
fn timing(layout: &impl Layout, out: &mut String, doc: &Document) {
    layout.heading(out, "Timing");
    layout.sentence(out, &doc.timing_sentence());
    if !doc.line_times.is_empty() {
        layout.line_times(out, &doc.line_times);
    }
}
