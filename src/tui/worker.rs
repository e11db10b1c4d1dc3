//! The engine thread: it owns the sandbox (the Lua state is not `Send`), runs scripts while the UI
//! keeps drawing, and answers with whole reports. A newer run supersedes an older one.

use crate::engine::clock::ManualClock;
use crate::engine::keyspace::Db;
use crate::engine::live::copy::{copy_keys, CopyLimits};
use crate::engine::live::guard::{dry_run, explain_with_dry_run};
use crate::engine::live::{LiveBackend, WriteMode};
use crate::engine::{RunReport, RunRequest, Sandbox};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

pub enum EngineCommand {
    /// Reset database 0 to `seed`, then run.
    Run {
        id: u64,
        request: RunRequest,
        seed: Db,
        busy_threshold_ms: u64,
        /// On a live server: the user confirmed writes (no dry run).
        writes_confirmed: bool,
        /// Run on the live server (when there is one) rather than in the sandbox.
        live: bool,
    },
    /// Move the sandbox clock forward.
    AdvanceClock {
        ms: i64,
    },
    /// SCRIPT FLUSH.
    Flush,
    Stop,
}

/// A finished run with the keyspace before and after it.
pub struct RunResult {
    pub id: u64,
    pub request: RunRequest,
    pub report: RunReport,
    pub before: Db,
    pub after: Db,
    /// Unix ms of the sandbox clock after the run (for TTLs).
    pub now_ms: i64,
    /// Live: the dry run writes; the user may confirm to send it with writes allowed.
    pub awaiting_confirmation: bool,
    /// The report is the live server's (its trace has no per-call times: a script has no clock
    /// fine enough); false for the sandbox and for a dry run held back.
    pub live: bool,
}

impl RunResult {
    /// Reset database 0 to `seed` and run `request`: what the engine thread does for a Run
    /// (the test harness calls it too).
    pub fn run(
        sandbox: &mut Sandbox,
        id: u64,
        request: RunRequest,
        seed: Db,
        busy_threshold_ms: u64,
    ) -> RunResult {
        sandbox.config.busy_threshold_ms = busy_threshold_ms;
        sandbox.set_db0(seed.clone());
        let report = sandbox.run(&request);
        let after = sandbox.keyspace().db(0).clone();
        RunResult {
            id,
            request,
            report,
            before: seed,
            after,
            now_ms: sandbox.now_ms(),
            awaiting_confirmation: false,
            live: false,
        }
    }
}

pub enum EngineEvent {
    Finished(Box<RunResult>),
    ClockMoved { now_ms: i64 },
}

pub struct Worker {
    commands: Sender<EngineCommand>,
    pub events: Receiver<EngineEvent>,
    cancel: Arc<AtomicBool>,
    /// The live server, to send SCRIPT KILL from another connection when the user cancels.
    live_target: Option<crate::engine::live::Target>,
    /// The KEYS of the live run in progress (None between runs): on a cluster SCRIPT KILL goes to the
    /// node serving them, and with no run in progress none is sent (a cluster run without keys would
    /// ask every master, stopping other clients' scripts).
    running_keys: Arc<Mutex<Option<Vec<Vec<u8>>>>>,
    thread: Option<std::thread::JoinHandle<()>>,
    /// Disconnects when the engine thread ends.
    ended: Receiver<()>,
}

/// How long quitting waits for a cancelled run to stop before leaving the engine thread behind.
pub const QUIT_WAIT: std::time::Duration = std::time::Duration::from_millis(500);

/// A live run from the workbench: read-only for now. The script is first dry-run in the sandbox on a
/// copy of its declared keys; if it would write, nothing is sent and the dry run is shown (its trace and
/// keyspace diff) with the refusal; otherwise it runs as EVAL_RO, traced.
pub fn run_live(
    live: &mut LiveBackend,
    id: u64,
    request: RunRequest,
    writes_confirmed: bool,
) -> RunResult {
    let now = crate::engine::clock::Clock::now_ms(&crate::engine::clock::SystemClock);
    let result = |request, report, before: Db, after, awaiting_confirmation| RunResult {
        id,
        request,
        report,
        before,
        after,
        now_ms: now,
        awaiting_confirmation,
        live: false,
    };
    let (protocol, threshold) = (live.protocol(), live.server.busy_threshold_ms);
    let sha = crate::engine::script::sha1_hex(&request.script);
    let refused = |message: String| RunReport::refused(sha.clone(), message, protocol, threshold);
    let dry = match dry_run(live, &request, now) {
        Ok(dry) => dry,
        Err(e) => {
            let report = refused(format!("evalbench: not sent: {e}"));
            return result(request, report, Db::new(), Db::new(), false);
        }
    };
    let replica = live.server.is_replica();
    let send_writes = writes_confirmed && !replica;
    if !dry.writes.is_empty() && !send_writes {
        let mut report = dry.report;
        report.reply = crate::engine::Reply::Error(format!(
            "evalbench: not sent to the live server: a dry run in the sandbox on a copy of KEYS writes ({}){} (the trace and keyspace diff are the dry run's)",
            dry.writes.join("; "),
            if replica { "; the server is a replica, writes are refused" } else { "; confirm to send it with writes allowed" }
        ));
        report.outcome = crate::engine::report::Outcome::Refused;
        return result(request, report, dry.before, dry.after, !replica);
    }
    let mode = if send_writes {
        WriteMode::Allowed
    } else {
        WriteMode::ReadOnly
    };
    match live.run(&request, mode) {
        Ok(mut report) => {
            explain_with_dry_run(&mut report, &dry.report);
            let mut after = Db::new();
            let _ = copy_keys(live, &request.keys, &mut after, &CopyLimits::default(), now);
            RunResult {
                live: true,
                ..result(request, report, dry.before, after, false)
            }
        }
        Err(e) => {
            let report = refused(format!("evalbench: {e}"));
            result(request, report, dry.before.clone(), dry.before, false)
        }
    }
}

