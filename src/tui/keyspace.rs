//! The keyspace inspector: view state (filters, selection, focus, value scroll, diff mode), which
//! keyspace is shown (seed, after the run, at a step), what changed, the typed value rows, the
//! before/after diff and the add-key parser. No drawing here.

use super::action::Action;
use super::app::{App, ListState};
use super::worker::RunResult;
use crate::engine::commands::glob_match;
use crate::engine::keyspace::stream::StreamFields;
use crate::engine::keyspace::{
    Db, Entry, HashValue, ListValue, SetValue, StreamId, StreamValue, Value, ZSetValue,
};
use crate::engine::reply::quote_bytes;
use crate::engine::script::split_args;
use std::collections::BTreeMap;

/// Rows moved by PageUp / PageDown.
pub const PAGE: usize = 10;
/// Bytes of a string value shown in the value view.
pub const PREVIEW_BYTES: usize = 16 * 1024;
/// Element lines per key in the diff before "… N more".
const DIFF_LINES_PER_KEY: usize = 200;
/// The same in the whole-keyspace diff.
const ALL_LINES_PER_KEY: usize = 8;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum DiffMode {
    /// The value view.
    #[default]
    Off,
    /// What the last run changed in the selected key.
    Key,
    /// What the last run changed in the whole keyspace.
    All,
}

/// Which keyspace the inspector shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    Seed,
    AfterRun,
    /// Index into the trace.
    Step(usize),
    /// At the debugger's stop (tui/debugger.rs).
    Debug,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    Added,
    Removed,
    Modified,
}

#[derive(Debug, Clone, Default)]
pub struct KeyspaceView {
    pub filter: String,
    /// None: every type; otherwise "string", "hash", ...
    pub type_filter: Option<&'static str>,
    pub diff: DiffMode,
    pub list: ListState,
    /// Up/Down/PageUp/PageDown scroll the value (or diff) view instead of the key list.
    pub value_focus: bool,
    /// First row of the value (or diff) view.
    pub value_scroll: usize,
    /// The seed is shown instead of the run's keyspace; remembered with the (run id, step) it was
    /// chosen at, so a new run or a step shows the run again.
    pub seed_view_at: Option<(u64, Option<usize>)>,
}

const TYPES: [&str; 6] = ["string", "hash", "list", "set", "zset", "stream"];

/// The type filter after `current`: every type, then each type in turn, then every type again.
pub fn next_type_filter(current: Option<&'static str>) -> Option<&'static str> {
    match current {
        None => Some(TYPES[0]),
        Some(t) => TYPES
            .iter()
            .position(|x| *x == t)
            .and_then(|i| TYPES.get(i + 1))
            .copied(),
    }
}

/// One row of the key list: removed keys come from the keyspace before the change.
pub struct KeyRow<'a> {
    pub key: &'a [u8],
    pub entry: &'a Entry,
    pub change: Option<Change>,
}

impl KeyspaceView {
    pub fn cycle_type_filter(&mut self) {
        self.type_filter = next_type_filter(self.type_filter);
        self.list = ListState::default();
        self.value_scroll = 0;
    }

    pub fn set_filter(&mut self, filter: String) {
        self.filter = filter;
        self.list = ListState::default();
        self.value_scroll = 0;
    }

    pub fn cycle_diff(&mut self) {
        self.diff = match self.diff {
            DiffMode::Off => DiffMode::Key,
            DiffMode::Key => DiffMode::All,
            DiffMode::All => DiffMode::Off,
        };
        self.value_scroll = 0;
    }

    /// Which keyspace is shown: the seed when chosen (or before any run), else the step or the run.
    pub fn shown(&self, app: &App) -> Shown {
        if app.debugger.stopped_keyspace().is_some() {
            return Shown::Debug;
        }
        match &app.last_run {
            None => Shown::Seed,
            Some(run) if self.seed_view_at == Some((run.id, app.step)) => Shown::Seed,
            Some(_) => app.step.map_or(Shown::AfterRun, Shown::Step),
        }
    }

