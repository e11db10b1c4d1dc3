//! The live keyspace inspector's thread. It has its own connection to the server, so browsing never
//! waits for a script running on the engine thread, and it answers the workbench's requests with
//! events. A scan runs one SCAN call at a time between requests: a new filter supersedes it at once,
//! and it pauses once it has listed the keys the workbench asked for (memory stays bounded on a
//! million-key database).

use crate::engine::keyspace::Db;
use crate::engine::live::copy::{read_key, CopyLimits};
use crate::engine::live::inspect::{self, KeyScan, KeySummary, Page, PageCursor};
use crate::engine::live::{instrument, LiveBackend, LiveError, Target};
use crate::engine::reply::Reply;
use crate::engine::script::sha1_hex;
use std::sync::mpsc::{channel, Receiver, Sender, TryRecvError};

/// The COUNT hint of each SCAN call: about a millisecond of server work.
pub const SCAN_COUNT: usize = inspect::FIRST_PAGE_SCAN_COUNT;

#[derive(Debug, Clone, PartialEq)]
pub enum InspectRequest {
    /// Start a scan (superseding the current one) and list up to `want` keys.
    Scan {
        generation: u64,
        pattern: Option<Vec<u8>>,
        kind: Option<String>,
        want: usize,
    },
    /// Let the scan `generation` list up to `want` keys.
    More { generation: u64, want: usize },
    /// TYPE, TTL, size, encoding and memory of these keys.
    Summaries { keys: Vec<Vec<u8>> },
    /// One page of a key's value; with `pattern`, of a search inside it (HSCAN/SSCAN/ZSCAN MATCH).
    Page {
        key: Vec<u8>,
        kind: String,
        cursor: PageCursor,
        count: usize,
        pattern: Option<Vec<u8>>,
    },
    /// A key by its exact name (no scan).
    Open { key: Vec<u8> },
    /// Copy keys into the sandbox (bounded, type-aware reads); TTLs count from `now_ms`.
    Copy { keys: Vec<Vec<u8>>, now_ms: i64 },
    /// Is the script (and its traced copy) in the server's script cache?
    ScriptExists { script: Vec<u8> },
    /// SCRIPT LOAD the script and its traced copy.
    ScriptLoad { script: Vec<u8> },
    /// Is the server there? (the status bar's connection state)
    Ping,
    /// INFO highlights, the slow log and the busy state (the Server overview).
    Overview,
    /// SCRIPT KILL, after the user agreed (the Server overview).
    ScriptKill,
    /// One function library's code by its exact name (tui/server_library.rs).
    LibraryCode { name: String },
    /// A line of the `redis>` prompt (tui/command_prompt.rs): judged by the server's own
    /// command table and role, sent when it is a read or `agreed` (the user said y).
    Command { args: Vec<Vec<u8>>, agreed: bool },
}

