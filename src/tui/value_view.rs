//! The value inspector: one value full screen (a trace row's command and reply, the Reply, a
//! keyspace or server value, a race outcome, a test's expected and got), with wrap on or off,
//! pretty JSON (JSON inside strings too), cmsgpack decoded, hex for binary, a literal search and a
//! yank to the system clipboard. Opened by `v` (`V` in the Keyspace tab, whose `v` switches the
//! seed view); Esc closes it. Not the live key scanner (that is `inspector.rs`).

use super::action::Action;
use super::app::{App, Effect, Overlay, Tab};
use super::keymap::Context;
use crate::engine::display::display_safe;
use crate::engine::value_text;
use crate::engine::Reply;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::Value as Json;

/// One value of the inspector, under a label ("command", "reply", "expected").
#[derive(Debug, Clone, PartialEq)]
pub struct Part {
    pub label: String,
    /// The value as the pane showing it writes it (redis-cli's form of a reply).
    pub text: String,
    /// Its bytes: what hex shows and what JSON and msgpack decode.
    pub raw: Vec<u8>,
    /// Its structure, when it has one (a reply, a keyspace entry): what JSON shows.
    pub json: Option<Json>,
    /// Words about the value (differences, how clients ended), not the value: shown as text in
    /// every form but hex.
    pub plain: bool,
    /// A reply with more elements than are formatted: the rest, formatted a page at a time as
    /// the user goes down (a reply of a million elements is never formatted whole).
    pub more: Option<More>,
}

/// Elements of a reply formatted at a time.
pub const PAGE: usize = 1000;

/// A large reply shown in pages: the whole reply and how many of its elements are formatted.
#[derive(Debug, Clone, PartialEq)]
pub struct More {
    pub reply: std::sync::Arc<Reply>,
    pub shown: usize,
}

impl More {
    fn total(&self) -> usize {
        elements(&self.reply).unwrap_or(0)
    }
}

/// How many elements a collection reply has (None: not a collection).
fn elements(reply: &Reply) -> Option<usize> {
    match reply {
        Reply::Array(items) | Reply::Set(items) => Some(items.len()),
        Reply::Map(pairs) => Some(pairs.len()),
        _ => None,
    }
}

/// The first `n` elements of a collection reply, as a reply of the same kind.
fn head(reply: &Reply, n: usize) -> Reply {
    match reply {
        Reply::Array(items) => Reply::Array(items[..n.min(items.len())].to_vec()),
        Reply::Set(items) => Reply::Set(items[..n.min(items.len())].to_vec()),
        Reply::Map(pairs) => Reply::Map(pairs[..n.min(pairs.len())].to_vec()),
        other => other.clone(),
    }
}

impl Part {
    pub fn text(label: &str, text: String) -> Part {
        Part {
            label: label.into(),
            raw: text.clone().into_bytes(),
            text,
            json: None,
            plain: true,
            more: None,
        }
    }

    pub fn bytes(label: &str, raw: Vec<u8>) -> Part {
        Part {
            label: label.into(),
            text: String::from_utf8_lossy(&raw).into_owned(),
            raw,
            json: None,
            plain: false,
            more: None,
        }
    }

    /// A reply: a bulk string as its own text and bytes (JSON reads them), any other reply as
    /// redis-cli writes it, with its JSON form.
    /// More than `PAGE` elements: the first page only, the rest as the user goes down.
    pub fn reply(label: &str, reply: &Reply) -> Part {
        match reply {
            Reply::Bulk(b) => Part::bytes(label, b.clone()),
            _ if elements(reply).is_some_and(|n| n > PAGE) => {
                let mut part = Part::formatted(label, &head(reply, PAGE));
                part.more = Some(More {
                    reply: std::sync::Arc::new(reply.clone()),
                    shown: PAGE,
                });
                part
            }
            _ => Part::formatted(label, reply),
        }
    }

