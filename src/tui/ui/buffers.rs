//! The list of open buffers (Alt-B): one row each, `*` for unsaved changes, the shown one marked.

use super::{block, centered};
use crate::tui::app::App;
use crate::tui::theme::Theme;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};
use ratatui::Frame;

pub fn draw(frame: &mut Frame, area: Rect, app: &App, selected: usize, theme: &Theme) {
    let listed = crate::tui::buffers::list(app);
    let rect = centered(area, 80, listed.len() as u16 + 2);
    frame.render_widget(Clear, rect);
    let width = rect.width.saturating_sub(2) as usize;
    let lines: Vec<Line> = listed
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let mark = if b.current { '❯' } else { ' ' };
            let star = if b.modified { " *" } else { "" };
            let head = format!("{mark}{:>2} ", i + 1);
            // The name's tail says which file: cut at its start when it is long.
            let room = width.saturating_sub(head.chars().count() + star.len());
            let name = keep_tail(&b.name, room);
            let style = if i == selected {
                theme.selected
            } else {
                theme.text
            };
            Line::from(Span::styled(format!("{head}{name}{star}"), style))
        })
        .collect();
    let visible = rect.height.saturating_sub(2) as usize;
    let offset = (selected + 1).saturating_sub(visible);
    frame.render_widget(
        Paragraph::new(lines)
            .scroll((offset.min(u16::MAX as usize) as u16, 0))
            .block(block(
                "Buffers — Enter shows, Ctrl-W closes, Esc",
                true,
                theme,
            )),
        rect,
    );
}

/// `text` in `width` characters: its start cut with `…` when longer.
fn keep_tail(text: &str, width: usize) -> String {
    let len = text.chars().count();
    if len <= width {
        return text.to_string();
    }
    let tail: String = text.chars().skip(len + 1 - width.max(1)).collect();
    format!("…{tail}")
}
