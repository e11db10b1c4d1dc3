//! The `redis>` prompt of the Keyspace and Server tabs (`:`, as in vim or k9s): one command line
//! run on the sandbox's seed through the engine (engine/command_line.rs), or on the live server
//! through the inspector's connection, off the UI thread. History and completion live here; the
//! reply shows on the status line when it is one line, else in a panel above the prompt.

use super::app::{App, Effect, Overlay, Tab};
use super::inspector::InspectRequest;
use crate::engine::command_line::{self, Answer};
use crate::engine::reply::TRACE_ALLOWANCE;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// A one-line answer this long fits the status line of an 80-column terminal beside its hints.
const STATUS_FITS: usize = 60;

/// At most this many lines are remembered (the session's, oldest first).
const HISTORY: usize = 500;

#[derive(Debug, Default)]
pub struct CommandLine {
    pub input: String,
    /// Where typing goes: a character index into `input` (its end after a recall or Tab).
    pub cursor: usize,
    history: Vec<String>,
    /// The history line shown (Up / Down), and the line being typed before it.
    browsing: Option<usize>,
    draft: String,
    /// The last multi-line reply, a line each (shown above the prompt), and its first shown line.
    pub output: Vec<String>,
    pub scroll: usize,
    /// A line waiting for y / n before it goes to the live server: its words and why it asks.
    pub asking: Option<(Vec<Vec<u8>>, String)>,
    /// The line sent to the live server, until its answer comes.
    pub waiting: Option<String>,
    /// The prompt runs on the live server (else on the seed).
    pub live: bool,
}

impl CommandLine {
    /// The prompt's leading words.
    pub fn label(&self) -> &'static str {
        if self.live {
            "redis (live)> "
        } else {
            "redis (seed)> "
        }
    }

    /// The line replaced by `text`, the cursor at its end.
    fn set_input(&mut self, text: String) {
        self.cursor = text.chars().count();
        self.input = text;
    }

    /// The byte offset of character `index` of the line.
    fn byte_at(&self, index: usize) -> usize {
        self.input
            .char_indices()
            .nth(index)
            .map_or(self.input.len(), |(i, _)| i)
    }

    /// Put `text` where the cursor is, the cursor after it.
    fn insert(&mut self, text: &str) {
        let at = self.byte_at(self.cursor);
        self.input.insert_str(at, text);
        self.cursor += text.chars().count();
    }

    /// The line's editing keys, as a shell's: ← → Home End Ctrl-A Ctrl-E move, Backspace and
    /// Delete remove around the cursor, Ctrl-U / Ctrl-K cut to the start / end, Ctrl-W the word
    /// before, Ctrl-← Ctrl-→ by words. False: not an editing key.
    fn edit(&mut self, key: &KeyEvent) -> bool {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let len = self.input.chars().count();
        self.cursor = self.cursor.min(len);
        let chars: Vec<char> = self.input.chars().collect();
        // The start of the word before the cursor / the end of the one after it.
        let word_back = |from: usize| {
            let mut i = from;
            while i > 0 && chars[i - 1].is_whitespace() {
                i -= 1;
            }
            while i > 0 && !chars[i - 1].is_whitespace() {
                i -= 1;
            }
            i
        };
        let word_forward = |from: usize| {
            let mut i = from;
            while i < len && chars[i].is_whitespace() {
                i += 1;
            }
            while i < len && !chars[i].is_whitespace() {
                i += 1;
            }
            i
        };
        match key.code {
            KeyCode::Left if ctrl => self.cursor = word_back(self.cursor),
            KeyCode::Right if ctrl => self.cursor = word_forward(self.cursor),
            KeyCode::Left => self.cursor = self.cursor.saturating_sub(1),
            KeyCode::Right => self.cursor = (self.cursor + 1).min(len),
            KeyCode::Home => self.cursor = 0,
            KeyCode::End => self.cursor = len,
            KeyCode::Char('a') if ctrl => self.cursor = 0,
            KeyCode::Char('e') if ctrl => self.cursor = len,
            KeyCode::Backspace if self.cursor > 0 => {
                let at = self.byte_at(self.cursor - 1);
                self.input.remove(at);
                self.cursor -= 1;
            }
            KeyCode::Backspace => {}
            KeyCode::Delete if self.cursor < len => {
                let at = self.byte_at(self.cursor);
                self.input.remove(at);
            }
            KeyCode::Delete => {}
            KeyCode::Char('u') if ctrl => {
                let at = self.byte_at(self.cursor);
                self.input.replace_range(..at, "");
                self.cursor = 0;
            }
            KeyCode::Char('k') if ctrl => {
                let at = self.byte_at(self.cursor);
                self.input.truncate(at);
            }
            KeyCode::Char('w') if ctrl => {
                let start = word_back(self.cursor);
                let (from, to) = (self.byte_at(start), self.byte_at(self.cursor));
                self.input.replace_range(from..to, "");
                self.cursor = start;
            }
            _ => return false,
        }
        true
    }

    fn remember(&mut self, line: &str) {
        if self.history.last().map(String::as_str) != Some(line) {
            self.history.push(line.to_string());
            if self.history.len() > HISTORY {
                self.history.remove(0);
            }
        }
        self.browsing = None;
    }

    fn browse(&mut self, older: bool) {
        let len = self.history.len();
        let next = match (self.browsing, older) {
            (_, _) if len == 0 => return,
            (None, true) => {
                self.draft = std::mem::take(&mut self.input);
                Some(len - 1)
            }
            (None, false) => return,
            (Some(i), true) => Some(i.saturating_sub(1)),
            (Some(i), false) if i + 1 < len => Some(i + 1),
            (Some(_), false) => None,
        };
        self.browsing = next;
        // The recalled line is edited from its end, as a shell does.
        let line = match next {
            Some(i) => self.history[i].clone(),
            None => std::mem::take(&mut self.draft),
        };
        self.set_input(line);
    }
}

