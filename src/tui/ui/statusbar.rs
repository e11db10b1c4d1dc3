//! The status bar: backend, profile, file, SHA1, time against the busy threshold, key hints.

use crate::engine::display::display_safe;
use crate::tui::action::Action;
use crate::tui::app::App;
use crate::tui::keymap::Context;
use crate::tui::theme::Theme;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

pub fn draw(frame: &mut Frame, area: Rect, app: &App, theme: &Theme) {
    let sha = app.editor.sha1();
    let threshold = app.config.busy_threshold_ms;
    // Elapsed time against the busy threshold as a bar: a full bar means the script was stopped.
    let fraction = match (&app.running, &app.last_run) {
        (Some(_), _) if threshold > 0 && app.debugger.stop().is_some() => {
            app.debugger.stop().map_or(0, |s| s.active_ns) as f64 / 1e6 / threshold as f64
        }
        // A live run: the time of the phase it is in (the dry run, then the server's).
        (Some(r), _) if threshold > 0 => {
            let since = r.phase.map_or(r.started, |(_, since)| since);
            since.elapsed().as_secs_f64() * 1000.0 / threshold as f64
        }
        (None, Some(run)) => run.report.threshold_ratio(),
        _ => 0.0,
    };
    let filled = ((fraction.clamp(0.0, 1.0) * 10.0).round() as usize).min(10);
    let bar = format!("[{}{}]", "█".repeat(filled), "░".repeat(10 - filled));
    let debug_stop = app.debugger.stop().filter(|_| app.running.is_some());
    let gauge = match (&app.running, &app.last_run) {
        // Debugging: the script's own time (stops excluded), as the busy threshold counts it.
        (Some(_), _) if debug_stop.is_some() => format!(
            "debug {:.3} ms / {} ms",
            debug_stop.map_or(0, |s| s.active_ns) as f64 / 1e6,
            threshold
        ),
        (Some(r), _) => running_gauge(r, threshold),
        (None, Some(run)) => {
            let gauge = format!(
                "{:.3} ms / {} ms ({:.2}%)",
                run.report.elapsed_ns as f64 / 1e6,
                threshold,
                run.report.threshold_ratio() * 100.0
            );
            // A live run: server time against the threshold, then the client's round trip.
            let gauge = match run.report.round_trip_ns {
                Some(rt) => format!("{gauge} rtt {:.3} ms", rt as f64 / 1e6),
                None => gauge,
            };
            match run.dry_run_ns {
                Some(dry) => format!("{gauge} · dry run {:.3} ms", dry as f64 / 1e6),
                None => gauge,
            }
        }
        _ => format!("- / {threshold} ms"),
    };
    let file = match (&app.editor.path, &app.editor.read_only) {
        (Some(p), _) => display_safe(&p.display().to_string()).into_owned(),
        // A server's library (tui/read_only.rs).
        (None, Some(read_only)) => {
            display_safe(&format!("[read-only] library '{}'", read_only.library)).into_owned()
        }
        (None, None) => "untitled".to_string(),
    };
    let modified = if app.editor.modified { " *" } else { "" };
    let backend = Span::styled(
        format!(" {} ", display_safe(&app.backend_label())),
        // A server gone away stands out until it is back.
        if app.connection.lost.is_some() {
            theme.error
        } else {
            theme.header
        },
    );
    let bar = Span::styled(
        bar,
        if fraction >= 1.0 {
            theme.error
        } else {
            theme.text
        },
    );
    let gauge = Span::styled(format!(" {gauge} "), theme.text);
    let profile = Span::raw(format!(" {} ", app.config.profile.display_name()));
    let sha = Span::raw(format!(" sha {}{} ", &sha[..8], cache_mark(app, &sha)));
    let first = first_line(
        area.width as usize,
        backend,
        bar,
        profile,
        (file, modified),
        sha,
        gauge,
    );
    // The last message first (the feedback of the last action), then the focused pane's keys
    // in plain words, most useful first, as many as fit.
    // A message longer than the row ends in an ellipsis, never mid-word without one.
    let status = ellipsis(
        &format!(" {}", display_safe(&app.status)),
        (area.width as usize).saturating_sub(2),
    );
    let mut used = status.chars().count() + 2;
    let mut second = vec![
        Span::styled(status, theme.text.add_modifier(Modifier::BOLD)),
        Span::raw(" │"),
    ];
    for (key, action) in hints(app) {
        let words = action.hint();
        let width = key.chars().count() + words.chars().count() + 2;
        if used + width > area.width as usize {
            break;
        }
        used += width;
        second.push(Span::styled(format!(" {key}"), theme.header));
        second.push(Span::raw(format!(" {words}")));
    }
    frame.render_widget(Paragraph::new(vec![first, Line::from(second)]), area);
}

