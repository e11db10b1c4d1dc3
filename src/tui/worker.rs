//! The engine thread: it owns the sandbox (the Lua state is not `Send`), runs scripts while the UI
//! keeps drawing, and answers with whole reports. A newer run supersedes an older one.

use crate::engine::clock::ManualClock;
use crate::engine::keyspace::Db;
use crate::engine::{RunReport, RunRequest, Sandbox};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

pub enum EngineCommand {
    /// Reset database 0 to `seed`, then run.
    Run {
        id: u64,
        request: RunRequest,
        seed: Db,
        busy_threshold_ms: u64,
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
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Worker {
    pub fn start() -> Worker {
        let (commands, command_rx) = channel::<EngineCommand>();
        let (event_tx, events) = channel::<EngineEvent>();
        let (cancel_tx, cancel_rx) = channel();
        let thread = std::thread::Builder::new()
            .name("evalbench-engine".into())
            .stack_size(256 << 20)
            .spawn(move || {
                let start_us = SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map(|d| d.as_micros() as i64)
                    .unwrap_or(0);
                // A manual clock that follows real time between runs, so TTLs tick and "advance" works.
                let clock = ManualClock::new(start_us);
                let mut sandbox = Sandbox::with_clock(Box::new(clock.clone()));
                sandbox.config.snapshots = true;
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
                        } => {
                            sync(offset_us);
                            let result =
                                RunResult::run(&mut sandbox, id, request, seed, busy_threshold_ms);
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
            thread: Some(thread),
        }
    }

    pub fn send(&self, command: EngineCommand) {
        let _ = self.commands.send(command);
    }

    /// Stop the running script (Esc).
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.cancel();
        let _ = self.commands.send(EngineCommand::Stop);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
