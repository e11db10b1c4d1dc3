//! Redis's own Lua debugger (LDB, `SCRIPT DEBUG`) on a live server, spoken as redis-cli --ldb speaks
//! it: `SCRIPT DEBUG YES|SYNC`, then the EVAL, then each debugger line sent as a command. Every answer
//! is an array of log lines; the session's last one ends with `<endsession>`, and the script's reply
//! follows it (then the server closes the connection).
//!
//! No terminal here: the front ends (the `evalbench debug --server` REPL) print the lines, or turn
//! them into events with [`classify`].

use super::cluster::NodeRef;
use super::{describe_error, open_single, to_reply, LiveBackend, LiveError, Target};
use crate::engine::reply::Reply;
use crate::engine::RunRequest;

/// How LDB runs the script.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LdbMode {
    /// `SCRIPT DEBUG YES`: a forked server runs the session; its changes are rolled back and the
    /// server keeps serving.
    Fork,
    /// `SCRIPT DEBUG SYNC`: the server itself runs it, blocked while stopped; changes are kept.
    Sync,
}

impl LdbMode {
    pub fn word(self) -> &'static str {
        match self {
            LdbMode::Fork => "YES",
            LdbMode::Sync => "SYNC",
        }
    }
}

/// What the front end must know before starting: the cost of the fork, or why LDB cannot run.
#[derive(Debug, Clone)]
pub struct Preflight {
    /// INFO memory's `used_memory` (bytes) and `used_memory_human`.
    pub used_memory: Option<u64>,
    pub used_memory_human: Option<String>,
    /// Why a session cannot start here (one line), if it cannot.
    pub refusal: Option<String>,
}

/// The node an LDB session goes to: on a cluster the master of the slot of the script's first key
/// (a keyless script: the node given to connect while it answers, else a master that does); None on
/// a standalone server. A session runs on one connection to one node, so it must be the node that
/// serves the keys. CROSSSLOT and a cluster that is down are refused before this
/// ([`LiveBackend::cross_slot_refusal`], [`LiveBackend::cluster_down_refusal`]).
pub fn session_node(live: &mut LiveBackend, keys: &[Vec<u8>]) -> Option<NodeRef> {
    if !live.server.cluster {
        return None;
    }
    live.follow_topology();
    if keys.is_empty() {
        // Finds whether the node given answers; if not, keyless commands go to a master that does.
        let _ = live.ping_for(keys);
    }
    live.node_for_keys(keys)
}

/// On `y` to a question that named `asked`: the slot map read again, and the node the session
/// would go to now when a failover moved it since (None: still `asked`).
pub fn node_moved(live: &mut LiveBackend, keys: &[Vec<u8>], asked: &NodeRef) -> Option<NodeRef> {
    live.refresh_topology();
    session_node(live, keys).filter(|now| now.addr != asked.addr)
}

/// The target an LDB session opens its connection to: the node on a cluster (named as
/// "host:port (role, slot N)" in every message), else the server given.
pub fn session_target(live: &LiveBackend, node: Option<&NodeRef>) -> Target {
    match node.and_then(|n| Some((n, live.known_node(&n.addr)?))) {
        Some((node, known)) => Target {
            display: node.describe(),
            ..known.target(&live.target)
        },
        None => live.target.clone(),
    }
}

/// Read the memory of the server (on a cluster, of `node`, where the session runs) and check that
/// LDB can run there in `mode`.
pub fn preflight(
    live: &mut LiveBackend,
    mode: LdbMode,
    node: Option<&NodeRef>,
) -> Result<Preflight, LiveError> {
    let info = match node {
        Some(node) => live.cluster_command(
            node.clone(),
            &redis::cmd("INFO").arg("memory").to_owned(),
            &[b"INFO", b"memory"],
        )?,
        None => live.command(&[b"INFO", b"memory"])?,
    };
    let info = match info {
        Reply::Bulk(b) | Reply::Verbatim { text: b, .. } => {
            String::from_utf8_lossy(&b).into_owned()
        }
        _ => String::new(),
    };
    let field = |name: &str| {
        info.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
            .map(|v| v.trim().to_string())
    };
    let (display, replica) = match node {
        Some(node) => (node.describe(), node.role == "replica"),
        None => (live.target.display.clone(), live.server.is_replica()),
    };
    let refusal = (mode == LdbMode::Sync && replica).then(|| format!(
        "refused: {display} is a replica: SCRIPT DEBUG SYNC keeps the script's writes, which a replica refuses; use the primary, or drop --sync for a forked session"
    ));
    Ok(Preflight {
        used_memory: field("used_memory").and_then(|v| v.parse().ok()),
        used_memory_human: field("used_memory_human"),
        refusal,
    })
}

/// One answer of LDB: its log lines, and the script's reply once the session has ended.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LdbAnswer {
    pub lines: Vec<String>,
    /// The script's reply: the session is over (LDB's `<endsession>` line is not in `lines`).
    pub ended: Option<Reply>,
}

/// A running LDB session on its own connection.
pub struct LdbSession {
    con: redis::Connection,
    display: String,
    pub mode: LdbMode,
    ended: bool,
}

