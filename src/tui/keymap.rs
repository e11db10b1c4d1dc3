//! Key bindings per context, in a notation shared by the config file, the help overlay and tests
//! (`<C-r>`, `<F5>`, `<S-F10>`, `<Esc>`, `a`, `/`).

use super::action::Action;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// Where a binding applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Context {
    /// Everywhere (checked before the focused pane).
    Global,
    /// The right-hand panes (trace, reply, keyspace, warnings) when focused.
    Panes,
    /// The keyspace tab when focused.
    Keyspace,
    /// The Server tab (live keyspace) when focused.
    Server,
    /// The editor when focused.
    Editor,
    /// An overlay (help, picker, prompt).
    Overlay,
    /// The Debug tab when focused (tui/debugger.rs).
    Debug,
    /// The value inspector (tui/value_view.rs).
    Value,
}

impl Context {
    /// In the order of the help overlay and the README key table.
    pub const ALL: [Context; 8] = [
        Context::Global,
        Context::Editor,
        Context::Panes,
        Context::Keyspace,
        Context::Server,
        Context::Debug,
        Context::Overlay,
        Context::Value,
    ];

    /// The name in the config file's `[keys.<context>]` tables.
    pub fn name(self) -> &'static str {
        match self {
            Context::Global => "global",
            Context::Panes => "panes",
            Context::Keyspace => "keyspace",
            Context::Server => "server",
            Context::Editor => "editor",
            Context::Overlay => "overlay",
            Context::Debug => "debug",
            Context::Value => "value",
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            Context::Global => "Everywhere",
            Context::Panes => "Trace / Reply / Keyspace / Warnings",
            Context::Keyspace => "Keyspace",
            Context::Server => "Server (live keyspace)",
            Context::Editor => "Editor",
            Context::Overlay => "Overlays",
            Context::Debug => "Debug",
            Context::Value => "Value inspector",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binding {
    pub context: Context,
    pub key: KeyEvent,
    pub action: Action,
}

const DEFAULTS: &[(Context, &str, Action)] = &[
    (Context::Global, "<F5>", Action::Run),
    (Context::Global, "<C-r>", Action::Run),
    // The debugger's F-keys, as in VS Code and Visual Studio (tui/debugger.rs).
    (Context::Global, "<F9>", Action::ToggleBreakpoint),
    (Context::Global, "<S-F9>", Action::EditBreakpoint),
    (Context::Global, "<F10>", Action::StepOver),
    (Context::Global, "<F11>", Action::StepInto),
    (Context::Global, "<S-F11>", Action::StepOut),
    (Context::Global, "<S-F10>", Action::StepBackLine),
    (Context::Global, "<A-F5>", Action::ReverseContinue),
    (Context::Global, "<C-F10>", Action::RunToCursor),
    (Context::Global, "<S-F5>", Action::StopDebugging),
    (Context::Global, "<A-6>", Action::TabDebug),
    (Context::Global, "<A-8>", Action::RaceLab), // the race lab
    // Tests in the workbench (tui/tests_tab.rs).
    (Context::Global, "<C-t>", Action::RunTests),
    (Context::Global, "<A-t>", Action::SaveCase),
    (Context::Global, "<A-9>", Action::TabTests),
    // Stepping through the last run's redis.call (F10 / S-F10 before the debugger).
    (Context::Global, "<A-Right>", Action::StepForward),
    (Context::Global, "<A-Left>", Action::StepBack),
    (Context::Panes, "]", Action::StepForward),
    (Context::Panes, "[", Action::StepBack),
    (Context::Global, "<F1>", Action::Help),
    (Context::Global, "<C-p>", Action::Palette),
    (Context::Global, "<C-q>", Action::Quit),
    (Context::Global, "<C-s>", Action::Save),
    (Context::Global, "<C-o>", Action::Open),
    (Context::Global, "<C-n>", Action::NewFile),
    // Buffers (tui/buffers.rs): Ctrl-PageDown/Up as in VS Code and browsers; Alt-. and Alt-,
    // where a terminal takes those for itself.
    (Context::Global, "<C-PageDown>", Action::NextBuffer),
    (Context::Global, "<C-PageUp>", Action::PrevBuffer),
    (Context::Global, "<A-.>", Action::NextBuffer),
    (Context::Global, "<A-,>", Action::PrevBuffer),
    (Context::Global, "<A-b>", Action::BufferList),
    (Context::Global, "<C-w>", Action::CloseBuffer),
    (Context::Global, "<F6>", Action::FocusNext),
    (Context::Global, "<S-F6>", Action::FocusPrev),
    (Context::Global, "<A-1>", Action::TabTrace),
    (Context::Global, "<A-2>", Action::TabReply),
    (Context::Global, "<A-3>", Action::TabKeyspace),
    (Context::Global, "<A-4>", Action::TabWarnings),
    (Context::Global, "<A-5>", Action::TabServer),
    (Context::Global, "<A-f>", Action::PickFunction),
    (Context::Global, "<A-u>", Action::LoadLibrary), // load library to server
    (Context::Global, "<F7>", Action::ToggleBackend),
    (Context::Global, "<F8>", Action::ScriptLoad),
    (Context::Global, "<Esc>", Action::Cancel),
    (Context::Global, "<A-z>", Action::Zoom),
    (Context::Global, "<A-e>", Action::ExportRun), // tui/export_run.rs
    // Lessons (tui/lessons.rs).
    (Context::Global, "<A-l>", Action::OpenLessons),
    (Context::Global, "<A-c>", Action::CheckLesson),
    (Context::Global, "<A-h>", Action::NextHint),
    (Context::Global, "<A-r>", Action::ResetLesson),
    (Context::Global, "<A-7>", Action::TabLesson),
    (Context::Global, "<A-p>", Action::Present), // ui/present.rs
    (Context::Global, "<A-s>", Action::PresentSplit),
    (Context::Panes, "<Tab>", Action::NextTab),
    (Context::Panes, "<Up>", Action::Up),
    (Context::Panes, "k", Action::Up),
    (Context::Panes, "<Down>", Action::Down),
    (Context::Panes, "j", Action::Down),
    (Context::Panes, "<PageUp>", Action::PageUp),
    (Context::Panes, "<PageDown>", Action::PageDown),
    (Context::Panes, "<Home>", Action::Top),
    (Context::Panes, "<End>", Action::Bottom),
    (Context::Panes, "<Enter>", Action::Select),
    (Context::Panes, "x", Action::StepStop),
    (Context::Panes, "p", Action::CompareProfile),
    // The Race tab's client count (tui/race.rs).
    (Context::Panes, "+", Action::MoreClients),
    (Context::Panes, "-", Action::FewerClients),
    // The value inspector: v, and V where v is taken (the Keyspace tab's seed view).
    (Context::Panes, "v", Action::ViewValue),
    (Context::Panes, "V", Action::ViewValue),
    (Context::Keyspace, "/", Action::FilterKeys),
    (Context::Keyspace, ":", Action::CommandPrompt),
    (Context::Keyspace, "t", Action::CycleTypeFilter),
    (Context::Keyspace, "D", Action::ToggleDiff),
    (Context::Keyspace, "a", Action::AddKey),
    (Context::Keyspace, "d", Action::DeleteKey),
    (Context::Keyspace, "s", Action::SetString),
    (Context::Keyspace, "e", Action::SetTtl),
    (Context::Keyspace, "l", Action::LoadSeed),
    (Context::Keyspace, "w", Action::SaveSeed),
    (Context::Keyspace, "r", Action::ResetSeed),
    (Context::Keyspace, "+", Action::AdvanceClock),
    (Context::Keyspace, "=", Action::ResetClock),
    (Context::Keyspace, "K", Action::KeepState),
    (Context::Keyspace, "v", Action::ToggleSeedView),
    (Context::Keyspace, "<Enter>", Action::KeyspaceFocus),
    (Context::Keyspace, "<Up>", Action::KeyspaceUp),
    (Context::Keyspace, "k", Action::KeyspaceUp),
    (Context::Keyspace, "<Down>", Action::KeyspaceDown),
    (Context::Keyspace, "j", Action::KeyspaceDown),
    (Context::Keyspace, "<PageUp>", Action::KeyspacePageUp),
    (Context::Keyspace, "<PageDown>", Action::KeyspacePageDown),
    (Context::Keyspace, "<Home>", Action::KeyspaceTop),
    (Context::Keyspace, "<End>", Action::KeyspaceBottom),
    (Context::Server, "/", Action::FilterKeys),
    (Context::Server, ":", Action::CommandPrompt),
    (Context::Server, "t", Action::CycleTypeFilter),
    (Context::Server, "o", Action::OpenKey),
    (Context::Server, "c", Action::CopyToSandbox),
    (Context::Server, "C", Action::CopyDeclaredKeys),
    (Context::Server, "R", Action::Rescan),
    (Context::Server, "i", Action::ServerOverview),
    (Context::Server, "X", Action::ServerScriptKill),
    (Context::Server, "f", Action::SearchInKey),
    (Context::Server, "<Esc>", Action::StopSearch), // a run's Esc is global and first
    (Context::Server, "<Enter>", Action::KeyspaceFocus),
    (Context::Server, "<Up>", Action::KeyspaceUp),
    (Context::Server, "k", Action::KeyspaceUp),
    (Context::Server, "<Down>", Action::KeyspaceDown),
    (Context::Server, "j", Action::KeyspaceDown),
    (Context::Server, "<PageUp>", Action::KeyspacePageUp),
    (Context::Server, "<PageDown>", Action::KeyspacePageDown),
    (Context::Server, "<Home>", Action::KeyspaceTop),
    (Context::Server, "<End>", Action::KeyspaceBottom),
    (Context::Debug, "e", Action::DebugEval),
    (Context::Debug, "w", Action::AddWatch),
    (Context::Debug, "W", Action::RemoveWatch),
    (Context::Debug, "b", Action::BreakOn),
    (Context::Debug, "]", Action::NextFrame),
    (Context::Debug, "[", Action::PrevFrame),
    (Context::Editor, "<C-f>", Action::Find),
    (Context::Editor, "<F3>", Action::FindNext),
    (Context::Editor, "<A-n>", Action::FindNext),
    // Not Shift-F3: terminals send it as CSI 1;2R, which reads as a cursor position report.
    (Context::Editor, "<A-N>", Action::FindPrevious),
    (Context::Editor, "<C-z>", Action::Undo),
    (Context::Editor, "<C-y>", Action::Redo),
    (Context::Editor, "<C-S-z>", Action::Redo),
    (Context::Editor, "<C-c>", Action::Copy),
    (Context::Editor, "<C-x>", Action::Cut),
    (Context::Editor, "<C-v>", Action::Paste),
    (Context::Editor, "<C-a>", Action::SelectAll),
    (Context::Editor, "<C-Home>", Action::DocumentStart),
    (Context::Editor, "<C-End>", Action::DocumentEnd),
    (Context::Editor, "<C-g>", Action::GotoLine),
    (Context::Editor, "<C-/>", Action::ToggleComment),
    // What most terminals send for Ctrl-/ (the byte 0x1f).
    (Context::Editor, "<C-7>", Action::ToggleComment),
    (Context::Editor, "<Tab>", Action::Indent),
    (Context::Editor, "<BackTab>", Action::Outdent),
    (Context::Editor, "<A-w>", Action::ToggleWrap),
    (Context::Overlay, "<Esc>", Action::Close),
    (Context::Overlay, "<Up>", Action::Up),
    (Context::Overlay, "<Down>", Action::Down),
    (Context::Overlay, "<PageUp>", Action::PageUp),
    (Context::Overlay, "<PageDown>", Action::PageDown),
    (Context::Overlay, "<Enter>", Action::Select),
    (Context::Overlay, "<A-r>", Action::SearchRegex),
    (Context::Value, "<Esc>", Action::Close),
    (Context::Value, "q", Action::Close),
    (Context::Value, "<Up>", Action::Up),
    (Context::Value, "k", Action::Up),
    (Context::Value, "<Down>", Action::Down),
    (Context::Value, "j", Action::Down),
    (Context::Value, "<PageUp>", Action::PageUp),
    (Context::Value, "<PageDown>", Action::PageDown),
    (Context::Value, "<Home>", Action::Top),
    (Context::Value, "<End>", Action::Bottom),
    (Context::Value, "<Left>", Action::ValueLeft),
    (Context::Value, "<Right>", Action::ValueRight),
    (Context::Value, "w", Action::ValueWrap),
    (Context::Value, "m", Action::ValueMode),
    (Context::Value, "/", Action::ValueSearch),
    (Context::Value, "n", Action::ValueNext),
    (Context::Value, "N", Action::ValuePrev),
    (Context::Value, "y", Action::ValueYank),
];

#[derive(Debug, Clone)]
pub struct Keymap {
    pub bindings: Vec<Binding>,
}

impl Default for Keymap {
    fn default() -> Self {
        Keymap {
            bindings: DEFAULTS
                .iter()
                .map(|(context, key, action)| Binding {
                    context: *context,
                    key: parse_key(key).expect("default key notation"),
                    action: *action,
                })
                .collect(),
        }
    }
}

impl Keymap {
    /// The action bound to `key` in `context`.
    pub fn lookup(&self, context: Context, key: &KeyEvent) -> Option<Action> {
        let key = normalize(*key);
        self.bindings
            .iter()
            .find(|b| b.context == context && b.key == key)
            .map(|b| b.action)
    }

    /// Replace the keys of `action` in `context` (config overrides). Errors name the bad notation.
    pub fn rebind(
        &mut self,
        context: Context,
        action: Action,
        keys: &[String],
    ) -> Result<(), String> {
        let parsed: Vec<KeyEvent> = keys
            .iter()
            .map(|k| parse_key(k).ok_or_else(|| format!("bad key notation {k:?}")))
            .collect::<Result<_, _>>()?;
        // The user's keys win over a default bound to the same key in this context.
        self.bindings
            .retain(|b| b.context != context || (b.action != action && !parsed.contains(&b.key)));
        for key in parsed {
            self.bindings.push(Binding {
                context,
                key,
                action,
            });
        }
        Ok(())
    }

    /// The key notations bound to `action` in `context`, for hints and help.
    pub fn keys_for(&self, context: Context, action: Action) -> Vec<String> {
        self.bindings
            .iter()
            .filter(|b| b.context == context && b.action == action)
            .map(|b| format_key(&b.key))
            .collect()
    }
}

/// Shift is part of upper-case characters already; drop it so `D` matches with or without it.
/// With Ctrl or Alt, Shift and a letter becomes the upper-case letter (`<C-S-z>`, as a terminal
/// reporting it sends it); Shift-Tab is BackTab however the terminal reports it.
fn normalize(mut key: KeyEvent) -> KeyEvent {
    if let KeyCode::Char(c) = key.code {
        if key.modifiers.contains(KeyModifiers::SHIFT)
            && key
                .modifiers
                .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
        {
            key.code = KeyCode::Char(c.to_ascii_uppercase());
        }
        key.modifiers.remove(KeyModifiers::SHIFT);
    }
    if key.code == KeyCode::BackTab {
        key.modifiers.remove(KeyModifiers::SHIFT);
    }
    key.kind = ratatui::crossterm::event::KeyEventKind::Press;
    key.state = ratatui::crossterm::event::KeyEventState::NONE;
    key
}

/// Parse `<C-r>`, `<S-F10>`, `<A-1>`, `<Esc>`, `a`.
pub fn parse_key(text: &str) -> Option<KeyEvent> {
    let inner = match text.strip_prefix('<').and_then(|t| t.strip_suffix('>')) {
        Some(inner) => inner,
        None => {
            let mut chars = text.chars();
            let c = chars.next()?;
            return chars
                .next()
                .is_none()
                .then(|| normalize(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)));
        }
    };
    let mut modifiers = KeyModifiers::NONE;
    let mut rest = inner;
    loop {
        if let Some(r) = rest.strip_prefix("C-") {
            modifiers |= KeyModifiers::CONTROL;
            rest = r;
        } else if let Some(r) = rest.strip_prefix("S-") {
            modifiers |= KeyModifiers::SHIFT;
            rest = r;
        } else if let Some(r) = rest.strip_prefix("A-") {
            modifiers |= KeyModifiers::ALT;
            rest = r;
        } else {
            break;
        }
    }
    let code = match rest {
        "Esc" => KeyCode::Esc,
        "Enter" => KeyCode::Enter,
        "Tab" => KeyCode::Tab,
        "BackTab" => KeyCode::BackTab,
        "Up" => KeyCode::Up,
        "Down" => KeyCode::Down,
        "Left" => KeyCode::Left,
        "Right" => KeyCode::Right,
        "PageUp" => KeyCode::PageUp,
        "PageDown" => KeyCode::PageDown,
        "Home" => KeyCode::Home,
        "End" => KeyCode::End,
        "Backspace" => KeyCode::Backspace,
        "Del" => KeyCode::Delete,
        "Space" => KeyCode::Char(' '),
        f if f.starts_with('F') && f.len() > 1 => KeyCode::F(f[1..].parse().ok()?),
        c if c.chars().count() == 1 => KeyCode::Char(c.chars().next()?),
        _ => return None,
    };
    Some(normalize(KeyEvent::new(code, modifiers)))
}

/// The notation of a key, inverse of `parse_key`.
pub fn format_key(key: &KeyEvent) -> String {
    let mut prefix = String::new();
    if key.modifiers.contains(KeyModifiers::CONTROL) {
        prefix.push_str("C-");
    }
    if key.modifiers.contains(KeyModifiers::SHIFT) {
        prefix.push_str("S-");
    }
    if key.modifiers.contains(KeyModifiers::ALT) {
        prefix.push_str("A-");
    }
    let name = match key.code {
        KeyCode::Esc => "Esc".to_string(),
        KeyCode::Enter => "Enter".to_string(),
        KeyCode::Tab => "Tab".to_string(),
        KeyCode::BackTab => "BackTab".to_string(),
        KeyCode::Up => "Up".to_string(),
        KeyCode::Down => "Down".to_string(),
        KeyCode::Left => "Left".to_string(),
        KeyCode::Right => "Right".to_string(),
        KeyCode::PageUp => "PageUp".to_string(),
        KeyCode::PageDown => "PageDown".to_string(),
        KeyCode::Home => "Home".to_string(),
        KeyCode::End => "End".to_string(),
        KeyCode::Backspace => "Backspace".to_string(),
        KeyCode::Delete => "Del".to_string(),
        KeyCode::F(n) => format!("F{n}"),
        KeyCode::Char(' ') => "Space".to_string(),
        KeyCode::Char(c) if prefix.is_empty() => return c.to_string(),
        // Ctrl or Alt with an upper-case letter: written with Shift, as it is typed.
        KeyCode::Char(c) if c.is_ascii_uppercase() => {
            return format!("<{prefix}S-{}>", c.to_ascii_lowercase())
        }
        KeyCode::Char(c) => c.to_string(),
        _ => "?".to_string(),
    };
    format!("<{prefix}{name}>")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notation_round_trips() {
        for text in [
            "<C-r>",
            "<S-F10>",
            "<A-1>",
            "<Esc>",
            "a",
            "/",
            "<F5>",
            "D",
            "<Space>",
            "<C-S-z>",
            "<BackTab>",
            "<C-Home>",
        ] {
            assert_eq!(format_key(&parse_key(text).unwrap()), text);
        }
        assert!(parse_key("<C-nope>").is_none());
    }

    #[test]
    fn every_action_has_a_key() {
        let map = Keymap::default();
        for action in Action::ALL {
            if matches!(action, Action::Close) {
                continue;
            }
            assert!(
                map.bindings.iter().any(|b| b.action == *action),
                "{action:?} has no key"
            );
        }
    }
}