/// Whether the server's script cache holds the user's script (what an application's EVALSHA
/// needs) and the traced copy evalbench sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cached {
    pub script: bool,
    pub traced: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub enum InspectEvent {
    /// Keys found by one SCAN call of scan `generation`, and where the scan is.
    Keys {
        generation: u64,
        keys: Vec<Vec<u8>>,
        /// Keys returned so far, SCAN calls made, DBSIZE at the start.
        returned: u64,
        calls: usize,
        dbsize: Option<u64>,
        done: bool,
    },
    Summaries(Vec<(Vec<u8>, Option<KeySummary>)>),
    Page {
        key: Vec<u8>,
        cursor: PageCursor,
        page: Page,
        /// The search it belongs to (None: the plain value).
        pattern: Option<Vec<u8>>,
    },
    Opened {
        key: Vec<u8>,
        summary: Option<KeySummary>,
    },
    /// Copied keys (missing ones are absent from `db`) and the keys refused, with the reason.
    Copied {
        db: Db,
        copied: Vec<Vec<u8>>,
        missing: Vec<Vec<u8>>,
        refused: Vec<String>,
    },
    ScriptCache {
        sha: String,
        cached: Cached,
    },
    ScriptLoaded {
        sha: String,
    },
    /// The connection dropped and was opened again (a restart, a proxy): what was read of the
    /// server before may be stale.
    Reconnected,
    /// The answer to a Ping: None when the server answered, else what went wrong.
    Health {
        error: Option<String>,
        /// On a cluster that answers: the nodes that did not, each with why.
        down: Vec<String>,
        /// On a cluster that says `cluster_state:fail`: why, as its nodes see it.
        cluster_down: Option<String>,
    },
    /// On a cluster, after a Ping: the role of the node given to connect as the slot map read
    /// now says ("master" or "slave"): a failover demotes or promotes it.
    Role(String),
    /// The Server overview as read now.
    Overview(Box<crate::engine::live::overview::Overview>),
    /// SCRIPT KILL's answer in words.
    Killed(String),
    /// A library's code (None: no such library on the server).
    LibraryCode {
        name: String,
        code: Option<Vec<u8>>,
    },
    /// A prompt line's answer (the reply bounded as a trace's).
    Command(crate::engine::command_line::Answer),
    /// A prompt line that asks before it is sent: why.
    CommandAsks {
        args: Vec<Vec<u8>>,
        why: String,
    },
    /// A request failed; `what` names it ("scan", "page of 'k'", ...).
    Failed {
        what: String,
        message: String,
    },
}

struct ActiveScan {
    generation: u64,
    scan: KeyScan,
    want: usize,
}

/// What the thread does, without the thread (the test harness drives it synchronously).
pub struct InspectorCore {
    live: LiveBackend,
    scan: Option<ActiveScan>,
    /// The connection's reconnects already told (`InspectEvent::Reconnected`).
    reconnects: u64,
}

impl InspectorCore {
    pub fn new(live: LiveBackend) -> InspectorCore {
        let reconnects = live.reconnects;
        InspectorCore {
            live,
            scan: None,
            reconnects,
        }
    }

    /// A scan still wants keys: call `step`.
    pub fn busy(&self) -> bool {
        self.scan
            .as_ref()
            .is_some_and(|s| !s.scan.done() && s.scan.progress().0 < s.want as u64)
    }

    /// One SCAN call of the current scan, when it wants more keys.
    pub fn step(&mut self) -> Option<InspectEvent> {
        if !self.busy() {
            return None;
        }
        let active = self.scan.as_mut()?;
        let generation = active.generation;
        Some(match active.scan.step(&mut self.live) {
            Ok(keys) => {
                let (returned, dbsize) = active.scan.progress();
                InspectEvent::Keys {
                    generation,
                    keys,
                    returned,
                    calls: active.scan.scanned_calls(),
                    dbsize,
                    done: active.scan.done(),
                }
            }
            Err(e) => {
                self.scan = None;
                failed("scan", e)
            }
        })
    }

