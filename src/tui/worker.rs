//! The engine thread: it owns the sandbox (the Lua state is not `Send`), runs scripts while the UI
//! keeps drawing, and answers with whole reports. A newer run supersedes an older one.

use crate::engine::clock::ManualClock;
use crate::engine::keyspace::Db;
use crate::engine::live::guarded::{
    guarded_run, kill_running, CancelAction, Consent, Phase, Question, RunControl,
};
use crate::engine::live::LiveBackend;
use crate::engine::{RunReport, RunRequest, Sandbox};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
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
        /// On a live server: what the user agreed to after the guard asked (nothing: dry-run first).
        consent: Consent,
        /// Run on the live server (when there is one) rather than in the sandbox.
        live: bool,
        /// The sandbox clock for this run (Unix ms): the seed's time plus the clock offset (seed
        /// TTLs count from the run's start, whatever the wall clock says).
        clock_ms: i64,
    },
    /// The script is a function library: load it and FCALL `function` in the sandbox.
    RunFunction {
        id: u64,
        request: RunRequest,
        seed: Db,
        busy_threshold_ms: u64,
        clock_ms: i64,
        function: String,
    },
    /// F5 on a library with a live backend: the guarded FCALL of the server's function.
    LiveFcall {
        id: u64,
        request: RunRequest,
        consent: Consent,
        function: String,
    },
    /// Plan or send FUNCTION LOAD on the live connection (tui/live_function.rs).
    LiveFunction(super::live_function::LiveFunctionJob),
    /// SCRIPT FLUSH.
    Flush,
    Stop,
    /// A debug session (tui/debug_engine.rs): runs to its end, answering the debug channel.
    Debug(Box<super::debug_engine::StartDebug>),
    /// The last run again under another profile (tui/reply_compare.rs).
    Compare(Box<super::reply_compare::CompareJob>),
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
    /// Live: nothing was sent; the guard asks for consent (the dry run writes, was slow or did not
    /// complete, or none was possible).
    pub question: Option<Question>,
    /// The report is the live server's (its trace has no per-call times: a script has no clock
    /// fine enough); false for the sandbox and for a dry run held back.
    pub live: bool,
    /// Live: how long the dry run took (None: none ran).
    pub dry_run_ns: Option<u64>,
    /// Live: what SCRIPT KILL answered when the user cancelled the script on the server.
    pub kill: Option<String>,
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
        RunResult::of_sandbox(sandbox, id, request, report, seed)
    }

    /// A sandbox run's result: its report, the keyspace before (`seed`) and now.
    pub fn of_sandbox(
        sandbox: &Sandbox,
        id: u64,
        request: RunRequest,
        report: crate::engine::RunReport,
        seed: Db,
    ) -> RunResult {
        RunResult {
            id,
            request,
            report,
            before: seed,
            after: sandbox.keyspace().db(0).clone(),
            now_ms: sandbox.now_ms(),
            question: None,
            live: false,
            dry_run_ns: None,
            kill: None,
        }
    }
}

pub enum EngineEvent {
    Finished(Box<RunResult>),
    /// A live run entered a phase (the running counter separates the dry run from the server).
    Phase(Phase),
    /// A stop, a console line or the end of a debug session.
    Debug(super::debug_engine::DebugEvent),
    /// The run with this id under a second profile.
    Compared(u64, Box<crate::engine::compare::ProfileComparison>),
    /// A FUNCTION LOAD plan or answer (tui/live_function.rs).
    LiveFunction(super::live_function::LiveFunctionAnswer),
    /// On a cluster, before a live run's `Finished`: the node that ran the script, or that it goes
    /// to once the user agrees ("127.0.0.1:7002 (master, slot 15495)"); None when no node would
    /// take it (CROSSSLOT, no master for the slot).
    Node(Option<String>),
}

pub struct Worker {
    /// Each command goes with its number (1, 2, ...): a cancel stops the commands sent before it.
    commands: Sender<(u64, EngineCommand)>,
    sent: AtomicU64,
    /// The number of the last command sent when the user last cancelled: the engine thread arms the
    /// sandbox's stop flag for a command it starts only when that command was sent before the
    /// cancel (an Esc pressed as a run ended never stops the next one, and one pressed before a
    /// queued run starts still stops it).
    cancelled_upto: Arc<AtomicU64>,
    pub events: Receiver<EngineEvent>,
    cancel: Arc<AtomicBool>,
    /// The live server, to send SCRIPT KILL from another connection when the user cancels, and
    /// whether it is a cluster.
    live_target: Option<(crate::engine::live::Target, bool)>,
    /// The phase of the live run in progress: a cancel before the send stops it (nothing is sent),
    /// after it sends SCRIPT KILL (on a cluster to the node serving its KEYS; with no run in
    /// progress none is sent: a cluster run without keys would ask every master).
    control: Arc<RunControl>,
    thread: Option<std::thread::JoinHandle<()>>,
    /// Disconnects when the engine thread ends.
    ended: Receiver<()>,
    /// Commands to a paused debug session; dropped first on quit, which aborts it.
    debug: Option<Sender<super::debug_engine::DebugCommand>>,
}

