//! Glob-style matching as the servers do it in `stringmatchlen`: KEYS, SCAN/HSCAN/SSCAN/ZSCAN
//! MATCH, COMMAND LIST FILTERBY PATTERN, and the test files' `reply_match`/`error_match`.
//!
//! Since Redis 7.0.9 (and in every Valkey) two rules keep a hostile pattern from running for
//! minutes, and they decide some replies:
//! - once the rest of a pattern after a `*` matched at no position of the text, no earlier `*`
//!   is tried any longer (a longer match for it would need the rest to match even later). So
//!   reaching a `*` settles every earlier one, and only the last `*` reached is ever retried: the
//!   matcher below keeps that one (the server recurses, one level per `*`);
//! - the server gives up a `*` nested past 1,000 levels as no match: a pattern whose 1,001st
//!   separate `*` is reached (and is not the last byte) matches nothing. Redis 7.2.4 has no such
//!   limit (`Profile::glob_star_limit`).
//!
//! Byte rules follow the server's C: a range's ends and the text byte are compared as signed
//! chars (`[a-\xff]` is the range -1..=97), and `nocase` folds ASCII letters only. The server's
//! strings end with a NUL byte, which the matcher reads where it looks one byte past the end.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// The servers' limit on nested `*`s (all but Redis 7.2.4).
pub const STAR_LIMIT: Option<u32> = Some(1000);

/// Work between two looks at the clock.
const STOP_EVERY: u32 = 4096;

/// When a long command has to give up: the run's busy deadline or its cancel flag. A handler
/// calls `tick` once per unit of work (a key, a glob step); once it says stop, it keeps saying it.
#[derive(Default)]
pub struct StopCheck<'a> {
    deadline: Option<Instant>,
    cancel: Option<&'a AtomicBool>,
    steps: u32,
    /// The command gave up: its reply is not to be used, the run stops.
    pub stopped: bool,
}

impl<'a> StopCheck<'a> {
    /// A check that never stops (the race lab, unit tests).
    pub fn never() -> StopCheck<'static> {
        StopCheck::default()
    }

    pub fn new(deadline: Option<Instant>, cancel: &'a AtomicBool) -> StopCheck<'a> {
        StopCheck {
            deadline,
            cancel: Some(cancel),
            steps: 0,
            stopped: false,
        }
    }

    /// A check on the same deadline and cancel, for a handler that holds `Ctx` borrowed
    /// elsewhere; `join` it back.
    pub fn fork(&self) -> StopCheck<'a> {
        StopCheck {
            deadline: self.deadline,
            cancel: self.cancel,
            steps: self.steps,
            stopped: self.stopped,
        }
    }

    pub fn join(&mut self, fork: StopCheck<'a>) {
        self.stopped |= fork.stopped;
    }

    /// One unit of work; true once the command has to stop.
    #[inline]
    pub fn tick(&mut self) -> bool {
        if self.stopped {
            return true;
        }
        self.steps += 1;
        if self.steps < STOP_EVERY {
            return false;
        }
        self.steps = 0;
        self.stopped = self.cancel.is_some_and(|c| c.load(Ordering::Relaxed))
            || self.deadline.is_some_and(|d| Instant::now() >= d);
        self.stopped
    }
}

/// Does `text` match `pattern`? (The server's `stringmatchlen`, with the limit most have.)
pub fn glob_match(pattern: &[u8], text: &[u8], nocase: bool) -> bool {
    glob_match_stoppable(pattern, text, nocase, STAR_LIMIT, &mut StopCheck::never())
        .unwrap_or(false)
}

/// `glob_match` under a server's `*` limit, with a stop check between steps: None when `stop`
/// said to stop.
pub fn glob_match_stoppable(
    pattern: &[u8],
    text: &[u8],
    nocase: bool,
    star_limit: Option<u32>,
    stop: &mut StopCheck<'_>,
) -> Option<bool> {
    let matched = Matcher {
        pattern,
        text,
        nocase,
        star_limit,
    }
    .run(stop);
    (!stop.stopped).then_some(matched)
}

/// A MATCH filter over many elements: one stop step per element, then the glob's own. False
/// once stopped (the caller's reply is then dropped: `stop.stopped`).
pub fn filter_match(
    pattern: Option<&[u8]>,
    text: &[u8],
    star_limit: Option<u32>,
    stop: &mut StopCheck<'_>,
) -> bool {
    if stop.tick() {
        return false;
    }
    pattern.is_none_or(|p| glob_match_stoppable(p, text, false, star_limit, stop) == Some(true))
}

