//! Presenter mode (`--present`, Alt-P): one large pane for a room to read, the editor or the
//! focused tab full screen, margins and blank rows around it instead of the other panes'
//! borders, a header naming what is shown (with KEYS and ARGV for the script) and one bold status
//! line: the last message, the few keys a presenter needs, the time of the last run.

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
    let [header, _, body, _, status] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Min(3),
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
    let heading = match app.focus {
        Focus::Panes => vec![
            Span::styled(app.tab.title().to_string(), bold),
            Span::raw(format!("   {file}")),
        ],
        _ => vec![
            Span::styled(file, bold),
            Span::raw(format!(
                "   KEYS {}   ARGV {}",
                or_none(&app.inputs.keys_text()),
                or_none(&app.inputs.argv_text())
            )),
        ],
    };
    frame.render_widget(Paragraph::new(Line::from(heading)), header);
    match app.focus {
        Focus::Panes => draw_panes(frame, body, app, theme),
        _ => editor::draw(frame, body, app, theme),
    }
    frame.render_widget(Paragraph::new(status_line(app, theme)), status);
}

fn or_none(text: &str) -> String {
    if text.trim().is_empty() {
        "(none)".into()
    } else {
        display_safe(text).into_owned()
    }
}

/// The message, the last run's time, and the presenter's keys (from the keymap).
fn status_line<'a>(app: &App, theme: &Theme) -> Line<'a> {
    let mut spans = vec![Span::styled(
        format!(" {} ", display_safe(&app.status)),
        theme.selected.add_modifier(Modifier::BOLD),
    )];
    // Most needed first: what fits of the line shows.
    for action in [
        Action::Run,
        Action::Present,
        Action::FocusNext,
        Action::NextTab,
    ] {
        let key = app
            .keymap
            .bindings
            .iter()
            .find(|b| b.action == action && matches!(b.context, Context::Global | Context::Panes))
            .map(|b| super::statusbar::key_label(&b.key));
        if let Some(key) = key {
            spans.push(Span::styled(format!("   {key}"), theme.header));
            spans.push(Span::raw(format!(" {}", action.hint())));
        }
    }
    if let Some(run) = &app.last_run {
        spans.push(Span::raw(format!(
            "   {:.3} ms of {} ms",
            run.report.elapsed_ns as f64 / 1e6,
            app.config.busy_threshold_ms
        )));
    }
    Line::from(spans)
}
