//! The Reply tab's second column: the last run under the profile picked with `p`
//! (tui/reply_compare.rs), beside the reply of the workbench's own profile.

use super::block;
use crate::engine::display::display_safe;
use crate::engine::reply::Protocol;
use crate::tui::app::App;
use crate::tui::theme::Theme;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};
use ratatui::Frame;

/// With a comparison profile chosen, draw its column in the right half of `area` and return the
/// left half for the usual Reply tab; otherwise return `area` untouched.
pub fn draw_beside(frame: &mut Frame, area: Rect, app: &App, theme: &Theme) -> Rect {
    let Some(profile) = app.reply_compare.profile else {
        return area;
    };
    let [left, right] =
        Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(area);
    let title = format!("on {} ({})", profile.id, profile.version_tested);
    let section = |title: &str| {
        Line::from(Span::styled(
            title.to_string(),
            theme.header.add_modifier(Modifier::BOLD),
        ))
    };
    let mut lines: Vec<Line> = Vec::new();
    match &app.last_run {
        None => lines.push(Line::from("No run yet.")),
        Some(run) if run.live || run.question.is_some() => lines.push(Line::from(
            "a live run answers as its server: the comparison re-runs sandbox runs only",
        )),
        Some(run) => match app.reply_compare.shown_for(run.id) {
            None => lines.push(Line::from(format!("running under {} …", profile.id))),
            Some(c) => {
                let own = app.config.profile.id;
                lines.push(if c.differs {
                    Line::from(Span::styled(
                        format!("differs from {own}"),
                        theme.error.add_modifier(Modifier::BOLD),
                    ))
                } else {
                    Line::from(format!("same as {own}"))
                });
                let shown = c.report.reply.preview();
                for (name, protocol) in [
                    ("RESP2 client (redis-cli)", Protocol::Resp2),
                    ("RESP3 client (redis-cli -3)", Protocol::Resp3),
                ] {
                    lines.push(section(name));
                    let text = match protocol {
                        Protocol::Resp2 => {
                            shown.to_resp2_with(&|d| c.profile.double_text(d)).to_cli()
                        }
                        Protocol::Resp3 => shown.for_protocol(protocol).to_cli(),
                    };
                    lines.extend(
                        text.lines()
                            .map(|l| Line::from(display_safe(l).into_owned())),
                    );
                }
            }
        },
    }
    let paragraph = Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        // The Reply beside it has the focus (one pane is marked).
        .block(block(&title, false, theme));
    frame.render_widget(paragraph, right);
    left
}
