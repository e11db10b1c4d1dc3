//! The result of one run: reply, conversion notes, trace, timing, warnings. The TUI and the JSON
//! output of `evalbench run` are both views of this one report.

use super::keyspace::json::bytes_to_json;
use super::reply::{Protocol, Reply};
use serde_json::{json, Value as Json};

/// How a `redis.call`/`redis.pcall` was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    Call,
    Pcall,
}

/// One command the script ran.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceEntry {
    /// 1-based position in the run.
    pub seq: usize,
    /// Line of the script that made the call (0 when unknown).
    pub line: u32,
    pub command: Vec<Vec<u8>>,
    /// The reply as the script received it (in the script's protocol).
    pub reply: Reply,
    pub elapsed_ns: u64,
    /// Time since the run started when the call began.
    pub at_ns: u64,
    pub keys: Vec<Vec<u8>>,
    /// The command is a write (whether or not it changed anything).
    pub write: bool,
    pub via: Via,
    /// The database the command ran on.
    pub db: usize,
}

impl TraceEntry {
    pub fn to_json(&self) -> Json {
        json!({
            "seq": self.seq,
            "line": self.line,
            "command": self.command.iter().map(|a| bytes_to_json(a)).collect::<Vec<_>>(),
            "reply": self.reply.to_json(),
            "elapsed_us": micros(self.elapsed_ns),
            "keys": self.keys.iter().map(|k| bytes_to_json(k)).collect::<Vec<_>>(),
            "write": self.write,
            "via": match self.via { Via::Call => "call", Via::Pcall => "pcall" },
        })
    }
}

/// One lossy or surprising step of the reply conversion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    /// Where in the returned value (`[3]`, `[2][1]`, empty for the value itself).
    pub path: String,
    pub text: String,
}

impl std::fmt::Display for Note {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}", self.text)
        } else {
            write!(f, "{}: {}", self.path, self.text)
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WarningKind {
    UndeclaredKey,
    CrossSlot,
    PartialWrite,
    Unkillable,
    WouldCrash,
    Nondeterministic,
    /// The run went past what evalbench records (traced calls, stepping snapshots): a notice
    /// about evalbench, not about the script.
    TraceLimit,
    /// A live run replied otherwise than its dry run in the sandbox.
    DryRunDiffers,
    /// The script asked about server state the sandbox does not have (`redis.acl_check_cmd`):
    /// the sandbox's answer need not be the server's.
    ServerState,
}

impl WarningKind {
    pub fn name(self) -> &'static str {
        match self {
            WarningKind::UndeclaredKey => "undeclared-key",
            WarningKind::CrossSlot => "cross-slot",
            WarningKind::PartialWrite => "partial-write",
            WarningKind::Unkillable => "unkillable",
            WarningKind::WouldCrash => "would-crash",
            WarningKind::Nondeterministic => "nondeterministic",
            WarningKind::TraceLimit => "trace-limit",
            WarningKind::DryRunDiffers => "dry-run-differs",
            WarningKind::ServerState => "server-state",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    pub kind: WarningKind,
    /// Script line it concerns (0: the whole script).
    pub line: u32,
    pub message: String,
}

impl Warning {
    pub fn to_json(&self) -> Json {
        json!({ "kind": self.kind.name(), "line": self.line, "message": self.message })
    }
}

/// A `redis.log` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogLine {
    pub level: u8,
    pub line: u32,
    pub message: Vec<u8>,
}

/// How the run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The script returned (the reply may still be an error it returned).
    Returned,
    /// The script raised an error.
    Raised,
    /// Refused before running (compile error, bad shebang, EVAL_RO with a write script).
    Refused,
    /// Stopped at the busy threshold.
    Killed,
    /// Stopped by the user (cancel).
    Cancelled,
    /// Sent, then the connection was lost before the reply: the script may have run.
    Lost,
}

#[derive(Debug, Clone)]
pub struct RunReport {
    pub sha1: String,
    /// The reply as the script produced it (RESP3 kinds kept); see `reply_for`.
    pub reply: Reply,
    /// The protocol of the caller the report was made for.
    pub protocol: Protocol,
    pub notes: Vec<Note>,
    pub trace: Vec<TraceEntry>,
    pub elapsed_ns: u64,
    /// On a live server: the client's round trip of the EVAL/EVALSHA (with a NOSCRIPT fallback),
    /// network included; `elapsed_ns` is then the server time of the script.
    pub round_trip_ns: Option<u64>,
    /// When the first write happened (after it SCRIPT KILL cannot stop a script on a real server).
    pub first_write_ns: Option<u64>,
    pub busy_threshold_ms: u64,
    pub warnings: Vec<Warning>,
    pub logs: Vec<LogLine>,
    /// With `SandboxConfig::snapshots`: (seq of a write, database 0 right after it).
    pub snapshots: Vec<(usize, super::keyspace::Db)>,
    /// The value the script returned, written as Lua (None when it raised or was refused).
    pub lua_value: Option<String>,
    pub outcome: Outcome,
    /// Line of the error, when the run raised one.
    pub error_line: Option<u32>,
    /// The server profile that produced the run (`redis-7.0`; engine/profile.rs).
    pub profile: &'static str,
}