    /// The (before, after) keyspaces whose differences are highlighted in the list.
    pub fn compared<'a>(&self, app: &'a App) -> Option<(&'a Db, &'a Db)> {
        if let (Some(seed), Some(at)) =
            (app.debugger.session_seed(), app.debugger.stopped_keyspace())
        {
            return Some((seed, at)); // what the debugged run changed up to its stop
        }
        let run = app.last_run.as_ref()?;
        match self.shown(app) {
            Shown::Seed => None,
            Shown::AfterRun => Some((&run.before, &run.after)),
            Shown::Step(i) => {
                let seq = run.report.trace.get(i).map_or(0, |e| e.seq);
                Some((db_at(run, seq.saturating_sub(1)), db_at(run, seq)))
            }
            Shown::Debug => None,
        }
    }

    /// The rows of the key list: the shown keys plus the keys the change removed, filtered, in
    /// byte order.
    pub fn rows<'a>(&self, app: &'a App) -> Vec<KeyRow<'a>> {
        let now = app.shown_now_ms();
        let db = app.shown_keyspace();
        let compared = self.compared(app);
        let changes = compared
            .map(|(before, after)| changed_keys(before, after, now))
            .unwrap_or_default();
        let keep = |key: &[u8], entry: &Entry| {
            (self.filter.is_empty() || glob_match(self.filter.as_bytes(), key, false))
                && self
                    .type_filter
                    .is_none_or(|t| entry.value.type_name() == t)
        };
        // Borrowed keys, filtered before sorting: this runs every frame.
        let mut rows: Vec<KeyRow<'a>> = db
            .raw_entries()
            .iter()
            .filter(|(k, e)| e.expire_at_ms.is_none_or(|t| t > now) && keep(k, e))
            .map(|(key, entry)| KeyRow {
                key,
                entry,
                change: changes.get(key).copied(),
            })
            .collect();
        if let Some((before, _)) = compared {
            for (key, change) in &changes {
                if *change != Change::Removed {
                    continue;
                }
                if let Some((key, entry)) = before.raw_entries().get_key_value(key) {
                    if keep(key, entry) {
                        rows.push(KeyRow {
                            key,
                            entry,
                            change: Some(Change::Removed),
                        });
                    }
                }
            }
        }
        rows.sort_unstable_by(|a, b| a.key.cmp(b.key));
        rows
    }

    /// Keys of the list, in order.
    pub fn visible_keys(&self, app: &App) -> Vec<Vec<u8>> {
        self.rows(app).into_iter().map(|r| r.key.to_vec()).collect()
    }

    pub fn selected_key(&self, app: &App) -> Option<Vec<u8>> {
        let keys = self.visible_keys(app);
        keys.get(self.selected_index(keys.len())).cloned()
    }

    /// The selection within a list of `len` rows (the list may have shrunk since it was set).
    pub fn selected_index(&self, len: usize) -> usize {
        self.list.selected.min(len.saturating_sub(1))
    }

    /// Select `key` in `keys` when present; otherwise keep the position within bounds.
    pub fn select_key(&mut self, keys: &[Vec<u8>], key: Option<&[u8]>) {
        match key.and_then(|k| keys.iter().position(|x| x == k)) {
            Some(i) => self.list.selected = i,
            None => self.list.move_by(0, keys.len()),
        }
    }

    /// Up/Down/PageUp/PageDown/Home/End: the value view when it has focus, else the key list.
    pub fn move_by(&mut self, delta: isize, keys: usize, value_rows: usize) {
        if self.value_focus {
            let max = value_rows.saturating_sub(1) as isize;
            self.value_scroll = (self.value_scroll as isize)
                .saturating_add(delta)
                .clamp(0, max.max(0)) as usize;
        } else {
            let before = self.list.selected;
            self.list.move_by(delta, keys);
            if self.list.selected != before {
                self.value_scroll = 0;
            }
        }
    }
}

/// The keyspace after the call `seq` (0: before the first call), from the run's snapshots.
pub fn db_at(run: &RunResult, seq: usize) -> &Db {
    run.report
        .snapshots
        .iter()
        .rev()
        .find(|(s, _)| *s <= seq)
        .map(|(_, db)| db)
        .unwrap_or(&run.before)
}

/// Keys added, removed or modified between two keyspaces (value or TTL).
pub fn changed_keys(before: &Db, after: &Db, now_ms: i64) -> BTreeMap<Vec<u8>, Change> {
    let mut out = BTreeMap::new();
    for key in after.keys(now_ms) {
        match (before.get(key, now_ms), after.get(key, now_ms)) {
            (None, Some(_)) => {
                out.insert(key.clone(), Change::Added);
            }
            (Some(b), Some(a)) if b != a => {
                out.insert(key.clone(), Change::Modified);
            }
            _ => {}
        }
    }
    for key in before.keys(now_ms) {
        if !after.contains(key, now_ms) {
            out.insert(key.clone(), Change::Removed);
        }
    }
    out
}

/// Rows of the value view: (total rows, the rows from `start`, at most `count`), each row at most
/// `width` characters. Strings wrap; collections take one row per element.
pub fn value_rows(value: &Value, start: usize, count: usize, width: usize) -> (usize, Vec<String>) {
    let width = width.max(8);
    let page = |total: usize, row: &dyn Fn(usize) -> Option<String>| {
        let rows = (start..total.min(start.saturating_add(count)))
            .filter_map(row)
            .map(|r| fit(&r, width))
            .collect();
        (total, rows)
    };
    match value {
        Value::Str(s) => {
            let lines = string_lines(s, width);
            let total = lines.len();
            (total, lines.into_iter().skip(start).take(count).collect())
        }
        Value::Hash(h) => {
            let w = h
                .keys()
                .skip(start)
                .take(count)
                .map(|f| text(f).chars().count())
                .max()
                .unwrap_or(0)
                .min(width / 3);
            page(h.len(), &|i| {
                h.get_index(i)
                    .map(|(f, v)| format!("{:<w$}  {}", fit(&text(f), w), text(v)))
            })
        }
        Value::List(l) => {
            let w = l.len().saturating_sub(1).to_string().len();
            page(l.len(), &|i| {
                l.get(i).map(|v| format!("{i:>w$}  {}", text(v)))
            })
        }
        Value::Set(s) => page(s.len(), &|i| s.get_index(i).map(|m| text(m))),
        Value::ZSet(z) => {
            let w = z.len().saturating_sub(1).to_string().len();
            // Scores right-aligned to the widest on the page.
            let sw = (start..z.len().min(start.saturating_add(count)))
                .filter_map(|i| z.get(i))
                .map(|(_, score)| score.to_string().len())
                .max()
                .unwrap_or(0);
            page(z.len(), &|i| {
                z.get(i)
                    .map(|(m, score)| format!("{i:>w$}  {score:>sw$}  {}", text(m)))
            })
        }
        Value::Stream(st) => {
            let rows: Vec<String> = st
                .entries
                .iter()
                .skip(start)
                .take(count)
                .map(|(id, fields)| format!("{id}  {}", fields_text(fields)))
                .map(|r| fit(&r, width))
                .collect();
            (st.len(), rows)
        }
    }
}

