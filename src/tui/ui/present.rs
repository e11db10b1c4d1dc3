//! Presenter mode (`--present`, Alt-P): one large pane for a room to read, the editor or the
//! focused tab full screen (Alt-S: the code beside the tab shown), in the high-contrast theme,
//! margins and blank rows around it instead of the other panes' borders, a header naming what is
//! shown (with KEYS and ARGV for the script) and the state a run depends on (profile, clock, keep
//! state), the last message on a bold line, and under it the keys a presenter needs and the time
//! of the last run.

use super::{draw_panes, editor};
use crate::engine::display::display_safe;
use crate::tui::action::Action;
use crate::tui::app::{App, Focus};
use crate::tui::keymap::Context;
use crate::tui::theme::Theme;
use ratatui::layout::{Constraint, Layout, Margin, Rect};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

/// From this size on, wider margins (a projector's terminal is large; a laptop's 80x24 is not).
const ROOMY: (u16, u16) = (120, 40);

pub fn draw(frame: &mut Frame, area: Rect, app: &App, theme: &Theme) {
    let roomy = area.width >= ROOMY.0 && area.height >= ROOMY.1;
    let margin = if roomy {
        Margin::new(4, 2)
    } else {
        Margin::new(1, 0)
    };
    let inner = area.inner(margin);
    let [header, _, body, _, message, keys] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Min(3),
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(inner);
    let file = app
        .editor
        .path
        .as_ref()
        .map_or("untitled".to_string(), |p| {
            display_safe(
                &p.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
            )
            .into_owned()
        });
    let bold = theme.header.add_modifier(Modifier::BOLD);
    let script = format!(
        "   KEYS {}   ARGV {}",
        or_none(&app.inputs.keys_text()),
        or_none(&app.inputs.argv_text())
    );
    let heading = match (app.present_split, app.focus) {
        (true, _) => vec![
            Span::styled(file, bold),
            Span::raw(format!("{script}   · {}", app.tab.title())),
        ],
        (false, Focus::Panes) => vec![
            Span::styled(app.tab.title().to_string(), bold),
            Span::raw(format!("   {file}")),
        ],
        (false, _) => vec![Span::styled(file, bold), Span::raw(script)],
    };
    // The state a run depends on is always on screen, right-aligned; the heading gets the rest.
    let markers = markers(app);
    let marker_width = markers.chars().count() as u16;
    let [left, right] =
        Layout::horizontal([Constraint::Min(0), Constraint::Length(marker_width)]).areas(header);
    frame.render_widget(Paragraph::new(fit_line(heading, left.width as usize)), left);
    frame.render_widget(Paragraph::new(Line::styled(markers, theme.header)), right);
    if app.present_split {
        // The code beside what the class should see it do: the trace, the keyspace, the
        // debugger's variables (the tab shown).
        let [code, _, tab] = Layout::horizontal([
            Constraint::Percentage(55),
            Constraint::Length(1),
            Constraint::Min(10),
        ])
        .areas(body);
        editor::draw(frame, code, app, theme);
        draw_panes(frame, tab, app, theme);
    } else {
        match app.focus {
            Focus::Panes => draw_panes(frame, body, app, theme),
            _ => editor::draw(frame, body, app, theme),
        }
    }
    frame.render_widget(
        Paragraph::new(fit_line(
            vec![Span::styled(
                format!(" {} ", display_safe(&app.status)),
                theme.selected.add_modifier(Modifier::BOLD),
            )],
            message.width as usize,
        )),
        message,
    );
    frame.render_widget(
        Paragraph::new(key_line(app, theme, keys.width as usize)),
        keys,
    );
}

/// The profile, and the sandbox's clock and keep-state mode when they are not the defaults
/// (`redis-7.0 · clock +30 s · keep state`), or the live server.
fn markers(app: &App) -> String {
    let mut parts = Vec::new();
    if let Some(server) = &app.live_server {
        let on = if app.use_live {
            "live"
        } else {
            "sandbox (F7: live)"
        };
        parts.push(format!("{on} {}", display_safe(server)));
    }
    parts.push(app.config.profile.display_name().to_string());
    if app.clock_offset_ms != 0 {
        parts.push(format!("clock +{} s", app.clock_offset_ms / 1000));
    }
    if app.keep_state.is_some() {
        parts.push("keep state".into());
    }
    format!("  {} ", parts.join(" · "))
}

/// Spans cut to `width` characters, the last one shown ending in … when cut.
fn fit_line(spans: Vec<Span<'static>>, width: usize) -> Line<'static> {
    let total: usize = spans.iter().map(|s| s.content.chars().count()).sum();
    if total <= width {
        return Line::from(spans);
    }
    let mut left = width.saturating_sub(1);
    let mut out = Vec::new();
    let mut style = ratatui::style::Style::default();
    for span in spans {
        if left == 0 {
            break;
        }
        let cut: String = span.content.chars().take(left).collect();
        left -= cut.chars().count();
        style = span.style;
        out.push(Span::styled(cut, span.style));
    }
    if width > 0 {
        out.push(Span::styled("…", style));
    }
    Line::from(out)
}

fn or_none(text: &str) -> String {
    if text.trim().is_empty() {
        "(none)".into()
    } else {
        display_safe(text).into_owned()
    }
}

/// The presenter's keys (from the keymap) and the last run's time: whole hints only, the most
/// needed first, as many as fit (a hint cut in the middle reads as nonsense from the back).
fn key_line<'a>(app: &App, theme: &Theme, width: usize) -> Line<'a> {
    let mut spans = Vec::new();
    let mut used = 0;
    let mut push = |spans: &mut Vec<Span<'a>>, parts: Vec<Span<'a>>| {
        let w: usize = parts.iter().map(|s| s.content.chars().count()).sum();
        if used + w <= width {
            used += w;
            spans.extend(parts);
        }
    };
    for action in [
        Action::Run,
        Action::Present,
        Action::PresentSplit,
        Action::FocusNext,
        Action::NextTab,
        Action::StepForward,
    ] {
        let key = app
            .keymap
            .bindings
            .iter()
            .find(|b| b.action == action && matches!(b.context, Context::Global | Context::Panes))
            .map(|b| super::statusbar::key_label(&b.key));
        if let Some(key) = key {
            push(
                &mut spans,
                vec![
                    Span::styled(format!(" {key}"), theme.header),
                    Span::styled(format!(" {}  ", action.hint()), theme.text),
                ],
            );
        }
    }
    if let Some(run) = &app.last_run {
        push(
            &mut spans,
            vec![Span::styled(
                format!(
                    " {:.3} ms of {} ms",
                    run.report.elapsed_ns as f64 / 1e6,
                    app.config.busy_threshold_ms
                ),
                theme.text,
            )],
        );
    }
    Line::from(spans)
}