/// `:` in the Keyspace or Server tab: open the prompt. The Server tab (or a live backend in the
/// Keyspace tab) runs on the live server; the sandbox's Keyspace tab on the seed.
pub fn open(app: &mut App) {
    let live = app.server.is_some() && (app.tab == Tab::Server || app.use_live);
    app.command.live = live;
    app.command.set_input(String::new());
    app.command.browsing = None;
    app.command.asking = None;
    app.command.output.clear();
    app.overlay = Some(Overlay::Command);
    app.status = if live {
        "redis> on the live server: reads run, writes ask first (Tab completes, Esc closes)".into()
    } else {
        "redis> on the seed: writes change the seed (Tab completes, Up: history, Esc closes)".into()
    };
}

/// Every key while the prompt is open.
pub fn on_key(app: &mut App, key: KeyEvent) -> Vec<Effect> {
    if let Some((args, _)) = app.command.asking.clone() {
        match key.code {
            KeyCode::Char('y') | KeyCode::Char('Y') => {
                app.command.asking = None;
                return send_live(app, args, true);
            }
            KeyCode::Char('n') | KeyCode::Char('N') | KeyCode::Esc => {
                app.command.asking = None;
                app.status = "nothing was sent".into();
            }
            _ => app.status = "y sends it to the live server, n or Esc sends nothing".into(),
        }
        return Vec::new();
    }
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let cmd = &mut app.command;
    match key.code {
        KeyCode::Esc => {
            app.overlay = None;
            app.status = "the prompt is closed (: opens it again)".into();
        }
        KeyCode::Enter => return run(app),
        KeyCode::Tab => complete(app),
        KeyCode::Up => cmd.browse(true),
        KeyCode::Down => cmd.browse(false),
        KeyCode::PageUp => cmd.scroll = cmd.scroll.saturating_sub(5),
        KeyCode::PageDown => {
            cmd.scroll = (cmd.scroll + 5).min(cmd.output.len().saturating_sub(1));
        }
        _ if cmd.edit(&key) => {}
        KeyCode::Char('c') if ctrl => {
            app.overlay = None;
            app.status = "the prompt is closed (: opens it again)".into();
        }
        KeyCode::Char(c) if !ctrl && !key.modifiers.contains(KeyModifiers::ALT) => {
            cmd.insert(c.encode_utf8(&mut [0; 4]))
        }
        _ => {
            app.status = format!(
                "{} does nothing in the prompt (Enter runs, Tab completes, Up/Down: history, ←→ Home End edit, Esc closes)",
                super::ui::key_label(&key)
            )
        }
    }
    Vec::new()
}

/// Pasted text goes into the line (its line breaks as spaces: the prompt is one line).
pub fn paste(app: &mut App, text: &str) {
    let line: String = text
        .chars()
        .map(|c| if c == '\n' || c == '\r' { ' ' } else { c })
        .collect();
    app.command.insert(&line);
}

