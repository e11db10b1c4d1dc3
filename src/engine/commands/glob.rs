//! Glob-style matching as Redis 7.0.9 and later (and every Valkey) do it in `stringmatchlen`:
//! KEYS, SCAN/HSCAN/SSCAN/ZSCAN MATCH, COMMAND LIST FILTERBY PATTERN, and the test files'
//! `reply_match`/`error_match`.
//!
//! Two rules keep a hostile pattern from running for minutes, and they decide some replies:
//! - once the rest of a pattern after a `*` matched at no position of the text, no earlier `*`
//!   is tried any longer (a longer match for it would need the rest to match even later);
//! - a `*` nested more than `MAX_NESTING` deep (counting the `*`s already being expanded) never
//!   matches, so a pattern with more than 1,000 separate `*`s matches no text that needs them all.
//!
//! Byte rules follow the server's C: a range's ends and the text byte are compared as signed
//! chars (`[a-\xff]` is the range -1..=97), and `nocase` folds ASCII letters only. The server's
//! strings end with a NUL byte, which the matcher reads where it looks one byte past the end.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// How deep `*`s may nest before the server gives up on the branch (`nesting > 1000`).
const MAX_NESTING: u32 = 1000;

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

/// Does `text` match `pattern`? (The server's `stringmatchlen`.)
pub fn glob_match(pattern: &[u8], text: &[u8], nocase: bool) -> bool {
    glob_match_stoppable(pattern, text, nocase, &mut StopCheck::never()).unwrap_or(false)
}

/// `glob_match` with a stop check between steps: None when `stop` said to stop.
pub fn glob_match_stoppable(
    pattern: &[u8],
    text: &[u8],
    nocase: bool,
    stop: &mut StopCheck<'_>,
) -> Option<bool> {
    let mut matcher = Matcher {
        pattern,
        text,
        nocase,
        skip_longer: false,
        stop,
    };
    let matched = matcher.run(0, 0, 0);
    (!matcher.stop.stopped).then_some(matched)
}

/// A MATCH filter over many elements: one stop step per element, then the glob's own. False
/// once stopped (the caller's reply is then dropped: `stop.stopped`).
pub fn filter_match(pattern: Option<&[u8]>, text: &[u8], stop: &mut StopCheck<'_>) -> bool {
    if stop.tick() {
        return false;
    }
    pattern.is_none_or(|p| glob_match_stoppable(p, text, false, stop) == Some(true))
}

struct Matcher<'p, 's, 'c> {
    pattern: &'p [u8],
    text: &'p [u8],
    nocase: bool,
    /// The rest of the pattern after some `*` matched nowhere: no earlier `*` is tried further.
    skip_longer: bool,
    stop: &'s mut StopCheck<'c>,
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

impl Matcher<'_, '_, '_> {
    fn same(&self, a: u8, b: u8) -> bool {
        if self.nocase {
            fold(a as i8 as i32) == fold(b as i8 as i32)
        } else {
            a == b
        }
    }

    /// Match `pattern[p..]` against `text[t..]`, `nesting` `*`s deep.
    fn run(&mut self, mut p: usize, mut t: usize, nesting: u32) -> bool {
        if nesting > MAX_NESTING {
            return false;
        }
        let (pattern, text) = (self.pattern, self.text);
        while p < pattern.len() && t < text.len() {
            if self.stop.tick() {
                return false;
            }
            match pattern[p] {
                b'*' => {
                    while p + 1 < pattern.len() && pattern[p + 1] == b'*' {
                        p += 1;
                    }
                    if p + 1 == pattern.len() {
                        return true;
                    }
                    while t < text.len() {
                        if self.run(p + 1, t, nesting + 1) {
                            return true;
                        }
                        if self.skip_longer || self.stop.stopped {
                            return false;
                        }
                        t += 1;
                    }
                    self.skip_longer = true;
                    return false;
                }
                b'?' => t += 1,
                b'[' => {
                    p += 1;
                    let not = byte_at(pattern, p) == b'^';
                    if not {
                        p += 1;
                    }
                    let c = text[t];
                    let mut matched = false;
                    loop {
                        let left = pattern.len().saturating_sub(p);
                        let here = byte_at(pattern, p);
                        if here == b'\\' && left >= 2 {
                            p += 1;
                            if pattern[p] == c {
                                matched = true;
                            }
                        } else if here == b']' {
                            break;
                        } else if left == 0 {
                            // An unclosed class ends with the pattern.
                            p -= 1;
                            break;
                        } else if left >= 3 && pattern[p + 1] == b'-' {
                            // Signed chars, as the server compares them.
                            let (mut lo, mut hi) = (here as i8 as i32, pattern[p + 2] as i8 as i32);
                            if lo > hi {
                                std::mem::swap(&mut lo, &mut hi);
                            }
                            let mut ch = c as i8 as i32;
                            if self.nocase {
                                (lo, hi, ch) = (fold(lo), fold(hi), fold(ch));
                            }
                            p += 2;
                            if ch >= lo && ch <= hi {
                                matched = true;
                            }
                        } else if self.same(here, c) {
                            matched = true;
                        }
                        p += 1;
                    }
                    if matched == not {
                        return false;
                    }
                    t += 1;
                }
                b => {
                    let b = if b == b'\\' && pattern.len() - p >= 2 {
                        p += 1;
                        pattern[p]
                    } else {
                        b
                    };
                    if !self.same(b, text[t]) {
                        return false;
                    }
                    t += 1;
                }
            }
            p += 1;
            if t == text.len() {
                // Trailing `*`s match the empty rest.
                while byte_at(pattern, p) == b'*' {
                    p += 1;
                }
                break;
            }
        }
        p >= pattern.len() && t == text.len()
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
        // Consecutive stars are one.
        let doubled = "**a".repeat(1000);
        assert!(glob_match(doubled.as_bytes(), text.as_bytes(), false));
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
            glob_match_stoppable(b"*a*a*a*c", text.as_bytes(), false, &mut stop),
            None
        );
        assert!(stop.tick());
    }
}
