//! The command palette (and help): what was typed, then the actions with their keys, the chosen
//! one highlighted; empty, grouped by where the keys work.

use super::{block, centered};
use crate::engine::display::display_safe;
use crate::tui::keymap::Context;
use crate::tui::keyspace::fit;
use crate::tui::palette::{keys_text, PaletteState};
use crate::tui::theme::Theme;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};
use ratatui::Frame;

/// The palette is no wider than this: longer rows would be hard to read across.
const MAX_WIDTH: u16 = 120;
/// The key column's widest (the longest default, `<S-F10>`-style pairs, fits).
const KEYS_WIDTH: usize = 22;

pub fn draw(frame: &mut Frame, area: Rect, palette: &PaletteState, theme: &Theme) {
    let rect = centered(
        area,
        area.width.saturating_sub(4).clamp(40, MAX_WIDTH),
        area.height.saturating_sub(2),
    );
    frame.render_widget(Clear, rect);
    let inner = rect.width.saturating_sub(2) as usize;
    let keys_width = KEYS_WIDTH.min(inner / 3);
    let text_width = inner.saturating_sub(keys_width + 2);
    let grouped = palette.query.trim().is_empty();

    let count = format!("{}/{}", palette.shown.len(), palette.entries.len());
    let typed = fit(
        &display_safe(&palette.query),
        inner.saturating_sub(count.len() + 4),
    );
    let gap = inner.saturating_sub(typed.chars().count() + count.len() + 3);
    let mut lines = vec![Line::from(vec![
        Span::styled("> ", theme.header),
        Span::raw(typed),
        Span::styled(" ", theme.selected),
        Span::raw(" ".repeat(gap)),
        Span::styled(count, theme.line_number),
    ])];
    let mut selected_line = 0;
    let mut last_group: Option<&str> = None;
    for (row, &i) in palette.shown.iter().enumerate() {
        let entry = &palette.entries[i];
        // The open buffers first, under their own heading; then the actions where they work.
        let group = match entry.buffer {
            Some(_) => "Open buffers",
            None => entry.context.title(),
        };
        if grouped && last_group != Some(group) {
            lines.push(Line::styled(format!("— {group} —"), theme.header));
            last_group = Some(group);
        }
        let mut text = match &entry.buffer {
            Some((_, name)) => name.clone(),
            None => entry.action.description().to_string(),
        };
        // Filtered, the groups are gone: say where a key works.
        if !grouped && entry.context != Context::Global {
            text = format!("{text} · {}", entry.context.title());
        }
        let style = if row == palette.selected {
            selected_line = lines.len();
            theme.selected
        } else {
            theme.text
        };
        let keys = fit(&keys_text(entry), keys_width);
        lines.push(Line::from(vec![
            Span::styled(format!(" {keys:<keys_width$} "), theme.header.patch(style)),
            Span::styled(fit(&text, text_width), style),
        ]));
    }
    if palette.shown.is_empty() {
        lines.push(Line::styled(
            fit(
                &format!(
                    "Nothing matches '{}': Backspace widens the search",
                    display_safe(&palette.query)
                ),
                inner,
            ),
            theme.text,
        ));
    }
    // The chosen row stays in view, the typed line above the rows with it.
    let rows = (rect.height.saturating_sub(3) as usize).max(1);
    let offset = selected_line.saturating_sub(rows);
    let mut shown = vec![lines[0].clone()];
    shown.extend(lines.into_iter().skip(1 + offset));
    let title = [
        "Help · commands — type to filter, Enter runs, Esc closes",
        "Help — Enter runs, Esc closes",
        "Help",
    ]
    .into_iter()
    .find(|t| t.chars().count() < inner) // the focus mark goes before it
    .unwrap_or("");
    frame.render_widget(Paragraph::new(shown).block(block(title, true, theme)), rect);
}
