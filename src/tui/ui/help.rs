//! The file picker (the help is the command palette, ui/palette.rs).

use super::{block, centered};
use crate::engine::display::display_safe;
use crate::tui::files::PickerState;
use crate::tui::theme::Theme;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};
use ratatui::Frame;

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
            "Nothing matches: Enter opens what you typed as a path (Tab completes it)."
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