impl Worker {
    pub fn start() -> Worker {
        Worker::start_with(None)
    }

    /// With a live backend, runs go to the server (read-only, see `run_live`).
    pub fn start_with(live: Option<LiveBackend>) -> Worker {
        Worker::start_with_budget(live, crate::engine::sandbox::DEFAULT_MEMORY_LIMIT)
    }

    /// As `start_with`, the sandbox's memory budget in bytes given.
    pub fn start_with_budget(live: Option<LiveBackend>, memory_limit: usize) -> Worker {
        Worker::start_with_profile(live, memory_limit, crate::engine::profile::DEFAULT)
    }

    /// A worker whose sandbox imitates `profile` (engine/profile.rs).
    pub fn start_with_profile(
        mut live: Option<LiveBackend>,
        memory_limit: usize,
        profile: &'static crate::engine::profile::Profile,
    ) -> Worker {
        let live_target = live.as_ref().map(|l| l.target.clone());
        let running_keys = Arc::new(Mutex::new(None));
        let keys_of_run = running_keys.clone();
        let (commands, command_rx) = channel::<EngineCommand>();
        let (event_tx, events) = channel::<EngineEvent>();
        let (cancel_tx, cancel_rx) = channel();
        let (ended_tx, ended) = channel::<()>();
        let thread = std::thread::Builder::new()
            .name("evalbench-engine".into())
            .stack_size(256 << 20)
            .spawn(move || {
                // Dropped when the thread ends: `Drop for Worker` waits on it, never on the thread.
                let _ended = ended_tx;
                let start_us = SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map(|d| d.as_micros() as i64)
                    .unwrap_or(0);
                // A manual clock that follows real time between runs, so TTLs tick and "advance" works.
                let clock = ManualClock::new(start_us);
                let mut sandbox = Sandbox::with_clock(Box::new(clock.clone()));
                sandbox.config.snapshots = true;
                sandbox.config.memory_limit = memory_limit;
                sandbox.set_profile(profile);
                let _ = cancel_tx.send(sandbox.cancel_handle());
                let mut offset_us = 0i64;
                let sync = |offset: i64| {
                    let now = SystemTime::now()
                        .duration_since(UNIX_EPOCH)
                        .map(|d| d.as_micros() as i64)
                        .unwrap_or(0);
                    clock.set_us(now + offset);
                };
                while let Ok(command) = command_rx.recv() {
                    match command {
                        EngineCommand::Run {
                            id,
                            request,
                            seed,
                            busy_threshold_ms,
                            writes_confirmed,
                            live: on_live,
                        } => {
                            sync(offset_us);
                            let result = match live.as_mut().filter(|_| on_live) {
                                Some(live) => {
                                    let set = |keys: Option<Vec<Vec<u8>>>| {
                                        if let Ok(mut running) = keys_of_run.lock() {
                                            *running = keys;
                                        }
                                    };
                                    set(Some(request.keys.clone()));
                                    let result = run_live(live, id, request, writes_confirmed);
                                    set(None);
                                    result
                                }
                                None => RunResult::run(
                                    &mut sandbox,
                                    id,
                                    request,
                                    seed,
                                    busy_threshold_ms,
                                ),
                            };
                            if event_tx
                                .send(EngineEvent::Finished(Box::new(result)))
                                .is_err()
                            {
                                break;
                            }
                        }
                        EngineCommand::AdvanceClock { ms } => {
                            offset_us += ms * 1000;
                            sync(offset_us);
                            let _ = event_tx.send(EngineEvent::ClockMoved {
                                now_ms: sandbox.now_ms(),
                            });
                        }
                        EngineCommand::Flush => sandbox.script_flush(),
                        EngineCommand::Stop => break,
                    }
                }
            })
            .expect("start the engine thread");
        let cancel = cancel_rx.recv().expect("engine thread started");
        Worker {
            commands,
            events,
            cancel,
            live_target,
            running_keys,
            thread: Some(thread),
            ended,
        }
    }

    pub fn send(&self, command: EngineCommand) {
        let _ = self.commands.send(command);
    }

    /// Stop the running script (Esc).
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
        // A live script runs on the server: while one is in progress, ask it to stop from a second
        // connection (on a cluster, to the node serving its keys). SCRIPT KILL only stops a script
        // that has not written yet (the server answers UNKILLABLE otherwise); evalbench never
        // escalates to SHUTDOWN NOSAVE.
        let keys = self.running_keys.lock().ok().and_then(|k| k.clone());
        if let (Some(target), Some(keys)) = (self.live_target.clone(), keys) {
            std::thread::spawn(move || crate::engine::live::script_kill_for(&target, &keys));
        }
    }
}

impl Drop for Worker {
    /// Quitting never waits on a busy engine thread: cancel, wait briefly, then leave it behind
    /// (it ends with the process). A script can keep the thread busy where no stop check runs (one
    /// long C call that does not allocate, or a live server that does not answer).
    fn drop(&mut self) {
        self.cancel();
        let _ = self.commands.send(EngineCommand::Stop);
        let wait = if self.live_target.is_some() {
            std::time::Duration::ZERO
        } else {
            QUIT_WAIT
        };
        match self.ended.recv_timeout(wait) {
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                if let Some(t) = self.thread.take() {
                    let _ = t.join();
                }
            }
            // Still busy: detach.
            _ => drop(self.thread.take()),
        }
    }
}
