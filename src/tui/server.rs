//! The Server tab: the live server's keyspace, browsed on the server itself with SCAN and typed
//! pages, never read whole. State and actions only: requests leave as `Effect::Inspect` for the
//! inspector thread, and its answers come back through `on_event`. No drawing and no I/O here.

use super::action::Action;
use super::app::{App, Effect, ListState, PromptPurpose, Tab};
use super::inspector::{Cached, InspectEvent, InspectRequest};
use super::keyspace::{text, wall_clock_ms};
use crate::engine::live::inspect::{KeySummary, PageCursor, Row};
use std::collections::{HashMap, HashSet};

/// Keys listed per step of the scan: it pauses there until the selection nears the end.
pub const LIST_STEP: usize = 1000;
/// The key list never holds more (a filter narrows a bigger keyspace).
pub const MAX_LISTED: usize = 50_000;
/// Rows (fields, members, elements, entries) per value page.
pub const VALUE_PAGE: usize = 100;
/// A string is shown in lines of this many bytes (they fit the pane of a 120-column terminal).
const STRING_LINE: usize = 48;
/// Bytes per string page: 64 lines.
pub const STRING_PAGE: usize = 64 * STRING_LINE;
/// The value view never holds more lines.
pub const MAX_VALUE_LINES: usize = 10_000;
/// Keys around the selection whose summaries are fetched.
const SUMMARY_BEFORE: usize = 40;
const SUMMARY_AFTER: usize = 80;
/// Elements the server examines per call of a search inside a key (HSCAN/SSCAN/ZSCAN COUNT): about
/// a millisecond of server work, as a SCAN call of the key list.
pub const SEARCH_COUNT: usize = 1000;
/// Rows moved by PageUp / PageDown.
const PAGE: isize = 10;

/// Where the scan is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScanProgress {
    pub returned: u64,
    pub calls: usize,
    pub dbsize: Option<u64>,
    pub done: bool,
}

/// The selected key's value, as far as it has been read.
#[derive(Debug, Clone, PartialEq)]
pub struct ValueView {
    pub key: Vec<u8>,
    pub kind: String,
    /// One line per field, member, element or entry (a string in lines of 48 bytes: the view
    /// draws a string from `raw`, in rows as wide as its pane).
    pub lines: Vec<String>,
    /// A string's bytes read so far.
    pub raw: Vec<u8>,
    /// Per line of a hash: its field and value apart, so the view aligns the values.
    pub fields: Vec<Option<(String, String)>>,
    /// Where the next page starts; None once the end was read.
    pub next: Option<PageCursor>,
    /// A page has been asked for and not answered yet.
    pub loading: bool,
    /// For a string: its length in bytes, and the bytes read so far.
    pub total: Option<u64>,
    pub bytes: u64,
    /// Per line: the length in bytes of the value it shows (a field's value, a member, an
    /// element), for "cut, N B" when the line is wider than the pane; None for a string's lines.
    pub lengths: Vec<Option<u64>>,
    /// A search inside the key (HSCAN/SSCAN/ZSCAN MATCH): the glob, the calls made, and whether
    /// Esc stopped it before the end.
    pub pattern: Option<String>,
    pub calls: usize,
    pub stopped: bool,
}

/// A search inside a key: the key and the MATCH glob.
#[derive(Debug, Clone, PartialEq)]
pub struct KeySearch {
    pub key: Vec<u8>,
    pub pattern: String,
}

#[derive(Debug, Clone, Default)]
pub struct ServerView {
    /// Bumped by every new scan; answers of older scans are dropped.
    pub generation: u64,
    /// The SCAN MATCH glob; empty for every key.
    pub pattern: String,
    pub type_filter: Option<&'static str>,
    /// Keys in the order SCAN returned them, without repeats.
    pub keys: Vec<Vec<u8>>,
    seen: HashSet<Vec<u8>>,
    /// None: the key is gone.
    pub summaries: HashMap<Vec<u8>, Option<KeySummary>>,
    pending_summaries: HashSet<Vec<u8>>,
    pub progress: ScanProgress,
    /// Keys the scan may list before it pauses.
    want: usize,
    pub list: ListState,
    pub value: Option<ValueView>,
    pub value_focus: bool,
    pub value_scroll: usize,
    /// The value's rows as last drawn (a string's rows follow the pane's width).
    pub value_rows: std::cell::Cell<usize>,
    /// The last failure, shown in the tab until the next success.
    pub error: Option<String>,
    started: bool,
    /// The overview (INFO, SLOWLOG, busy state) shown instead of the keys.
    pub overview: super::server_overview::OverviewState,
    /// The search inside the selected key, if any.
    pub search: Option<KeySearch>,
}

