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
    // The outcome list, the selected row kept in view; each row cut to the pane (…).
    let row_width = list_area.width.saturating_sub(2) as usize;
    let mut lines = Vec::new();
    for (row, &(s, o)) in view.rows.iter().enumerate() {
        let strategy = &view.report.strategies[s];
        let outcome = &strategy.outcomes[o];
        let verdict = if !outcome.broken_invariants.is_empty() {
            "BROKEN"
        } else {
            outcome.verdict.word()
        };
        // What the outcome changed from the seed, key by key, before what the clients got.
        let text = format!(
            "{:<6} {:>6} sched. {:<6} {} ",
            strategy.strategy.id(),
            outcome.schedules,
            verdict,
            display_safe(&crate::engine::keyspace_diff::changes_text(
                &view.report.seed_keyspace,
                &outcome.keyspace,
                8
            )),
        );
        let style = if matches!(verdict, "LOST" | "BROKEN" | "error" | "stale") {
            theme.warning
        } else {
            theme.text
        };
        let mut spans = vec![(text, style)];
        // Two outcomes may share a keyspace and differ in what the clients got back: show both,
        // and how often WATCH made each retry; each client's number in its colour.
        for c in &outcome.clients {
            let retries = match c.retries {
                0 => String::new(),
                n => format!(" ({n} retr{})", if n == 1 { "y" } else { "ies" }),
            };
            spans.push((
                format!(" {}:{}{retries}", c.client, display_safe(&c.result)),
                theme.client(c.client),
            ));
        }
        let mut line = fit_spans(spans, row_width);
        if row == view.selected {
            line = line.patch_style(theme.selected);
        }
        lines.push(line);
    }
    let inner = list_area.height.saturating_sub(2) as usize;
    let scroll = view.selected.saturating_sub(inner.saturating_sub(1));
    // The client count and the position first: a long lab name is what a narrow pane cuts.
    let title = format!(
        "Race ({} clients) · outcome {}/{}: {}",
        view.report.clients,
        (view.selected + 1).min(view.rows.len()),
        view.rows.len(),
        display_safe(&view.report.lab)
    );
    // Rows out of view are counted on the bottom border (the title may be cut on a narrow
    // pane), so a class knows there is more.
    let above = scroll;
    let below = view.rows.len().saturating_sub(scroll + inner);
    let mut marks = Vec::new();
    if above > 0 {
        marks.push(format!("↑{above} more"));
    }
    if below > 0 {
        marks.push(format!("↓{below} more"));
    }
    let mut list_block = block(&title, focused, theme);
    if !marks.is_empty() {
        list_block = list_block.title_bottom(Line::styled(
            format!(" {} ", marks.join(" ")),
            theme.warning,
        ));
    }
    frame.render_widget(
        Paragraph::new(lines)
            .scroll((scroll as u16, 0))
            .block(list_block),
        list_area,
    );
    let (Some(outcome), Some((schedule, steps))) = (view.outcome(), view.shown()) else {
        return;
    };
    // How each client ended first (kept in view on a small terminal), then the steps.
    let mut head = Vec::new();
    for client in &outcome.clients {
        let retries = match client.retries {
            0 => String::new(),
            1 => " (1 WATCH retry)".to_string(),
            n => format!(" ({n} WATCH retries)"),
        };
        head.push(Line::from(vec![
            Span::styled(
                format!("client {}", client.client),
                theme.client(client.client),
            ),
            Span::raw(format!(
                " {}{retries}: {}",
                client.outcome.word(),
                display_safe(&client.result)
            )),
        ]));
    }
    for broken in &outcome.broken_invariants {
        head.push(Line::from(Span::styled(
            format!(
                "broken: {} ({})",
                display_safe(&broken.invariant),
                display_safe(&broken.why)
            ),
            theme.warning,
        )));
    }
    let header = head.len();
    let mut lines = head;
    for (i, step) in steps.iter().enumerate() {
        let mut line = Line::from(vec![
            Span::styled(format!("{:>2}. ", i + 1), theme.text),
            Span::styled(format!("client {}", step.client), theme.client(step.client)),
            Span::styled(
                format!(
                    ": {} -> {}",
                    display_safe(&step.command),
                    display_safe(&step.reply)
                ),
                theme.text,
            ),
        ]);
        if i == view.step {
            line = line.patch_style(theme.selected);
        }
        lines.push(line);
    }
    if let Some(keyspace) = steps.get(view.step).and_then(|s| s.keyspace.as_ref()) {
        lines.push(Line::from(format!(
            "keyspace after step {}: {}",
            view.step + 1,
            display_safe(&crate::engine::keyspace_diff::changes_text(
                &view.report.seed_keyspace,
                keyspace,
                8
            ))
        )));
    }
    let order: Vec<String> = schedule.iter().map(|c| c.to_string()).collect();
    let steps_inner = steps_area.height.saturating_sub(2) as usize;
    // Which of the outcome's schedules this is, when it has more than one (Enter: the next).
    let which = if outcome.schedule_list.len() > 1 {
        format!(
            " ({}/{}{}, Enter: next)",
            view.schedule + 1,
            outcome.schedules,
            if outcome.schedules > outcome.schedule_list.len() {
                format!(", {} listed", outcome.schedule_list.len())
            } else {
                String::new()
            }
        )
    } else {
        String::new()
    };
    let title = match steps.get(view.step) {
        // No row inside on a small terminal: the current step in the title.
        Some(step) if steps_inner == 0 => format!(
            "step {}/{}: client {}: {} -> {}",
            view.step + 1,
            steps.len(),
            step.client,
            display_safe(&step.command),
            display_safe(&step.reply)
        ),
        _ => format!(
            "Schedule {}{which} · step {}/{} (] [)",
            order.join(" "),
            (view.step + 1).min(steps.len()),
            steps.len()
        ),
    };
    let scroll = (header + view.step).saturating_sub(steps_inner.saturating_sub(4).max(header));
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .scroll((scroll as u16, 0))
            // The outcome list above has the focus (one pane is marked).
            .block(block(&title, false, theme)),
        steps_area,
    );
}

/// Styled pieces as one line cut to `width` characters (the last shown ends in …).
fn fit_spans(spans: Vec<(String, ratatui::style::Style)>, width: usize) -> Line<'static> {
    let total: usize = spans.iter().map(|(t, _)| t.chars().count()).sum();
    if total <= width {
        return Line::from(
            spans
                .into_iter()
                .map(|(t, style)| Span::styled(t, style))
                .collect::<Vec<_>>(),
        );
    }
    let mut left = width.saturating_sub(1);
    let mut out = Vec::new();
    let mut last_style = ratatui::style::Style::default();
    for (text, style) in spans {
        if left == 0 {
            break;
        }
        let cut: String = text.chars().take(left).collect();
        left -= cut.chars().count();
        last_style = style;
        out.push(Span::styled(cut, style));
    }
    if width > 0 {
        out.push(Span::styled("…", last_style));
    }
    Line::from(out)
}