impl LdbSession {
    /// Open a connection, switch it to debugging and send the script. The first answer holds LDB's
    /// first stop (LDB stops at the first line). A server that refuses `SCRIPT DEBUG` gives
    /// `LiveError::Server` with its answer.
    pub fn start(
        target: &Target,
        mode: LdbMode,
        request: &RunRequest,
    ) -> Result<(LdbSession, LdbAnswer), LiveError> {
        let con = open_single(target)?;
        let mut session = LdbSession {
            con,
            display: target.display.clone(),
            mode,
            ended: false,
        };
        match session.ask(&[b"SCRIPT", b"DEBUG", mode.word().as_bytes()])? {
            Reply::Status(_) => {}
            other => {
                let text = match other {
                    Reply::Error(e) => e,
                    other => other.to_cli(),
                };
                return Err(LiveError::Server(format!(
                    "refused: {} answered SCRIPT DEBUG {} with: {text}",
                    session.display,
                    mode.word()
                )));
            }
        }
        let eval: &[u8] = if request.read_only {
            b"EVAL_RO"
        } else {
            b"EVAL"
        };
        let numkeys = request.keys.len().to_string();
        let mut args: Vec<&[u8]> = vec![eval, &request.script, numkeys.as_bytes()];
        args.extend(request.keys.iter().map(Vec::as_slice));
        args.extend(request.argv.iter().map(Vec::as_slice));
        let answer = session.exchange(&args)?;
        Ok((session, answer))
    }

    pub fn is_ended(&self) -> bool {
        self.ended
    }

    /// Send one debugger command (already in LDB's words, see [`to_ldb`]).
    pub fn send(&mut self, words: &[Vec<u8>]) -> Result<LdbAnswer, LiveError> {
        if self.ended {
            return Err(LiveError::Lost("the LDB session has ended".into()));
        }
        let args: Vec<&[u8]> = words.iter().map(Vec::as_slice).collect();
        self.exchange(&args)
    }

    /// Send and read LDB's answer; after `<endsession>` the script's reply follows.
    fn exchange(&mut self, args: &[&[u8]]) -> Result<LdbAnswer, LiveError> {
        let reply = self.ask(args)?;
        let mut lines = match reply {
            Reply::Array(items) => items
                .into_iter()
                .map(|item| match item {
                    Reply::Status(s) => s,
                    Reply::Bulk(b) => String::from_utf8_lossy(&b).into_owned(),
                    other => other.to_cli(),
                })
                .collect::<Vec<_>>(),
            // The session did not start (no log array): this is the script's reply.
            other => {
                self.ended = true;
                return Ok(LdbAnswer {
                    lines: Vec::new(),
                    ended: Some(other),
                });
            }
        };
        if lines.last().map(String::as_str) != Some("<endsession>") {
            return Ok(LdbAnswer { lines, ended: None });
        }
        lines.pop();
        self.ended = true;
        let reply = self.receive()?;
        Ok(LdbAnswer {
            lines,
            ended: Some(reply),
        })
    }

    fn ask(&mut self, args: &[&[u8]]) -> Result<Reply, LiveError> {
        let mut cmd = redis::Cmd::new();
        for a in args {
            cmd.arg(*a);
        }
        self.con
            .send_packed_command(&cmd.get_packed_command())
            .map_err(|e| LiveError::Lost(describe_error(&e, &self.display)))?;
        self.receive()
    }

    fn receive(&mut self) -> Result<Reply, LiveError> {
        match self.con.recv_response() {
            Ok(value) => Ok(to_reply(value)),
            Err(e) => match (e.code(), e.detail()) {
                (Some(code), Some(detail)) => Ok(Reply::Error(format!("{code} {detail}"))),
                (Some(code), None) => Ok(Reply::Error(code.to_string())),
                _ => Err(LiveError::Lost(describe_error(&e, &self.display))),
            },
        }
    }
}

/// The words a remote LDB cannot offer, with why (answered in place of sending them).
/// How long a PING after an interrupted session waits for its answer.
pub const PING_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// PING on a fresh connection to `target`, in words: whether the server answers (after a session
/// was ended, only a PING that is answered says the server is free).
pub fn ping_in_words(target: &Target) -> String {
    let mut target = target.clone();
    target.connect_timeout = PING_WAIT;
    target.read_timeout = Some(PING_WAIT);
    use redis::ConnectionLike;
    let answer = open_single(&target).and_then(|mut con| {
        con.req_command(&redis::cmd("PING"))
            .map(to_reply)
            .map_err(|e| LiveError::Lost(describe_error(&e, &target.display)))
    });
    match answer {
        Ok(Reply::Status(s)) if s == "PONG" => {
            format!("PING answered PONG: {} is free", target.display)
        }
        Ok(other) => format!(
            "PING answered {}: {} is still busy",
            other.to_cli().replace('\n', " "),
            target.display
        ),
        Err(e) => format!(
            "PING got no answer within {}s ({e}): {} may still be busy",
            PING_WAIT.as_secs(),
            target.display
        ),
    }
}

