//! Export a run as a document to share: the script (a block that copies as it is), KEYS/ARGV, the
//! trace, the reply under RESP2 and RESP3 with the conversion notes, the keyspace diff, warnings,
//! timing against the busy threshold and the time per line. One model ([`Document`]) is built
//! from the run, every foreign text already escaped as the text report escapes it; the Markdown
//! and HTML writers only lay it out (and escape for their own syntax).

pub mod blocks;
mod diff;
pub mod html;
pub mod markdown;
pub mod race;
mod sections;
pub mod session;

use super::budget;
use super::display::{display_bytes, display_safe, display_text};
use super::keyspace::Db;
use super::profile::Profile;
use super::reply::Protocol;
use super::report::{Outcome, RunReport, Via};
pub use diff::{keyspace_diff, KeyChange, KeyDiff};
use std::path::Path;

/// Everything an export shows: the run's report and what the report does not hold.
pub struct RunExport<'a> {
    /// What the document is named after (the script's file name).
    pub title: &'a str,
    pub script: &'a [u8],
    pub keys: &'a [Vec<u8>],
    pub argv: &'a [Vec<u8>],
    pub report: &'a RunReport,
    /// `sandbox` or `live`.
    pub backend: &'a str,
    /// Database 0 before and after the run (None: not known, as on a live server).
    pub keyspace: Option<(&'a Db, &'a Db)>,
    /// Unix ms of the clock after the run: TTLs of both keyspaces are shown relative to it.
    pub now_ms: i64,
}

/// The format of an export file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Markdown,
    Html,
}

impl Format {
    /// The names `--export-format` takes.
    pub const NAMES: &'static str = "md, html";

    pub fn by_name(name: &str) -> Option<Format> {
        match name.to_ascii_lowercase().as_str() {
            "md" | "markdown" => Some(Format::Markdown),
            "html" | "htm" => Some(Format::Html),
            _ => None,
        }
    }

    /// The format a file name's extension asks for.
    pub fn from_path(path: &Path) -> Option<Format> {
        path.extension()
            .and_then(|e| e.to_str())
            .and_then(Format::by_name)
    }

    pub fn extension(self) -> &'static str {
        match self {
            Format::Markdown => "md",
            Format::Html => "html",
        }
    }

    pub fn render(self, run: &RunExport) -> String {
        let doc = Document::new(run);
        match self {
            Format::Markdown => markdown::render(&doc),
            Format::Html => html::render(&doc),
        }
    }
}

/// One line of the script: its number and its text (unsafe characters escaped, tabs kept).
pub struct ScriptLine {
    pub number: usize,
    pub text: String,
}

pub struct TraceRow {
    pub seq: usize,
    pub line: u32,
    /// `call` or `pcall`.
    pub via: &'static str,
    pub command: String,
    /// The reply on one line, as redis-cli prints it.
    pub reply: String,
    pub micros: f64,
    pub write: bool,
    /// A key the command touched is not in KEYS.
    pub undeclared: bool,
}

/// The time `redis.call` took, per script line.
pub struct LineTime {
    pub line: u32,
    pub calls: usize,
    pub micros: f64,
}

pub struct WarningRow {
    pub kind: &'static str,
    pub line: u32,
    pub message: String,
}

/// A run laid out for a document: every text from the script, its arguments, the keyspace or a
/// server is escaped with `display_*` (control and bidi characters made visible).
pub struct Document {
    pub title: String,
    pub backend: String,
    pub profile: String,
    pub sha1: String,
    pub outcome: &'static str,
    /// The protocol of the caller the run was made for.
    pub protocol: u8,
    pub script: Vec<ScriptLine>,
    pub keys: Vec<String>,
    pub argv: Vec<String>,
    pub reply_resp2: String,
    pub reply_resp3: String,
    pub notes: Vec<String>,
    /// The value the script returned, written as Lua.
    pub lua_value: Option<String>,
    pub error_line: Option<u32>,
    pub trace: Vec<TraceRow>,
    pub logs: Vec<String>,
    /// None: the keyspace is not known (live run).
    pub keyspace: Option<Vec<KeyDiff>>,
    pub warnings: Vec<WarningRow>,
    pub elapsed_ms: f64,
    pub busy_threshold_ms: u64,
    pub threshold_percent: f64,
    pub first_write_ms: Option<f64>,
    pub round_trip_ms: Option<f64>,
    pub line_times: Vec<LineTime>,
}

impl Document {
    /// The run's time against the busy threshold, in words (both formats; numbers only, nothing
    /// to escape).
    pub(super) fn timing_sentence(&self) -> String {
        let mut out = format!(
            "{:.3} ms of the {} ms busy threshold ({:.2}%)",
            self.elapsed_ms, self.busy_threshold_ms, self.threshold_percent
        );
        if let Some(w) = self.first_write_ms {
            out.push_str(&format!("; first write at {w:.3} ms"));
        }
        if let Some(rt) = self.round_trip_ms {
            out.push_str(&format!(" (server time); round trip {rt:.3} ms"));
        }
        out.push('.');
        out
    }
}

