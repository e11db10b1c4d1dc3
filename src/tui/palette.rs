//! The command palette (Ctrl-P, and F1's help, which is the same list): every action of the action
//! table with its keys and description, fuzzy filtered as you type, Enter runs the chosen one.
//! Empty, it lists the keys by where they work, as the README's key table does.

use super::action::Action;
use super::app::{App, Effect, Focus, Overlay, Tab};
use super::keymap::{Context, Keymap};
use nucleo_matcher::pattern::{AtomKind, CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher, Utf32String};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// Rows PageUp and PageDown move by.
const PAGE: isize = 10;
/// Apart the scores of the kinds of match: words in the short words, words in the
/// description, fuzzy in the short words (no score reaches it).
const TIER: u32 = 1 << 20;

/// One action where it works, with its keys there.
#[derive(Debug, Clone)]
pub struct Entry {
    pub context: Context,
    pub action: Action,
    /// The keys in the keymap notation (`<C-f>`); empty for an action the config left unbound.
    pub keys: Vec<String>,
    /// An open buffer instead of an action: its place in the list and its name (`*` unsaved).
    pub buffer: Option<(usize, String)>,
    /// What the fuzzy filter matches: the short words, the name, the keys.
    title: Utf32String,
    /// What typed words match too: the short words, the description, where the keys work.
    text: Utf32String,
}

pub struct PaletteState {
    pub query: String,
    pub entries: Vec<Entry>,
    /// The entries shown, best match first (all of them in table order for an empty query).
    pub shown: Vec<usize>,
    /// Index into `shown`.
    pub selected: usize,
}

impl PaletteState {
    pub fn new(keymap: &Keymap) -> PaletteState {
        let entries = entries(keymap);
        let shown = (0..entries.len()).collect();
        PaletteState {
            query: String::new(),
            entries,
            shown,
            selected: 0,
        }
    }

    /// With several buffers open, each one first (Enter shows it), as an editor's palette
    /// lists its open files.
    pub fn add_buffers(&mut self, listed: Vec<super::buffers::Listed>) {
        if listed.len() < 2 {
            return;
        }
        let buffers: Vec<Entry> = listed
            .into_iter()
            .enumerate()
            .map(|(i, b)| {
                let name = format!("{}{}", b.name, if b.modified { " *" } else { "" });
                let title = format!("buffer {} {name}", i + 1);
                Entry {
                    context: Context::Global,
                    action: Action::BufferList,
                    keys: Vec::new(),
                    buffer: Some((i, name)),
                    title: Utf32String::from(title.as_str()),
                    text: Utf32String::from(format!("{title} open file").as_str()),
                }
            })
            .collect();
        self.entries.splice(0..0, buffers);
        self.shown = (0..self.entries.len()).collect();
    }

    /// The chosen entry.
    pub fn current(&self) -> Option<&Entry> {
        self.shown.get(self.selected).map(|&i| &self.entries[i])
    }

    fn move_by(&mut self, delta: isize) {
        let last = self.shown.len().saturating_sub(1) as isize;
        self.selected = (self.selected as isize + delta).clamp(0, last.max(0)) as usize;
    }

    fn filter(&mut self) {
        self.selected = 0;
        if self.query.trim().is_empty() {
            self.shown = (0..self.entries.len()).collect();
            return;
        }
        // The typed words as they are, in the short words first, then in the description; else
        // fuzzy in the short words only (fuzzy in a long description matches nearly anything).
        let words = Pattern::new(
            &self.query,
            CaseMatching::Ignore,
            Normalization::Smart,
            AtomKind::Substring,
        );
        let fuzzy = Pattern::parse(&self.query, CaseMatching::Ignore, Normalization::Smart);
        let mut matcher = Matcher::new(Config::DEFAULT);
        let mut scored: Vec<(usize, u32)> = self
            .entries
            .iter()
            .enumerate()
            .filter_map(|(i, e)| {
                let score = if let Some(s) = words.score(e.title.slice(..), &mut matcher) {
                    s + 2 * TIER
                } else if let Some(s) = words.score(e.text.slice(..), &mut matcher) {
                    s + TIER
                } else {
                    fuzzy.score(e.title.slice(..), &mut matcher)?
                };
                Some((i, score))
            })
            .collect();
        // Letters scattered through the words are a fallback: with the words as typed found
        // somewhere, they would only bury those.
        if scored.iter().any(|(_, score)| *score >= TIER) {
            scored.retain(|(_, score)| *score >= TIER);
        }
        // Best first; equal scores keep the table's order.
        scored.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        self.shown = scored.into_iter().map(|(i, _)| i).collect();
    }
}