pub const NOT_REMOTE: &[(&str, &str)] = &[
    ("back", "LDB cannot step backwards"),
    ("rc", "LDB cannot step backwards"),
    ("goto", "LDB cannot go to an earlier line event"),
    (
        "watch",
        "LDB's eval runs in another frame, so a watch could not read the locals",
    ),
    ("cond", "LDB has no conditional breakpoints"),
    ("bw", "LDB cannot stop before a write to a key"),
    ("o", "LDB has no step over (n is step)"),
    ("over", "LDB has no step over (n is step)"),
    ("finish", "LDB has no step out"),
    (
        "u",
        "LDB has no run to a line (set a breakpoint and continue)",
    ),
    (
        "until",
        "LDB has no run to a line (set a breakpoint and continue)",
    ),
];

/// The one-line answer to a word the remote LDB cannot offer.
pub fn not_remote(word: &str, why: &str) -> String {
    format!("<error> '{word}' is not available on a live server: {why}. Debug in the sandbox (drop --server) for it.")
}

/// The REPL's line in LDB's words: the arguments to send, or the line to answer without sending.
pub fn to_ldb(input: &str) -> Result<Vec<Vec<u8>>, String> {
    let words = split_args(input).map_err(|e| format!("<error> {e}"))?;
    let Some(first) = words.first() else {
        return Ok(Vec::new());
    };
    let word = String::from_utf8_lossy(first).to_ascii_lowercase();
    if let Some((w, why)) = NOT_REMOTE.iter().find(|(w, _)| *w == word) {
        return Err(not_remote(w, why));
    }
    // `b LINE if EXPR`, `b LINE hits N`, `b COMMAND`: the sandbox's additions to `break`.
    if matches!(word.as_str(), "b" | "break") {
        if words.len() > 2 {
            return Err(not_remote(
                "b LINE if|hits",
                "LDB has no conditional breakpoints or hit counts",
            ));
        }
        if let Some(arg) = words.get(1) {
            if !arg.is_empty() && arg.iter().all(u8::is_ascii_alphabetic) {
                return Err(not_remote(
                    "b COMMAND",
                    "LDB cannot stop before a Redis command",
                ));
            }
        }
    }
    Ok(words)
}

/// LDB's `eval` runs in a frame of its own: a name it cannot find is most likely a local of the
/// script. The hint to show after such an answer.
pub fn eval_hint(lines: &[String]) -> Option<&'static str> {
    lines
        .iter()
        .any(|l| l.starts_with("<error> ldb_eval:") && l.contains("nonexistent global variable"))
        .then_some("<hint> LDB's eval runs in a frame of its own and cannot read the script's locals: p NAME shows one (the sandbox's eval reads them: drop --server).")
}

/// A log line of LDB as one of the REPL's event kinds, with the line it names (for `--json`).
pub fn classify(line: &str) -> (&'static str, Option<u32>) {
    if let Some(rest) = line.strip_prefix("* Stopped at ") {
        let n = rest.split(',').next().and_then(|n| n.trim().parse().ok());
        return ("stop", n);
    }
    let tags: &[(&str, &str)] = &[
        ("<value>", "value"),
        ("<retval>", "value"),
        ("<reply>", "value"),
        ("<redis>", "redis"),
        ("<debug>", "debug"),
        ("<error>", "error"),
        ("<hint>", "hint"),
    ];
    if let Some((_, kind)) = tags.iter().find(|(tag, _)| line.starts_with(tag)) {
        return (kind, None);
    }
    // LDB's untagged refusals.
    if line == "No such variable." || line.starts_with("Invalid argument:") {
        return ("error", None);
    }
    // A source line: "-> 3   code", "  #3   code", "->#3   code", "   3   code".
    let head = line.get(..3).unwrap_or("");
    if matches!(head, "-> " | "  #" | "->#" | "   ") {
        let n = line[3..]
            .split_whitespace()
            .next()
            .and_then(|n| n.parse().ok());
        if n.is_some() {
            return ("source", n);
        }
    }
    ("info", None)
}

/// Split a command line into words as redis-cli does (double quotes with backslash escapes, single
/// quotes literal).
pub fn split_args(text: &str) -> Result<Vec<Vec<u8>>, String> {
    let mut out = Vec::new();
    let mut cur: Option<Vec<u8>> = None;
    let mut quote: Option<char> = None;
    let mut chars = text.chars();
    let push = |cur: &mut Option<Vec<u8>>, c: char| {
        let mut b = [0u8; 4];
        cur.get_or_insert_with(Vec::new)
            .extend_from_slice(c.encode_utf8(&mut b).as_bytes());
    };
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"'), '\\') => {
                let n = chars.next().ok_or("a '\\' at the end")?;
                push(&mut cur, n);
            }
            (Some(_), c) => push(&mut cur, c),
            (None, '"' | '\'') => {
                quote = Some(c);
                cur.get_or_insert_with(Vec::new);
            }
            (None, c) if c.is_whitespace() => out.extend(cur.take()),
            (None, c) => push(&mut cur, c),
        }
    }
    if quote.is_some() {
        return Err("an unclosed quote".into());
    }
    out.extend(cur);
    Ok(out)
}