/// The column header of the value view.
pub fn value_columns(value: &Value) -> &'static str {
    match value {
        Value::Str(_) => "",
        Value::Hash(_) => "field / value",
        Value::List(_) => "index / element",
        Value::Set(_) => "member",
        Value::ZSet(_) => "rank / score / member",
        Value::Stream(_) => "id / field=value…",
    }
}

/// "hash, 3 fields, ttl 9.5 s".
pub fn describe(entry: &Entry, now_ms: i64) -> String {
    let v = &entry.value;
    let n = v.size();
    let (one, many) = match v {
        Value::Str(_) => ("byte", "bytes"),
        Value::Hash(_) => ("field", "fields"),
        Value::List(_) | Value::Set(_) => ("element", "elements"),
        Value::ZSet(_) => ("member", "members"),
        Value::Stream(_) => ("entry", "entries"),
    };
    let unit = if n == 1 { one } else { many };
    format!(
        "{}, {n} {unit}, ttl {}",
        v.type_name(),
        ttl_text(entry.expire_at_ms, now_ms)
    )
}

/// Remaining time of an expiry, "-" when none.
pub fn ttl_text(expire_at_ms: Option<i64>, now_ms: i64) -> String {
    match expire_at_ms {
        None => "-".into(),
        Some(t) => {
            let ms = t.saturating_sub(now_ms);
            if ms >= 100_000 {
                format!("{}s", ms / 1000)
            } else {
                format!("{:.1}s", ms as f64 / 1000.0)
            }
        }
    }
}

/// Bytes as readable text: UTF-8 as is, anything else (including control, C1 and bidi
/// characters) quoted.
pub fn text(b: &[u8]) -> String {
    match std::str::from_utf8(b) {
        Ok(s) if !s.chars().any(crate::engine::display::is_unsafe) => s.to_string(),
        _ => quote_bytes(b),
    }
}