    fn formatted(label: &str, reply: &Reply) -> Part {
        let text = reply.to_cli();
        Part {
            label: label.into(),
            raw: text.clone().into_bytes(),
            text,
            json: Some(reply.to_json()),
            plain: false,
            more: None,
        }
    }

    /// The next page of a large reply formatted; false when it is all shown.
    fn next_page(&mut self) -> bool {
        let Some(more) = self.more.take() else {
            return false;
        };
        let total = more.total();
        if more.shown >= total {
            self.more = Some(more);
            return false;
        }
        let shown = (more.shown + PAGE).min(total);
        let mut part = Part::formatted(&self.label, &head(&more.reply, shown));
        part.more = Some(More { shown, ..more });
        *self = part;
        true
    }

    /// The elements not formatted yet, and how many there are in all.
    pub fn remaining(&self) -> Option<(usize, usize)> {
        let more = self.more.as_ref()?;
        let total = more.total();
        (more.shown < total).then(|| (total - more.shown, total))
    }

    pub fn json(label: &str, json: Json) -> Part {
        let text = value_text::pretty(&json);
        Part {
            label: label.into(),
            raw: json.to_string().into_bytes(),
            text,
            json: Some(json),
            plain: false,
            more: None,
        }
    }
}

/// How the parts are shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Text,
    Json,
    Msgpack,
    Hex,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Text => "text",
            Mode::Json => "JSON",
            Mode::Msgpack => "msgpack",
            Mode::Hex => "hex",
        }
    }

    fn next(self) -> Mode {
        match self {
            Mode::Text => Mode::Json,
            Mode::Json => Mode::Msgpack,
            Mode::Msgpack => Mode::Hex,
            Mode::Hex => Mode::Text,
        }
    }
}

/// A line of what the inspector shows: a part's label, or a line of its value (or why the
/// value cannot be shown in the chosen mode).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    Label(String),
    Body(String),
    Note(String),
}

