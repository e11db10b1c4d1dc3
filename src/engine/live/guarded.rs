//! A guarded live run, start to end: copy the declared keys, dry-run the script in the sandbox on
//! the copy, and send it to the server only when nothing in the dry run needs the user's consent
//! (writes, a dry run that did not complete or took a large share of the busy threshold, no dry run
//! possible). A `RunControl` shared with the front end tells which phase the run is in and cancels
//! it: before the script reaches the server nothing is sent; once it is there, SCRIPT KILL is sent.

use super::copy::{copy_keys, CopyError, CopyLimits};
use super::guard::{dry_run_with, explain_with_dry_run, DryRun};
use super::{LiveBackend, LiveError, Target, WriteMode};
use crate::engine::keyspace::Db;
use crate::engine::reply::Reply;
use crate::engine::report::{Outcome, WarningKind};
use crate::engine::{RunReport, RunRequest};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A dry run that took this share of the server's busy threshold or more is not sent without
/// consent. The sandbox and the server run the same Lua on the same copy of KEYS, but the server may
/// be slower by a small factor (other hardware, load, replication of the writes, undeclared keys
/// the copy does not hold); at half the threshold a factor of two already blocks the server for
/// every other client, while the scripts people run (under a few ms) stay far below it.
pub const SLOW_DRY_RUN_SHARE: f64 = 0.5;

/// Where a guarded run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// No live run in progress.
    Idle,
    /// Reading the declared keys from the server.
    Copying,
    /// Running the script in the sandbox on the copy.
    DryRun,
    /// The script was sent: it runs on the server.
    OnServer,
}

impl Phase {
    /// For the running counter ("dry run 1.2 s").
    pub fn label(self) -> &'static str {
        match self {
            Phase::Idle => "idle",
            Phase::Copying => "copying keys",
            Phase::DryRun => "dry run",
            Phase::OnServer => "on the server",
        }
    }
}

/// What cancelling does in the phase the run is in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CancelAction {
    /// No live run in progress.
    Nothing,
    /// The script had not reached the server: it will not be sent.
    NotSent,
    /// The script runs on the server: SCRIPT KILL must go there (a script with these KEYS, run
    /// `generation`).
    Kill { keys: Vec<Vec<u8>>, generation: u64 },
}

struct ControlState {
    phase: Phase,
    /// SCRIPT KILL's answer in words, for the run `generation` it was sent for.
    kill_answer: Option<(u64, String)>,
    kill_sent: bool,
    cancelled: bool,
    keys: Vec<Vec<u8>>,
    generation: u64,
    /// On a cluster: the node the script of this run was sent to (a kill goes there, not to the
    /// node given to connect, which may be down or another master).
    node: Option<super::cluster::NodeRef>,
    /// The dry run's sandbox stop flag, while it runs.
    dry_stop: Option<Arc<AtomicBool>>,
}

/// Shared between the thread running a guarded run and the front end that may cancel it. The phase
/// changes and the cancel decision are made under one lock, so a cancel either lands before the
/// send (nothing is sent) or after it (SCRIPT KILL), never in between.
pub struct RunControl {
    state: Mutex<ControlState>,
    answered: std::sync::Condvar,
    /// Told every phase change (the front end's running counter).
    observer: Option<Box<dyn Fn(Phase) + Send + Sync>>,
}

impl Default for RunControl {
    fn default() -> Self {
        RunControl {
            answered: std::sync::Condvar::new(),
            observer: None,
            state: Mutex::new(ControlState {
                kill_answer: None,
                kill_sent: false,
                phase: Phase::Idle,
                cancelled: false,
                keys: Vec::new(),
                generation: 0,
                node: None,
                dry_stop: None,
            }),
        }
    }
}

/// The run was cancelled before the script reached the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cancelled;

impl RunControl {
    /// A control that tells `observer` each phase it enters.
    pub fn with_observer(observer: impl Fn(Phase) + Send + Sync + 'static) -> RunControl {
        RunControl {
            observer: Some(Box::new(observer)),
            ..RunControl::default()
        }
    }

