//! The editor pane.

use super::block;
use crate::tui::app::{App, Focus};
use crate::tui::theme::Theme;
use ratatui::layout::Rect;
use ratatui::widgets::Paragraph;
use ratatui::Frame;

pub fn draw(frame: &mut Frame, area: Rect, app: &App, theme: &Theme) {
    let focused = app.focus == Focus::Editor && app.overlay.is_none();
    let title = match &app.editor.path {
        Some(p) => format!(
            "{}{}",
            p.display(),
            if app.editor.modified { " *" } else { "" }
        ),
        None => format!("untitled{}", if app.editor.modified { " *" } else { "" }),
    };
    let mut textarea = app.editor.textarea.clone();
    textarea.set_block(block(&title, focused, theme));
    textarea.set_line_number_style(theme.line_number);
    let _ = Paragraph::new("");
    frame.render_widget(&textarea, area);
}