/// How long quitting waits for a cancelled run to stop before leaving the engine thread behind.
pub const QUIT_WAIT: std::time::Duration = std::time::Duration::from_millis(500);

/// A live run from the workbench, behind the guard (`engine::live::guarded`): dry-run in the sandbox
/// on a copy of the declared keys first, sent to the server only when the dry run raises no concern
/// or the user consented. `control` tells the phase and cancels (it is `begin`-ed here).
pub fn run_live(
    live: &mut LiveBackend,
    id: u64,
    request: RunRequest,
    consent: &Consent,
    control: &RunControl,
) -> RunResult {
    let now = crate::engine::clock::Clock::now_ms(&crate::engine::clock::SystemClock);
    control.begin(&request.keys);
    let run = guarded_run(live, &request, consent, control, now);
    // The answer of a SCRIPT KILL sent while the script ran, in words (it comes from another thread).
    let kill = control.kill_answer(KILL_ANSWER_WAIT);
    RunResult::of_guarded(id, request, run, now, kill)
}

impl RunResult {
    /// The result of a guarded live run (a script, or a function's FCALL), with what SCRIPT KILL
    /// or FUNCTION KILL answered when the user stopped it.
    pub fn of_guarded(
        id: u64,
        request: RunRequest,
        run: crate::engine::live::guarded::GuardedRun,
        now_ms: i64,
        kill: Option<String>,
    ) -> RunResult {
        RunResult {
            id,
            request,
            report: run.report,
            before: run.before,
            after: run.after,
            now_ms,
            question: run.question,
            live: run.sent,
            dry_run_ns: run.dry_run_ns,
            kill,
        }
    }
}

/// The node of a live run on a cluster: where it ran when it was sent, else where it would go.
fn run_node(live: &LiveBackend, result: &RunResult) -> Option<String> {
    if live.cross_slot_refusal(&result.request).is_some() {
        return None;
    }
    let node = if result.live {
        live.last_node.clone()
    } else {
        live.node_for_keys(&result.request.keys)
    };
    node.map(|n| n.describe())
}

