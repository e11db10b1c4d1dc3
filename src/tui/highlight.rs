//! Lua syntax highlighting with syntect, cached per line.
//!
//! Highlighting a line needs the parser and highlighter state at its start, which depends on every
//! line above it. The cache keeps, for each line, its text, the state before and after it, and its
//! styled ranges. Each frame the buffer is compared with the cached text (a cheap prefix/suffix
//! comparison), the changed lines are dropped, and lines are re-highlighted from the first changed
//! one only as far as the viewport needs; a line whose start state equals the cached one keeps its
//! cached pieces (one state comparison instead of a syntect pass), so an edit that does not change
//! the state at its end costs one line.
//!
//! A view far below the highlighted lines (a jump into a large file) is not made to wait for every
//! line above it: its lines are highlighted from a guessed state (a fresh one, a little above the
//! view, at a line that starts a statement) and shown at once, and the exact pass catches up while
//! the user is idle (`catch_up`). Where the guess was right, the exact pass finds the same start
//! state and keeps those lines for one comparison each; where it was wrong (a long comment opened
//! far above), the lines are redone and the next frame shows them right.

use ratatui::style::{Color, Modifier, Style};
use std::ops::Range;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};
use syntect::easy::HighlightLines;
use syntect::highlighting::{FontStyle, HighlightState, Highlighter as SynHighlighter, Theme};
use syntect::parsing::{ParseState, ScopeStack, SyntaxReference, SyntaxSet};

/// syntect's default syntaxes (Lua among them), loaded once on first use and shared. They come
/// precompiled: adding a syntax to this set would compile them all again, ten times the workbench's
/// first frame, so TOML has a set of its own.
pub fn syntax_set() -> &'static SyntaxSet {
    static SET: OnceLock<SyntaxSet> = OnceLock::new();
    SET.get_or_init(SyntaxSet::load_defaults_newlines)
}

/// TOML alone (lab and test files), compiled on first use.
fn toml_set() -> &'static SyntaxSet {
    static SET: OnceLock<SyntaxSet> = OnceLock::new();
    SET.get_or_init(|| {
        let mut builder = syntect::parsing::SyntaxSetBuilder::new();
        builder.add_plain_text_syntax();
        // Bundled with the source: a failure is a bug the highlight tests show (TOML then plain).
        if let Ok(toml) = syntect::parsing::SyntaxDefinition::load_from_str(
            include_str!("toml.sublime-syntax"),
            true,
            Some("toml"),
        ) {
            builder.add(toml);
        }
        builder.build()
    })
}

/// The TOML syntax (plain text if it did not load).
pub fn toml_syntax() -> &'static SyntaxReference {
    let set = toml_set();
    set.find_syntax_by_extension("toml")
        .unwrap_or_else(|| set.find_syntax_plain_text())
}

/// The Lua syntax (plain text if the set somehow lacks it).
pub fn lua_syntax() -> &'static SyntaxReference {
    let set = syntax_set();
    set.find_syntax_by_extension("lua")
        .unwrap_or_else(|| set.find_syntax_plain_text())
}

/// The syntax a buffer is highlighted with and the set it belongs to.
fn syntax_of(toml: bool) -> (&'static SyntaxSet, &'static SyntaxReference) {
    if toml {
        (toml_set(), toml_syntax())
    } else {
        (syntax_set(), lua_syntax())
    }
}

type State = (ParseState, HighlightState);

/// One highlighted line: its text, the state before and after it, and (style, byte range) pieces.
struct Entry {
    text: String,
    /// `None` until the line has been highlighted (or after it changed).
    cached: Option<Cached>,
}

struct Cached {
    start: State,
    end: State,
    spans: Vec<(Style, Range<usize>)>,
}