impl ServerView {
    pub fn selected_key(&self) -> Option<&Vec<u8>> {
        self.keys
            .get(self.list.selected.min(self.keys.len().saturating_sub(1)))
    }

    /// Keys examined so far: every key without a filter, about COUNT per call with one.
    pub fn scanned(&self) -> u64 {
        let p = &self.progress;
        if self.pattern.is_empty() && self.type_filter.is_none() {
            return p.returned;
        }
        let estimate = (p.calls * super::inspector::SCAN_COUNT) as u64;
        match p.dbsize {
            Some(n) if p.done => n,
            Some(n) => estimate.min(n),
            None => estimate,
        }
    }

    /// A live run touched these keys: their summaries and the value view are read again.
    pub fn forget<'a>(&mut self, keys: impl Iterator<Item = &'a Vec<u8>>) {
        for key in keys {
            self.summaries.remove(key);
            if self.value.as_ref().is_some_and(|v| v.key == *key) {
                self.value = None;
            }
        }
    }

    /// Something was asked of the server and not answered yet.
    pub fn waiting(&self) -> bool {
        let scanning = self.started
            && !self.progress.done
            && self.progress.returned < self.want as u64
            && self.error.is_none();
        scanning
            || !self.pending_summaries.is_empty()
            || self.value.as_ref().is_some_and(|v| v.loading)
    }

    /// The scan stopped at the list's cap (not at the end of the keyspace).
    pub fn capped(&self) -> bool {
        !self.progress.done && self.keys.len() >= MAX_LISTED
    }

    fn restart(&mut self) -> Effect {
        self.generation += 1;
        self.keys.clear();
        self.seen.clear();
        // Summaries are refetched for the keys in view: memory stays bounded across filters.
        self.summaries.clear();
        self.pending_summaries.clear();
        self.progress = ScanProgress::default();
        self.want = LIST_STEP;
        self.list = ListState::default();
        self.value = None;
        self.value_scroll = 0;
        self.error = None;
        self.started = true;
        Effect::Inspect(InspectRequest::Scan {
            generation: self.generation,
            pattern: (!self.pattern.is_empty()).then(|| self.pattern.as_bytes().to_vec()),
            kind: self.type_filter.map(str::to_string),
            want: self.want,
        })
    }

    /// The requests the view needs now: start the scan, list more keys near the end of the list,
    /// summaries around the selection, the selected key's first page, the next page near the end
    /// of the value view.
    fn needs(&mut self) -> Vec<Effect> {
        if !self.started {
            return vec![self.restart()];
        }
        let mut effects = Vec::new();
        let selected = self.list.selected;
        // The scan paused at `want` and the selection nears the end of the list: list more.
        if !self.progress.done
            && self.want < MAX_LISTED
            && self.progress.returned >= self.want as u64
            && selected + SUMMARY_AFTER >= self.keys.len()
        {
            self.want = (self.want + LIST_STEP).min(MAX_LISTED);
            effects.push(Effect::Inspect(InspectRequest::More {
                generation: self.generation,
                want: self.want,
            }));
        }
        let from = selected.saturating_sub(SUMMARY_BEFORE);
        let missing: Vec<Vec<u8>> = self
            .keys
            .iter()
            .skip(from)
            .take(SUMMARY_BEFORE + SUMMARY_AFTER)
            .filter(|k| !self.summaries.contains_key(*k) && !self.pending_summaries.contains(*k))
            .cloned()
            .collect();
        if !missing.is_empty() {
            self.pending_summaries.extend(missing.iter().cloned());
            effects.push(Effect::Inspect(InspectRequest::Summaries { keys: missing }));
        }
        if let Some(effect) = self.value_request() {
            effects.push(effect);
        }
        effects
    }

    /// The first page of the selected key once its type is known; the next page when the view
    /// scrolled near the end of what was read.
    fn value_request(&mut self) -> Option<Effect> {
        let key = self.selected_key()?.clone();
        let summary = self.summaries.get(&key)?.clone();
        let fresh = self.value.as_ref().is_none_or(|v| v.key != key);
        if fresh {
            let summary = summary?;
            let pattern = self
                .search
                .as_ref()
                .filter(|s| s.key == key)
                .map(|s| s.pattern.clone());
            self.value = Some(ValueView {
                key: key.clone(),
                kind: summary.kind.clone(),
                lines: Vec::new(),
                raw: Vec::new(),
                fields: Vec::new(),
                next: None,
                loading: true,
                total: None,
                bytes: 0,
                lengths: Vec::new(),
                calls: 0,
                stopped: false,
                pattern: pattern.clone(),
            });
            self.value_scroll = 0;
            return Some(page_request(key, summary.kind, PageCursor::Start, pattern));
        }
        let value = self.value.as_mut()?;
        let near_end = self.value_scroll + 2 * VALUE_PAGE >= value.lines.len();
        if value.loading || value.stopped || !near_end || value.lines.len() >= MAX_VALUE_LINES {
            return None;
        }
        let cursor = value.next.clone()?;
        value.loading = true;
        Some(page_request(
            key,
            value.kind.clone(),
            cursor,
            value.pattern.clone(),
        ))
    }

    fn add_keys(&mut self, keys: Vec<Vec<u8>>) {
        for key in keys {
            if self.keys.len() >= MAX_LISTED {
                break;
            }
            // SCAN may return a key twice while the server rehashes.
            if self.seen.insert(key.clone()) {
                self.keys.push(key);
            }
        }
    }

    fn move_by(&mut self, delta: isize) {
        if self.value_focus {
            let lines = self.value.as_ref().map_or(0, |v| v.lines.len());
            let lines = match &self.value {
                Some(v) if v.kind == "string" => self.value_rows.get().max(1),
                _ => lines,
            };
            let max = lines.saturating_sub(1) as isize;
            self.value_scroll = (self.value_scroll as isize)
                .saturating_add(delta)
                .clamp(0, max.max(0)) as usize;
        } else {
            self.list.move_by(delta, self.keys.len());
        }
    }
}