fn fields_text(fields: &[(Vec<u8>, Vec<u8>)]) -> String {
    fields
        .iter()
        .map(|(f, v)| format!("{}={}", text(f), text(v)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// At most `width` characters, "…" marking a cut.
pub fn fit(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(width.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// A string value as wrapped lines: text keeps its line breaks, binary is quoted; bounded.
fn string_lines(s: &[u8], width: usize) -> Vec<String> {
    let shown = &s[..s.len().min(PREVIEW_BYTES)];
    let body = match std::str::from_utf8(shown) {
        Ok(t)
            if !t
                .chars()
                .any(|c| crate::engine::display::is_unsafe(c) && c != '\n' && c != '\t') =>
        {
            t.to_string()
        }
        _ => quote_bytes(shown),
    };
    let mut out = Vec::new();
    for line in body.split('\n') {
        let chars: Vec<char> = line.replace('\t', "    ").chars().collect();
        if chars.is_empty() {
            out.push(String::new());
        }
        for chunk in chars.chunks(width) {
            out.push(chunk.iter().collect());
        }
    }
    if s.len() > shown.len() {
        out.push(format!("… {} more bytes not shown", s.len() - shown.len()));
    }
    out
}

/// A short preview of a value for the diff.
fn short(b: &[u8]) -> String {
    let t = text(&b[..b.len().min(120)]);
    if b.len() > 120 {
        format!("{}…", fit(&t, 60))
    } else {
        fit(&t, 60)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    Add,
    Del,
    Change,
    /// A key's heading or a remark.
    Note,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffLine {
    pub mark: Mark,
    pub text: String,
}

fn line(mark: Mark, text: impl Into<String>) -> DiffLine {
    DiffLine {
        mark,
        text: text.into(),
    }
}

/// Every element of a value as diff lines (for an added or removed key).
fn element_lines(value: &Value, mark: Mark) -> Vec<DiffLine> {
    let (total, rows) = value_rows(value, 0, DIFF_LINES_PER_KEY, 100);
    let mut out: Vec<DiffLine> = match value {
        Value::Str(s) => vec![line(mark, short(s))],
        _ => rows.into_iter().map(|r| line(mark, r)).collect(),
    };
    if !matches!(value, Value::Str(_)) && total > DIFF_LINES_PER_KEY {
        out.push(line(
            Mark::Note,
            format!("… {} more", total - DIFF_LINES_PER_KEY),
        ));
    }
    out
}

/// What changed in one key between `before` and `after`.
pub fn key_diff(before: Option<&Entry>, after: Option<&Entry>, now_ms: i64) -> Vec<DiffLine> {
    let mut out = match (before, after) {
        (None, None) => return vec![line(Mark::Note, "not in either keyspace")],
        (Some(b), Some(a)) if b == a => return vec![line(Mark::Note, "unchanged")],
        (None, Some(a)) => {
            let mut out = vec![line(Mark::Add, format!("added: {}", describe(a, now_ms)))];
            out.extend(element_lines(&a.value, Mark::Add));
            return out;
        }
        (Some(b), None) => {
            let mut out = vec![line(Mark::Del, format!("removed: {}", describe(b, now_ms)))];
            out.extend(element_lines(&b.value, Mark::Del));
            return out;
        }
        (Some(b), Some(a)) => value_diff(&b.value, &a.value),
    };
    let (b, a) = (
        before.and_then(|e| e.expire_at_ms),
        after.and_then(|e| e.expire_at_ms),
    );
    if b != a {
        out.push(line(
            Mark::Change,
            format!("ttl {} → {}", ttl_text(b, now_ms), ttl_text(a, now_ms)),
        ));
    }
    out
}

fn value_diff(b: &Value, a: &Value) -> Vec<DiffLine> {
    let mut out = match (b, a) {
        _ if b == a => Vec::new(),
        (Value::Str(x), Value::Str(y)) => vec![line(
            Mark::Change,
            format!(
                "{} → {} ({} → {} bytes)",
                short(x),
                short(y),
                x.len(),
                y.len()
            ),
        )],
        (Value::Hash(x), Value::Hash(y)) => hash_diff(x, y),
        (Value::List(x), Value::List(y)) => list_diff(x, y),
        (Value::Set(x), Value::Set(y)) => set_diff(x, y),
        (Value::ZSet(x), Value::ZSet(y)) => zset_diff(x, y),
        (Value::Stream(x), Value::Stream(y)) => stream_diff(x, y),
        _ => {
            let mut out = vec![line(
                Mark::Change,
                format!("type {} → {}", b.type_name(), a.type_name()),
            )];
            out.extend(element_lines(b, Mark::Del));
            out.extend(element_lines(a, Mark::Add));
            return out;
        }
    };
    if out.len() > DIFF_LINES_PER_KEY {
        let more = out.len() - DIFF_LINES_PER_KEY;
        out.truncate(DIFF_LINES_PER_KEY);
        out.push(line(Mark::Note, format!("… {more} more changes")));
    }
    out
}

fn hash_diff(x: &HashValue, y: &HashValue) -> Vec<DiffLine> {
    let mut out = Vec::new();
    for (f, v) in x {
        match y.get(f) {
            None => out.push(line(Mark::Del, format!("{} = {}", short(f), short(v)))),
            Some(w) if w != v => out.push(line(
                Mark::Change,
                format!("{}: {} → {}", short(f), short(v), short(w)),
            )),
            _ => {}
        }
    }
    for (f, v) in y {
        if !x.contains_key(f) {
            out.push(line(Mark::Add, format!("{} = {}", short(f), short(v))));
        }
    }
    out
}

/// Trim the common head and tail; what is left in the middle was replaced, removed or inserted.
fn list_diff(x: &ListValue, y: &ListValue) -> Vec<DiffLine> {
    let head = x.iter().zip(y.iter()).take_while(|(a, b)| a == b).count();
    let max_tail = x.len().min(y.len()) - head;
    let tail = x
        .iter()
        .rev()
        .zip(y.iter().rev())
        .take(max_tail)
        .take_while(|(a, b)| a == b)
        .count();
    let (old, new) = (head..x.len() - tail, head..y.len() - tail);
    let mut out = Vec::new();
    if old.len() == new.len() {
        for i in old {
            out.push(line(
                Mark::Change,
                format!("[{i}] {} → {}", short(&x[i]), short(&y[i])),
            ));
        }
    } else {
        for i in old {
            out.push(line(Mark::Del, format!("[{i}] {}", short(&x[i]))));
        }
        for i in new {
            out.push(line(Mark::Add, format!("[{i}] {}", short(&y[i]))));
        }
    }
    out.push(line(
        Mark::Note,
        format!("length {} → {}", x.len(), y.len()),
    ));
    out
}

fn set_diff(x: &SetValue, y: &SetValue) -> Vec<DiffLine> {
    let mut out: Vec<DiffLine> = x
        .iter()
        .filter(|m| !y.contains(m))
        .map(|m| line(Mark::Del, short(m)))
        .collect();
    out.extend(
        y.iter()
            .filter(|m| !x.contains(m))
            .map(|m| line(Mark::Add, short(m))),
    );
    out
}

fn zset_diff(x: &ZSetValue, y: &ZSetValue) -> Vec<DiffLine> {
    let mut out = Vec::new();
    for (m, s) in x.iter() {
        match y.score(m) {
            None => out.push(line(Mark::Del, format!("{} ({s})", short(m)))),
            Some(t) if t != s => {
                out.push(line(Mark::Change, format!("{}: score {s} → {t}", short(m))))
            }
            _ => {}
        }
    }
    for (m, s) in y.iter() {
        if x.score(m).is_none() {
            out.push(line(Mark::Add, format!("{} ({s})", short(m))));
        }
    }
    out
}

fn stream_diff(x: &StreamValue, y: &StreamValue) -> Vec<DiffLine> {
    let mut out = Vec::new();
    for (id, fields) in &x.entries {
        match y.entries.get(id) {
            None => out.push(line(Mark::Del, format!("{id} {}", fields_text(fields)))),
            Some(f) if f != fields => out.push(line(
                Mark::Change,
                format!("{id} {} → {}", fields_text(fields), fields_text(f)),
            )),
            _ => {}
        }
    }
    for (id, fields) in &y.entries {
        if !x.entries.contains_key(id) {
            out.push(line(Mark::Add, format!("{id} {}", fields_text(fields))));
        }
    }
    if out.is_empty() {
        out.push(line(
            Mark::Note,
            "stream metadata changed (last id, counters)",
        ));
    }
    out
}

/// What changed in the whole keyspace: a heading per changed key, its changes indented.
pub fn keyspace_diff(before: &Db, after: &Db, now_ms: i64) -> Vec<DiffLine> {
    let changes = changed_keys(before, after, now_ms);
    if changes.is_empty() {
        return vec![line(Mark::Note, "the run changed nothing")];
    }
    let mut out = Vec::new();
    for (key, change) in changes {
        let mark = match change {
            Change::Added => Mark::Add,
            Change::Removed => Mark::Del,
            Change::Modified => Mark::Change,
        };
        out.push(line(mark, text(&key)));
        let lines = key_diff(before.get(&key, now_ms), after.get(&key, now_ms), now_ms);
        // Long element lists belong to the key's own diff.
        let more = lines.len().saturating_sub(ALL_LINES_PER_KEY);
        for l in lines.into_iter().take(ALL_LINES_PER_KEY) {
            out.push(line(l.mark, format!("  {}", l.text)));
        }
        if more > 0 {
            out.push(line(
                Mark::Note,
                format!("  … {more} more (select the key: its own diff has them)"),
            ));
        }
    }
    out
}

/// Parse the add-key prompt: `NAME VALUE` (a string; the value is the rest of the line), or
/// `TYPE NAME ITEMS…` with TYPE one of string, hash (field value…), list, set, zset (score
/// member…), stream (field value…, one entry). Shell-style quotes group words.
pub fn parse_add_key(input: &str, now_ms: i64) -> Result<(Vec<u8>, Value), String> {
    let words = split_args(input).ok_or("unbalanced quotes")?;
    let Some(first) = words.first() else {
        return Err("give NAME VALUE, or TYPE NAME ITEMS…".into());
    };
    let typed = TYPES.contains(&first.to_ascii_lowercase().as_str());
    if !typed {
        // Unquoted, the value is the rest of the line as typed (spaces kept).
        let value = match (words.len(), input.trim().split_once(char::is_whitespace)) {
            (2, _) => words[1].clone(),
            (n, Some((_, rest))) if n > 2 && !input.trim_start().starts_with(['"', '\'']) => {
                rest.trim_start().to_string()
            }
            _ => return Err("give NAME VALUE, or TYPE NAME ITEMS…".into()),
        };
        return Ok((
            words[0].clone().into_bytes(),
            Value::Str(value.into_bytes()),
        ));
    }
    let kind = first.to_ascii_lowercase();
    let Some(name) = words.get(1) else {
        return Err(format!("{kind}: give a key name and its items"));
    };
    let items: Vec<Vec<u8>> = words[2..].iter().map(|w| w.clone().into_bytes()).collect();
    if items.is_empty() {
        return Err(format!("{kind} '{name}': give at least one item"));
    }
    let pairs = || -> Result<StreamFields, String> {
        if !items.len().is_multiple_of(2) {
            return Err(format!("{kind} '{name}': items come in pairs"));
        }
        Ok(items
            .chunks(2)
            .map(|p| (p[0].clone(), p[1].clone()))
            .collect())
    };
    let value = match kind.as_str() {
        "string" => Value::Str(words[2..].join(" ").into_bytes()),
        "hash" => Value::Hash(pairs()?.into_iter().collect()),
        "list" => Value::List(items.into_iter().collect()),
        "set" => Value::Set(SetValue::created_by_sadd(items.into_iter(), None)),
        "zset" => {
            let mut z = ZSetValue::new();
            for (score, member) in pairs()? {
                let s = std::str::from_utf8(&score)
                    .ok()
                    .and_then(parse_score)
                    .ok_or_else(|| format!("zset '{name}': {} is not a score", text(&score)))?;
                z.insert(member, s);
            }
            Value::ZSet(z)
        }
        _ => {
            let mut st = StreamValue::new();
            let ms = u64::try_from(now_ms).unwrap_or(0).max(1);
            st.append(StreamId { ms, seq: 0 }, pairs()?);
            Value::Stream(st)
        }
    };
    Ok((name.clone().into_bytes(), value))
}

fn parse_score(s: &str) -> Option<f64> {
    match s.to_ascii_lowercase().as_str() {
        "inf" | "+inf" => Some(f64::INFINITY),
        "-inf" => Some(f64::NEG_INFINITY),
        other => other.parse::<f64>().ok().filter(|f| !f.is_nan()),
    }
}

/// The wall clock in Unix ms, for seed TTLs set before the engine has reported its clock.
pub fn wall_clock_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// After a seed edit: show the seed and keep `key` selected, so the edit is visible.
pub fn show_seed(app: &mut App, key: Option<&[u8]>) {
    if let Some(run) = &app.last_run {
        app.keyspace.seed_view_at = Some((run.id, app.step));
    }
    let keys = app.keyspace.visible_keys(app);
    app.keyspace.select_key(&keys, key);
    app.keyspace.value_scroll = 0;
}

/// `v`: between the seed and the run's keyspace (after the run, or at the step).
pub fn toggle_seed_view(app: &mut App) {
    let Some(run) = &app.last_run else {
        app.status = "no run yet: the seed is shown".into();
        return;
    };
    let key = app.keyspace.selected_key(app);
    if app.keyspace.shown(app) == Shown::Seed {
        app.keyspace.seed_view_at = None;
        app.status = "showing the run's keyspace".into();
    } else {
        app.keyspace.seed_view_at = Some((run.id, app.step));
        app.status = "showing the seed (edits apply to it)".into();
    }
    let keys = app.keyspace.visible_keys(app);
    app.keyspace.select_key(&keys, key.as_deref());
    app.keyspace.value_scroll = 0;
}

/// The keyspace navigation actions: focus toggle, and moves in the focused list or value view.
pub fn navigate(app: &mut App, action: Action) {
    let delta: isize = match action {
        Action::KeyspaceFocus => {
            app.keyspace.value_focus = !app.keyspace.value_focus;
            return;
        }
        Action::KeyspaceUp => -1,
        Action::KeyspaceDown => 1,
        Action::KeyspacePageUp => -(PAGE as isize),
        Action::KeyspacePageDown => PAGE as isize,
        Action::KeyspaceTop => isize::MIN / 2,
        _ => isize::MAX / 2,
    };
    let keys = app.keyspace.visible_keys(app).len();
    let rows = view_rows(app);
    app.keyspace.move_by(delta, keys, rows);
}

/// Rows of what the value view of the selected key shows (value or diff), for scroll bounds.
pub fn view_rows(app: &App) -> usize {
    let view = &app.keyspace;
    match view.diff {
        DiffMode::Off => {
            let rows = view.rows(app);
            rows.get(view.selected_index(rows.len()))
                .map_or(0, |r| match &r.entry.value {
                    Value::Str(s) => s.len().min(PREVIEW_BYTES) + 1,
                    v => v.size(),
                })
        }
        _ => diff_lines(app, view.selected_key(app).as_deref()).len(),
    }
}

/// The diff the value area shows: the last run's changes to the selected key or the keyspace.
pub fn diff_lines(app: &App, key: Option<&[u8]>) -> Vec<DiffLine> {
    let Some(run) = &app.last_run else {
        return vec![line(
            Mark::Note,
            "No run yet: the diff shows what a run changed (F5 runs).",
        )];
    };
    let now = app.now_ms;
    match app.keyspace.diff {
        DiffMode::All => keyspace_diff(&run.before, &run.after, now),
        _ => match key {
            Some(key) => key_diff(run.before.get(key, now), run.after.get(key, now), now),
            None => vec![line(Mark::Note, "no key selected")],
        },
    }
}

/// The selected key's value for the value inspector: a string's bytes, any other type as its
/// keyspace JSON entry (type, value, TTL).
pub fn inspect_selected(app: &App) -> Result<super::value_view::ValueView, String> {
    use super::value_view::{Part, ValueView};
    let view = &app.keyspace;
    let rows = view.rows(app);
    let row = rows
        .get(view.selected_index(rows.len()))
        .ok_or("no key to inspect: a adds one to the seed")?;
    let title = format!("key '{}'", text(row.key));
    let part = match &row.entry.value {
        crate::engine::keyspace::Value::Str(bytes) => Part::bytes("value", bytes.clone()),
        _ => {
            let mut one = Db::new();
            one.insert_entry(row.key.to_vec(), row.entry.clone());
            let json = crate::engine::keyspace::keyspace_to_json(&one, app.shown_now_ms());
            let entry = json
                .as_object()
                .and_then(|o| o.values().next())
                .cloned()
                .unwrap_or_default();
            Part::json("value", entry)
        }
    };
    Ok(ValueView::new(title, vec![part]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(items: &[&str]) -> Value {
        Value::List(items.iter().map(|s| s.as_bytes().to_vec()).collect())
    }

    fn entry(value: Value) -> Entry {
        Entry {
            value,
            expire_at_ms: None,
            raw: None, // a raw string's allocation
            built: Default::default(),
        }
    }

    fn texts(lines: &[DiffLine]) -> Vec<(Mark, &str)> {
        lines.iter().map(|l| (l.mark, l.text.as_str())).collect()
    }

    #[test]
    fn parses_name_value_strings() {
        let (k, v) = parse_add_key("greeting hello world", 0).unwrap();
        assert_eq!(k, b"greeting");
        assert_eq!(v, Value::Str(b"hello world".to_vec()));
        let (k, v) = parse_add_key("\"my key\" \"a  b\"", 0).unwrap();
        assert_eq!(k, b"my key");
        assert_eq!(v, Value::Str(b"a  b".to_vec()));
        let (_, v) = parse_add_key("string hash 'x y'", 0).unwrap();
        assert_eq!(v, Value::Str(b"x y".to_vec()));
        assert!(parse_add_key("lonely", 0).is_err());
        assert!(parse_add_key("", 0).is_err());
        assert!(parse_add_key("k \"open", 0).is_err());
    }

    #[test]
    fn parses_typed_keys() {
        let (k, v) = parse_add_key("hash h f1 v1 f2 v2", 0).unwrap();
        assert_eq!(k, b"h");
        let Value::Hash(h) = v else { panic!() };
        assert_eq!(h.get(&b"f2".to_vec()), Some(&b"v2".to_vec()));
        assert_eq!(parse_add_key("list l a b", 0).unwrap().1, list(&["a", "b"]));
        let Value::Set(s) = parse_add_key("SET s a b a", 0).unwrap().1 else {
            panic!()
        };
        assert_eq!(s.len(), 2);
        let Value::ZSet(z) = parse_add_key("zset z 2 b 1 a -inf c", 0).unwrap().1 else {
            panic!()
        };
        let order: Vec<(&[u8], f64)> = z.iter().map(|(m, s)| (m.as_slice(), s)).collect();
        assert_eq!(
            order,
            vec![(&b"c"[..], f64::NEG_INFINITY), (b"a", 1.0), (b"b", 2.0)]
        );
        let Value::Stream(st) = parse_add_key("stream s f v", 5).unwrap().1 else {
            panic!()
        };
        assert_eq!(st.len(), 1);
        assert!(parse_add_key("hash h f1", 0).is_err());
        assert!(parse_add_key("zset z x a", 0).is_err());
        assert!(parse_add_key("zset z nan a", 0).is_err());
        assert!(parse_add_key("list l", 0).is_err());
        assert!(parse_add_key("set", 0).is_err());
    }

    #[test]
    fn finds_changed_keys() {
        let mut before = Db::new();
        before.set(b"same".to_vec(), Value::Str(b"1".to_vec()));
        before.set(b"gone".to_vec(), Value::Str(b"1".to_vec()));
        before.set(b"edit".to_vec(), Value::Str(b"1".to_vec()));
        before.set(b"ttl".to_vec(), Value::Str(b"1".to_vec()));
        let mut after = before.clone();
        after.remove(b"gone", 0);
        after.set(b"edit".to_vec(), Value::Str(b"2".to_vec()));
        after.set(b"new".to_vec(), list(&["a"]));
        after.set_expire(b"ttl", Some(10_000));
        let changes = changed_keys(&before, &after, 0);
        let got: Vec<(&[u8], Change)> = changes.iter().map(|(k, c)| (k.as_slice(), *c)).collect();
        assert_eq!(
            got,
            vec![
                (&b"edit"[..], Change::Modified),
                (b"gone", Change::Removed),
                (b"new", Change::Added),
                (b"ttl", Change::Modified),
            ]
        );
        let all = keyspace_diff(&before, &after, 0);
        assert!(all.iter().any(|l| l.text == "  ttl - → 10.0s"));
        assert!(all.iter().any(|l| l.text == "  1 → 2 (1 → 1 bytes)"));
        assert_eq!(
            keyspace_diff(&before, &before, 0)[0].text,
            "the run changed nothing"
        );
    }

    #[test]
    fn diffs_strings_and_hashes() {
        let d = key_diff(
            Some(&entry(Value::Str(b"old".to_vec()))),
            Some(&entry(Value::Str(b"new!".to_vec()))),
            0,
        );
        assert_eq!(texts(&d), vec![(Mark::Change, "old → new! (3 → 4 bytes)")]);
        let (_, b) = parse_add_key("hash h a 1 b 2 c 3", 0).unwrap();
        let (_, a) = parse_add_key("hash h a 1 b 9 d 4", 0).unwrap();
        let d = key_diff(Some(&entry(b)), Some(&entry(a)), 0);
        assert_eq!(
            texts(&d),
            vec![
                (Mark::Change, "b: 2 → 9"),
                (Mark::Del, "c = 3"),
                (Mark::Add, "d = 4"),
            ]
        );
        let added = key_diff(None, Some(&entry(list(&["x"]))), 0);
        assert_eq!(added[0].mark, Mark::Add);
        assert_eq!(added[0].text, "added: list, 1 element, ttl -");
        let same = entry(list(&["x"]));
        assert_eq!(
            texts(&key_diff(Some(&same), Some(&same), 0)),
            vec![(Mark::Note, "unchanged")]
        );
    }

    #[test]
    fn diffs_lists_sets_and_zsets() {
        let d = list_diff_of(&["a", "b"], &["a", "b", "c"]);
        assert_eq!(
            texts(&d),
            vec![(Mark::Add, "[2] c"), (Mark::Note, "length 2 → 3")]
        );
        // Head and tail trimming: a push on each side is an insertion in the middle region.
        let d = list_diff_of(&["a", "b"], &["a", "x", "b"]);
        assert_eq!(
            texts(&d),
            vec![(Mark::Add, "[1] x"), (Mark::Note, "length 2 → 3")]
        );
        let d = list_diff_of(&["a", "b", "c"], &["a", "B", "c"]);
        assert_eq!(
            texts(&d),
            vec![(Mark::Change, "[1] b → B"), (Mark::Note, "length 3 → 3")]
        );
        let d = list_diff_of(&["a", "b", "c"], &["c"]);
        assert_eq!(
            texts(&d),
            vec![
                (Mark::Del, "[0] a"),
                (Mark::Del, "[1] b"),
                (Mark::Note, "length 3 → 1")
            ]
        );
        let (_, b) = parse_add_key("set s a b", 0).unwrap();
        let (_, a) = parse_add_key("set s b c", 0).unwrap();
        assert_eq!(
            texts(&key_diff(Some(&entry(b)), Some(&entry(a)), 0)),
            vec![(Mark::Del, "a"), (Mark::Add, "c")]
        );
        let (_, b) = parse_add_key("zset z 1 a 2 b", 0).unwrap();
        let (_, a) = parse_add_key("zset z 5 b 3 c", 0).unwrap();
        assert_eq!(
            texts(&key_diff(Some(&entry(b)), Some(&entry(a)), 0)),
            vec![
                (Mark::Del, "a (1)"),
                (Mark::Change, "b: score 2 → 5"),
                (Mark::Add, "c (3)")
            ]
        );
        let d = key_diff(
            Some(&entry(Value::Str(b"1".to_vec()))),
            Some(&entry(list(&["1"]))),
            0,
        );
        assert_eq!(d[0].text, "type string → list");
    }

    fn type_into(app: &mut App, text: &str) {
        use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
        for c in text.chars() {
            app.on_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
        }
        app.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    }

    #[test]
    fn seed_edits_through_the_app() {
        let mut app = App::new("return 1", None, crate::tui::config::Config::default());
        app.update(Action::TabKeyspace);
        app.update(Action::AddKey);
        type_into(&mut app, "list l a b c");
        app.update(Action::AddKey);
        type_into(&mut app, "k v");
        assert_eq!(app.keyspace.shown(&app), Shown::Seed);
        assert_eq!(
            app.keyspace.visible_keys(&app),
            vec![b"k".to_vec(), b"l".to_vec()]
        );
        // The added key is selected; the value view pages within its rows.
        assert_eq!(app.keyspace.selected_key(&app), Some(b"k".to_vec()));
        app.update(Action::KeyspaceDown);
        app.update(Action::KeyspaceFocus);
        app.update(Action::KeyspacePageDown);
        assert_eq!(app.keyspace.value_scroll, 2);
        app.update(Action::SetTtl);
        type_into(&mut app, "30");
        let ttl = app.seed.get(b"l", app.now_ms).and_then(|e| e.expire_at_ms);
        assert!(ttl.is_some_and(|t| t > app.now_ms));
        app.update(Action::DeleteKey);
        assert_eq!(app.keyspace.visible_keys(&app), vec![b"k".to_vec()]);
        app.update(Action::AddKey);
        type_into(&mut app, "hash h odd");
        assert!(app.status.contains("pairs"), "{}", app.status);
    }

    fn list_diff_of(b: &[&str], a: &[&str]) -> Vec<DiffLine> {
        let (Value::List(x), Value::List(y)) = (list(b), list(a)) else {
            unreachable!()
        };
        list_diff(&x, &y)
    }

    #[test]
    fn pages_values() {
        let l = list(&["a", "b", "c", "d", "e"]);
        let (total, rows) = value_rows(&l, 3, 10, 40);
        assert_eq!(total, 5);
        assert_eq!(rows, vec!["3  d", "4  e"]);
        let s = Value::Str(vec![b'x'; 25]);
        let (total, rows) = value_rows(&s, 1, 1, 10);
        assert_eq!(total, 3);
        assert_eq!(rows, vec!["xxxxxxxxxx"]);
        let big = Value::Str(vec![b'y'; PREVIEW_BYTES + 5]);
        let (total, rows) = value_rows(&big, usize::MAX - 1, 5, 80);
        assert!(total > 1 && rows.is_empty());
        assert_eq!(
            value_rows(&big, 0, usize::MAX, 80).1.last().unwrap(),
            "… 5 more bytes not shown"
        );
    }
}
