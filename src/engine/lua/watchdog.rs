//! The busy threshold's last resort: a thread that, once a run is past its deadline or cancelled,
//! sets the stop hook to fire on the next instruction. The count hook fires every 10,000
//! instructions and the allocator checks the clock as memory grows, but a loop whose C call
//! allocates nothing (rebuilding an already interned 64 MiB string, `table.sort` without a
//! comparator) can run thousands of such calls between two count hooks. `lua_sethook` may be
//! called from another thread (Lua 5.1's own interpreter calls it from a signal handler).

use super::raw::L;
use mlua::ffi;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

/// A sandbox's run as the watchdog sees it; the sandbox arms it at the start of a run and disarms
/// it (under the same lock, so the Lua state is never touched after the run) at the end.
#[derive(Default)]
pub struct Watch {
    run: Mutex<Option<Armed>>,
}

struct Armed {
    l: L,
    deadline: Option<Instant>,
    cancel: Arc<AtomicBool>,
    fired: bool,
}

// The Lua state is only touched under the lock, while its run is armed.
unsafe impl Send for Armed {}

/// How often the watchdog looks at a run's cancel flag (the deadline is slept to exactly).
const CANCEL_POLL: Duration = Duration::from_millis(5);
const IDLE_POLL: Duration = Duration::from_millis(50);

fn registry() -> &'static Mutex<Vec<Weak<Watch>>> {
    static REGISTRY: OnceLock<Mutex<Vec<Weak<Watch>>>> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        std::thread::Builder::new()
            .name("evalbench-watchdog".into())
            .spawn(watch_loop)
            .expect("the watchdog thread starts");
        Mutex::new(Vec::new())
    })
}

impl Watch {
    /// A watch the watchdog thread looks after for as long as it lives.
    pub fn new() -> Arc<Watch> {
        let watch = Arc::new(Watch::default());
        registry()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Arc::downgrade(&watch));
        watch
    }

    pub fn arm(&self, l: L, deadline: Option<Instant>, cancel: Arc<AtomicBool>) {
        *self.lock() = Some(Armed {
            l,
            deadline,
            cancel,
            fired: false,
        });
    }

    pub fn disarm(&self) {
        *self.lock() = None;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Armed>> {
        self.run.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Fire if due; otherwise how long until this run needs another look.
    fn check(&self, now: Instant) -> Duration {
        let mut run = self.lock();
        let Some(armed) = run.as_mut().filter(|a| !a.fired) else {
            return IDLE_POLL;
        };
        let due = armed.cancel.load(Ordering::Relaxed) || armed.deadline.is_some_and(|d| now >= d);
        if due {
            armed.fired = true;
            unsafe {
                ffi::lua_sethook(
                    armed.l,
                    Some(super::api::stop_hook),
                    ffi::LUA_MASKCOUNT | ffi::LUA_MASKLINE,
                    1,
                )
            };
            return IDLE_POLL;
        }
        armed
            .deadline
            .map_or(CANCEL_POLL, |d| d.saturating_duration_since(now))
            .min(CANCEL_POLL)
    }
}

fn watch_loop() {
    loop {
        let now = Instant::now();
        let mut next = IDLE_POLL;
        registry()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|w| match w.upgrade() {
                Some(watch) => {
                    next = next.min(watch.check(now));
                    true
                }
                None => false,
            });
        std::thread::sleep(next.max(Duration::from_micros(200)));
    }
}