/// Tab: complete the command name from the profile's table; several candidates extend the line
/// to their common start and are listed.
fn complete(app: &mut App) {
    let cmd = &mut app.command;
    if cmd.input.contains(char::is_whitespace) {
        app.status = "Tab completes the command's name (the first word)".into();
        return;
    }
    let names = command_line::complete(app.config.profile, &cmd.input);
    match names.as_slice() {
        [] => app.status = format!("no command starts with '{}'", cmd.input),
        [one] => cmd.set_input(format!("{one} ")),
        [first, rest @ ..] => {
            let common = rest.iter().fold(first.len(), |n, name| {
                first
                    .bytes()
                    .zip(name.bytes())
                    .take(n)
                    .take_while(|(a, b)| a == b)
                    .count()
            });
            cmd.set_input(first[..common].to_string());
            app.status = format!("{} commands start with '{}'", names.len(), cmd.input);
            cmd.output = vec![names.join(" ")];
            cmd.scroll = 0;
        }
    }
}

/// Enter: run the line.
fn run(app: &mut App) -> Vec<Effect> {
    let line = app.command.input.trim().to_string();
    if line.is_empty() {
        return Vec::new();
    }
    app.command.remember(&line);
    let args = match command_line::split(&line) {
        Ok(args) => args,
        Err(e) => {
            app.status = e;
            return Vec::new();
        }
    };
    app.command.set_input(String::new());
    if app.command.live {
        if app.command.waiting.is_some() {
            app.status = "the last line has not been answered yet; wait for it".into();
            return Vec::new();
        }
        app.command.waiting = Some(line);
        return send_live(app, args, false);
    }
    let now = app.seed_now_ms + app.clock_offset_ms;
    let before = app.seed.clone();
    let (reply, wrote) = command_line::run_on_seed(app.config.profile, &mut app.seed, now, &args);
    let (reply, cut) = reply.into_bounded(&mut TRACE_ALLOWANCE.clone());
    show(app, Answer::Reply { reply, cut });
    if wrote {
        // A write is one step of the buffer's undo (Ctrl-Z brings the seed back) and marks it modified.
        let after = std::mem::replace(&mut app.seed, before);
        super::buffer::seed_edit(app, format!("redis> {}", args_text(&args)));
        app.seed = after;
        // The Keyspace tab shows the seed, with the written key selected when it names one.
        let key = command_line::resolve(app.config.profile, &args)
            .ok()
            .and_then(|r| r.key_positions(&args).first().copied())
            .and_then(|i| args.get(i).cloned());
        super::keyspace::show_seed(app, key.as_deref());
    }
    Vec::new()
}

fn send_live(app: &mut App, args: Vec<Vec<u8>>, agreed: bool) -> Vec<Effect> {
    if agreed {
        app.command.waiting = Some(String::from_utf8_lossy(&args.join(&b' ')).into_owned());
    }
    app.status = format!(
        "sent to the live server: {} (waiting for its answer)",
        app.command.waiting.as_deref().unwrap_or_default()
    );
    vec![Effect::Inspect(InspectRequest::Command { args, agreed })]
}

/// The live server's answer to a line.
pub fn on_answer(app: &mut App, answer: Answer) {
    app.command.waiting = None;
    show(app, answer);
}

/// The line writes (or administers): it waits for y / n.
pub fn on_ask(app: &mut App, args: Vec<Vec<u8>>, why: String) {
    app.command.waiting = None;
    app.status = format!("{why}: send it? (y/n)");
    app.command.asking = Some((args, why));
}

/// A reply on the status line when it is one line, else in the panel above the prompt.
fn show(app: &mut App, answer: Answer) {
    let text = match answer {
        Answer::Reply { reply, cut } => {
            let mut text = reply.to_cli();
            if cut {
                text.push_str("\n(the reply is cut: it shows its first 1,000 elements and 64 KiB)");
            }
            text
        }
        Answer::Refused(why) => why,
        Answer::Failed(e) => format!("not answered: {e}"),
    };
    let lines: Vec<String> = text.lines().map(str::to_string).collect();
    if lines.len() <= 1 && text.chars().count() <= STATUS_FITS {
        app.status = text;
        app.command.output.clear();
    } else if lines.len() <= 1 {
        // Longer than an 80-column status line: whole in the panel (wrapped), begun below.
        app.status = super::keyspace::fit(&text, STATUS_FITS);
        app.command.output = lines;
    } else {
        app.status = format!("{} lines (PgUp/PgDn scroll them)", lines.len());
        app.command.output = lines;
    }
    app.command.scroll = 0;
}

/// The command line as the undo step names it.
fn args_text(args: &[Vec<u8>]) -> String {
    let words: Vec<String> = args
        .iter()
        .map(|a| crate::engine::display::display_bytes(a).into_owned())
        .collect();
    words.join(" ")
}