/// The per-buffer highlight cache. Lives in a `RefCell` in the editor state so drawing, which
/// only reads the app, can still fill it.
pub struct LineHighlighter {
    /// The syntax theme the cache was built with; a different one resets the cache.
    theme: Option<Arc<Theme>>,
    entries: Vec<Entry>,
    /// `entries[..valid]` are highlighted, and each starts from the state the line above ends in.
    valid: usize,
    /// The buffer is TOML (a lab or test file), not Lua.
    toml: bool,
    /// The end of the last range drawn: how far the exact pass has to go.
    wanted: usize,
    /// Lines run through syntect so far (for tests and benches: the work a frame did).
    passes: usize,
}

/// A view that starts more lines than this below the highlighted ones is drawn from a guessed
/// state (about 10 ms of exact highlighting would be needed first).
const FAR: usize = 300;
/// The guess starts this many lines above the view, so that what it gets wrong has settled
/// (a statement or a string that started above the guess point) by the view's first line.
const LEAD: usize = 40;
/// How far above that the guess looks for a line starting a statement at column 0.
const SYNC_SEARCH: usize = 100;

impl Default for LineHighlighter {
    fn default() -> Self {
        LineHighlighter::new()
    }
}

fn to_style(style: syntect::highlighting::Style) -> Style {
    let c = style.foreground;
    let mut out = Style::default().fg(Color::Rgb(c.r, c.g, c.b));
    if style.font_style.contains(FontStyle::BOLD) {
        out = out.add_modifier(Modifier::BOLD);
    }
    if style.font_style.contains(FontStyle::ITALIC) {
        out = out.add_modifier(Modifier::ITALIC);
    }
    if style.font_style.contains(FontStyle::UNDERLINE) {
        out = out.add_modifier(Modifier::UNDERLINED);
    }
    out
}

impl LineHighlighter {
    pub fn new() -> LineHighlighter {
        LineHighlighter {
            theme: None,
            entries: Vec::new(),
            valid: 0,
            toml: false,
            wanted: 0,
            passes: 0,
        }
    }

    /// Lines run through syntect since the cache was made (tests and benches).
    pub fn passes(&self) -> usize {
        self.passes
    }

    /// The exact pass has not reached the last range drawn (what is shown is partly guessed).
    pub fn behind(&self) -> bool {
        self.valid < self.wanted.min(self.entries.len())
    }

    /// Go on with the exact pass towards the last range drawn, for about `budget`; whether it is
    /// still behind. `lines` is the buffer (edits since the last frame are taken in first).
    pub fn catch_up(&mut self, lines: &[String], budget: Duration) -> bool {
        let Some(theme) = self.theme.clone() else {
            return false;
        };
        self.sync(lines);
        let started = Instant::now();
        while self.behind() && started.elapsed() < budget {
            let step = (self.valid + 64).min(self.wanted);
            self.ensure(step.saturating_sub(1), &theme);
        }
        self.behind()
    }

    /// Highlight as TOML (a lab or test file) or as Lua; a change resets the cache.
    pub fn set_toml(&mut self, toml: bool) {
        if self.toml != toml {
            self.toml = toml;
            self.entries.clear();
            self.valid = 0;
        }
    }

    /// How many lines are currently highlighted and valid (for tests and benches).
    pub fn valid_lines(&self) -> usize {
        self.valid
    }

    /// Bring the cached text in line with `lines`: find the changed block by comparing a common
    /// prefix and suffix, and replace it with un-highlighted entries. Unchanged lines below keep
    /// their highlighting; it is re-validated in `ensure` when the state flowing into them matches.
    fn sync(&mut self, lines: &[String]) {
        let old = &self.entries;
        let prefix = old
            .iter()
            .zip(lines)
            .take_while(|(e, l)| e.text == **l)
            .count();
        if prefix == old.len() && prefix == lines.len() {
            return;
        }
        let max_suffix = old.len().min(lines.len()) - prefix;
        let suffix = old
            .iter()
            .rev()
            .zip(lines.iter().rev())
            .take(max_suffix)
            .take_while(|(e, l)| e.text == **l)
            .count();
        let changed = prefix..lines.len() - suffix;
        let fresh = lines[changed.clone()].iter().map(|l| Entry {
            text: l.clone(),
            cached: None,
        });
        self.entries.splice(prefix..old.len() - suffix, fresh);
        self.valid = self.valid.min(prefix);
    }