impl Line {
    pub fn text(&self) -> &str {
        match self {
            Line::Label(s) | Line::Body(s) | Line::Note(s) => s,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ValueView {
    pub title: String,
    pub parts: Vec<Part>,
    pub mode: Mode,
    pub wrap: bool,
    /// The first row shown (rows are wrapped lines when wrap is on).
    pub scroll: usize,
    /// The first column shown when wrap is off.
    pub left: usize,
    /// The search being typed (`/`), taking the keys until Enter or Esc.
    pub typing: Option<String>,
    /// The search: a literal, case-insensitive.
    pub query: String,
    /// The current match (index into `matches(width)`).
    pub current: usize,
    /// Rows of the last frame's body and their width, for paging and keeping a match in view.
    pub page: std::cell::Cell<(usize, usize)>,
}

impl ValueView {
    /// An inspector over `parts`: JSON when one is a JSON document, hex when one is not text,
    /// else text.
    pub fn new(title: impl Into<String>, parts: Vec<Part>) -> ValueView {
        let mode = if parts.iter().any(|p| value_text::is_json_document(&p.raw)) {
            Mode::Json
        } else if parts.iter().any(|p| std::str::from_utf8(&p.raw).is_err()) {
            Mode::Hex
        } else {
            Mode::Text
        };
        ValueView {
            title: title.into(),
            parts,
            mode,
            wrap: true,
            scroll: 0,
            left: 0,
            typing: None,
            query: String::new(),
            current: 0,
            page: std::cell::Cell::new((20, 80)),
        }
    }

    /// Every line in the chosen mode; `width` is the body's (hex rows fit it).
    pub fn lines(&self, width: usize) -> Vec<Line> {
        let mut out = Vec::new();
        let labelled = self.parts.len() > 1;
        for part in &self.parts {
            if labelled {
                out.push(Line::Label(part.label.clone()));
            }
            let body = match self.mode {
                // Each line made safe below, once split: a line break stays one.
                Mode::Text => Ok(part.text.clone()),
                Mode::Json | Mode::Msgpack if part.plain => Ok(part.text.clone()),
                Mode::Json => match &part.json {
                    Some(json) => Ok(value_text::pretty(json)),
                    None => value_text::pretty_json(&part.raw),
                },
                Mode::Msgpack => {
                    value_text::msgpack_to_json(&part.raw).map(|j| value_text::pretty(&j))
                }
                Mode::Hex => Ok(value_text::hex_rows(&part.raw, width).join("\n")),
            };
            match body {
                Ok(text) => out.extend(
                    text.split('\n')
                        .map(|l| Line::Body(display_safe(l).into_owned())),
                ),
                Err(why) => out.push(Line::Note(format!("({why}; m shows another form)"))),
            }
            if let Some((left, total)) = part.remaining() {
                out.push(Line::Note(format!(
                    "… {} more of {} elements (End or ↓ here: the next {})",
                    crate::engine::reply::grouped(left),
                    crate::engine::reply::grouped(total),
                    crate::engine::reply::grouped(left.min(PAGE))
                )));
            }
        }
        out
    }

    /// The row of the first "… more elements" line at `width`.
    fn more_row(&self, width: usize) -> Option<usize> {
        self.parts.iter().find_map(Part::remaining)?;
        self.rows(width)
            .iter()
            .position(|(_, _, line)| matches!(line, Line::Note(t) if t.starts_with("… ") && t.contains(" more of ")))
    }

    /// The next page of the first part that has more; false when every part is shown whole.
    pub fn next_page(&mut self) -> bool {
        self.parts.iter_mut().any(Part::next_page)
    }

    /// The rows drawn at `width`: each line, cut into pieces of `width` characters when wrap is
    /// on; with the index of its line and the character it starts at.
    pub fn rows(&self, width: usize) -> Vec<(usize, usize, Line)> {
        let width = width.max(1);
        let mut rows = Vec::new();
        for (i, line) in self.lines(width).into_iter().enumerate() {
            let chars: Vec<char> = line.text().chars().collect();
            if !self.wrap || chars.len() <= width {
                rows.push((i, 0, line));
                continue;
            }
            for (n, chunk) in chars.chunks(width).enumerate() {
                let piece: String = chunk.iter().collect();
                let piece = match &line {
                    Line::Label(_) => Line::Label(piece),
                    Line::Body(_) => Line::Body(piece),
                    Line::Note(_) => Line::Note(piece),
                };
                rows.push((i, n * width, piece));
            }
        }
        rows
    }

    /// Where the search matches: (line, character) of each, in order.
    pub fn matches(&self, width: usize) -> Vec<(usize, usize)> {
        if self.query.is_empty() {
            return Vec::new();
        }
        let needle: Vec<char> = self.query.to_lowercase().chars().collect();
        let mut out = Vec::new();
        for (i, line) in self.lines(width).iter().enumerate() {
            let hay: Vec<char> = line.text().to_lowercase().chars().collect();
            let mut at = 0;
            while at + needle.len() <= hay.len() {
                if hay[at..at + needle.len()] == needle[..] {
                    out.push((i, at));
                    at += needle.len();
                } else {
                    at += 1;
                }
            }
        }
        out
    }

    /// What a yank copies: the lines in the chosen mode, labels included when there are several
    /// parts.
    pub fn yank_text(&self) -> String {
        let (_, width) = self.page.get();
        self.lines(width)
            .iter()
            .map(Line::text)
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Scroll so that the current match is in view (its row, and its column without wrap).
    fn show_current(&mut self) {
        let (height, width) = self.page.get();
        let Some(&(line, at)) = self.matches(width).get(self.current) else {
            return;
        };
        let row = self
            .rows(width)
            .iter()
            .rposition(|(l, start, _)| *l == line && *start <= at)
            .unwrap_or(0);
        if row < self.scroll || row >= self.scroll + height.max(1) {
            self.scroll = row.saturating_sub(height / 3);
        }
        if !self.wrap && (at < self.left || at >= self.left + width) {
            self.left = at.saturating_sub(width / 3);
        }
    }

    fn max_scroll(&self) -> usize {
        let (height, width) = self.page.get();
        self.rows(width).len().saturating_sub(height.max(1))
    }
}

/// The actions of the inspector (its keys are in the keymap's Value context).
pub fn handles(action: Action) -> bool {
    action == Action::ViewValue
}

/// Open the inspector on what the focused tab shows.
pub fn open(app: &mut App) -> Vec<Effect> {
    match source(app) {
        Ok(view) => app.overlay = Some(Overlay::Value(Box::new(view))),
        Err(why) => app.status = why,
    }
    Vec::new()
}

fn source(app: &App) -> Result<ValueView, String> {
    let no_run = || "nothing to inspect yet: F5 runs the script".to_string();
    match app.tab {
        Tab::Trace => {
            let run = app.last_run.as_ref().ok_or_else(no_run)?;
            let e = run
                .report
                .trace
                .get(app.trace_list.selected)
                .ok_or("the run made no redis.call: nothing to inspect in the trace")?;
            let command: Vec<String> = e
                .command
                .iter()
                .map(|a| crate::engine::reply::quote_bytes(a))
                .collect();
            let mut raw = Vec::new();
            for (i, arg) in e.command.iter().enumerate() {
                if i > 0 {
                    raw.push(b' ');
                }
                raw.extend_from_slice(arg);
            }
            let mut command_part = Part::bytes("command", raw);
            command_part.text = command.join(" ");
            Ok(ValueView::new(
                format!("call {} (line {})", e.seq, e.line),
                vec![command_part, Part::reply("reply", &e.reply)],
            ))
        }
        Tab::Reply => {
            let run = app.last_run.as_ref().ok_or_else(no_run)?;
            let mut parts = vec![Part::reply("reply (redis-cli)", &run.report.reply)];
            if let Some(lua) = &run.report.lua_value {
                parts.push(Part::text("Lua value returned", lua.clone()));
            }
            Ok(ValueView::new("the last run's reply", parts))
        }
        Tab::Keyspace => super::keyspace::inspect_selected(app),
        Tab::Server => super::server::inspect_selected(app),
        Tab::Race => super::race::inspect_selected(app),
        Tab::Tests => super::tests_tab::inspect_selected(app),
        _ => Err(
            "v inspects a value in the Trace, Reply, Keyspace, Server, Race and Tests tabs"
                .to_string(),
        ),
    }
}

/// A key while the inspector is open: the search being typed takes them all, else the keymap's
/// Value context; a key bound to nothing there says what the inspector's keys are.
pub fn on_key(app: &mut App, key: KeyEvent) -> Vec<Effect> {
    let Some(Overlay::Value(view)) = app.overlay.as_mut() else {
        return Vec::new();
    };
    if let Some(typing) = view.typing.as_mut() {
        match key.code {
            KeyCode::Esc => view.typing = None,
            KeyCode::Enter => {
                view.query = view.typing.take().unwrap_or_default();
                view.current = 0;
                let (_, width) = view.page.get();
                let found = view.matches(width).len();
                app.status = if view.query.is_empty() {
                    "search cleared".into()
                } else if found == 0 {
                    format!("no match for '{}'", display_safe(&view.query))
                } else {
                    format!(
                        "{found} match{} for '{}' (n next, N previous)",
                        if found == 1 { "" } else { "es" },
                        display_safe(&view.query)
                    )
                };
                view.show_current();
            }
            KeyCode::Backspace => {
                typing.pop();
            }
            KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => typing.push(c),
            _ => {}
        }
        return Vec::new();
    }
    let Some(action) = app.keymap.lookup(Context::Value, &key) else {
        app.status = "the inspector: w wrap · m form · / search · n N · y yank · Esc closes".into();
        return Vec::new();
    };
    let (height, width) = view.page.get();
    let page = height.max(2) - 1;
    // Going down with a large reply's "more" line in view: its next page.
    let more_row = view.more_row(width);
    let more_in_view =
        more_row.is_some_and(|r| r >= view.scroll && r < view.scroll + height.max(1));
    if matches!(action, Action::Down | Action::PageDown | Action::Bottom)
        && more_in_view
        && view.next_page()
    {
        let shown: Vec<String> = view
            .parts
            .iter()
            .filter_map(|p| p.more.as_ref())
            .map(|m| {
                format!(
                    "{} of {} elements shown",
                    crate::engine::reply::grouped(m.shown.min(m.total())),
                    crate::engine::reply::grouped(m.total())
                )
            })
            .collect();
        app.status = shown.join(", ");
    }
    match action {
        Action::Close => {
            app.overlay = None;
            return Vec::new();
        }
        Action::Up => view.scroll = view.scroll.saturating_sub(1),
        Action::Down => view.scroll = (view.scroll + 1).min(view.max_scroll()),
        Action::PageUp => view.scroll = view.scroll.saturating_sub(page),
        Action::PageDown => view.scroll = (view.scroll + page).min(view.max_scroll()),
        Action::Top => view.scroll = 0,
        // The end of what is formatted: a large reply's "more" line (End again: the next page).
        Action::Bottom => {
            view.scroll = match view.more_row(width) {
                Some(row) => (row + 1)
                    .saturating_sub(height.max(1))
                    .min(view.max_scroll()),
                None => view.max_scroll(),
            }
        }
        Action::ValueLeft if !view.wrap => view.left = view.left.saturating_sub(width / 2),
        Action::ValueRight if !view.wrap => {
            let longest = view
                .lines(width)
                .iter()
                .map(|l| l.text().chars().count())
                .max()
                .unwrap_or(0);
            view.left = (view.left + width / 2).min(longest.saturating_sub(width / 2));
        }
        Action::ValueLeft | Action::ValueRight => {
            app.status = "wrap is on: every character is in view (w turns it off)".into()
        }
        Action::ValueWrap => {
            view.wrap = !view.wrap;
            view.left = 0;
            view.scroll = view.scroll.min(view.max_scroll());
            app.status = if view.wrap {
                "wrap on: long lines go on over the next rows".into()
            } else {
                "wrap off: ← → scroll sideways (a cut line ends in …)".into()
            };
        }
        Action::ValueMode => {
            view.mode = view.mode.next();
            view.scroll = 0;
            view.left = 0;
            view.current = 0;
            app.status = format!("shown as {}", view.mode.name());
        }
        Action::ValueSearch => view.typing = Some(String::new()),
        Action::ValueNext | Action::ValuePrev => {
            let n = view.matches(width).len();
            if n == 0 {
                app.status = "no search: / searches the value".into();
                return Vec::new();
            }
            let wrapped;
            (view.current, wrapped) = if action == Action::ValueNext {
                ((view.current + 1) % n, view.current + 1 == n)
            } else {
                ((view.current + n - 1) % n, view.current == 0)
            };
            view.show_current();
            app.status = format!(
                "match {}/{n}{}",
                view.current + 1,
                if wrapped { " (wrapped around)" } else { "" }
            );
        }
        Action::ValueYank => {
            let text = view.yank_text();
            let bytes = text.into_bytes();
            if bytes.len() > super::editing::CLIPBOARD_MAX {
                app.status = format!(
                    "{} bytes: too many for the terminal's clipboard (OSC 52); nothing yanked",
                    crate::engine::reply::grouped(bytes.len())
                );
                return Vec::new();
            }
            app.status = format!(
                "yanked {} bytes ({}) to the system clipboard",
                crate::engine::reply::grouped(bytes.len()),
                view.mode.name()
            );
            return vec![Effect::Clipboard(bytes)];
        }
        _ => {}
    }
    Vec::new()
}
