//! Ctrl-C during a live run from the command line (`run --server`, `function call`, `test --server`).
//! Before the script reaches the server, nothing is sent and evalbench exits. While it runs there,
//! SCRIPT KILL (FUNCTION KILL for a function) goes to the node running it, and the server's answer
//! is reported as it is: stopped only when a PING is answered afterwards. A second Ctrl-C exits at
//! once. After the script ended, Ctrl-C exits (nothing runs on the server).
//!
//! The phase and the cancel decision live in the engine's `RunControl` (one lock: a Ctrl-C lands
//! either before the send or after it); this file only maps them to the terminal.

use super::CliError;
use crate::engine::display::display_text;
use crate::engine::live::guarded::{kill_running_report, CancelAction, Phase, RunControl};
use crate::engine::live::{KillReport, KillVerdict, LiveBackend, Target};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, Once};
use std::time::Duration;

/// The exit status after Ctrl-C (128 + SIGINT, as shells report it).
pub const EXIT_INTERRUPTED: i32 = 130;

struct Watched {
    control: Arc<RunControl>,
    /// Where SCRIPT KILL goes: the run's server, database 0, with waits long enough for a busy script.
    target: Target,
    cluster: bool,
    /// A kill was started for this command: the next Ctrl-C exits at once.
    killing: bool,
}

static WATCH: Mutex<Option<Watched>> = Mutex::new(None);
/// A script of this command reached the server (for the words of a Ctrl-C after it).
static SENT: AtomicBool = AtomicBool::new(false);
/// A Ctrl-C decided to exit: a run that enters the server phase now waits for the exit instead.
static EXITING: AtomicBool = AtomicBool::new(false);
static KILLED: Mutex<Option<KillReport>> = Mutex::new(None);
static KILL_DONE: Condvar = Condvar::new();
static INSTALL: Once = Once::new();

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn say(text: &str) {
    eprintln!("evalbench: {}", display_text(text));
}

/// Take over Ctrl-C for the live runs on `live`'s server from now on; the returned control is the
/// one the command's runs go through (`on_server`, or a guarded run's own control).
pub fn watch(live: &LiveBackend) -> Arc<RunControl> {
    INSTALL.call_once(|| {
        // Without the handler (no signal thread) Ctrl-C keeps its default: the process ends, as
        // before.
        if let Ok(mut signals) = signal_hook::iterator::Signals::new([signal_hook::consts::SIGINT])
        {
            let _ = std::thread::Builder::new()
                .name("ctrl-c".into())
                .spawn(move || {
                    for _ in signals.forever() {
                        interrupted();
                    }
                });
        }
    });
    // Told each phase before the run acts on it: past a Ctrl-C that exits, the script is never sent.
    let control = Arc::new(RunControl::with_observer(|phase| {
        if phase == Phase::OnServer {
            while EXITING.load(Ordering::SeqCst) {
                std::thread::park();
            }
            SENT.store(true, Ordering::SeqCst);
        }
    }));
    *lock(&WATCH) = Some(Watched {
        control: control.clone(),
        target: live.killer_target(),
        cluster: live.server.cluster,
        killing: false,
    });
    control
}

/// Run `send` (it sends a script with these KEYS and waits for its reply) as a run on the server:
/// a Ctrl-C meanwhile sends SCRIPT KILL. Without `watch`, `send` just runs.
pub fn on_server<T>(keys: &[Vec<u8>], send: impl FnOnce() -> T) -> Result<T, CliError> {
    on_server_at(keys, None, send)
}

/// `on_server` with the node of a cluster the script goes to: a Ctrl-C's kill goes there.
pub fn on_server_at<T>(
    keys: &[Vec<u8>],
    node: Option<crate::engine::live::cluster::NodeRef>,
    send: impl FnOnce() -> T,
) -> Result<T, CliError> {
    let control = match lock(&WATCH).as_ref() {
        Some(w) => w.control.clone(),
        None => return Ok(send()),
    };
    control.begin(keys);
    control.set_node(node);
    if control.enter(Phase::OnServer).is_err() {
        control.end();
        return Err(interrupted_error(
            "interrupted (Ctrl-C) before the script was sent: nothing was sent to the server",
        ));
    }
    let out = send();
    control.end();
    finish()?;
    Ok(out)
}

/// After a run: when a Ctrl-C sent a kill, its verdict (awaited) as the command's error.
pub fn finish() -> Result<(), CliError> {
    let killing = lock(&WATCH).as_ref().is_some_and(|w| w.killing);
    if !killing {
        return Ok(());
    }
    let mut report = lock(&KILLED);
    // The kill thread's own waits are bounded (SCRIPT KILL, then PING for KILL_CONFIRM).
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    while report.is_none() {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            break;
        }
        report = match KILL_DONE.wait_timeout(report, left) {
            Ok((guard, _)) => guard,
            Err(e) => e.into_inner().0,
        };
    }
    Err(interrupted_error(&match report.as_ref() {
        Some(r) if r.verdict == KillVerdict::NotRunning => {
            "interrupted (Ctrl-C): no script was running on the server by then (nothing to stop)"
                .to_string()
        }
        Some(r) => format!("interrupted (Ctrl-C): {}", r.text),
        None => {
            "interrupted (Ctrl-C): the kill's answer did not come; the server may still be busy"
                .to_string()
        }
    }))
}

fn interrupted_error(message: &str) -> CliError {
    CliError {
        code: EXIT_INTERRUPTED,
        message: message.into(),
    }
}

/// One Ctrl-C (on the signal thread: it must never wait for the server).
fn interrupted() {
    let mut watch = lock(&WATCH);
    let Some(w) = watch.as_mut() else {
        std::process::exit(EXIT_INTERRUPTED);
    };
    if w.killing {
        EXITING.store(true, Ordering::SeqCst);
        say("interrupted again: exiting without waiting for the script; the server may still be busy running it");
        std::process::exit(EXIT_INTERRUPTED);
    }
    match w.control.cancel() {
        // Not on the server: exit, still holding the lock, so no script is sent after this.
        CancelAction::Nothing | CancelAction::NotSent => {
            EXITING.store(true, Ordering::SeqCst);
            if SENT.load(Ordering::SeqCst) {
                say("interrupted (Ctrl-C) after the script ended on the server: nothing runs there now");
            } else {
                say("interrupted (Ctrl-C) before the script was sent: nothing was sent to the server");
            }
            std::process::exit(EXIT_INTERRUPTED);
        }
        CancelAction::Kill { keys, generation } => {
            w.killing = true;
            let (target, control, cluster) = (w.target.clone(), w.control.clone(), w.cluster);
            say("interrupted (Ctrl-C): stopping the script on the server (Ctrl-C again exits at once)");
            std::thread::spawn(move || {
                let report = kill_running_report(&target, &control, &keys, generation, cluster);
                match report.verdict {
                    // The script's connection gets its reply now: the run ends and reports it.
                    KillVerdict::Stopped | KillVerdict::NotRunning => {}
                    // No reply will come.
                    KillVerdict::NotAnswering => {
                        say(&format!("interrupted (Ctrl-C): {}", report.text));
                        std::process::exit(EXIT_INTERRUPTED);
                    }
                    _ => say(&format!(
                        "interrupted (Ctrl-C): {}; waiting for the script to end (Ctrl-C again exits at once; the server may still be busy)",
                        report.text
                    )),
                }
                *lock(&KILLED) = Some(report);
                KILL_DONE.notify_all();
            });
        }
    }
}