    /// Highlight as far as line `last` (inclusive) needs.
    fn ensure(&mut self, last: usize, theme: &Arc<Theme>) {
        let (set, syntax) = syntax_of(self.toml);
        let highlighter = SynHighlighter::new(theme);
        let last = last.min(self.entries.len().saturating_sub(1));
        while self.valid <= last && self.valid < self.entries.len() {
            let i = self.valid;
            let start: State = match i {
                0 => (
                    ParseState::new(syntax),
                    HighlightState::new(&highlighter, ScopeStack::new()),
                ),
                _ => match &self.entries[i - 1].cached {
                    Some(c) => c.end.clone(),
                    None => break, // cannot happen: entries before `valid` are cached
                },
            };
            // Below an edit, a line whose cached start state equals the new one is still correct.
            if self.entries[i]
                .cached
                .as_ref()
                .is_some_and(|c| c.start == start)
            {
                self.valid = i + 1;
                continue;
            }
            let (spans, end) = highlight_line(&self.entries[i].text, start.clone(), theme, set);
            self.passes += 1;
            self.entries[i].cached = Some(Cached { start, end, spans });
            self.valid = i + 1;
        }
    }

    /// Highlight lines `range` (all past `valid`) from a guessed state: a fresh one at a line a
    /// little above them that starts a statement at column 0. Lines already highlighted from the
    /// same state are kept, so a frame redoes only what changed.
    fn guess(&mut self, range: Range<usize>, theme: &Arc<Theme>) {
        let (set, syntax) = syntax_of(self.toml);
        let highlighter = SynHighlighter::new(theme);
        let lowest = range
            .start
            .saturating_sub(LEAD + SYNC_SEARCH)
            .max(self.valid);
        let mut from = range.start.saturating_sub(LEAD).max(lowest);
        while from > lowest && !starts_statement(&self.entries[from].text) {
            from -= 1;
        }
        let mut state: State = match &self.entries[from].cached {
            // The guess made here before: the same start, so the same lines.
            Some(c) => c.start.clone(),
            // The state after an empty first line: what a top-level line starts with (a fresh
            // state differs from it in being the first line).
            None => {
                let fresh = (
                    ParseState::new(syntax),
                    HighlightState::new(&highlighter, ScopeStack::new()),
                );
                highlight_line("", fresh, theme, set).1
            }
        };
        for i in from..range.end {
            if let Some(c) = &self.entries[i].cached {
                if c.start == state {
                    state = c.end.clone();
                    continue;
                }
            }
            let (spans, end) = highlight_line(&self.entries[i].text, state.clone(), theme, set);
            self.passes += 1;
            self.entries[i].cached = Some(Cached {
                start: state,
                end: end.clone(),
                spans,
            });
            state = end;
        }
    }

    /// The styled pieces of lines `range` of `lines` (clamped to the buffer), highlighting what is
    /// missing. Each line is a list of (style, byte range in that line).
    pub fn highlight(
        &mut self,
        lines: &[String],
        range: Range<usize>,
        theme: &Arc<Theme>,
    ) -> Vec<Vec<(Style, Range<usize>)>> {
        if !self.theme.as_ref().is_some_and(|t| Arc::ptr_eq(t, theme)) {
            self.theme = Some(theme.clone());
            self.entries.clear();
            self.valid = 0;
        }
        self.sync(lines);
        let end = range.end.min(lines.len());
        let start = range.start.min(end);
        self.wanted = end;
        if start > self.valid + FAR {
            self.guess(start..end, theme);
        } else if start < end {
            self.ensure(end - 1, theme);
        }
        (start..end)
            .map(|i| {
                self.entries
                    .get(i)
                    .and_then(|e| e.cached.as_ref())
                    .map(|c| c.spans.clone())
                    .unwrap_or_else(|| vec![(Style::default(), 0..lines[i].len())])
            })
            .collect()
    }
}