    pub fn handle(&mut self, request: InspectRequest) -> Vec<InspectEvent> {
        match request {
            InspectRequest::Scan {
                generation,
                pattern,
                kind,
                want,
            } => {
                self.scan = Some(ActiveScan {
                    generation,
                    scan: KeyScan::new(pattern.as_deref(), kind.as_deref(), SCAN_COUNT),
                    want,
                });
                Vec::new()
            }
            InspectRequest::More { generation, want } => {
                if let Some(active) = self.scan.as_mut().filter(|s| s.generation == generation) {
                    active.want = active.want.max(want);
                }
                Vec::new()
            }
            InspectRequest::Summaries { keys } => {
                vec![match inspect::summarize_many(&mut self.live, &keys) {
                    Ok(summaries) => {
                        InspectEvent::Summaries(keys.into_iter().zip(summaries).collect())
                    }
                    Err(e) => failed("key summaries", e),
                }]
            }
            InspectRequest::Page {
                key,
                kind,
                cursor,
                count,
                pattern,
            } => {
                let page = match &pattern {
                    Some(p) => inspect::page_matching(
                        &mut self.live,
                        &key,
                        &kind,
                        cursor.clone(),
                        count,
                        p,
                    ),
                    None => inspect::page(&mut self.live, &key, &kind, cursor.clone(), count),
                };
                vec![match page {
                    Ok(page) => InspectEvent::Page {
                        key,
                        cursor,
                        page,
                        pattern,
                    },
                    Err(e) => failed(&format!("page of '{}'", String::from_utf8_lossy(&key)), e),
                }]
            }
            InspectRequest::Open { key } => vec![match inspect::summarize(&mut self.live, &key) {
                Ok(summary) => InspectEvent::Opened { key, summary },
                Err(e) => failed(&format!("open '{}'", String::from_utf8_lossy(&key)), e),
            }],
            InspectRequest::Copy { keys, now_ms } => vec![self.copy(keys, now_ms)],
            InspectRequest::ScriptExists { script } => {
                let (sha, traced) = shas(&script, self.live.server.profile.server_alias);
                let reply =
                    self.live
                        .command(&[b"SCRIPT", b"EXISTS", sha.as_bytes(), traced.as_bytes()]);
                vec![match reply {
                    Ok(Reply::Array(flags)) if flags.len() == 2 => {
                        let yes = |r: &Reply| matches!(r, Reply::Int(1) | Reply::Bool(true));
                        InspectEvent::ScriptCache {
                            sha,
                            cached: Cached {
                                script: yes(&flags[0]),
                                traced: yes(&flags[1]),
                            },
                        }
                    }
                    Ok(other) => failed("SCRIPT EXISTS", LiveError::Server(other.to_cli())),
                    Err(e) => failed("SCRIPT EXISTS", e),
                }]
            }
            InspectRequest::Ping => {
                let health = match self.live.check_nodes() {
                    // BUSY or LOADING is a server that answers; on a cluster each node is checked.
                    Ok(down) => InspectEvent::Health {
                        error: None,
                        down,
                        cluster_down: self.live.cluster_down().map(|d| d.describe()),
                    },
                    Err(e) => InspectEvent::Health {
                        error: Some(e.to_string()),
                        down: Vec::new(),
                        cluster_down: None,
                    },
                };
                let mut events = Vec::new();
                // A dropped connection healed by the check itself is a server that may have
                // restarted between two checks: told before the health.
                if self.live.reconnects != self.reconnects {
                    self.reconnects = self.live.reconnects;
                    events.push(InspectEvent::Reconnected);
                }
                events.push(health);
                // The check read the slot map again: the role of the node connected to now.
                if self.live.server.cluster {
                    events.push(InspectEvent::Role(self.live.server.role.clone()));
                }
                events
            }
            InspectRequest::Overview => {
                vec![match crate::engine::live::overview::read(&mut self.live) {
                    Ok(overview) => InspectEvent::Overview(Box::new(overview)),
                    Err(e) => failed("server overview", e),
                }]
            }
            InspectRequest::ScriptKill => {
                // On fresh connections (every node of a cluster: the script's keys are unknown).
                let answers = self.live.script_kill_on_every_node();
                vec![InspectEvent::Killed(
                    crate::engine::live::overview::describe_kill(answers, self.live.server.cluster),
                )]
            }
            InspectRequest::LibraryCode { name } => {
                vec![
                    match crate::engine::live::functions::code(&mut self.live, &name) {
                        Ok(code) => InspectEvent::LibraryCode { name, code },
                        Err(e) => failed(&format!("library '{name}'"), e),
                    },
                ]
            }
            InspectRequest::Command { args, agreed } => vec![self.command_line(args, agreed)],
            InspectRequest::ScriptLoad { script } => {
                let (sha, _) = shas(&script, self.live.server.profile.server_alias);
                let mut texts = vec![script.clone()];
                texts.extend(
                    instrument::instrument_for(
                        &script,
                        None,
                        self.live.server.profile.server_alias,
                    )
                    .map(|copy| copy.text),
                );
                for text in texts {
                    match self.live.command(&[b"SCRIPT", b"LOAD", &text]) {
                        Ok(Reply::Error(e)) => {
                            return vec![failed("SCRIPT LOAD", LiveError::Server(e))]
                        }
                        Err(e) => return vec![failed("SCRIPT LOAD", e)],
                        Ok(_) => {}
                    }
                }
                vec![InspectEvent::ScriptLoaded { sha }]
            }
        }
    }

