//! The help overlay (generated from the keymap) and the file picker.

use super::{block, centered};
use crate::tui::app::App;
use crate::tui::files::PickerState;
use crate::tui::keymap::{format_key, Context};
use crate::tui::theme::Theme;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};
use ratatui::Frame;

/// The help text: every binding with its description, grouped by context.
pub fn help_lines(app: &App) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for context in [
        Context::Global,
        Context::Editor,
        Context::Panes,
        Context::Keyspace,
        Context::Overlay,
    ] {
        out.push((format!("— {} —", context.title()), String::new()));
        for action in crate::tui::action::Action::ALL {
            let keys: Vec<String> = app
                .keymap
                .bindings
                .iter()
                .filter(|b| b.context == context && b.action == *action)
                .map(|b| format_key(&b.key))
                .collect();
            if !keys.is_empty() {
                out.push((keys.join(" "), action.description().to_string()));
            }
        }
    }
    out
}

pub fn draw(frame: &mut Frame, area: Rect, app: &App, theme: &Theme, scroll: u16) {
    let rect = centered(area, 80, area.height.saturating_sub(4));
    frame.render_widget(Clear, rect);
    let lines: Vec<Line> = help_lines(app)
        .into_iter()
        .map(|(k, d)| {
            Line::from(vec![
                Span::styled(format!("{k:<22}"), theme.header),
                Span::raw(d),
            ])
        })
        .collect();
    frame.render_widget(
        Paragraph::new(lines)
            .scroll((scroll, 0))
            .block(block("Help — Esc closes", true, theme)),
        rect,
    );
}

pub fn draw_picker(frame: &mut Frame, area: Rect, picker: &PickerState, theme: &Theme) {
    let rect = centered(area, 90, 16);
    frame.render_widget(Clear, rect);
    let lines: Vec<Line> = picker
        .entries
        .iter()
        .enumerate()
        .map(|(i, (p, d))| {
            let style = if i == picker.selected {
                theme.selected
            } else {
                theme.text
            };
            Line::from(Span::styled(format!("{:<32} {d}", p.display()), style))
        })
        .collect();
    frame.render_widget(
        Paragraph::new(lines).block(block("Open — Enter opens, Esc closes", true, theme)),
        rect,
    );
}