    fn tell(&self, phase: Phase) {
        if let Some(observer) = &self.observer {
            observer(phase);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, ControlState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn phase(&self) -> Phase {
        self.lock().phase
    }

    /// The number of runs begun (a SCRIPT KILL retry stops when another run began).
    pub fn generation(&self) -> u64 {
        self.lock().generation
    }

    /// A run with these KEYS begins (phase Copying).
    pub fn begin(&self, keys: &[Vec<u8>]) {
        let mut s = self.lock();
        s.phase = Phase::Copying;
        s.cancelled = false;
        s.keys = keys.to_vec();
        s.node = None;
        s.generation += 1;
        s.dry_stop = None;
        s.kill_sent = false;
        s.kill_answer = None;
        drop(s);
        self.tell(Phase::Copying);
    }

    /// Move to `phase`, unless the run was cancelled.
    pub fn enter(&self, phase: Phase) -> Result<(), Cancelled> {
        let mut s = self.lock();
        if s.cancelled {
            return Err(Cancelled);
        }
        s.phase = phase;
        drop(s);
        self.tell(phase);
        Ok(())
    }

    /// On a cluster: the node the script goes to, told before it is sent.
    pub fn set_node(&self, node: Option<super::cluster::NodeRef>) {
        self.lock().node = node;
    }

    /// The node run `generation` was sent to (None: not told, another run, or not a cluster).
    pub fn node(&self, generation: u64) -> Option<super::cluster::NodeRef> {
        let s = self.lock();
        s.node.clone().filter(|_| s.generation == generation)
    }

    pub fn is_cancelled(&self) -> bool {
        self.lock().cancelled
    }

    /// The dry run's stop flag: a cancel sets it (at once when the run was already cancelled).
    pub(crate) fn watch_dry_run(&self, stop: Arc<AtomicBool>) {
        let mut s = self.lock();
        if s.cancelled {
            stop.store(true, Ordering::Relaxed);
        }
        s.dry_stop = Some(stop);
    }

    pub fn end(&self) {
        let mut s = self.lock();
        s.phase = Phase::Idle;
        s.dry_stop = None;
        drop(s);
        self.tell(Phase::Idle);
    }

    /// What SCRIPT KILL answered for run `generation` (from the thread that sent it).
    pub fn set_kill_answer(&self, generation: u64, answer: String) {
        self.lock().kill_answer = Some((generation, answer));
        self.answered.notify_all();
    }

    /// SCRIPT KILL's answer for the current run, when one was sent: waits up to `wait` for it (the
    /// script may end before the answer is read).
    pub fn kill_answer(&self, wait: Duration) -> Option<String> {
        let mut s = self.lock();
        if !s.kill_sent {
            return None;
        }
        let deadline = std::time::Instant::now() + wait;
        loop {
            if let Some((g, answer)) = &s.kill_answer {
                if *g == s.generation {
                    return Some(answer.clone());
                }
            }
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return Some("SCRIPT KILL was sent; its answer did not come in time".into());
            }
            s = match self.answered.wait_timeout(s, left) {
                Ok((guard, _)) => guard,
                Err(e) => e.into_inner().0,
            };
        }
    }

    /// Cancel the run in progress: what to do depends on whether the script reached the server.
    pub fn cancel(&self) -> CancelAction {
        let mut s = self.lock();
        match s.phase {
            Phase::Idle => CancelAction::Nothing,
            Phase::Copying | Phase::DryRun => {
                s.cancelled = true;
                if let Some(stop) = &s.dry_stop {
                    stop.store(true, Ordering::Relaxed);
                }
                CancelAction::NotSent
            }
            Phase::OnServer if s.kill_sent => CancelAction::Nothing,
            Phase::OnServer => {
                s.kill_sent = true;
                CancelAction::Kill {
                    keys: s.keys.clone(),
                    generation: s.generation,
                }
            }
        }
    }
}

/// What the user agreed to after the guard asked (all false: nothing agreed yet, dry-run first).
#[derive(Debug, Clone, Default)]
pub struct Consent {
    /// Send with writes allowed (EVAL, not EVAL_RO).
    pub writes: bool,
    /// Send although the dry run did not complete or took a large share of the threshold.
    pub slow: bool,
    /// Send as EVAL_RO without a dry run (the keys could not be copied).
    pub unchecked: bool,
    /// Send although the dry run could not see everything the script reads (a key outside KEYS,
    /// a command whose reply depends on more than its keys).
    pub unseen: bool,
    /// Send although SCRIPT KILL cannot stop part of the script (a loop in an error handler).
    pub unkillable: bool,
    /// The dry run the user saw, to explain the server's reply (its Lua value and notes).
    pub dry_run: Option<Box<RunReport>>,
    /// On a cluster, the node the question named: the consent is for that node only (a failover
    /// since makes the run ask again, naming the new one).
    pub node: Option<super::cluster::NodeRef>,
}

impl Consent {
    pub fn given(&self) -> bool {
        self.writes || self.slow || self.unchecked || self.unseen || self.unkillable
    }
}

/// Why a run waits for consent.
#[derive(Debug, Clone, PartialEq)]
pub enum Concern {
    /// The dry run writes (each write call as `line N: COMMAND args`).
    Writes(Vec<String>),
    /// The dry run was stopped (busy threshold or memory budget) after `ms`.
    Incomplete { why: String, ms: f64 },
    /// The dry run took `ms`, a large share of the threshold.
    Slow { ms: f64, threshold_ms: u64 },
    /// On a cluster whose `cluster-node-timeout` is not safely longer than the busy threshold,
    /// the dry run took `ms`, a large share of it: a node busy past it is flagged failed (a master
    /// is failed over; `replica`: the script goes to a replica, and nothing is failed over).
    NodeTimeout {
        ms: f64,
        timeout_ms: u64,
        threshold_ms: u64,
        replica: bool,
    },
    /// No dry run: the declared keys could not be copied (the copy limit).
    NoDryRun { why: String },
    /// A function without the `no-writes` flag: FCALL_RO refuses it, so the server cannot
    /// be told to refuse its writes; the dry run wrote nothing, but the live data may differ.
    MayWrite { function: String },
    /// The dry run is no preview: calls it made read what the copy of KEYS lacks (each as `line N:
    /// COMMAND args (why)`).
    Unseen(Vec<String>),
    /// Code SCRIPT KILL cannot stop (each place as `line N: what`): if it runs long, the server
    /// stays busy for every client until it is restarted.
    Unkillable(Vec<String>),
    /// On a cluster, the node the script goes to changed after the question named one (a
    /// failover): `from` and `to` as `NodeRef::describe` words them.
    NodeChanged { from: String, to: String },
}

/// The guard's question: the concerns, and the consent a yes gives.
#[derive(Debug, Clone)]
pub struct Question {
    pub concerns: Vec<Concern>,
    pub consent: Consent,
}

impl Question {
    /// One paragraph for the prompt: what the dry run showed, and what y and n do.
    pub fn text(&self) -> String {
        let parts: Vec<String> = self.concerns.iter().map(describe_concern).collect();
        let send = if self.consent.writes {
            "y sends it with writes allowed"
        } else {
            "y sends it as EVAL_RO (the server refuses any write)"
        };
        let esc = if self
            .concerns
            .iter()
            .any(|c| matches!(c, Concern::Unkillable(_)))
        {
            "Esc on the server sends SCRIPT KILL, which cannot stop those places"
        } else {
            "Esc on the server sends SCRIPT KILL"
        };
        format!(
            "{}. Nothing was sent. {send}; {esc}. Send it to the live server? (y/n)",
            parts.join("; ")
        )
    }
}

pub fn describe_concern(concern: &Concern) -> String {
    match concern {
        Concern::Writes(writes) => format!(
            "The dry run WRITES ({}{})",
            writes
                .iter()
                .take(3)
                .cloned()
                .collect::<Vec<_>>()
                .join("; "),
            if writes.len() > 3 {
                format!("; {} more", writes.len() - 3)
            } else {
                String::new()
            }
        ),
        Concern::Incomplete { why, ms } => format!(
            "The dry run did not complete: {why} after {ms:.1} ms (on the server it would keep every other client waiting until it ends or is killed)"
        ),
        Concern::Slow { ms, threshold_ms } => format!(
            "The dry run took {ms:.1} ms, {:.0}% of the server's busy threshold of {threshold_ms} ms (the server may be slower)",
            ms * 100.0 / *threshold_ms as f64
        ),
        Concern::NodeTimeout {
            ms,
            timeout_ms,
            threshold_ms,
            replica,
        } => format!(
            "The dry run took {ms:.1} ms, {:.0}% of this cluster's cluster-node-timeout of {timeout_ms} ms (the server may be slower): {}",
            ms * 100.0 / *timeout_ms as f64,
            super::node_timeout_consequence(*timeout_ms, *threshold_ms, *replica)
        ),
        Concern::NoDryRun { why } => format!("No dry run is possible: {why}"),
        Concern::NodeChanged { from, to } => format!(
            "The cluster's topology changed since the question: the script's slot moved from {from} to {to} (a failover)"
        ),
        Concern::Unseen(calls) => format!(
            "The dry run is no preview of the server: it could not see what {} read ({})",
            if calls.len() == 1 { "this call" } else { "these calls" },
            first_three(calls)
        ),
        Concern::Unkillable(places) => format!(
            "SCRIPT KILL cannot stop this script ({}): if that code runs long, the server stays busy for every client and may need a restart",
            first_three(places)
        ),
        Concern::MayWrite { function } => format!(
            "The function {function} is not flagged no-writes: the dry run wrote nothing, but the server cannot be told to refuse its writes (FCALL_RO refuses such a function)"
        ),
    }
}

/// Up to three items, then how many more.
fn first_three(items: &[String]) -> String {
    let mut text = items.iter().take(3).cloned().collect::<Vec<_>>().join("; ");
    if items.len() > 3 {
        text.push_str(&format!("; {} more", items.len() - 3));
    }
    text
}

/// Where `script` runs code SCRIPT KILL cannot stop on `profile`'s server, as `line N: what`
/// (the lint's `unkillable` rule).
pub fn unkillable_places(
    script: &[u8],
    profile: &'static crate::engine::profile::Profile,
) -> Vec<String> {
    let source = String::from_utf8_lossy(script);
    crate::engine::analysis::unstoppable::unkillable(&source, profile)
        .into_iter()
        .map(|u| format!("line {}: {}", u.line, u.message))
        .collect()
}

/// Where a dry run stopped at the busy threshold inside one C call (a pattern match, a sort, a
/// command), as `line N: what`: the server's hook and SCRIPT KILL cannot reach inside it.
pub fn stopped_in_c(report: &RunReport) -> Vec<String> {
    report
        .warnings
        .iter()
        .filter(|w| report.outcome == Outcome::Killed && w.kind == WarningKind::Unkillable)
        .map(|w| format!("line {}: {}", w.line, w.message))
        .collect()
}

/// The concerns a finished dry run raises (empty: send it).
pub fn concerns(
    report: &RunReport,
    writes: &[String],
    threshold_ms: u64,
    memory_limit: usize,
) -> Vec<Concern> {
    concerns_on(report, writes, threshold_ms, None, false, memory_limit)
}

/// `concerns` on a server with a second clock: a cluster's `cluster-node-timeout` when it is not
/// safely longer than the busy threshold (`LiveServer::node_timeout_at_risk`; a busy node answers
/// the cluster again once past the threshold): a dry run taking a large share of it is a concern of
/// its own. `on_replica`: the script goes to a replica.
pub fn concerns_on(
    report: &RunReport,
    writes: &[String],
    threshold_ms: u64,
    node_timeout_ms: Option<u64>,
    on_replica: bool,
    memory_limit: usize,
) -> Vec<Concern> {
    let mut out = Vec::new();
    if !writes.is_empty() {
        out.push(Concern::Writes(writes.to_vec()));
    }
    let ms = report.elapsed_ns as f64 / 1e6;
    let over_budget = matches!(&report.reply, Reply::Error(e)
        if *e == crate::engine::budget::over_budget_text(memory_limit));
    // Stopped inside one C call (a pattern match, a sort): on the server neither the hook nor
    // SCRIPT KILL reaches it, so this is no slow run that a kill ends.
    let in_c = stopped_in_c(report);
    if !in_c.is_empty() {
        out.push(Concern::Unkillable(in_c));
    } else if report.outcome == Outcome::Killed {
        let why = if threshold_ms == 0 {
            format!(
                "stopped at {} ms (the server's busy-reply-threshold is 0: a script is busy for every other client from its start)",
                report.busy_threshold_ms
            )
        } else {
            format!("stopped at the busy threshold ({threshold_ms} ms)")
        };
        out.push(Concern::Incomplete { why, ms });
    } else if over_budget {
        out.push(Concern::Incomplete {
            why: format!(
                "stopped at the sandbox's memory budget ({} MiB)",
                memory_limit >> 20
            ),
            ms,
        });
    } else if threshold_ms > 0 && ms >= threshold_ms as f64 * SLOW_DRY_RUN_SHARE {
        out.push(Concern::Slow { ms, threshold_ms });
    }
    let at_risk = |t: &u64| *t > 0 && threshold_ms > 0 && *t < threshold_ms + 1000;
    if let Some(timeout_ms) = node_timeout_ms.filter(at_risk) {
        if ms >= timeout_ms as f64 * SLOW_DRY_RUN_SHARE {
            out.push(Concern::NodeTimeout {
                ms,
                timeout_ms,
                threshold_ms,
                replica: on_replica,
            });
        }
    }
    out
}

/// Add the places SCRIPT KILL cannot stop that the script's code shows to the concerns, first,
/// with those the dry run found (one `Unkillable` concern).
pub fn add_unkillable(found: &mut Vec<Concern>, places: &[String]) {
    if places.is_empty() {
        return;
    }
    if let Some(at) = found
        .iter()
        .position(|c| matches!(c, Concern::Unkillable(_)))
    {
        let Concern::Unkillable(seen) = found.remove(at) else {
            unreachable!("the position of an Unkillable concern")
        };
        found.insert(0, Concern::Unkillable([places, &seen[..]].concat()));
    } else {
        found.insert(0, Concern::Unkillable(places.to_vec()));
    }
}

/// A guarded run's result. `before`/`after`: the dry run's keyspace (or the copy of KEYS before
/// and after the server ran the script).
pub struct GuardedRun {
    pub report: RunReport,
    pub before: Db,
    pub after: Db,
    /// Consent needed: nothing was sent.
    pub question: Option<Question>,
    /// The script reached the server (the report is the server's).
    pub sent: bool,
    /// How long the dry run took (None: none ran).
    pub dry_run_ns: Option<u64>,
}

impl GuardedRun {
    /// Nothing sent: `report` says why.
    pub(crate) fn not_sent(
        report: RunReport,
        before: Db,
        after: Db,
        dry_run_ns: Option<u64>,
    ) -> GuardedRun {
        GuardedRun {
            report,
            before,
            after,
            question: None,
            sent: false,
            dry_run_ns,
        }
    }