/// Every action where it works: one entry per context it has keys in, in the order of the help
/// (and of the README's key table), then any action a config left without a key.
pub fn entries(keymap: &Keymap) -> Vec<Entry> {
    let defaults = Keymap::default();
    let mut out = Vec::new();
    for context in Context::ALL {
        for &action in Action::ALL {
            let keys = keymap.keys_for(context, action);
            if !keys.is_empty() {
                out.push(entry(context, action, keys));
            }
        }
    }
    for &action in Action::ALL {
        if keymap.bindings.iter().any(|b| b.action == action) || action == Action::Close {
            continue;
        }
        // Where its default key works, so running it lands in the right place.
        let context = defaults
            .bindings
            .iter()
            .find(|b| b.action == action)
            .map_or(Context::Global, |b| b.context);
        out.push(entry(context, action, Vec::new()));
    }
    out
}

fn entry(context: Context, action: Action, keys: Vec<String>) -> Entry {
    let title = format!(
        "{} {} {}",
        action.hint(),
        action.name().replace('_', " "),
        keys.join(" ")
    );
    let text = format!("{title} {} {}", action.description(), context.title());
    Entry {
        context,
        action,
        keys,
        buffer: None,
        title: Utf32String::from(title.as_str()),
        text: Utf32String::from(text.as_str()),
    }
}

/// A key while the palette is open: it takes every key until it closes.
pub fn on_key(app: &mut App, key: KeyEvent) -> Vec<Effect> {
    let overlay_action = app.keymap.lookup(Context::Overlay, &key);
    let global = app.keymap.lookup(Context::Global, &key);
    let Some(Overlay::Palette(palette)) = app.overlay.as_mut() else {
        return Vec::new();
    };
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let alt = key.modifiers.contains(KeyModifiers::ALT);
    match (overlay_action, key.code) {
        (Some(Action::Close), _) => app.overlay = None,
        (Some(Action::Up), _) => palette.move_by(-1),
        (Some(Action::Down), _) => palette.move_by(1),
        (Some(Action::PageUp), _) => palette.move_by(-PAGE),
        (Some(Action::PageDown), _) => palette.move_by(PAGE),
        (Some(Action::Select), _) => {
            let Some(entry) = palette.current().cloned() else {
                app.status = format!("no action matches '{}'", palette.query);
                return Vec::new();
            };
            app.overlay = None;
            return run(app, &entry);
        }
        (_, KeyCode::Home) => palette.move_by(isize::MIN / 2),
        (_, KeyCode::End) => palette.move_by(isize::MAX / 2),
        (_, KeyCode::Backspace) => {
            palette.query.pop();
            palette.filter();
        }
        (_, KeyCode::Char('u')) if ctrl => {
            palette.query.clear();
            palette.filter();
        }
        (_, KeyCode::Char(c)) if !ctrl && !alt => {
            palette.query.push(c);
            palette.filter();
        }
        // The keys that opened it close it again.
        _ if matches!(global, Some(Action::Help | Action::Palette)) => app.overlay = None,
        _ => {}
    }
    Vec::new()
}

/// The wheel moves the choice.
pub fn scroll(app: &mut App, delta: isize) {
    if let Some(Overlay::Palette(palette)) = app.overlay.as_mut() {
        palette.move_by(delta);
    }
}

/// Run `entry`'s action where it works: the focus goes there first (a Keyspace key shows the
/// Keyspace tab), as if its key had been pressed there.
pub fn run(app: &mut App, entry: &Entry) -> Vec<Effect> {
    if let Some((index, _)) = &entry.buffer {
        super::buffers::switch_to(app, *index);
        return Vec::new();
    }
    match entry.context {
        Context::Global => {}
        Context::Editor => app.focus = Focus::Editor,
        Context::Panes => app.focus = Focus::Panes,
        Context::Keyspace => app.show_tab(Tab::Keyspace),
        Context::Debug => app.show_tab(Tab::Debug),
        Context::Server if app.server.is_some() => app.show_tab(Tab::Server),
        Context::Server => {
            app.status = format!(
                "{}: the Server tab needs a live server (--server URL)",
                entry.action.hint()
            );
            return Vec::new();
        }
        Context::Overlay => {
            app.status = format!(
                "{}: this key works inside an open list or prompt",
                entry.action.hint()
            );
            return Vec::new();
        }
        Context::Value => {
            app.status = format!(
                "{}: this key works inside the value inspector (v on a value opens it)",
                entry.action.hint()
            );
            return Vec::new();
        }
    }
    app.update(entry.action)
}

/// The keys of an entry as shown (the notation of the help, the README and the config file).
pub fn keys_text(entry: &Entry) -> String {
    if let Some((index, _)) = &entry.buffer {
        format!("buffer {}", index + 1)
    } else if entry.keys.is_empty() {
        "(no key)".into()
    } else {
        entry.keys.join(" ")
    }
}
