//! An injectable clock: real time, or a manual one for deterministic tests and TTL experiments.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

pub trait Clock: Send {
    /// Microseconds since the Unix epoch.
    fn now_us(&self) -> i64;
    fn now_ms(&self) -> i64 {
        self.now_us() / 1000
    }
}

/// The system clock.
#[derive(Debug, Default, Clone)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_us(&self) -> i64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_micros() as i64)
            .unwrap_or(0)
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
