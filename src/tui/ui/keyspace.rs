//! The Keyspace tab: the key list (type, TTL, size, change marks) over the selected key's typed,
//! paged value or the last run's diff. Short panes show only the focused half.

use super::block;
use crate::tui::app::App;
use crate::tui::keyspace::{
    self, describe, diff_lines, fit, ttl_text, value_columns, value_rows, Change, DiffMode, Mark,
    Shown,
};
use crate::tui::theme::Theme;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table, TableState};
use ratatui::Frame;

/// Below this height the list and the value view take turns (Enter switches).
const SPLIT_MIN_HEIGHT: u16 = 16;

fn change_style(change: Option<Change>, theme: &Theme) -> Style {
    match change {
        Some(Change::Added) => Style::default().fg(Color::Green),
        Some(Change::Removed) => theme.error.add_modifier(Modifier::CROSSED_OUT),
        Some(Change::Modified) => Style::default().fg(Color::Yellow),
        None => theme.text,
    }
}

fn mark_style(mark: Mark, theme: &Theme) -> Style {
    match mark {
        Mark::Add => Style::default().fg(Color::Green),
        Mark::Del => theme.error,
        Mark::Change => Style::default().fg(Color::Yellow),
        Mark::Note => theme.line_number,
    }
}

pub fn draw(frame: &mut Frame, area: Rect, app: &App, theme: &Theme, focused: bool) {
    let view = &app.keyspace;
    if area.height >= SPLIT_MIN_HEIGHT {
        let [list_area, value_area] =
            Layout::vertical([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(area);
        draw_list(frame, list_area, app, theme, focused && !view.value_focus);
        draw_value(frame, value_area, app, theme, focused && view.value_focus);
    } else if view.value_focus {
        draw_value(frame, area, app, theme, focused);
    } else {
        draw_list(frame, area, app, theme, focused);
    }
}

fn draw_list(frame: &mut Frame, area: Rect, app: &App, theme: &Theme, focused: bool) {
    let view = &app.keyspace;
    let rows = view.rows(app);
    let shown = view.shown(app);
    let mode = match shown {
        Shown::Seed => "seed".to_string(),
        Shown::AfterRun => "after run".to_string(),
        Shown::Step(i) => {
            let n = app.last_run.as_ref().map_or(0, |r| r.report.trace.len());
            format!("at step {}/{n}", i + 1)
        }
    };
    let mut title = format!("Keys · {mode} ({})", rows.len());
    if !view.filter.is_empty() {
        title.push_str(&format!(" /{}", view.filter));
    }
    if let Some(t) = view.type_filter {
        title.push_str(&format!(" [{t}]"));
    }
    let hint = match shown {
        Shown::Seed => " edits apply to this seed · Enter: value ",
        _ if app.step.is_some() => " ~ changed by this step · edits go to the seed (v) ",
        _ => " +added ~changed -removed · edits go to the seed (v) ",
    };
    let table_rows: Vec<Row> = rows
        .iter()
        .map(|r| {
            let mark = match r.change {
                Some(Change::Added) => "+",
                Some(Change::Removed) => "-",
                Some(Change::Modified) => "~",
                None => " ",
            };
            Row::new(vec![
                Cell::from(mark),
                Cell::from(keyspace::text(&r.key)),
                Cell::from(r.entry.value.type_name()),
                Cell::from(ttl_text(r.entry.expire_at_ms, app.now_ms)),
                Cell::from(r.entry.value.size().to_string()),
            ])
            .style(change_style(r.change, theme))
        })
        .collect();
    let widths = [
        Constraint::Length(1),
        Constraint::Min(8),
        Constraint::Length(6),
        Constraint::Length(7),
        Constraint::Length(6),
    ];
    let block =
        block(&title, focused, theme).title_bottom(Line::from(hint).style(theme.line_number));
    if rows.is_empty() {
        let text = if view.filter.is_empty() && view.type_filter.is_none() {
            "No keys. a adds one to the seed, l loads a seed JSON."
        } else {
            "No key matches the filters (/ and t change them)."
        };
        frame.render_widget(Paragraph::new(text).block(block), area);
        return;
    }
    let table = Table::new(table_rows, widths)
        .header(Row::new(vec!["", "key", "type", "ttl", "size"]).style(theme.header))
        .row_highlight_style(theme.selected)
        .block(block);
    let selected = view.selected_index(rows.len());
    let mut state = TableState::default().with_selected(Some(selected));
    frame.render_stateful_widget(table, area, &mut state);
}

fn draw_value(frame: &mut Frame, area: Rect, app: &App, theme: &Theme, focused: bool) {
    let view = &app.keyspace;
    let inner_height = area.height.saturating_sub(2) as usize;
    let width = area.width.saturating_sub(2) as usize;
    let page = |total: usize, body: usize| {
        let start = view.value_scroll.min(total.saturating_sub(body));
        (start, body)
    };
    let range = |start: usize, shown: usize, total: usize| {
        if total > shown {
            format!(" [{}-{}/{total}]", start + 1, start + shown)
        } else {
            String::new()
        }
    };
    if view.diff != DiffMode::Off {
        let lines = diff_lines(app);
        let (start, body) = page(lines.len(), inner_height);
        let shown: Vec<Line> = lines
            .iter()
            .skip(start)
            .take(body)
            .map(|l| {
                let prefix = match l.mark {
                    Mark::Add => "+ ",
                    Mark::Del => "- ",
                    Mark::Change => "~ ",
                    Mark::Note => "  ",
                };
                Line::styled(
                    fit(&format!("{prefix}{}", l.text), width),
                    mark_style(l.mark, theme),
                )
            })
            .collect();
        let what = match (view.diff, view.selected_key(app)) {
            (DiffMode::All, _) => "whole keyspace".to_string(),
            (_, Some(k)) => format!("'{}'", keyspace::text(&k)),
            _ => "no key".to_string(),
        };
        let title = format!(
            "Diff of the last run · {what}{}",
            range(start, shown.len(), lines.len())
        );
        frame.render_widget(
            Paragraph::new(shown).block(
                block(&title, focused, theme)
                    .title_bottom(Line::from(" D: key → all → off ").style(theme.line_number)),
            ),
            area,
        );
        return;
    }
    let rows = view.rows(app);
    let Some(row) = rows.get(view.selected_index(rows.len())) else {
        frame.render_widget(
            Paragraph::new("Select a key to see its value.").block(block("Value", focused, theme)),
            area,
        );
        return;
    };
    let columns = value_columns(&row.entry.value);
    let mut lines = Vec::new();
    if row.change == Some(Change::Removed) {
        lines.push(Line::styled(
            "removed by the run; its value before:",
            theme.error,
        ));
    }
    if !columns.is_empty() {
        lines.push(Line::styled(columns, theme.header));
    }
    let body = inner_height.saturating_sub(lines.len());
    // The total first (cheap for collections), then only the visible page is built.
    let (total, _) = value_rows(&row.entry.value, 0, 0, width);
    let (start, body) = page(total, body);
    let (_, page_rows) = value_rows(&row.entry.value, start, body, width);
    let shown = page_rows.len();
    lines.extend(page_rows.into_iter().map(|r| Line::from(Span::raw(r))));
    let title = format!(
        "Value · {} · {}{}",
        fit(&keyspace::text(&row.key), 30),
        describe(row.entry, app.now_ms),
        range(start, shown, total)
    );
    let hint = if focused {
        " PgUp/PgDn, ↑↓ scroll · Enter: keys "
    } else {
        " Enter: scroll the value · D: diff "
    };
    frame.render_widget(
        Paragraph::new(lines).block(
            block(&title, focused, theme).title_bottom(Line::from(hint).style(theme.line_number)),
        ),
        area,
    );
}
