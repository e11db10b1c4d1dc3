//! One memory budget for everything a run allocates.
//!
//! Why a counting allocator rather than byte accounting in the keyspace: a run allocates in many
//! places besides the keyspace (command replies, the trace, snapshots, the report, the Lua value's
//! description, JSON output), and every command handler mutates values in place through `&mut`;
//! keeping byte counts right in all of them would be a second implementation of every command.
//! Counting at the allocator covers all of it with no per-command code. The allocator cannot
//! refuse an allocation (Rust aborts the process when one fails), so the count is checked at a
//! few points instead — before each `redis.call` (with an estimate of what the command will
//! copy), after it, in the stop hook every 10,000 Lua instructions, and by Lua's own allocator —
//! and the handlers whose allocation size comes from an argument (SETRANGE's offset, APPEND)
//! ask [`crate::engine::commands::Ctx::reserve`] first.
//!
//! The count is process-wide (the budget bounds the process, as RSS does). Each thread adds to
//! its own cache-padded slot with a plain load and store (no locked instruction on the
//! allocation path); a reader sums the slots. A thread may free what another allocated, so a
//! slot can go negative; the sum is right. Threads beyond [`SLOTS`] share one atomic slot.
//!
//! The count only exists when the program installs [`CountingAlloc`] as its global allocator
//! (the `evalbench` binary does); otherwise [`live_bytes`] is 0 and only Lua's memory, the
//! bounded trace and the handlers' pre-checks hold the line.

use std::alloc::{GlobalAlloc, Layout};
use std::cell::Cell;
use std::sync::atomic::{AtomicIsize, AtomicUsize, Ordering::Relaxed};

/// The default budget of a run: Lua, keyspace, trace, reply and report together.
pub const DEFAULT_MEMORY_BUDGET: usize = 1 << 30;

/// The process's budget: what the front end was told (`--max-memory`, `memory_limit_mb`), read
/// by everything a run makes outside one sandbox (seeds, race labs, live replies, exports) and by
/// new sandboxes as their default.
static LIMIT: AtomicUsize = AtomicUsize::new(DEFAULT_MEMORY_BUDGET);

/// The memory budget in bytes (`DEFAULT_MEMORY_BUDGET` until a front end sets it).
pub fn limit() -> usize {
    LIMIT.load(Relaxed)
}

/// Set the process's memory budget (the CLI's `--max-memory`, the workbench's config).
pub fn set_limit(bytes: usize) {
    LIMIT.store(bytes.max(1), Relaxed);
}

/// Bytes the Rust heap may still grow by under the budget (the whole budget without the
/// counting allocator, whose count is then 0).
pub fn spare() -> usize {
    limit().saturating_sub(refresh())
}

/// `1,048,576 bytes` as `1 MiB`, `268,435,456` as `256 MiB`; other sizes in bytes.
pub fn size_text(bytes: u64) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{} bytes", crate::engine::reply::grouped(bytes as usize))
    }
}

/// What a run keeps of one `redis.log` message: its first bytes, then `… (N bytes not shown)`.
/// Redis writes the whole message to its log file; the sandbox keeps the log in memory, in the
/// report, so it keeps what a reader can use.
pub const LOG_MESSAGE_BYTES: usize = 64 << 10;

/// What a run keeps of all its `redis.log` messages together; later messages are counted in
/// one last line instead.
pub const LOG_TOTAL_BYTES: usize = 1 << 20;

/// What an export shows of the reply, of a keyspace value and of the Lua value: a document to
/// share, not a dump (a 256 MiB value would take several times its size to escape and lay out).
pub const EXPORT_VALUE_BYTES: usize = 64 << 10;

/// The elements an export shows of a reply.
pub const EXPORT_ELEMENTS: usize = 1000;

const SLOTS: usize = 32;

#[repr(align(64))]
struct Slot(AtomicIsize);

#[allow(clippy::declare_interior_mutable_const)]
const ZERO: Slot = Slot(AtomicIsize::new(0));
static COUNTS: [Slot; SLOTS + 1] = [ZERO; SLOTS + 1];
static NEXT_SLOT: AtomicUsize = AtomicUsize::new(0);
/// The last value of [`refresh`], read by Lua's allocator on every growth (one load).
static CACHED: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static MY_SLOT: Cell<usize> = const { Cell::new(usize::MAX) };
}

#[inline]
fn add(delta: isize) {
    let slot = MY_SLOT
        .try_with(|s| {
            let mut i = s.get();
            if i == usize::MAX {
                i = NEXT_SLOT.fetch_add(1, Relaxed).min(SLOTS);
                s.set(i);
            }
            i
        })
        .unwrap_or(SLOTS);
    let c = &COUNTS[slot].0;
    if slot < SLOTS {
        // Only this thread writes its slot.
        c.store(c.load(Relaxed).wrapping_add(delta), Relaxed);
    } else {
        c.fetch_add(delta, Relaxed);
    }
}

/// A global allocator that counts live bytes around another one.
pub struct CountingAlloc<A>(pub A);

unsafe impl<A: GlobalAlloc> GlobalAlloc for CountingAlloc<A> {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = self.0.alloc(layout);
        if !p.is_null() {
            add(layout.size() as isize);
        }
        p
    }
    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = self.0.alloc_zeroed(layout);
        if !p.is_null() {
            add(layout.size() as isize);
        }
        p
    }
    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        self.0.dealloc(ptr, layout);
        add(-(layout.size() as isize));
    }
    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = self.0.realloc(ptr, layout, new_size);
        if !p.is_null() {
            add(new_size as isize - layout.size() as isize);
        }
        p
    }
}

/// Bytes the Rust heap holds now (0 without [`CountingAlloc`]); also updates the cached figure.
pub fn refresh() -> usize {
    let used = NEXT_SLOT.load(Relaxed).min(SLOTS);
    let mut sum: isize = COUNTS[SLOTS].0.load(Relaxed);
    for slot in &COUNTS[..used] {
        sum = sum.wrapping_add(slot.0.load(Relaxed));
    }
    let sum = sum.max(0) as usize;
    CACHED.store(sum, Relaxed);
    sum
}

/// The figure of the last [`refresh`] (what Lua's allocator adds to its own use).
#[inline]
pub fn cached() -> usize {
    CACHED.load(Relaxed)
}

/// Whether the counting allocator is installed (something has allocated through it).
pub fn counting() -> bool {
    NEXT_SLOT.load(Relaxed) > 0
}

/// The error a run stops with past the budget (`limit` in bytes).
pub fn over_budget_text(limit: usize) -> String {
    format!(
        "ERR evalbench: the run used more than the sandbox's memory budget ({} MiB: Lua, keyspace, trace and reply together); a real server would keep allocating (raise the budget with --max-memory MIB, or memory_limit_mb in the workbench's config.toml)",
        limit >> 20
    )
}