/// How long a finished live run waits for the answer of the SCRIPT KILL sent while it ran.
const KILL_ANSWER_WAIT: std::time::Duration = std::time::Duration::from_secs(3);

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
        let live_target = live.as_ref().map(|l| (l.target.clone(), l.server.cluster));
        let (commands, command_rx) = channel::<(u64, EngineCommand)>();
        let cancelled_upto = Arc::new(AtomicU64::new(0));
        let engine_cancelled_upto = cancelled_upto.clone();
        let (event_tx, events) = channel::<EngineEvent>();
        let phases = Mutex::new(event_tx.clone());
        let control = Arc::new(RunControl::with_observer(move |phase| {
            if let Ok(tx) = phases.lock() {
                let _ = tx.send(EngineEvent::Phase(phase));
            }
        }));
        let run_control = control.clone();
        let (cancel_tx, cancel_rx) = channel();
        let (ended_tx, ended) = channel::<()>();
        let (debug, debug_rx) = channel::<super::debug_engine::DebugCommand>();
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
                // A manual clock each run sets to its start (the App's seed time plus its offset).
                let clock = ManualClock::new(start_us);
                let mut sandbox = Sandbox::with_clock(Box::new(clock.clone()));
                sandbox.config.snapshots = true;
                sandbox.config.memory_limit = memory_limit;
                sandbox.set_profile(profile);
                let stop = sandbox.cancel_handle();
                let _ = cancel_tx.send(stop.clone());
                while let Ok((number, command)) = command_rx.recv() {
                    // Cleared first, then armed if a cancel covers this command: a cancel racing this
                    // check stores its flag after its number, so it is never overwritten.
                    stop.store(false, Ordering::SeqCst);
                    if engine_cancelled_upto.load(Ordering::SeqCst) >= number {
                        stop.store(true, Ordering::SeqCst);
                    }
                    match command {
                        EngineCommand::Run {
                            id,
                            request,
                            seed,
                            busy_threshold_ms,
                            consent,
                            live: on_live,
                            clock_ms,
                        } => {
                            clock.set_us(clock_ms.saturating_mul(1000));
                            let result = match live.as_mut().filter(|_| on_live) {
                                Some(live) => {
                                    let result =
                                        run_live(live, id, request, &consent, &run_control);
                                    if live.server.cluster {
                                        let node = run_node(live, &result);
                                        let _ = event_tx.send(EngineEvent::Node(node));
                                    }
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
                        // a library's function (tui/form_function.rs)
                        EngineCommand::RunFunction {
                            id,
                            request,
                            seed,
                            busy_threshold_ms,
                            clock_ms,
                            function,
                        } => {
                            clock.set_us(clock_ms.saturating_mul(1000));
                            let result = RunResult::fcall(
                                &mut sandbox,
                                id,
                                request,
                                seed,
                                busy_threshold_ms,
                                &function,
                            );
                            if event_tx
                                .send(EngineEvent::Finished(Box::new(result)))
                                .is_err()
                            {
                                break;
                            }
                        }
                        // live Functions (tui/live_function.rs)
                        EngineCommand::LiveFcall {
                            id,
                            request,
                            consent,
                            function,
                        } => {
                            let result = match live.as_mut() {
                                Some(live) => super::live_function::run_live_fcall(
                                    live,
                                    id,
                                    request,
                                    &consent,
                                    &run_control,
                                    &function,
                                ),
                                None => continue,
                            };
                            if event_tx
                                .send(EngineEvent::Finished(Box::new(result)))
                                .is_err()
                            {
                                break;
                            }
                        }
                        EngineCommand::LiveFunction(job) => {
                            let answer = super::live_function::run_job(live.as_mut(), job);
                            if event_tx.send(EngineEvent::LiveFunction(answer)).is_err() {
                                break;
                            }
                        }
                        EngineCommand::Flush => sandbox.script_flush(),
                        EngineCommand::Compare(job) => {
                            let id = job.id;
                            let compared = EngineEvent::Compared(id, Box::new(job.run()));
                            if event_tx.send(compared).is_err() {
                                break;
                            }
                        }
                        EngineCommand::Debug(start) => {
                            clock.set_us(start.clock_ms.saturating_mul(1000));
                            let result = super::debug_engine::run(
                                &mut sandbox,
                                *start,
                                &debug_rx,
                                &event_tx,
                            );
                            if event_tx
                                .send(EngineEvent::Finished(Box::new(result)))
                                .is_err()
                            {
                                break;
                            }
                        }
                        EngineCommand::Stop => break,
                    }
                }
            })
            .expect("start the engine thread");
        let cancel = cancel_rx.recv().expect("engine thread started");
        Worker {
            commands,
            sent: AtomicU64::new(0),
            cancelled_upto,
            events,
            cancel,
            live_target,
            control,
            thread: Some(thread),
            ended,
            debug: Some(debug),
        }
    }

    /// A debugger command: a session starts on the engine thread, the others go to it.
    pub fn debug(&self, command: super::debug_engine::DebugCommand) {
        match command {
            super::debug_engine::DebugCommand::Start(start) => {
                self.send(EngineCommand::Debug(start))
            }
            other => {
                if let Some(debug) = &self.debug {
                    let _ = debug.send(other);
                }
            }
        }
    }

    pub fn send(&self, command: EngineCommand) {
        let number = self.sent.fetch_add(1, Ordering::SeqCst) + 1;
        let _ = self.commands.send((number, command));
    }

    /// Stop the running script (Esc). In the sandbox: its stop flag. On a live server, before the
    /// script reached it (copying keys, the dry run): nothing is sent. Once there: SCRIPT KILL from a
    /// second connection, again while the server answers NOTBUSY and the script is still on its
    /// way; its answer comes with the run's result. SCRIPT KILL only stops a script that has not
    /// written (UNKILLABLE otherwise); evalbench never escalates to SHUTDOWN NOSAVE.
    pub fn cancel(&self) {
        self.cancelled_upto
            .store(self.sent.load(Ordering::SeqCst), Ordering::SeqCst);
        self.cancel.store(true, Ordering::SeqCst);
        if let (CancelAction::Kill { keys, generation }, Some((target, cluster))) =
            (self.control.cancel(), self.live_target.clone())
        {
            let control = self.control.clone();
            std::thread::spawn(move || {
                let answer = kill_running(&target, &control, &keys, generation, cluster);
                control.set_kill_answer(generation, answer);
            });
        }
    }

    /// The next finished run within `timeout`, other events skipped (tests and scripts driving the
    /// worker without an App).
    pub fn next_result(&self, timeout: std::time::Duration) -> Option<Box<RunResult>> {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.events.recv_timeout(left).ok()? {
                EngineEvent::Finished(result) => return Some(result),
                _ => continue,
            }
        }
    }

    /// The phase of the live run in progress (Idle between runs and in the sandbox).
    pub fn live_phase(&self) -> Phase {
        self.control.phase()
    }
}

impl Drop for Worker {
    /// Quitting never waits on a busy engine thread: cancel, wait briefly, then leave it behind
    /// (it ends with the process). A script can keep the thread busy where no stop check runs (one
    /// long C call that does not allocate, or a live server that does not answer).
    fn drop(&mut self) {
        // A paused debug session sees its channel close and aborts.
        self.debug.take();
        self.cancel();
        self.send(EngineCommand::Stop);
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