/// `text` cut to `width` characters, an ellipsis at the end when it was cut.
fn ellipsis(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let mut out: String = text.chars().take(width.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// The first row, fitted to `width`: the run counter is never dropped; what gives way first is
/// the profile, then the SHA1, then the file name (its start cut, then the whole), then the bar.
fn first_line(
    width: usize,
    backend: Span<'static>,
    bar: Span<'static>,
    profile: Span<'static>,
    (file, modified): (String, &str),
    sha: Span<'static>,
    gauge: Span<'static>,
) -> Line<'static> {
    let file_span = |file: &str| Span::raw(format!(" {file}{modified} "));
    let mut parts = vec![
        Some(backend),
        Some(bar),
        Some(profile),
        Some(file_span(&file)),
        Some(sha),
        Some(gauge),
    ];
    let used = |parts: &[Option<Span>]| parts.iter().flatten().map(Span::width).sum::<usize>();
    const BAR: usize = 1;
    const PROFILE: usize = 2;
    const FILE: usize = 3;
    const SHA: usize = 4;
    for drop in [PROFILE, SHA] {
        if used(&parts) <= width {
            break;
        }
        parts[drop] = None;
    }
    let over = used(&parts).saturating_sub(width);
    if over > 0 {
        // The file's tail names it: keep that, at least a few characters of it.
        let chars = file.chars().count();
        let keep = chars.saturating_sub(over + 1);
        if keep >= 8 {
            let tail: String = file.chars().skip(chars - keep).collect();
            parts[FILE] = Some(file_span(&format!("…{tail}")));
        } else {
            parts[FILE] = None;
        }
    }
    if used(&parts) > width {
        parts[BAR] = None;
    }
    // Last, the backend's label gives way to the counter.
    let over = used(&parts).saturating_sub(width);
    if over > 0 {
        if let Some(backend) = parts[0].take() {
            let text = backend.content.trim_end().to_string();
            let keep = text.chars().count().saturating_sub(over + 1);
            let cut: String = text.chars().take(keep).collect();
            parts[0] = Some(Span::styled(format!("{cut}…"), backend.style));
        }
    }
    Line::from(parts.into_iter().flatten().collect::<Vec<_>>())
}

/// Whether the live server's script cache holds the script (what an application's EVALSHA needs);
/// nothing in the sandbox.
fn cache_mark(app: &App, sha: &str) -> &'static str {
    if app.live_server.is_none() {
        return "";
    }
    match &app.script_cache {
        Some((s, Some(cached))) if s == sha && cached.script => " cached",
        Some((s, Some(_))) if s == sha => " not cached (F8 loads)",
        _ => " cache ?",
    }
}

/// The counter of a run in progress; a live run's names its phase, and once on the server also how
/// long the dry run took ("on the server 0.3 s / 5000 ms · dry run 1.2 s").
fn running_gauge(r: &crate::tui::app::Running, threshold: u64) -> String {
    use crate::engine::live::guarded::Phase;
    let Some((phase, since)) = r.phase else {
        return format!(
            "running {:.1} s / {} ms",
            r.started.elapsed().as_secs_f64(),
            threshold
        );
    };
    let gauge = format!(
        "{} {:.1} s / {} ms",
        phase.label(),
        since.elapsed().as_secs_f64(),
        threshold
    );
    match (phase, r.dry_run) {
        (Phase::OnServer, Some(dry)) => format!("{gauge} · dry run {:.1} s", dry.as_secs_f64()),
        _ => gauge,
    }
}

