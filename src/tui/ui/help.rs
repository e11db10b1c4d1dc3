//! The help overlay (generated from the keymap) and the file picker.

use super::{block, centered};
use crate::engine::display::display_safe;
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
    for context in Context::ALL {
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
    let rect = centered(
        area,
        area.width.saturating_sub(4).max(40),
        area.height.saturating_sub(2),
    );
    frame.render_widget(Clear, rect);
    // A description longer than the row goes on under itself, broken between words.
    let room = (rect.width as usize).saturating_sub(2 + 22).max(10);
    let mut lines: Vec<Line> = Vec::new();
    for (k, d) in help_lines(app) {
        for (i, part) in wrap_words(&d, room).into_iter().enumerate() {
            let key = if i == 0 { k.as_str() } else { "" };
            lines.push(Line::from(vec![
                Span::styled(format!("{key:<22}"), theme.header),
                Span::raw(part),
            ]));
        }
    }
    let paragraph = Paragraph::new(lines).block(block("Help — Esc closes", true, theme));
    let max = super::max_scroll(&paragraph, rect);
    app.regions.borrow_mut().scroll_max = max;
    frame.render_widget(paragraph.scroll((scroll.min(max), 0)), rect);
}

/// `text` in rows of at most `width` characters, broken at spaces (a word longer than a row is
/// cut into pieces). At least one row.
fn wrap_words(text: &str, width: usize) -> Vec<String> {
    let mut rows = vec![String::new()];
    for word in text.split(' ') {
        let mut word: Vec<char> = word.chars().collect();
        loop {
            let row = rows.last_mut().expect("at least one row");
            let len = row.chars().count();
            let gap = usize::from(len > 0);
            if len + gap + word.len() <= width {
                if gap == 1 {
                    row.push(' ');
                }
                row.extend(word);
                break;
            }
            if len > 0 {
                rows.push(String::new());
                continue;
            }
            // Longer than a whole row.
            let rest = word.split_off(width.max(1));
            row.extend(word);
            word = rest;
            rows.push(String::new());
        }
    }
    rows
}

/// How a picker path is shown: built-in samples by name, paths under the working directory
/// relative to it.
fn picker_label(path: &std::path::Path) -> String {
    let text = path.display().to_string();
    if let Some(name) = text.strip_prefix(crate::tui::files::EMBEDDED_PREFIX) {
        return format!("{name} (built in)");
    }
    std::env::current_dir()
        .ok()
        .and_then(|cwd| path.strip_prefix(cwd).ok().map(|p| p.display().to_string()))
        .unwrap_or(text)
}

/// Keep the tail of `text` (the file name matters most) within `width` characters.
fn fit_left(text: &str, width: usize) -> String {
    let len = text.chars().count();
    if len <= width {
        return text.to_string();
    }
    let tail: String = text.chars().skip(len + 1 - width.max(1)).collect();
    format!("…{tail}")
}

pub fn draw_picker(frame: &mut Frame, area: Rect, picker: &PickerState, theme: &Theme) {
    let rect = centered(area, 100, 18);
    frame.render_widget(Clear, rect);
    let inner_width = rect.width.saturating_sub(2) as usize;
    let path_width = (inner_width * 2 / 5).clamp(12, 40);
    let mut lines: Vec<Line> = Vec::new();
    let mut selected_row = 0;
    // What was typed: a filter, or a path that Enter opens.
    lines.push(Line::from(vec![
        Span::styled("> ", theme.header),
        Span::raw(display_safe(&picker.query).into_owned()),
        Span::styled(" ", theme.selected),
    ]));
    let mut last_group = None;
    for (row, &i) in picker.shown.iter().enumerate() {
        let (path, description) = &picker.entries[i];
        let group = i >= picker.samples;
        if last_group != Some(group) {
            let title = if group { "Recent files" } else { "Samples" };
            lines.push(Line::from(Span::styled(title, theme.header)));
            last_group = Some(group);
        }
        let style = if row == picker.selected {
            selected_row = lines.len();
            theme.selected
        } else {
            theme.text
        };
        let label = fit_left(&display_safe(&picker_label(path)), path_width);
        lines.push(Line::from(Span::styled(
            format!(" {label:<path_width$} {}", display_safe(description)),
            style,
        )));
    }
    if picker.shown.is_empty() {
        let text = if picker.query.is_empty() {
            "No samples and no recent files yet: type a path to open one."
        } else {
            "Nothing matches: Enter opens what you typed as a path (with a /; Tab completes)."
        };
        lines.push(Line::from(Span::styled(text, theme.text)));
    }
    // Scroll so the selected entry stays visible.
    let visible = rect.height.saturating_sub(2) as usize;
    let offset = (selected_row + 1).saturating_sub(visible);
    frame.render_widget(
        Paragraph::new(lines)
            .scroll((offset.min(u16::MAX as usize) as u16, 0))
            .block(block(
                "Open — type to filter or a path (Tab completes), Enter opens, Esc closes",
                true,
                theme,
            )),
        rect,
    );
}

#[cfg(test)]
mod tests {
    #[test]
    fn help_rows_break_between_words() {
        assert_eq!(
            super::wrap_words("search in the script for text", 12),
            ["search in", "the script", "for text"]
        );
        assert_eq!(super::wrap_words("", 5), [""]);
        assert_eq!(super::wrap_words("abcdefgh ij", 4), ["abcd", "efgh", "ij"]);
    }
}
