//! A run as one standalone HTML page: inline CSS, no script, no external asset; every text from the
//! run is HTML-escaped (after the display escaping of control characters the model did).

use super::sections::{self, Layout};
use super::{Document, KeyDiff, LineTime, ScriptLine, TraceRow, WarningRow};
use std::fmt::Write;

pub(super) const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:72rem;margin:2rem auto;padding:0 1rem;color:#1d1f21;background:#fff}
h1{font-size:1.5rem}h2{font-size:1.2rem;border-bottom:1px solid #ddd;padding-bottom:.2rem;margin-top:2rem}
pre,code{font-family:ui-monospace,monospace;font-size:.9rem}
pre{background:#f6f8fa;padding:.6rem;overflow-x:auto;white-space:pre}
table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:.2rem .5rem;text-align:left;vertical-align:top}
td.n{text-align:right;color:#888;user-select:none}
pre.script{counter-reset:line}pre.script .l{counter-increment:line}
pre.script .l::before{content:counter(line);display:inline-block;width:3ch;margin-right:1.5ch;text-align:right;color:#6a737d;user-select:none}
.write{color:#b35900}.undeclared{color:#c00}.warn{color:#b35900}
.added{background:#e6ffec}.removed{background:#ffebe9}.changed{background:#fff8c5}";

pub fn render(doc: &Document) -> String {
    sections::write(&Html, doc)
}

struct Html;

impl Layout for Html {
    fn header(&self, out: &mut String, doc: &Document) {
        let _ = write!(
            out,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>evalbench run: {}</title>\n<style>\n{STYLE}\n</style>\n</head>\n<body>\n",
            esc(&doc.title)
        );
        let _ = writeln!(out, "<h1>evalbench run: {}</h1>", esc(&doc.title));
        out.push_str("<table>\n");
        for (name, value) in [
            ("backend", esc(&doc.backend)),
            ("profile", esc(&doc.profile)),
            ("outcome", esc(doc.outcome)),
            ("caller protocol", format!("RESP{}", doc.protocol)),
            ("SHA1", format!("<code>{}</code>", esc(&doc.sha1))),
        ] {
            let _ = writeln!(out, "<tr><th>{name}</th><td>{value}</td></tr>");
        }
        out.push_str("</table>\n");
    }

    fn footer(&self, out: &mut String) {
        out.push_str("</body>\n</html>\n");
    }

    fn heading(&self, out: &mut String, words: &str) {
        let _ = writeln!(out, "<h2>{words}</h2>");
    }

    fn sentence(&self, out: &mut String, words: &str) {
        let _ = writeln!(out, "<p>{words}</p>");
    }

    fn paragraph(&self, out: &mut String, words: &str) {
        self.sentence(out, words);
    }

    fn captioned_block(&self, out: &mut String, words: &str, _lang: &str, body: &str) {
        let _ = writeln!(out, "<p>{words}</p>\n<pre>{}</pre>", esc(body));
    }

    fn captioned_bullets(&self, out: &mut String, words: &str, items: &[String]) {
        let _ = writeln!(out, "<p>{words}</p>\n<ul>");
        for item in items {
            let _ = writeln!(out, "<li>{}</li>", esc(item));
        }
        out.push_str("</ul>\n");
    }

    /// The script in one block; its line numbers are drawn by the style sheet (CSS counters),
    /// so copying the block copies the script alone.
    fn script(&self, out: &mut String, lines: &[ScriptLine]) {
        out.push_str("<pre class=\"script\"><code>");
        for (i, l) in lines.iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            let _ = write!(out, "<span class=\"l\">{}</span>", esc(&l.text));
        }
        out.push_str("</code></pre>\n");
    }

    fn list(&self, out: &mut String, name: &str, items: &[String]) {
        if items.is_empty() {
            let _ = writeln!(out, "<p>{name}: none</p>");
            return;
        }
        let _ = writeln!(out, "<p>{name}:</p>\n<ol>");
        for item in items {
            let _ = writeln!(out, "<li><code>{}</code></li>", esc(item));
        }
        out.push_str("</ol>\n");
    }

    fn trace(&self, out: &mut String, rows: &[TraceRow]) {
        out.push_str("<table>\n<tr><th>#</th><th>line</th><th>via</th><th>command</th><th>reply</th><th>µs</th><th></th></tr>\n");
        for r in rows {
            let mut marks = String::new();
            if r.write {
                marks.push_str("<span class=\"write\">write</span> ");
            }
            if r.undeclared {
                marks.push_str("<span class=\"undeclared\">undeclared key</span>");
            }
            let _ = writeln!(
                out,
                "<tr><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td><td><code>{}</code></td><td><code>{}</code></td><td class=\"n\">{:.3}</td><td>{}</td></tr>",
                r.seq,
                r.line,
                r.via,
                esc(&r.command),
                esc(&r.reply),
                r.micros,
                marks.trim_end()
            );
        }
        out.push_str("</table>\n");
    }

    fn logs(&self, out: &mut String, logs: &[String]) {
        let _ = writeln!(
            out,
            "<p>redis.log:</p>\n<pre>{}</pre>",
            esc(&logs.join("\n"))
        );
    }

    fn keyspace(&self, out: &mut String, diff: &[KeyDiff]) {
        out.push_str(
            "<table>\n<tr><th>key</th><th>change</th><th>before</th><th>after</th></tr>\n",
        );
        for d in diff {
            let cell = |v: &Option<String>| {
                v.as_deref()
                    .map(|v| format!("<code>{}</code>", esc(v)))
                    .unwrap_or_default()
            };
            let _ = writeln!(
                out,
                "<tr class=\"{0}\"><td><code>{1}</code></td><td>{0}</td><td>{2}</td><td>{3}</td></tr>",
                d.change.name(),
                esc(&d.key),
                cell(&d.before),
                cell(&d.after)
            );
        }
        out.push_str("</table>\n");
    }

    fn warnings(&self, out: &mut String, warnings: &[(&WarningRow, String)]) {
        out.push_str("<ul>\n");
        for (w, at) in warnings {
            let _ = writeln!(
                out,
                "<li><strong class=\"warn\">{}</strong> {at}{}</li>",
                w.kind,
                esc(&w.message)
            );
        }
        out.push_str("</ul>\n");
    }

    fn line_times(&self, out: &mut String, times: &[LineTime]) {
        out.push_str("<p>Time in redis.call per line:</p>\n<table>\n<tr><th>line</th><th>calls</th><th>µs</th></tr>\n");
        for t in times {
            let _ = writeln!(
                out,
                "<tr><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{:.3}</td></tr>",
                t.line, t.calls, t.micros
            );
        }
        out.push_str("</table>\n");
    }
}

/// HTML-escape text for element content and quoted attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}