/// The actions worth a hint where the focus is, most useful first.
fn priorities(app: &App) -> &'static [Action] {
    use Action::*;
    // Stopped in the debugger: its keys (Run continues).
    if app.debugger.session.is_some() {
        return &[
            StepOver,
            StepInto,
            StepOut,
            Run,
            StopDebugging,
            ToggleBreakpoint,
            Help,
        ];
    }
    if app.running.is_some() {
        return &[Cancel, Help];
    }
    match app.context() {
        Context::Editor => &[
            Run,
            Help,
            Save,
            Find,
            Undo,
            GotoLine,
            ToggleComment,
            Open,
            FocusNext,
            // The debugger's entry points (Alt-Right steps the last run's calls from the panes).
            StepOver,
            ToggleBreakpoint,
            Quit,
        ],
        Context::Panes => &[
            Select,
            NextTab,
            Run,
            StepForward,
            StepBack,
            StepStop,
            FocusNext,
            Help,
            Quit,
        ],
        Context::Keyspace => &[
            KeyspaceFocus,
            AddKey,
            FilterKeys,
            ToggleSeedView,
            ToggleDiff,
            ResetSeed,
            Run,
            Help,
            FocusNext,
        ],
        Context::Server => &[
            KeyspaceFocus,
            FilterKeys,
            OpenKey,
            CopyToSandbox,
            Rescan,
            Run,
            Help,
            FocusNext,
        ],
        Context::Debug => &[
            DebugEval, AddWatch, BreakOn, NextFrame, StepOver, Run, Help, FocusNext,
        ],
        Context::Overlay => &[Select, Close],
        Context::Global => &[Run, Help, FocusNext, Save, Quit],
    }
}

/// (key, action) for the hints: the first key of each action, in the focused context or global.
fn hints(app: &App) -> Vec<(String, Action)> {
    let context = app.context();
    priorities(app)
        .iter()
        .filter_map(|&action| {
            [context, Context::Global]
                .into_iter()
                .flat_map(|ctx| {
                    app.keymap
                        .bindings
                        .iter()
                        .filter(move |b| b.context == ctx && b.action == action)
                })
                .next()
                .map(|b| (key_label(&b.key), action))
        })
        .collect()
}

/// A key as people write it: `Ctrl-S`, `Shift-F10`, `Alt-1`, `F5`, `Esc`, `/`.
pub fn key_label(key: &KeyEvent) -> String {
    let mut out = String::new();
    if key.modifiers.contains(KeyModifiers::CONTROL) {
        out.push_str("Ctrl-");
    }
    if key.modifiers.contains(KeyModifiers::ALT) {
        out.push_str("Alt-");
    }
    let shifted_letter =
        matches!(key.code, KeyCode::Char(c) if c.is_ascii_uppercase()) && !out.is_empty();
    if key.modifiers.contains(KeyModifiers::SHIFT) || shifted_letter {
        out.push_str("Shift-");
    }
    let name = match key.code {
        KeyCode::Char(' ') => "Space".to_string(),
        KeyCode::Char(c) if out.is_empty() => c.to_string(),
        KeyCode::Char(c) => c.to_ascii_uppercase().to_string(),
        KeyCode::F(n) => format!("F{n}"),
        KeyCode::PageUp => "PgUp".into(),
        KeyCode::PageDown => "PgDn".into(),
        KeyCode::BackTab => "Shift-Tab".into(),
        KeyCode::Delete => "Del".into(),
        other => format!("{other:?}"),
    };
    out + &name
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::keymap::parse_key;

    #[test]
    fn keys_read_as_people_write_them() {
        for (notation, label) in [
            ("<C-s>", "Ctrl-S"),
            ("<S-F10>", "Shift-F10"),
            ("<A-1>", "Alt-1"),
            ("<F5>", "F5"),
            ("<Esc>", "Esc"),
            ("/", "/"),
            ("D", "D"),
            ("<C-S-z>", "Ctrl-Shift-Z"),
            ("<PageDown>", "PgDn"),
            ("<Enter>", "Enter"),
        ] {
            assert_eq!(key_label(&parse_key(notation).unwrap()), label);
        }
    }

    #[test]
    fn every_hint_is_plain_words() {
        for action in Action::ALL {
            let hint = action.hint();
            assert!(
                !hint.contains('_') && !hint.is_empty(),
                "{action:?}: {hint}"
            );
        }
    }
}
