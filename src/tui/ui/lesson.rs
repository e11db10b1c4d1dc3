//! The Lesson tab (the task, the hints shown so far, the last check) and the lesson picker.

use super::{block, centered};
use crate::engine::display::display_safe;
use crate::tui::action::Action;
use crate::tui::app::App;
use crate::tui::keymap::Context;
use crate::tui::theme::Theme;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Wrap};
use ratatui::Frame;

/// The keys of an action, as the keymap has them ("Alt-C"), for the tab's own hints.
fn keys(app: &App, action: Action) -> String {
    app.keymap
        .bindings
        .iter()
        .find(|b| b.context == Context::Global && b.action == action)
        .map(|b| super::statusbar::key_label(&b.key))
        .unwrap_or_else(|| action.name().to_string())
}

pub fn draw(frame: &mut Frame, area: Rect, app: &App, theme: &Theme, focused: bool) {
    let Some(state) = &app.lesson else {
        frame.render_widget(
            Paragraph::new(format!(
                "No lesson open: {} opens one.",
                keys(app, Action::OpenLessons)
            ))
            .block(block("Lesson", focused, theme)),
            area,
        );
        return;
    };
    let lesson = &state.lesson;
    let mut lines: Vec<Line> = vec![Line::from(Span::styled(
        format!(
            "Lesson {} of {}: {}",
            lesson.number, state.total, lesson.title
        ),
        theme.header.add_modifier(Modifier::BOLD),
    ))];
    lines.push(Line::from(""));
    // Paragraphs of the task flow to the pane's width (its line breaks are the file's).
    // The task names the check key as it is bound (a rebinding shows in the text too).
    let task = lesson.task_with_key(&keys(app, Action::CheckLesson));
    for (i, paragraph) in task.split("\n\n").enumerate() {
        if i > 0 {
            lines.push(Line::from(""));
        }
        let words: Vec<&str> = paragraph.split_whitespace().collect();
        lines.push(Line::from(words.join(" ")));
    }
    lines.push(Line::from(""));
    let hints = lesson.hints.len();
    for (i, hint) in lesson.hints.iter().take(state.hints_shown).enumerate() {
        lines.push(Line::from(vec![
            Span::styled(format!("Hint {}: ", i + 1), theme.warning),
            Span::raw(hint.clone()),
        ]));
    }
    if state.hints_shown < hints {
        lines.push(Line::from(Span::styled(
            format!(
                "{} of {hints} hints shown ({} shows the next)",
                state.hints_shown,
                keys(app, Action::NextHint)
            ),
            theme.line_number,
        )));
    }
    lines.push(Line::from(""));
    match (&state.check, state.checking()) {
        (_, true) => lines.push(Line::from("Checking… (Esc cancels)")),
        (None, false) => lines.push(Line::from(format!(
            "{} runs the {} checks on your script.",
            keys(app, Action::CheckLesson),
            lesson.checks.cases.len() + lesson.properties.len()
        ))),
        (Some(result), false) => {
            // The verdict first: it shows even when the differences run past the pane.
            let style = if result.all_passed() {
                theme.header.add_modifier(Modifier::BOLD)
            } else {
                theme.error.add_modifier(Modifier::BOLD)
            };
            lines.push(Line::from(Span::styled(result.summary(), style)));
            for (passed, text) in result.lines() {
                let style = if passed { theme.header } else { theme.error };
                lines.push(Line::from(Span::styled(
                    display_safe(&text).into_owned(),
                    style,
                )));
            }
        }
    }
    lines.push(Line::from(""));
    lines.push(Line::from(Span::styled(
        format!(
            "{} check · {} hint · {} reset to the start · {} lessons",
            keys(app, Action::CheckLesson),
            keys(app, Action::NextHint),
            keys(app, Action::ResetLesson),
            keys(app, Action::OpenLessons)
        ),
        theme.line_number,
    )));
    let paragraph = Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .block(block("Lesson", focused, theme));
    let max = super::max_scroll(&paragraph, area);
    app.regions.borrow_mut().scroll_max = max;
    frame.render_widget(paragraph.scroll((state.scroll.min(max), 0)), area);
}

pub fn draw_picker(frame: &mut Frame, area: Rect, app: &App, selected: usize, theme: &Theme) {
    let all = crate::tui::lessons::available(app).unwrap_or_default();
    let rect = centered(area, 76, all.len() as u16 + 4);
    frame.render_widget(Clear, rect);
    let mut lines = vec![Line::from(Span::styled(
        "A guided path: each lesson has a task, checks and hints.",
        theme.text,
    ))];
    for (i, l) in all.iter().enumerate() {
        let style = if i == selected {
            theme.selected
        } else {
            theme.text
        };
        lines.push(Line::from(Span::styled(
            format!(
                " {}. {}  ({} checks)",
                l.number,
                l.title,
                l.checks.cases.len() + l.properties.len()
            ),
            style,
        )));
    }
    frame.render_widget(
        Paragraph::new(lines).block(block("Lessons — Enter opens, Esc closes", true, theme)),
        rect,
    );
}