    /// Nothing sent: the dry run raised `concerns`, and the question asks for consent (`writes`:
    /// y allows writes). The report is the dry run's, its reply saying what waits.
    pub(crate) fn asking(dry: DryRun, concerns: Vec<Concern>, writes: bool) -> GuardedRun {
        let dry_ns = Some(dry.report.elapsed_ns);
        let question = Question {
            consent: Consent {
                writes,
                slow: concerns.iter().any(|c| {
                    matches!(
                        c,
                        Concern::Incomplete { .. }
                            | Concern::Slow { .. }
                            | Concern::NodeTimeout { .. }
                    )
                }),
                unchecked: false,
                unseen: concerns.iter().any(|c| matches!(c, Concern::Unseen(_))),
                unkillable: concerns.iter().any(|c| matches!(c, Concern::Unkillable(_))),
                dry_run: Some(Box::new(dry.report.clone())),
                node: None,
            },
            concerns,
        };
        let mut report = dry.report;
        report.reply = Reply::Error(format!(
            "evalbench: not sent to the live server yet: {} (the trace and keyspace diff are the dry run's)",
            question
                .concerns
                .iter()
                .map(describe_concern)
                .collect::<Vec<_>>()
                .join("; ")
        ));
        report.outcome = Outcome::Refused;
        GuardedRun {
            question: Some(question),
            ..GuardedRun::not_sent(report, dry.before, dry.after, dry_ns)
        }
    }
}

/// On `y` to a question that named a node of a cluster: the slot map read again, and when a
/// failover moved the slot of `keys` since, the question again, naming the node it goes to now.
pub(super) fn node_changed(
    live: &mut LiveBackend,
    keys: &[Vec<u8>],
    consent: &Consent,
) -> Option<Question> {
    let asked = consent.node.as_ref()?;
    live.refresh_topology();
    let now = live
        .node_for_keys(keys)
        .filter(|now| now.addr != asked.addr)?;
    Some(Question {
        concerns: vec![Concern::NodeChanged {
            from: asked.describe(),
            to: now.describe(),
        }],
        consent: Consent {
            node: Some(now),
            ..consent.clone()
        },
    })
}

/// Run `request` on the live server behind the guard. `control` must have been `begin`-ed; the
/// run leaves it Idle.
pub fn guarded_run(
    live: &mut LiveBackend,
    request: &RunRequest,
    consent: &Consent,
    control: &RunControl,
    now_ms: i64,
) -> GuardedRun {
    let result = guarded_run_inner(live, request, consent, control, now_ms);
    control.end();
    result
}

fn guarded_run_inner(
    live: &mut LiveBackend,
    request: &RunRequest,
    consent: &Consent,
    control: &RunControl,
    now_ms: i64,
) -> GuardedRun {
    let (protocol, threshold) = (live.protocol(), live.server.busy_threshold_ms);
    let sha = crate::engine::script::sha1_hex(&request.script);
    let plain = |report: RunReport, before: Db, after: Db, dry_run_ns| GuardedRun {
        report,
        before,
        after,
        question: None,
        sent: false,
        dry_run_ns,
    };
    let refused = |message: String| RunReport::refused(sha.clone(), message, protocol, threshold);
    let not_sent = |when: &str, dry: Option<u64>| {
        let mut report = refused(format!(
            "evalbench: cancelled {when}: nothing was sent to the server"
        ));
        report.outcome = Outcome::Cancelled;
        plain(report, Db::new(), Db::new(), dry)
    };
    live.follow_topology();
    // A keyless script goes to the node given to connect while it answers, else to a master that
    // does: found now, so that the question names the node the script would go to.
    if live.server.cluster && request.keys.is_empty() {
        let _ = live.ping_for(&request.keys);
    }
    let replica = live.runs_on_replica(&request.keys);
    if let Some(refusal) = live.cross_slot_refusal(request) {
        return plain(refused(refusal), Db::new(), Db::new(), None);
    }
    if let Some(refusal) = live.cluster_down_refusal(&request.keys) {
        return plain(
            refused(format!("evalbench: not sent: {refusal}")),
            Db::new(),
            Db::new(),
            None,
        );
    }

    let (before, dry) = if consent.given() {
        // The user agreed to send to the node the question named: a failover since (the slot map
        // read again now) asks again, naming the node the script would go to now.
        if let Some(question) = node_changed(live, &request.keys, consent) {
            let report = refused(format!(
                "evalbench: not sent: {}",
                describe_concern(&question.concerns[0])
            ));
            return GuardedRun {
                question: Some(question),
                ..plain(report, Db::new(), Db::new(), None)
            };
        }
        // The user saw the dry run (or that none was possible) and agreed: send without another.
        (
            keys_before(live, &request.keys, now_ms),
            consent.dry_run.as_deref().cloned(),
        )
    } else {
        // Code SCRIPT KILL cannot stop is asked about with the rest of the dry run's concerns: the
        // sandbox stops it at the busy threshold (the dry run then did not complete).
        let places = unkillable_places(&request.script, live.server.profile);
        let unkillable = |found: &mut Vec<Concern>| add_unkillable(found, &places);
        let memory_limit = crate::engine::budget::limit();
        let mut watch = |stop: Arc<AtomicBool>| control.watch_dry_run(stop);
        let entered = |phase| control.enter(phase);
        let dry = match dry_run_with(live, request, now_ms, &entered, &mut watch) {
            Ok(Some(dry)) => dry,
            Ok(None) => return not_sent("while copying the keys", None),
            Err(CopyError::TooLarge { .. }) if control.is_cancelled() => {
                return not_sent("while copying the keys", None)
            }
            Err(e @ CopyError::TooLarge { .. }) => {
                let mut report = refused(format!(
                    "evalbench: not sent yet: {e}: no dry run is possible"
                ));
                report.outcome = Outcome::Refused;
                let mut found = vec![Concern::NoDryRun {
                    why: format!("{e}"),
                }];
                unkillable(&mut found);
                return GuardedRun {
                    question: Some(Question {
                        consent: Consent {
                            unchecked: true,
                            unkillable: !places.is_empty(),
                            node: live.node_for_keys(&request.keys),
                            ..Consent::default()
                        },
                        concerns: found,
                    }),
                    ..plain(report, Db::new(), Db::new(), None)
                };
            }
            Err(e) => {
                let report = refused(format!("evalbench: not sent: {e}"));
                return plain(report, Db::new(), Db::new(), None);
            }
        };
        let dry_ns = Some(dry.report.elapsed_ns);
        if dry.report.outcome == Outcome::Cancelled || control.is_cancelled() {
            let mut cancelled = not_sent(
                &format!(
                    "during the dry run (after {:.1} ms)",
                    dry.report.elapsed_ns as f64 / 1e6
                ),
                dry_ns,
            );
            cancelled.report.trace = dry.report.trace;
            cancelled.before = dry.before;
            cancelled.after = dry.after;
            return cancelled;
        }
        if !dry.writes.is_empty() && replica {
            let mut report = dry.report;
            report.reply = Reply::Error(format!(
                "evalbench: not sent to the live server: a dry run in the sandbox on a copy of KEYS writes ({}); the server is a replica, writes are refused (the trace and keyspace diff are the dry run's)",
                dry.writes.join("; ")
            ));
            report.outcome = Outcome::Refused;
            return plain(report, dry.before, dry.after, dry_ns);
        }
        let mut found = concerns_on(
            &dry.report,
            &dry.writes,
            threshold,
            live.server.cluster_node_timeout_ms,
            replica,
            memory_limit,
        );
        if !dry.unseen.is_empty() {
            found.push(Concern::Unseen(dry.unseen.clone()));
        }
        unkillable(&mut found);
        if !found.is_empty() {
            let writes = !dry.writes.is_empty();
            let mut run = GuardedRun::asking(dry, found, writes);
            if let Some(question) = run.question.as_mut() {
                question.consent.node = live.node_for_keys(&request.keys);
            }
            return run;
        }
        (dry.before, Some(dry.report))
    };
    let dry_run_ns = dry
        .as_ref()
        .map(|d| d.elapsed_ns)
        .filter(|_| !consent.given());
    let mode = if consent.writes && !replica {
        WriteMode::Allowed
    } else {
        WriteMode::ReadOnly
    };
    // A script is never sent twice (it may have run before a connection dropped), so a connection
    // that died since the last command (the server restarted) is found and healed by a PING first.
    if let Err(e) = live.ping_for(&request.keys) {
        let report = refused(format!("evalbench: not sent: {e}"));
        return plain(report, before.clone(), before, dry_run_ns);
    }
    // The node that answered the PING is the one the script goes to: a kill goes there.
    control.set_node(live.node_for_keys(&request.keys));
    if control.enter(Phase::OnServer).is_err() {
        return not_sent("before sending", dry_run_ns);
    }
    match live.run(request, mode) {
        Ok(mut report) => {
            if let Some(dry) = &dry {
                explain_with_dry_run(&mut report, dry);
            }
            let mut after = Db::new();
            let _ = copy_keys(
                live,
                &request.keys,
                &mut after,
                &CopyLimits::default(),
                now_ms,
            );
            GuardedRun {
                sent: true,
                ..plain(report, before, after, dry_run_ns)
            }
        }
        Err(e) => {
            let mut report = refused(format!("evalbench: {e}"));
            if matches!(e, LiveError::Sent(_)) {
                report.outcome = Outcome::Lost;
            }
            GuardedRun {
                // A node that could not be reached (or no node for the slot) never got it.
                sent: matches!(e, LiveError::Sent(_) | LiveError::Lost(_)),
                ..plain(report, before.clone(), before, dry_run_ns)
            }
        }
    }
}

/// SCRIPT KILL for run `generation` of `control` (the script with `keys`), and what happened in
/// words. The kill may reach the server before the script does (the server then answers NOTBUSY
/// while the script is still on its way): while the run is still on the server, it is sent again.
pub fn kill_running(
    target: &Target,
    control: &RunControl,
    keys: &[Vec<u8>],
    generation: u64,
    cluster: bool,
) -> String {
    kill_running_report(target, control, keys, generation, cluster).text
}

/// `kill_running` with its verdict (a front end acts on it: wait for the reply, or say the server
/// may still be busy).
pub fn kill_running_report(
    target: &Target,
    control: &RunControl,
    keys: &[Vec<u8>],
    generation: u64,
    cluster: bool,
) -> super::KillReport {
    // On a cluster the node the script was sent to, when the run told it; else the node of its
    // first key as the node given to connect maps it.
    let node = control.node(generation);
    let kill_target = node
        .as_ref()
        .map(|n| super::cluster::node_target(target, &n.addr));
    // Bounded: 2,000 tries 10 ms apart (20 s) while the server keeps answering NOTBUSY.
    for _ in 0..2000 {
        let answers = match (&node, &kill_target) {
            (Some(node), Some(to)) => {
                let (answer, after) = super::kill_on(to, "SCRIPT");
                Ok(vec![(node.describe(), answer, after)])
            }
            _ => super::script_kill_for(target, keys),
        };
        let not_busy = matches!(&answers, Ok(a) if !a.is_empty()
            && a.iter().all(|(_, r, _)| matches!(r, Ok(Reply::Error(e)) if e.starts_with("NOTBUSY"))));
        // A function runs: the server answers BUSY to SCRIPT KILL; FUNCTION KILL stops it.
        let function_runs = matches!(&answers, Ok(a)
            if a.iter().any(|(_, r, _)| matches!(r, Ok(Reply::Error(e)) if e.starts_with("BUSY"))));
        if function_runs {
            return match (&node, &kill_target) {
                (Some(node), Some(to)) => {
                    let (answer, after) = super::kill_on(to, "FUNCTION");
                    super::judge_kill(
                        "FUNCTION",
                        &format!(" to {}", node.describe()),
                        &answer,
                        &after,
                    )
                }
                _ => super::fcall::function_kill_report(target),
            };
        }
        let still_running =
            control.phase() == Phase::OnServer && control.generation() == generation;
        if !(not_busy && still_running) {
            return super::judge_kills(answers, cluster);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    super::judge_kills(
        Err(LiveError::Server(
            "the server kept answering NOTBUSY for 20 s while the script was on its way".into(),
        )),
        cluster,
    )
}

/// The declared keys as the server holds them before a consented send (what the keyspace diff
/// compares with); a copy that fails leaves what was copied before it, and the send goes on.
pub(super) fn keys_before(live: &mut LiveBackend, keys: &[Vec<u8>], now_ms: i64) -> Db {
    let mut before = Db::new();
    let _ = copy_keys(live, keys, &mut before, &CopyLimits::default(), now_ms);
    before
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::reply::Protocol;

    fn report(ms: u64, outcome: Outcome) -> RunReport {
        let mut r = RunReport::refused(String::new(), String::new(), Protocol::Resp2, 1000);
        r.reply = Reply::Int(1);
        r.outcome = outcome;
        r.elapsed_ns = ms * 1_000_000;
        r
    }

    #[test]
    fn a_cancel_before_the_send_stops_it_and_after_it_asks_for_a_kill_once() {
        let control = RunControl::default();
        assert_eq!(control.cancel(), CancelAction::Nothing);
        control.begin(&[b"k".to_vec()]);
        let stop = Arc::new(AtomicBool::new(false));
        control.enter(Phase::DryRun).unwrap();
        control.watch_dry_run(stop.clone());
        assert_eq!(control.cancel(), CancelAction::NotSent);
        assert!(stop.load(Ordering::Relaxed), "the dry run is told to stop");
        assert_eq!(control.enter(Phase::OnServer), Err(Cancelled));
        assert_eq!(control.phase(), Phase::DryRun);
        // A new run starts uncancelled; on the server a cancel asks for one SCRIPT KILL.
        control.begin(&[b"k".to_vec()]);
        control.enter(Phase::OnServer).unwrap();
        assert_eq!(
            control.cancel(),
            CancelAction::Kill {
                keys: vec![b"k".to_vec()],
                generation: 2
            }
        );
        assert_eq!(control.cancel(), CancelAction::Nothing);
        control.set_kill_answer(2, "sent SCRIPT KILL: OK".into());
        assert_eq!(
            control.kill_answer(Duration::ZERO).as_deref(),
            Some("sent SCRIPT KILL: OK")
        );
        control.end();
        assert_eq!(control.phase(), Phase::Idle);
    }

    #[test]
    fn a_slow_or_stopped_dry_run_is_a_concern() {
        let limit = 64 << 20;
        assert_eq!(
            concerns(&report(499, Outcome::Returned), &[], 1000, limit),
            vec![]
        );
        assert_eq!(
            concerns(&report(500, Outcome::Returned), &[], 1000, limit),
            vec![Concern::Slow {
                ms: 500.0,
                threshold_ms: 1000
            }]
        );
        assert_eq!(
            concerns(&report(1000, Outcome::Killed), &[], 1000, limit),
            vec![Concern::Incomplete {
                why: "stopped at the busy threshold (1000 ms)".into(),
                ms: 1000.0
            }]
        );
        let mut over = report(20, Outcome::Raised);
        over.reply = Reply::Error(crate::engine::budget::over_budget_text(limit));
        assert_eq!(
            concerns(&over, &["line 1: SET k v".into()], 1000, limit),
            vec![
                Concern::Writes(vec!["line 1: SET k v".into()]),
                Concern::Incomplete {
                    why: "stopped at the sandbox's memory budget (64 MiB)".into(),
                    ms: 20.0
                }
            ]
        );
        let question = Question {
            concerns: concerns(&report(600, Outcome::Returned), &[], 1000, limit),
            consent: Consent {
                slow: true,
                ..Consent::default()
            },
        };
        assert_eq!(question.text(), "The dry run took 600.0 ms, 60% of the server's busy threshold of 1000 ms (the server may be slower). Nothing was sent. y sends it as EVAL_RO (the server refuses any write); Esc on the server sends SCRIPT KILL. Send it to the live server? (y/n)");
    }
}