/// Whether a line looks like the start of a top-level statement (a good place to guess that no
/// block, string or comment is open): a word at column 0.
fn starts_statement(line: &str) -> bool {
    line.starts_with(|c: char| c.is_ascii_alphabetic())
}

/// Highlight one line from `start`; returns its pieces and the state after it.
fn highlight_line(
    text: &str,
    start: State,
    theme: &Theme,
    set: &SyntaxSet,
) -> (Vec<(Style, Range<usize>)>, State) {
    let (parse, hl) = start;
    let mut lines = HighlightLines::from_state(theme, hl, parse);
    // The "newlines" syntaxes expect each line to end in '\n' (line comments end there).
    let with_newline = format!("{text}\n");
    let mut spans = Vec::new();
    match lines.highlight_line(&with_newline, set) {
        Ok(pieces) => {
            let mut at = 0;
            for (style, piece) in pieces {
                let end = (at + piece.len()).min(text.len());
                if end > at {
                    spans.push((to_style(style), at..end));
                }
                at += piece.len();
            }
        }
        // A syntect error (should not happen with the bundled syntax): show the line plain.
        Err(_) => spans.push((Style::default(), 0..text.len())),
    }
    let (hl, parse) = lines.state();
    (spans, (parse, hl))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn theme() -> Arc<Theme> {
        crate::tui::theme::Theme::dark().syntax
    }

    fn lines(text: &str) -> Vec<String> {
        text.split('\n').map(str::to_string).collect()
    }

    fn styles(h: &mut LineHighlighter, l: &[String], t: &Arc<Theme>) -> Vec<Vec<Style>> {
        h.highlight(l, 0..l.len(), t)
            .into_iter()
            .map(|spans| spans.into_iter().map(|(s, _)| s).collect())
            .collect()
    }

    #[test]
    fn incremental_equals_fresh() {
        let t = theme();
        let mut buf =
            lines("local a = 1 -- one\nlocal s = \"x\"\nreturn redis.call('GET', KEYS[1])");
        let mut h = LineHighlighter::new();
        styles(&mut h, &buf, &t);
        // Open a block comment on line 0: everything below becomes a comment.
        buf[0] = "--[[ local a = 1".into();
        let inc = styles(&mut h, &buf, &t);
        let fresh = styles(&mut LineHighlighter::new(), &buf, &t);
        assert_eq!(inc, fresh);
        // Insert and delete lines.
        buf.insert(1, "local b = 2 ]]".into());
        assert_eq!(
            styles(&mut h, &buf, &t),
            styles(&mut LineHighlighter::new(), &buf, &t)
        );
        buf.remove(0);
        assert_eq!(
            styles(&mut h, &buf, &t),
            styles(&mut LineHighlighter::new(), &buf, &t)
        );
    }

    #[test]
    fn a_lab_file_is_highlighted_as_toml_not_as_a_lua_long_string() {
        let t = theme();
        let buf = lines("clients = 2 # two\n[[client]]\nargv = [\"release\"]");
        // As Lua, `#` is the length operator, not a comment.
        let lua = LineHighlighter::new().highlight(&buf, 0..3, &t);
        let mut h = LineHighlighter::new();
        h.set_toml(true);
        let toml = h.highlight(&buf, 0..3, &t);
        let style_at = |line: usize, byte: usize| {
            toml[line]
                .iter()
                .find(|(_, r)| r.contains(&byte))
                .map(|(s, _)| *s)
                .unwrap()
        };
        // The key, the string and the comment each in a style of its own.
        assert_ne!(style_at(2, 0), style_at(2, 9));
        assert_ne!(style_at(0, 0), style_at(0, 14));
        assert_ne!(style_at(0, 10), style_at(0, 0));
        assert_ne!(toml_syntax().name, "Plain Text");
        let lua_at = |line: usize, byte: usize| {
            lua[line]
                .iter()
                .find(|(_, r)| r.contains(&byte))
                .map(|(s, _)| *s)
                .unwrap()
        };
        assert_ne!(lua_at(0, 14), style_at(0, 14));
        // Switching back to Lua highlights as before.
        h.set_toml(false);
        assert_eq!(h.highlight(&buf, 0..3, &t), lua);
    }

    /// Lines `range` highlighted from the top, every line above them first.
    fn exact(
        buf: &[String],
        range: Range<usize>,
        t: &Arc<Theme>,
    ) -> Vec<Vec<(Style, Range<usize>)>> {
        LineHighlighter::new().highlight(buf, 0..range.end, t)[range].to_vec()
    }

    #[test]
    fn a_jump_far_into_a_file_highlights_near_the_view_then_catches_up_exactly() {
        let t = theme();
        let mut buf: Vec<String> = (0..5000)
            .map(|i| match i % 4 {
                0 => format!("local x{i} = redis.call('GET', KEYS[1])"),
                1 => "if x then".to_string(),
                2 => "  return 'a' -- one".to_string(),
                _ => "end".to_string(),
            })
            .collect();
        let mut h = LineHighlighter::new();
        h.highlight(&buf, 0..50, &t);
        let before = h.passes();
        let guessed = h.highlight(&buf, 2500..2550, &t);
        // The lines near the view, not the 2,450 above it.
        assert!(
            h.passes() - before <= 50 + LEAD + SYNC_SEARCH,
            "{}",
            h.passes()
        );
        assert!(h.behind());
        // Here the guess is right: the exact pass agrees, and keeps the guessed lines.
        let fresh = exact(&buf, 2500..2550, &t);
        assert_eq!(guessed, fresh);
        let passes = h.passes();
        assert!(!h.catch_up(&buf, Duration::from_secs(60)));
        // Only the lines above the guess are done again: the view's 50 and more are kept.
        assert!(h.passes() - passes <= 2450, "{}", h.passes() - passes);
        assert_eq!(h.highlight(&buf, 2500..2550, &t), fresh);

        // A long comment opened far above the view: the guess is wrong until the exact pass
        // reaches the view, then the view is right.
        buf[1000] = "--[[ commented out".to_string();
        let mut h = LineHighlighter::new();
        h.highlight(&buf, 0..50, &t);
        let fresh = exact(&buf, 2500..2550, &t);
        assert_ne!(h.highlight(&buf, 2500..2550, &t), fresh);
        while h.catch_up(&buf, Duration::from_millis(1)) {}
        assert_eq!(h.highlight(&buf, 2500..2550, &t), fresh);
        // An edit while behind is taken in by the exact pass.
        buf[1000] = "-- a line comment".to_string();
        h.highlight(&buf, 0..50, &t);
        h.highlight(&buf, 2500..2550, &t);
        while h.catch_up(&buf, Duration::from_millis(1)) {}
        assert_eq!(
            h.highlight(&buf, 2500..2550, &t),
            exact(&buf, 2500..2550, &t)
        );
    }

    #[test]
    fn only_the_viewport_is_highlighted() {
        let t = theme();
        let buf: Vec<String> = (0..1000).map(|i| format!("local x{i} = {i}")).collect();
        let mut h = LineHighlighter::new();
        h.highlight(&buf, 0..40, &t);
        assert_eq!(h.valid_lines(), 40);
        // An edit that leaves the state unchanged re-highlights one line, then reuses the rest.
        let mut edited = buf.clone();
        edited[10].push_str(" + 1");
        h.highlight(&edited, 0..40, &t);
        assert_eq!(h.valid_lines(), 40);
        // Spans cover the line.
        let spans = h.highlight(&edited, 10..11, &t);
        assert_eq!(spans[0].last().map(|(_, r)| r.end), Some(edited[10].len()));
    }
}
