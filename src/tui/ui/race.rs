//! The Race tab: a lab's outcomes per strategy over the chosen one's schedule, step by step.

use super::block;
use crate::engine::display::display_safe;
use crate::tui::app::App;
use crate::tui::theme::Theme;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};
use ratatui::Frame;

pub fn draw(frame: &mut Frame, area: Rect, app: &App, theme: &Theme, focused: bool) {
    let Some(view) = &app.race else {
        frame.render_widget(
            Paragraph::new(
                "No race lab yet: Alt-8 runs the editor's script (or lab file) as clients.",
            )
            .block(block("Race", focused, theme)),
            area,
        );
        return;
    };
    // 40% for the outcomes, but at least one row of them (and of the steps) on a small terminal.
    let list_height = (area.height * 2 / 5)
        .max(3)
        .min(area.height.saturating_sub(3).max(3));
    let [list_area, steps_area] =
        Layout::vertical([Constraint::Length(list_height), Constraint::Min(0)]).areas(area);
    // The outcome list, the selected row kept in view.
    let mut lines = Vec::new();
    for (row, &(s, o)) in view.rows.iter().enumerate() {
        let strategy = &view.report.strategies[s];
        let outcome = &strategy.outcomes[o];
        let verdict = if !outcome.broken_invariants.is_empty() {
            "BROKEN"
        } else if outcome.serializable {
            "serial"
        } else if outcome.clients.iter().any(|c| c.failed) {
            "failed"
        } else {
            "LOST"
        };
        // Two outcomes may share a keyspace and differ in what the clients got back: show both.
        let returns: Vec<String> = outcome
            .clients
            .iter()
            .map(|c| format!("{}:{}", c.client, c.result))
            .collect();
        let text = format!(
            "{:<6} {:>6} sched. {:<6} {}  {}",
            strategy.strategy.id(),
            outcome.schedules,
            verdict,
            display_safe(&outcome.keyspace.to_string()),
            display_safe(&returns.join(" "))
        );
        let style = if row == view.selected {
            theme.selected
        } else if verdict == "LOST" || verdict == "BROKEN" {
            theme.warning
        } else {
            theme.text
        };
        lines.push(Line::from(Span::styled(text, style)));
    }
    let inner = list_area.height.saturating_sub(2) as usize;
    let scroll = view.selected.saturating_sub(inner.saturating_sub(1));
    let title = format!(
        "Race: {} ({} clients)",
        view.report.lab, view.report.clients
    );
    frame.render_widget(
        Paragraph::new(lines)
            .scroll((scroll as u16, 0))
            .block(block(&title, focused, theme)),
        list_area,
    );
    let Some(outcome) = view.outcome() else {
        return;
    };
    let mut lines = Vec::new();
    for (i, step) in outcome.steps.iter().enumerate() {
        let text = format!(
            "{:>2}. client {}: {} -> {}",
            i + 1,
            step.client,
            display_safe(&step.command),
            display_safe(&step.reply)
        );
        let style = if i == view.step {
            theme.selected
        } else {
            theme.text
        };
        lines.push(Line::from(Span::styled(text, style)));
    }
    if let Some(step) = outcome.steps.get(view.step) {
        let keyspace = step
            .keyspace
            .as_ref()
            .map(|k| k.to_string())
            .unwrap_or_default();
        lines.push(Line::from(format!(
            "keyspace after step {}: {}",
            view.step + 1,
            display_safe(&keyspace)
        )));
    }
    for client in &outcome.clients {
        lines.push(Line::from(format!(
            "client {} {}{}",
            client.client,
            if client.failed {
                "failed: "
            } else {
                "returned "
            },
            display_safe(&client.result)
        )));
    }
    for broken in &outcome.broken_invariants {
        lines.push(Line::from(Span::styled(
            format!(
                "broken: {} ({})",
                display_safe(&broken.invariant),
                display_safe(&broken.why)
            ),
            theme.warning,
        )));
    }
    let order: Vec<String> = outcome.schedule.iter().map(|c| c.to_string()).collect();
    let steps_inner = steps_area.height.saturating_sub(2) as usize;
    let title = match outcome.steps.get(view.step) {
        // No row inside on a small terminal: the current step in the title.
        Some(step) if steps_inner == 0 => format!(
            "step {}/{}: client {}: {} -> {}",
            view.step + 1,
            outcome.steps.len(),
            step.client,
            display_safe(&step.command),
            display_safe(&step.reply)
        ),
        _ => format!(
            "Schedule {} · step {}/{} (] [)",
            order.join(" "),
            (view.step + 1).min(outcome.steps.len()),
            outcome.steps.len()
        ),
    };
    let scroll = view.step.saturating_sub(steps_inner.saturating_sub(4));
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .scroll((scroll as u16, 0))
            .block(block(&title, focused, theme)),
        steps_area,
    );
}