    fn command_line(&mut self, args: Vec<Vec<u8>>, agreed: bool) -> InspectEvent {
        use crate::engine::command_line::{live_verdict, Answer, LiveVerdict};
        let server = &self.live.server;
        match live_verdict(server.profile, &server.role, &args) {
            LiveVerdict::Refuse(why) => return InspectEvent::Command(Answer::Refused(why)),
            LiveVerdict::Ask(why) if !agreed => return InspectEvent::CommandAsks { args, why },
            LiveVerdict::Ask(_) | LiveVerdict::Run => {}
        }
        let words: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
        // The connection refuses a reply announced past the memory budget; what is read is kept
        // as a trace keeps a reply (a 5,000-field HGETALL shows its first elements and a count).
        InspectEvent::Command(match self.live.command(&words) {
            Ok(reply) => {
                let (reply, cut) =
                    reply.into_bounded(&mut crate::engine::reply::TRACE_ALLOWANCE.clone());
                Answer::Reply { reply, cut }
            }
            Err(e) => Answer::Failed(e.to_string()),
        })
    }

    fn copy(&mut self, keys: Vec<Vec<u8>>, now_ms: i64) -> InspectEvent {
        let mut db = Db::new();
        let (mut copied, mut missing, mut refused) = (Vec::new(), Vec::new(), Vec::new());
        for key in keys {
            match read_key(&mut self.live, &key, &CopyLimits::default(), now_ms) {
                Ok(Some(entry)) => {
                    db.insert_entry(key.clone(), entry);
                    copied.push(key);
                }
                Ok(None) => missing.push(key),
                Err(e) => refused.push(e.to_string()),
            }
        }
        InspectEvent::Copied {
            db,
            copied,
            missing,
            refused,
        }
    }
}

/// The SHA1 of the script and of its traced copy.
fn shas(script: &[u8], server_alias: bool) -> (String, String) {
    let sha = sha1_hex(script);
    let traced = instrument::instrument_for(script, None, server_alias)
        .map_or_else(|| sha.clone(), |copy| copy.sha);
    (sha, traced)
}

fn failed(what: &str, error: LiveError) -> InspectEvent {
    InspectEvent::Failed {
        what: what.to_string(),
        message: error.to_string(),
    }
}

/// The inspector thread and its channels.
pub struct Inspector {
    requests: Sender<InspectRequest>,
    pub events: Receiver<InspectEvent>,
}

impl Inspector {
    /// Connect a second time to `target` and start the thread.
    pub fn start(mut target: Target) -> Result<Inspector, LiveError> {
        // Browsing never waits long: a stalled server shows as an error in the tab.
        target.read_timeout = target
            .read_timeout
            .or(Some(std::time::Duration::from_secs(10)));
        let live = LiveBackend::connect(target)?;
        let (requests, request_rx) = channel::<InspectRequest>();
        let (event_tx, events) = channel::<InspectEvent>();
        std::thread::Builder::new()
            .name("evalbench-inspector".into())
            .spawn(move || {
                let mut core = InspectorCore::new(live);
                loop {
                    // Block when idle; between two SCAN calls, take any waiting request first.
                    let request = if core.busy() {
                        match request_rx.try_recv() {
                            Ok(r) => Some(r),
                            Err(TryRecvError::Empty) => None,
                            Err(TryRecvError::Disconnected) => break,
                        }
                    } else {
                        match request_rx.recv() {
                            Ok(r) => Some(r),
                            Err(_) => break,
                        }
                    };
                    let events = match request {
                        Some(request) => core.handle(request),
                        None => core.step().into_iter().collect(),
                    };
                    for event in events {
                        if event_tx.send(event).is_err() {
                            return;
                        }
                    }
                }
            })
            .map_err(|e| LiveError::Connect(format!("cannot start the inspector thread: {e}")))?;
        Ok(Inspector { requests, events })
    }

    pub fn send(&self, request: InspectRequest) {
        let _ = self.requests.send(request);
    }
}