impl RunReport {
    /// A run refused before the script started: only the error reply.
    pub fn refused(
        sha1: String,
        text: String,
        protocol: Protocol,
        busy_threshold_ms: u64,
    ) -> RunReport {
        RunReport {
            profile: crate::engine::profile::DEFAULT.id,
            sha1,
            reply: Reply::Error(text),
            protocol,
            notes: Vec::new(),
            trace: Vec::new(),
            elapsed_ns: 0,
            round_trip_ns: None,
            first_write_ns: None,
            busy_threshold_ms,
            warnings: Vec::new(),
            logs: Vec::new(),
            snapshots: Vec::new(),
            lua_value: None,
            outcome: Outcome::Refused,
            error_line: None,
        }
    }

    /// What a client speaking `protocol` receives.
    pub fn reply_for(&self, protocol: Protocol) -> Reply {
        match (
            protocol,
            crate::engine::profile::Profile::by_id(self.profile),
        ) {
            (Protocol::Resp2, Ok(profile)) => self.reply.to_resp2_with(&|d| profile.double_text(d)),
            _ => self.reply.for_protocol(protocol),
        }
    }

    pub fn is_error(&self) -> bool {
        self.reply.is_error()
    }

    /// The line of a compile error ("ERR Error compiling script (new function): user_script:3:
    /// ..."), as Redis names the script's chunk; None for any other reply.
    pub fn compile_error_line(&self) -> Option<u32> {
        let Reply::Error(text) = &self.reply else {
            return None;
        };
        let rest = text.strip_prefix("ERR Error compiling script")?;
        let at = rest.find("user_script:")? + "user_script:".len();
        let digits: String = rest[at..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        digits.parse().ok()
    }

    /// Elapsed time as a fraction of the busy threshold.
    pub fn threshold_ratio(&self) -> f64 {
        if self.busy_threshold_ms == 0 {
            0.0
        } else {
            self.elapsed_ns as f64 / (self.busy_threshold_ms as f64 * 1e6)
        }
    }

    /// The JSON object of `evalbench run --json` (without `keyspace`/`repeat`, added by the CLI).
    pub fn to_json(&self) -> Json {
        let mut obj = self.to_json_without_reply();
        obj["reply"] = self.reply_for(self.protocol).to_json();
        obj
    }

    /// Write the JSON of `to_json` plus `extra` fields, pretty-printed (indentation stops at a
    /// fixed depth, so a deeply nested reply stays linear in size), the reply streamed without
    /// an intermediate tree or copy.
    pub fn write_json(
        &self,
        extra: serde_json::Map<String, Json>,
        out: &mut dyn std::io::Write,
    ) -> std::io::Result<()> {
        use serde::ser::SerializeMap;
        use serde::Serializer as _;
        let obj = self.to_json_without_reply();
        let Json::Object(fields) = obj else {
            unreachable!("an object")
        };
        let mut ser = serde_json::Serializer::with_formatter(out, CappedPretty::default());
        let mut map = (&mut ser)
            .serialize_map(Some(fields.len() + extra.len()))
            .map_err(std::io::Error::other)?;
        let reply = self.reply_for_json();
        for (k, v) in fields.iter().chain(extra.iter()) {
            if k == "reply" {
                map.serialize_entry(k, &reply)
            } else {
                map.serialize_entry(k, v)
            }
            .map_err(std::io::Error::other)?;
        }
        map.end().map_err(std::io::Error::other)?;
        Ok(())
    }

    fn reply_for_json(&self) -> super::reply::ReplyJson<'_> {
        self.reply.json_for(self.protocol)
    }