fn page_request(key: Vec<u8>, kind: String, cursor: PageCursor, pattern: Option<String>) -> Effect {
    let count = if pattern.is_some() {
        SEARCH_COUNT
    } else if kind == "string" {
        STRING_PAGE
    } else {
        VALUE_PAGE
    };
    Effect::Inspect(InspectRequest::Page {
        key,
        kind,
        cursor,
        count,
        pattern: pattern.map(String::into_bytes),
    })
}

/// The lines a page adds to the value view.
#[cfg(test)]
fn page_lines(rows: &[Row]) -> Vec<String> {
    page_lines_with_lengths(rows).0
}

/// The lines a page adds to the value view, each with the byte length of the value it shows.
fn page_lines_with_lengths(rows: &[Row]) -> (Vec<String>, Vec<Option<u64>>) {
    let mut lines = Vec::new();
    let mut lengths = Vec::new();
    for row in rows {
        let len = |b: &[u8]| Some(b.len() as u64);
        match row {
            Row::Field { field, value } => {
                lines.push(format!("{}  {}", text(field), text(value)));
                lengths.push(len(value));
            }
            Row::Member(member) => {
                lines.push(text(member));
                lengths.push(len(member));
            }
            Row::Scored { member, score } => {
                lines.push(format!("{:>12}  {}", score_text(*score), text(member)));
                lengths.push(len(member));
            }
            Row::Item { index, value } => {
                lines.push(format!("{index:>6}  {}", text(value)));
                lengths.push(len(value));
            }
            Row::Entry { id, fields } => {
                let fields: Vec<String> = fields
                    .iter()
                    .map(|(f, v)| format!("{}={}", text(f), text(v)))
                    .collect();
                let size = fields.iter().map(|f| f.len() as u64).sum::<u64>();
                lines.push(format!("{}  {}", text(id), fields.join(" ")));
                lengths.push(Some(size));
            }
            Row::Bytes { data, .. } => {
                for chunk in data.chunks(STRING_LINE) {
                    lines.push(text(chunk));
                    lengths.push(None);
                }
            }
        }
    }
    (lines, lengths)
}

