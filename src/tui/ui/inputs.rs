//! The KEYS / ARGV form.

use super::block;
use crate::tui::app::{App, Focus};
use crate::tui::theme::Theme;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::Frame;

pub fn draw(frame: &mut Frame, area: Rect, app: &App, theme: &Theme) {
    let [keys_area, argv_area] =
        Layout::vertical([Constraint::Length(2), Constraint::Length(2)]).areas(area);
    let n = app.inputs.parsed().map(|(k, _)| k.len()).unwrap_or(0);
    let mut keys = app.inputs.keys.clone();
    keys.set_block(
        block("", app.focus == Focus::Keys, theme)
            .title(format!("KEYS ({n})"))
            .borders(ratatui::widgets::Borders::TOP),
    );
    let mut argv = app.inputs.argv.clone();
    argv.set_block(
        block("ARGV", app.focus == Focus::Argv, theme).borders(ratatui::widgets::Borders::TOP),
    );
    frame.render_widget(&keys, keys_area);
    frame.render_widget(&argv, argv_area);
}