    fn to_json_without_reply(&self) -> Json {
        json!({
            "reply": null,
            "notes": self.notes.iter().map(|n| n.to_string()).collect::<Vec<_>>(),
            "trace": self.trace.iter().map(TraceEntry::to_json).collect::<Vec<_>>(),
            "elapsed_us": micros(self.elapsed_ns),
            "round_trip_us": self.round_trip_ns.map(micros),
            "first_write_us": self.first_write_ns.map(micros),
            "busy_threshold_ms": self.busy_threshold_ms,
            "warnings": self.warnings.iter().map(Warning::to_json).collect::<Vec<_>>(),
            "logs": self.logs.iter().map(|l| json!({"level": l.level, "line": l.line, "message": String::from_utf8_lossy(&l.message)})).collect::<Vec<_>>(),
            "lua_value": self.lua_value,
            "sha1": self.sha1,
            "profile": self.profile,
            "outcome": format!("{:?}", self.outcome).to_lowercase(),
        })
    }
}

/// serde_json's pretty layout (two spaces) down to `MAX_PRETTY_DEPTH`, compact below: indenting
/// every level of a reply nested thousands deep made the output quadratic (511 MB for 24 KB).
#[derive(Default)]
pub struct CappedPretty {
    depth: usize,
    has_value: bool,
}

pub const MAX_PRETTY_DEPTH: usize = 32;

impl CappedPretty {
    fn pretty(&self) -> bool {
        self.depth <= MAX_PRETTY_DEPTH
    }
    fn newline<W: ?Sized + std::io::Write>(&self, w: &mut W, depth: usize) -> std::io::Result<()> {
        w.write_all(b"\n")?;
        for _ in 0..depth {
            w.write_all(b"  ")?;
        }
        Ok(())
    }
    fn begin<W: ?Sized + std::io::Write>(&mut self, w: &mut W, open: &[u8]) -> std::io::Result<()> {
        self.depth += 1;
        self.has_value = false;
        w.write_all(open)
    }
    fn end<W: ?Sized + std::io::Write>(&mut self, w: &mut W, close: &[u8]) -> std::io::Result<()> {
        let pretty = self.pretty();
        self.depth -= 1;
        if self.has_value && pretty {
            self.newline(w, self.depth)?;
        }
        w.write_all(close)
    }
    fn item<W: ?Sized + std::io::Write>(&mut self, w: &mut W, first: bool) -> std::io::Result<()> {
        if !first {
            w.write_all(b",")?;
        }
        if self.pretty() {
            self.newline(w, self.depth)?;
        }
        Ok(())
    }
}

impl serde_json::ser::Formatter for CappedPretty {
    fn begin_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.begin(w, b"[")
    }
    fn end_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.end(w, b"]")
    }
    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.item(w, first)
    }
    fn end_array_value<W: ?Sized + std::io::Write>(&mut self, _w: &mut W) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }
    fn begin_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.begin(w, b"{")
    }
    fn end_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.end(w, b"}")
    }
    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.item(w, first)
    }
    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        w.write_all(if self.pretty() { b": " } else { b":" })
    }
    fn end_object_value<W: ?Sized + std::io::Write>(&mut self, _w: &mut W) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }
    fn write_string_fragment<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        write_terminal_safe_fragment(w, fragment)
    }
}

/// serde_json escapes C0 itself; C1 and bidi controls are written as `\uXXXX` too, so the JSON a
/// terminal shows cannot steer it (the decoded value is the same).
fn write_terminal_safe_fragment<W: ?Sized + std::io::Write>(
    w: &mut W,
    fragment: &str,
) -> std::io::Result<()> {
    let mut rest = fragment;
    while let Some((at, c)) = rest
        .char_indices()
        .find(|&(_, c)| super::display::is_unsafe(c))
    {
        w.write_all(&rest.as_bytes()[..at])?;
        write!(w, "\\u{:04x}", c as u32)?;
        rest = &rest[at + c.len_utf8()..];
    }
    w.write_all(rest.as_bytes())
}

/// Compact JSON on one line, terminal-safe as the report's (`--json` event streams).
pub fn json_line(value: &Json) -> String {
    struct SafeCompact;
    impl serde_json::ser::Formatter for SafeCompact {
        fn write_string_fragment<W: ?Sized + std::io::Write>(
            &mut self,
            w: &mut W,
            fragment: &str,
        ) -> std::io::Result<()> {
            write_terminal_safe_fragment(w, fragment)
        }
    }
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, SafeCompact);
    serde::Serialize::serialize(value, &mut ser).expect("JSON serializes");
    String::from_utf8(out).expect("JSON is UTF-8")
}

/// Nanoseconds as microseconds with three decimals.
pub fn micros(ns: u64) -> Json {
    json!((ns as f64 / 1000.0 * 1000.0).round() / 1000.0)
}