impl Document {
    pub fn new(run: &RunExport) -> Document {
        let report = run.report;
        let profile = match Profile::by_id(report.profile) {
            Ok(p) => format!("{} (as {} {})", p.id, p.product.name(), p.version_tested),
            Err(_) => report.profile.to_string(),
        };
        Document {
            title: display_safe(run.title).into_owned(),
            backend: display_safe(run.backend).into_owned(),
            profile,
            sha1: report.sha1.clone(),
            outcome: match report.outcome {
                Outcome::Returned => "returned",
                Outcome::Raised => "raised an error",
                Outcome::Refused => "refused before running",
                Outcome::Killed => "stopped at the busy threshold",
                Outcome::Cancelled => "cancelled",
                Outcome::Lost => "sent, then the connection was lost (it may have run)",
            },
            protocol: report.protocol.number(),
            script: script_lines(run.script),
            keys: run
                .keys
                .iter()
                .map(|k| display_bytes(k).into_owned())
                .collect(),
            argv: run
                .argv
                .iter()
                .map(|a| display_bytes(a).into_owned())
                .collect(),
            reply_resp2: reply_text(report, Protocol::Resp2),
            reply_resp3: reply_text(report, Protocol::Resp3),
            notes: report
                .notes
                .iter()
                .map(|n| display_safe(&n.to_string()).into_owned())
                .collect(),
            lua_value: report
                .lua_value
                .as_deref()
                .map(|v| display_text(&clip(v)).into_owned()),
            error_line: report.error_line,
            trace: report
                .trace
                .iter()
                .map(|e| TraceRow {
                    seq: e.seq,
                    line: e.line,
                    via: match e.via {
                        Via::Call => "call",
                        Via::Pcall => "pcall",
                    },
                    command: e
                        .command
                        .iter()
                        .map(|a| display_bytes(a))
                        .collect::<Vec<_>>()
                        .join(" "),
                    reply: display_safe(&e.reply.to_cli().replace('\n', " ")).into_owned(),
                    micros: e.elapsed_ns as f64 / 1000.0,
                    write: e.write,
                    undeclared: e.keys.iter().any(|k| !run.keys.contains(k)),
                })
                .collect(),
            logs: report
                .logs
                .iter()
                .map(|l| {
                    format!(
                        "[{}] line {}: {}",
                        l.level,
                        l.line,
                        display_bytes(&l.message)
                    )
                })
                .collect(),
            keyspace: run
                .keyspace
                .map(|(before, after)| keyspace_diff(before, after, run.now_ms)),
            warnings: report
                .warnings
                .iter()
                .map(|w| WarningRow {
                    kind: w.kind.name(),
                    line: w.line,
                    message: display_safe(&w.message).into_owned(),
                })
                .collect(),
            elapsed_ms: report.elapsed_ns as f64 / 1e6,
            busy_threshold_ms: report.busy_threshold_ms,
            threshold_percent: report.threshold_ratio() * 100.0,
            first_write_ms: report.first_write_ns.map(|ns| ns as f64 / 1e6),
            round_trip_ms: report.round_trip_ns.map(|ns| ns as f64 / 1e6),
            line_times: line_times(report),
        }
    }
}

/// The reply as redis-cli prints it under `protocol`, from a bounded copy: an export shows
/// `EXPORT_VALUE_BYTES` of its strings and `EXPORT_ELEMENTS` of its elements, each cut marked
/// with the true size, so a 256 MiB reply costs what is shown.
fn reply_text(report: &RunReport, protocol: Protocol) -> String {
    let mut allowance = super::reply::Allowance {
        elements: budget::EXPORT_ELEMENTS,
        bytes: budget::EXPORT_VALUE_BYTES,
    };
    let shown = report.reply.bounded_copy(&mut allowance);
    let converted = match (protocol, Profile::by_id(report.profile)) {
        (Protocol::Resp2, Ok(profile)) => shown.to_resp2_with(&|d| profile.double_text(d)),
        _ => shown.for_protocol(protocol),
    };
    display_text(&converted.to_cli()).into_owned()
}

/// The first `EXPORT_VALUE_BYTES` of `text` (on a character boundary), with the size cut.
pub(crate) fn clip(text: &str) -> std::borrow::Cow<'_, str> {
    let limit = budget::EXPORT_VALUE_BYTES;
    if text.len() <= limit {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut keep = limit;
    while !text.is_char_boundary(keep) {
        keep -= 1;
    }
    std::borrow::Cow::Owned(format!(
        "{}… ({} bytes not shown)",
        &text[..keep],
        text.len() - keep
    ))
}

/// The script's lines, numbered from 1 (a CRLF ending is one line end, as Lua reads it).
fn script_lines(script: &[u8]) -> Vec<ScriptLine> {
    let mut lines: Vec<&[u8]> = script.split(|&b| b == b'\n').collect();
    if lines.len() > 1 && lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    lines
        .into_iter()
        .enumerate()
        .map(|(i, line)| {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            let text = match std::str::from_utf8(line) {
                // Tabs are indentation: kept (display_text escapes every other control).
                Ok(text) => display_text(text).into_owned(),
                Err(_) => display_bytes(line).into_owned(),
            };
            ScriptLine {
                number: i + 1,
                text,
            }
        })
        .collect()
}

/// `redis.call` time summed per script line, in line order.
fn line_times(report: &RunReport) -> Vec<LineTime> {
    let mut by_line: std::collections::BTreeMap<u32, (usize, u64)> = Default::default();
    for e in &report.trace {
        let slot = by_line.entry(e.line).or_default();
        slot.0 += 1;
        slot.1 += e.elapsed_ns;
    }
    by_line
        .into_iter()
        .map(|(line, (calls, ns))| LineTime {
            line,
            calls,
            micros: ns as f64 / 1000.0,
        })
        .collect()
}

/// "1 call", "2 calls".
fn calls(n: usize) -> String {
    format!("{n} call{}", if n == 1 { "" } else { "s" })
}