/// A score as Redis prints it: integers without a fraction, `inf`/`-inf`.
fn score_text(score: f64) -> String {
    if score.is_infinite() {
        return if score > 0.0 { "inf" } else { "-inf" }.into();
    }
    format!("{score}")
}

/// Requests the Server tab needs now (none unless the app is on a live server and the tab was
/// opened). The event loop and the test harness call this after every event.
pub fn housekeeping(app: &mut App) -> Vec<Effect> {
    let mut effects = Vec::new();
    let opened = app.tab == Tab::Server;
    if let Some(view) = app.server.as_mut() {
        if opened || view.started {
            effects.extend(view.needs());
        }
        if opened {
            effects.extend(view.overview.needs());
        }
        let sha = app.editor.sha1();
        let known = app.script_cache.as_ref().is_some_and(|(s, _)| *s == sha);
        if !known && app.script_cache_pending.as_deref() != Some(sha.as_str()) {
            app.script_cache_pending = Some(sha);
            effects.push(Effect::Inspect(InspectRequest::ScriptExists {
                script: app.editor.bytes(),
            }));
        }
    }
    effects
}

/// An answer of the inspector thread.
pub fn on_event(app: &mut App, event: InspectEvent) {
    let now = if app.now_ms == 0 {
        wall_clock_ms()
    } else {
        app.now_ms
    };
    match event {
        InspectEvent::Command(answer) => super::command_prompt::on_answer(app, answer),
        InspectEvent::CommandAsks { args, why } => super::command_prompt::on_ask(app, args, why),
        InspectEvent::Health {
            error,
            down,
            cluster_down,
        } => {
            super::connection::on_health(app, error);
            super::connection::on_nodes(app, down, cluster_down);
        }
        InspectEvent::Role(role) => super::connection::on_role(app, role),
        InspectEvent::Reconnected => super::connection::on_reconnect(app),
        InspectEvent::ScriptCache { sha, cached } => {
            if app.script_cache_pending.as_deref() == Some(sha.as_str()) {
                app.script_cache_pending = None;
            }
            app.script_cache = Some((sha, Some(cached)));
        }
        InspectEvent::ScriptLoaded { sha } => {
            app.status = format!("SCRIPT LOAD: the server's script cache has {}", &sha[..8]);
            app.script_cache = Some((
                sha,
                Some(Cached {
                    script: true,
                    traced: true,
                }),
            ));
        }
        InspectEvent::Copied {
            db,
            copied,
            missing,
            refused,
        } => {
            if !copied.is_empty() {
                let what = match copied.len() {
                    1 => "copied a key from the server to the seed".to_string(),
                    n => format!("copied {n} keys from the server to the seed"),
                };
                super::buffer::seed_edit(app, what);
            }
            for key in &copied {
                if let Some(entry) = db.get(key, now) {
                    app.seed.insert_entry(key.clone(), entry.clone());
                }
            }
            let names = |keys: &[Vec<u8>]| {
                keys.iter()
                    .map(|k| format!("'{}'", text(k)))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let mut parts = Vec::new();
            if !copied.is_empty() {
                parts.push(format!("copied {} to the sandbox seed", names(&copied)));
            }
            if !missing.is_empty() {
                parts.push(format!("{} not on the server", names(&missing)));
            }
            parts.extend(refused);
            if !copied.is_empty() {
                parts.push("F7 runs in the sandbox, Keyspace shows the seed".into());
            }
            app.status = parts.join("; ");
            if !copied.is_empty() {
                super::keyspace::show_seed(app, copied.first().map(Vec::as_slice));
            }
        }
        InspectEvent::Overview(overview) => {
            if let Some(view) = app.server.as_mut() {
                view.overview.on_overview(*overview);
                view.error = None;
            }
        }
        InspectEvent::Killed(answer) => super::server_overview::on_killed(app, answer),
        // a library's code, to open read-only
        InspectEvent::LibraryCode { name, code } => super::server_library::on_code(app, name, code),
        InspectEvent::Failed { what, message } => {
            if what == "SCRIPT EXISTS" {
                // The mark shows "cache ?"; asking again at every tick would only repeat the failure.
                if let Some(sha) = app.script_cache_pending.take() {
                    app.script_cache = Some((sha, None));
                }
                return;
            }
            let text = format!("{what}: {message}");
            app.status = text.clone();
            if let Some(view) = app.server.as_mut() {
                if what == "server overview" {
                    view.overview.on_failed();
                }
                view.error = Some(text);
                if let Some(v) = view.value.as_mut() {
                    v.loading = false;
                }
            }
        }
        other => {
            if let Some(view) = app.server.as_mut() {
                on_view_event(view, other);
            }
        }
    }
}

fn on_view_event(view: &mut ServerView, event: InspectEvent) {
    match event {
        InspectEvent::Keys {
            generation,
            keys,
            returned,
            calls,
            dbsize,
            done,
        } if generation == view.generation => {
            view.add_keys(keys);
            view.progress = ScanProgress {
                returned,
                calls,
                dbsize,
                done,
            };
            view.error = None;
        }
        InspectEvent::Summaries(summaries) => {
            for (key, summary) in summaries {
                view.pending_summaries.remove(&key);
                view.summaries.insert(key, summary);
            }
        }
        InspectEvent::Page {
            key,
            cursor,
            page,
            pattern,
        } => {
            let Some(value) = view.value.as_mut().filter(|v| {
                v.key == key && v.pattern.as_deref().map(str::as_bytes) == pattern.as_deref()
            }) else {
                return; // the selection or the search moved on
            };
            if cursor == PageCursor::Start {
                value.lines.clear();
                value.raw.clear();
                value.fields.clear();
                value.lengths.clear();
                value.bytes = 0;
            }
            if pattern.is_some() {
                value.calls += 1;
            }
            for row in &page.rows {
                if let Row::Bytes { data, .. } = row {
                    value.bytes += data.len() as u64;
                    value.raw.extend_from_slice(data);
                }
            }
            let (lines, lengths) = page_lines_with_lengths(&page.rows);
            value.fields.extend(page.rows.iter().map(|row| match row {
                Row::Field { field, value } => Some((text(field), text(value))),
                _ => None,
            }));
            value.lines.extend(lines);
            value.lengths.extend(lengths);
            value.next = page.next;
            value.total = page.total.or(value.total);
            value.loading = false;
        }
        InspectEvent::Opened { key, summary } => {
            view.summaries.insert(key.clone(), summary.clone());
            if summary.is_none() {
                view.error = Some(format!("'{}' does not exist", text(&key)));
                return;
            }
            // The key goes first in the list and is selected; its value loads next.
            if let Some(i) = view.keys.iter().position(|k| *k == key) {
                view.keys.remove(i);
            } else {
                view.seen.insert(key.clone());
            }
            view.keys.insert(0, key);
            view.list = ListState::default();
            view.value = None;
            view.value_focus = true;
            view.error = None;
        }
        _ => {}
    }
}

/// An action in the Server tab.
pub fn update(app: &mut App, action: Action) -> Vec<Effect> {
    // The overview's library list: Up/Down pick a library, Enter or o opens it.
    if app.server.as_ref().is_some_and(|v| v.overview.shown) {
        let step = match action {
            Action::KeyspaceUp => Some(-1),
            Action::KeyspaceDown => Some(1),
            Action::KeyspacePageUp => Some(-PAGE),
            Action::KeyspacePageDown => Some(PAGE),
            Action::KeyspaceTop => Some(isize::MIN / 2),
            Action::KeyspaceBottom => Some(isize::MAX / 2),
            _ => None,
        };
        if let Some(delta) = step {
            super::server_library::move_by(app, delta);
            return Vec::new();
        }
        if matches!(action, Action::KeyspaceFocus | Action::OpenKey) {
            return super::server_library::request_open(app);
        }
    }
    let Some(view) = app.server.as_mut() else {
        return Vec::new();
    };
    match action {
        Action::FilterKeys => {
            let current = view.pattern.clone();
            app.open_prompt(
                PromptPurpose::ScanMatch,
                "Scan the server for keys matching (glob, empty for all)",
                current,
            );
        }
        Action::CycleTypeFilter => {
            view.type_filter = super::keyspace::next_type_filter(view.type_filter);
            return vec![view.restart()];
        }
        Action::ServerOverview => super::server_overview::toggle(app),
        Action::SearchInKey => return ask_search(app),
        Action::StopSearch => stop_search(app),
        Action::ServerScriptKill => super::server_overview::ask_kill(app),
        Action::Rescan if view.overview.shown => super::server_overview::refresh(app),
        Action::Rescan => {
            app.status = "scanning the server again".into();
            return vec![view.restart()];
        }
        Action::OpenKey => app.open_prompt(
            PromptPurpose::OpenServerKey,
            "Open a key on the server by its exact name",
            "",
        ),
        Action::CopyToSandbox => match view.selected_key().cloned() {
            Some(key) => return copy(app, vec![key]),
            None => app.status = "no key selected".into(),
        },
        Action::CopyDeclaredKeys => return copy_declared_keys(app),
        Action::KeyspaceFocus => view.value_focus = !view.value_focus,
        Action::KeyspaceUp => view.move_by(-1),
        Action::KeyspaceDown => view.move_by(1),
        Action::KeyspacePageUp => view.move_by(-PAGE),
        Action::KeyspacePageDown => view.move_by(PAGE),
        Action::KeyspaceTop => view.move_by(isize::MIN / 2),
        Action::KeyspaceBottom => view.move_by(isize::MAX / 2),
        _ => {}
    }
    Vec::new()
}

/// Copy the form's KEYS from the server into the sandbox seed.
pub fn copy_declared_keys(app: &mut App) -> Vec<Effect> {
    match app.inputs.parsed() {
        Ok((keys, _)) if keys.is_empty() => {
            app.status = "no KEYS in the form to copy".into();
            Vec::new()
        }
        Ok((keys, _)) => copy(app, keys),
        Err(e) => {
            app.status = e;
            Vec::new()
        }
    }
}

fn copy(app: &mut App, keys: Vec<Vec<u8>>) -> Vec<Effect> {
    if app.server.is_none() {
        app.status = "no live server: start with --server URL".into();
        return Vec::new();
    }
    app.status = "copying from the server…".into();
    let now_ms = if app.now_ms == 0 {
        wall_clock_ms()
    } else {
        app.now_ms
    };
    vec![Effect::Inspect(InspectRequest::Copy { keys, now_ms })]
}

/// The answer to the Server tab's prompts.
pub fn answer_prompt(app: &mut App, purpose: &PromptPurpose, input: String) -> Vec<Effect> {
    let Some(view) = app.server.as_mut() else {
        return Vec::new();
    };
    match purpose {
        PromptPurpose::ScanMatch => {
            view.pattern = input;
            vec![view.restart()]
        }
        PromptPurpose::SearchInKey { key } => {
            view.search = (!input.is_empty()).then(|| KeySearch {
                key: key.clone(),
                pattern: input,
            });
            // The value is read again: from the first page of the search, or whole.
            view.value = None;
            view.value_focus = true;
            Vec::new()
        }
        PromptPurpose::OpenServerKey if !input.is_empty() => {
            vec![Effect::Inspect(InspectRequest::Open {
                key: input.into_bytes(),
            })]
        }
        _ => Vec::new(),
    }
}

/// `f`: ask for the MATCH glob of a search inside the selected key.
fn ask_search(app: &mut App) -> Vec<Effect> {
    let Some(view) = app.server.as_ref() else {
        return Vec::new();
    };
    let Some(key) = view.selected_key().cloned() else {
        app.status = "no key selected".into();
        return Vec::new();
    };
    let kind = view.summaries.get(&key).cloned().flatten().map(|s| s.kind);
    if let Some(kind) = kind.filter(|k| !crate::engine::live::inspect::searchable(k)) {
        app.status = format!(
            "a search inside a key works on hashes, sets and sorted sets (HSCAN, SSCAN, ZSCAN MATCH); '{}' is a {kind}",
            text(&key)
        );
        return Vec::new();
    }
    let current = view
        .search
        .as_ref()
        .filter(|s| s.key == key)
        .map_or(String::new(), |s| s.pattern.clone());
    let title = format!(
        "Search inside '{}' (MATCH glob, empty for the whole value; Esc stops a search)",
        text(&key)
    );
    app.open_prompt(PromptPurpose::SearchInKey { key }, title, current);
    Vec::new()
}

/// Esc in the Server tab with no run to stop: stop the search inside the key (the server is asked
/// nothing more); Esc on a stopped or finished search shows the whole value again.
/// A search inside a server key is shown (Esc stops or clears it before going back).
pub fn searching(app: &App) -> bool {
    app.server
        .as_ref()
        .and_then(|v| v.value.as_ref())
        .is_some_and(|v| v.pattern.is_some())
}

fn stop_search(app: &mut App) {
    let Some(view) = app.server.as_mut() else {
        return;
    };
    let Some(value) = view.value.as_mut().filter(|v| v.pattern.is_some()) else {
        app.status = "no search inside a key to stop (f starts one)".into();
        return;
    };
    let matches = thousands(value.lines.len() as u64);
    if value.next.is_some() && !value.stopped {
        value.stopped = true;
        app.status = format!(
            "search stopped after {} calls: {matches} match so far (Esc again shows the whole value)",
            value.calls
        );
    } else {
        view.search = None;
        view.value = None;
        app.status = "search cleared: the whole value".into();
    }
}

/// "1,234,567".
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// F8: SCRIPT LOAD the script (and its traced copy) into the live server's cache.
pub fn script_load(app: &mut App) -> Vec<Effect> {
    if app.server.is_none() {
        app.status = "SCRIPT LOAD needs a live server (--server URL)".into();
        return Vec::new();
    }
    vec![Effect::Inspect(InspectRequest::ScriptLoad {
        script: app.editor.bytes(),
    })]
}

/// The selected server key's value as read so far, for the value inspector: a string's bytes,
/// the rows of any other type.
pub fn inspect_selected(app: &App) -> Result<super::value_view::ValueView, String> {
    use super::value_view::{Part, ValueView};
    let value = app
        .server
        .as_ref()
        .and_then(|v| v.value.as_ref())
        .ok_or("no value read yet: select a key (o opens one by name)")?;
    let read = match value.total {
        Some(total) if total > value.bytes => format!(
            " · {}/{} B read (↓ in the value reads more)",
            thousands(value.bytes),
            thousands(total)
        ),
        _ if value.next.is_some() => format!(
            " · {} rows read (↓ in the value reads more)",
            value.lines.len()
        ),
        _ => String::new(),
    };
    let title = format!("{} '{}'{read}", value.kind, text(&value.key));
    let part = if value.kind == "string" {
        Part::bytes("value", value.raw.clone())
    } else {
        // A hash's values in one column, after the widest field (up to 40 characters).
        let width = value
            .fields
            .iter()
            .flatten()
            .map(|(f, _)| f.chars().count())
            .max()
            .unwrap_or(0)
            .min(40);
        let rows: Vec<String> = value
            .lines
            .iter()
            .enumerate()
            .map(
                |(i, line)| match value.fields.get(i).and_then(Option::as_ref) {
                    Some((f, v)) => format!("{f:<width$}  {v}"),
                    None => line.clone(),
                },
            )
            .collect();
        let mut part = Part::text("value", rows.join("\n"));
        // The value itself, not words about it: JSON and msgpack try to read it.
        part.plain = false;
        part
    };
    Ok(ValueView::new(title, vec![part]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_lines_show_each_type() {
        let rows = vec![
            Row::Field {
                field: b"name".to_vec(),
                value: b"ada".to_vec(),
            },
            Row::Scored {
                member: b"m".to_vec(),
                score: 1.5,
            },
            Row::Scored {
                member: b"n".to_vec(),
                score: f64::NEG_INFINITY,
            },
            Row::Item {
                index: 3,
                value: b"x".to_vec(),
            },
            Row::Entry {
                id: b"1-0".to_vec(),
                fields: vec![(b"f".to_vec(), b"v".to_vec())],
            },
            Row::Bytes {
                offset: 0,
                data: vec![b'a'; 50],
            },
        ];
        assert_eq!(
            page_lines(&rows),
            vec![
                "name  ada".to_string(),
                "         1.5  m".into(),
                "        -inf  n".into(),
                "     3  x".into(),
                "1-0  f=v".into(),
                "a".repeat(48),
                "a".repeat(2),
            ]
        );
    }
}
