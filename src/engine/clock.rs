//! An injectable clock: real time, or a manual one for deterministic tests and TTL experiments.

use std::cell::Cell;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub trait Clock: Send {
    /// Microseconds since the Unix epoch.
    fn now_us(&self) -> i64;
    fn now_ms(&self) -> i64 {
        self.now_us() / 1000
    }
    /// The time in milliseconds at `at`, a monotonic reading the caller has just taken (a clock may
    /// derive the wall time from it rather than read the system clock again).
    fn now_ms_at(&self, _at: Instant) -> i64 {
        self.now_ms()
    }
}

/// The system clock.
#[derive(Debug, Default, Clone)]
pub struct SystemClock;

/// Wall-clock readings are taken again once the last one is this old: within it, the wall time is
/// the last reading plus the monotonic time since (a clock step shows within a millisecond).
const WALL_REREAD: Duration = Duration::from_millis(1);

thread_local! {
    /// The last wall-clock reading (µs since the epoch) and the monotonic time it was taken at.
    static WALL_ANCHOR: Cell<Option<(Instant, i64)>> = const { Cell::new(None) };
}

fn wall_us() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0)
}

impl Clock for SystemClock {
    fn now_us(&self) -> i64 {
        wall_us()
    }

    /// A run starts with a monotonic reading anyway: reusing it saves a system-clock read (about
    /// 70 ns on a VM, a few per cent of a short script's run).
    fn now_ms_at(&self, at: Instant) -> i64 {
        WALL_ANCHOR.with(|anchor| match anchor.get() {
            Some((then, wall)) if at >= then && at - then < WALL_REREAD => {
                (wall + (at - then).as_micros() as i64) / 1000
            }
            _ => {
                let wall = wall_us();
                anchor.set(Some((at, wall)));
                wall / 1000
            }
        })
    }
}

/// A clock that only moves when told to; clones share the same time.
#[derive(Debug, Clone)]
pub struct ManualClock(Arc<AtomicI64>);

impl ManualClock {
    pub fn new(start_us: i64) -> ManualClock {
        ManualClock(Arc::new(AtomicI64::new(start_us)))
    }
    pub fn advance_ms(&self, ms: i64) {
        self.0.fetch_add(ms * 1000, Ordering::SeqCst);
    }
    pub fn set_us(&self, us: i64) {
        self.0.store(us, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_us(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wall_time_from_a_monotonic_reading_follows_the_system_clock() {
        let clock = SystemClock;
        let at = Instant::now();
        let first = clock.now_ms_at(at);
        assert!((clock.now_ms() - first).abs() <= 1, "{first}");
        // Within the re-read interval the wall time moves with the monotonic reading.
        let later = at + Duration::from_micros(900);
        let derived = clock.now_ms_at(later);
        assert!((0..=1).contains(&(derived - first)), "{first} {derived}");
        // Past it, the system clock is read again.
        std::thread::sleep(Duration::from_millis(3));
        let now = Instant::now();
        assert!((clock.now_ms_at(now) - clock.now_ms()).abs() <= 1);
    }
}