struct Matcher<'a> {
    pattern: &'a [u8],
    text: &'a [u8],
    nocase: bool,
    star_limit: Option<u32>,
}

/// The last `*` reached: where the pattern after it starts, the text position its rest is being
/// tried at, and how many `*`s deep it is.
#[derive(Clone, Copy)]
struct Star {
    rest: usize,
    at: usize,
    depth: u32,
}

/// The byte at `i`, or the NUL that ends the server's string past the end.
fn byte_at(bytes: &[u8], i: usize) -> u8 {
    bytes.get(i).copied().unwrap_or(0)
}

/// C's `tolower` in the C locale, on a `char` widened to `int`.
fn fold(c: i32) -> i32 {
    if (b'A' as i32..=b'Z' as i32).contains(&c) {
        c + 32
    } else {
        c
    }
}

impl Matcher<'_> {
    fn same(&self, a: u8, b: u8) -> bool {
        if self.nocase {
            fold(a as i8 as i32) == fold(b as i8 as i32)
        } else {
            a == b
        }
    }

    /// Does the pattern byte (or class) at `*p` accept the text byte `c`? Leaves `*p` on the
    /// last byte it read.
    fn accepts(&self, p: &mut usize, c: u8) -> bool {
        let pattern = self.pattern;
        match pattern[*p] {
            b'?' => true,
            b'[' => {
                *p += 1;
                let not = byte_at(pattern, *p) == b'^';
                if not {
                    *p += 1;
                }
                let mut matched = false;
                loop {
                    let left = pattern.len().saturating_sub(*p);
                    let here = byte_at(pattern, *p);
                    if here == b'\\' && left >= 2 {
                        *p += 1;
                        if pattern[*p] == c {
                            matched = true;
                        }
                    } else if here == b']' {
                        break;
                    } else if left == 0 {
                        // An unclosed class ends with the pattern.
                        *p -= 1;
                        break;
                    } else if left >= 3 && pattern[*p + 1] == b'-' {
                        // Signed chars, as the server compares them.
                        let (mut lo, mut hi) = (here as i8 as i32, pattern[*p + 2] as i8 as i32);
                        if lo > hi {
                            std::mem::swap(&mut lo, &mut hi);
                        }
                        let mut ch = c as i8 as i32;
                        if self.nocase {
                            (lo, hi, ch) = (fold(lo), fold(hi), fold(ch));
                        }
                        *p += 2;
                        if ch >= lo && ch <= hi {
                            matched = true;
                        }
                    } else if self.same(here, c) {
                        matched = true;
                    }
                    *p += 1;
                }
                matched != not
            }
            b => {
                let b = if b == b'\\' && pattern.len() - *p >= 2 {
                    *p += 1;
                    pattern[*p]
                } else {
                    b
                };
                self.same(b, c)
            }
        }
    }

    fn run(&self, stop: &mut StopCheck<'_>) -> bool {
        let (pattern, text) = (self.pattern, self.text);
        let (mut p, mut t) = (0, 0);
        let mut star: Option<Star> = None;
        loop {
            if stop.tick() {
                return false;
            }
            // Did this try of the last star's rest (or the whole pattern) fail?
            let failed = if p < pattern.len() && t < text.len() {
                if pattern[p] == b'*' {
                    while p + 1 < pattern.len() && pattern[p + 1] == b'*' {
                        p += 1;
                    }
                    if p + 1 == pattern.len() {
                        return true;
                    }
                    let depth = star.map_or(0, |s| s.depth) + 1;
                    if self.star_limit.is_some_and(|limit| depth > limit) {
                        // Its rest would run nested too deep at every position: the server gives up.
                        return false;
                    }
                    star = Some(Star {
                        rest: p + 1,
                        at: t,
                        depth,
                    });
                    p += 1;
                    continue;
                }
                if self.accepts(&mut p, text[t]) {
                    p += 1;
                    t += 1;
                    if t == text.len() {
                        // Trailing `*`s match the empty rest.
                        while byte_at(pattern, p) == b'*' {
                            p += 1;
                        }
                        if p >= pattern.len() {
                            return true;
                        }
                        true
                    } else {
                        false
                    }
                } else {
                    true
                }
            } else {
                // The pattern ran out with text left (or the text was empty from the start).
                if p >= pattern.len() && t == text.len() {
                    return true;
                }
                true
            };
            if failed {
                // Retry the last star's rest one byte later; past the text's end nothing
                // earlier is retried.
                let Some(last) = star.as_mut() else {
                    return false;
                };
                last.at += 1;
                if last.at >= text.len() {
                    return false;
                }
                p = last.rest;
                t = last.at;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_servers_rules() {
        assert!(glob_match(b"h?llo", b"hello", false));
        assert!(glob_match(b"h*llo", b"heeeello", false));
        assert!(glob_match(b"h[ae]llo", b"hallo", false));
        assert!(!glob_match(b"h[^e]llo", b"hello", false));
        assert!(glob_match(b"h[a-b]llo", b"hbllo", false));
        assert!(glob_match(b"h[b-a]llo", b"hallo", false));
        assert!(!glob_match(b"a", b"", false));
        // An empty text matches the empty pattern only: the server never enters its loop.
        assert!(!glob_match(b"*", b"", false));
        assert!(glob_match(b"", b"", false));
        assert!(glob_match(b"a*", b"a", false));
        assert!(glob_match(b"a**", b"a", false));
        assert!(!glob_match(b"a*b", b"a", false));
        // Escapes, in and out of a class; a lone trailing backslash is a literal.
        assert!(glob_match(b"a\\*", b"a*", false));
        assert!(!glob_match(b"a\\*", b"ab", false));
        assert!(glob_match(b"a\\", b"a\\", false));
        assert!(glob_match(b"[\\]]", b"]", false));
        // An unclosed class takes what is left of the pattern.
        assert!(glob_match(b"[ab", b"b", false));
        assert!(!glob_match(b"[ab", b"c", false));
        assert!(glob_match(b"[a-", b"-", false));
        // Ranges compare signed chars: \xff is -1, below 'a'.
        assert!(glob_match(b"[a-\xff]", b"\x00", false));
        assert!(glob_match(b"[a-\xff]", b"\xff", false));
        assert!(!glob_match(b"[a-\xff]", b"b", false));
        assert!(!glob_match(b"[a-\xff]", b"\x80", false));
        // nocase folds ASCII letters only.
        assert!(glob_match(b"H[A-C]LLO", b"hbllo", true));
        assert!(!glob_match(b"\xc9", b"\xe9", true));
        // A byte past the end reads as NUL: "?" and a trailing "*" after the text ran out.
        assert!(glob_match(b"ab*", b"ab", false));
    }

    #[test]
    fn more_than_a_thousand_nested_stars_never_match() {
        let pattern = |n: usize| "*a".repeat(n);
        let text = "a".repeat(1001);
        // The 1,000th `*` expands at depth 999 and its rest runs at 1,000: allowed.
        assert!(glob_match(pattern(1000).as_bytes(), text.as_bytes(), false));
        assert!(!glob_match(
            pattern(1001).as_bytes(),
            text.as_bytes(),
            false
        ));
        // Consecutive stars are one; a last star is not nested.
        let doubled = "**a".repeat(1000);
        assert!(glob_match(doubled.as_bytes(), text.as_bytes(), false));
        assert!(glob_match(
            "a*".repeat(1001).as_bytes(),
            text.as_bytes(),
            false
        ));
        assert!(!glob_match(
            "a*".repeat(1002).as_bytes(),
            text.as_bytes(),
            false
        ));
        // Redis 7.2.4 has no limit; a pattern of 200,000 stars needs no deep stack.
        let deep = "*a".repeat(200_000);
        let long = "a".repeat(200_000);
        let mut stop = StopCheck::never();
        assert_eq!(
            glob_match_stoppable(deep.as_bytes(), long.as_bytes(), false, None, &mut stop),
            Some(true)
        );
        assert!(!glob_match(deep.as_bytes(), long.as_bytes(), false));
    }

    #[test]
    fn a_hostile_pattern_gives_up_early() {
        let text = "a".repeat(40);
        let pattern = "*a".repeat(13) + "*ab";
        assert!(!glob_match(pattern.as_bytes(), text.as_bytes(), false));
        let long = "a".repeat(4000);
        assert!(!glob_match(pattern.as_bytes(), long.as_bytes(), false));
    }

    #[test]
    fn a_stop_ends_the_match() {
        let cancel = AtomicBool::new(true);
        let mut stop = StopCheck::new(None, &cancel);
        let text = "ab".repeat(10_000);
        assert_eq!(
            glob_match_stoppable(b"*a*a*a*c", text.as_bytes(), false, STAR_LIMIT, &mut stop),
            None
        );
        assert!(stop.tick());
    }
}
