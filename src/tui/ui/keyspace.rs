//! The Keyspace tab: the key list (type, TTL, size, change marks) over the selected key's typed,
//! paged value or the last run's diff. Short panes show only the focused half.

use super::block;
use crate::tui::app::App;
use crate::tui::keyspace::{
    self, describe, diff_lines, fit, ttl_text, value_columns, value_rows, Change, DiffMode, KeyRow,
    Mark, Shown,
};
use crate::tui::theme::Theme;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table, TableState};
use ratatui::Frame;

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
    // Built once per frame: both halves need it.
    let rows = view.rows(app);
    let (list_area, value_area) = super::list_and_value(area, view.value_focus);
    if let Some(list_area) = list_area {
        let list_focused = focused && !view.value_focus;
        draw_list(frame, list_area, app, &rows, theme, list_focused);
    }
    if let Some(value_area) = value_area {
        let value_focused = focused && view.value_focus;
        draw_value(frame, value_area, app, &rows, theme, value_focused);
    }
}

fn draw_list(
    frame: &mut Frame,
    area: Rect,
    app: &App,
    rows: &[KeyRow],
    theme: &Theme,
    focused: bool,
) {
    let view = &app.keyspace;
    let shown = view.shown(app);
    let mode = match shown {
        Shown::Seed => "seed".to_string(),
        Shown::AfterRun => "after run".to_string(),
        Shown::Step(i) => {
            let n = app.last_run.as_ref().map_or(0, |r| r.report.trace.len());
            format!("at step {}/{n}", i + 1)
        }
        Shown::Debug => {
            let line = app.debugger.stop().map_or(0, |s| s.line);
            format!("at the debugger's stop, line {line}")
        }
    };
    let mut title = format!("Keys · {mode} ({})", rows.len());
    if !view.filter.is_empty() {
        title.push_str(&format!(
            " /{}",
            crate::engine::display::display_safe(&view.filter)
        ));
    }
    if let Some(t) = view.type_filter {
        title.push_str(&format!(" [{t}]"));
    }
    let hint = match shown {
        Shown::Seed => " edits apply to this seed · Enter: value ",
        Shown::Debug => " +added ~changed -removed since the start of the debugged run ",
        _ if app.step.is_some() => " ~ changed by this step · edits go to the seed (v) ",
        _ => " +added ~changed -removed · edits go to the seed (v) ",
    };
    // Only the visible window is built (borders and header take 3 rows); the selection stays in view.
    let height = (area.height as usize).saturating_sub(3).max(1);
    let selected = view.selected_index(rows.len());
    let offset = selected.saturating_sub(height - 1);
    // The key column takes what the fixed ones leave (4 gaps of one column); a longer key is cut
    // with an ellipsis, never silently.
    let key_width = (area.width.saturating_sub(2) as usize)
        .saturating_sub(1 + 6 + 7 + 6 + 4)
        .max(8);
    let table_rows: Vec<Row> = rows
        .iter()
        .skip(offset)
        .take(height)
        .map(|r| {
            let mark = match r.change {
                Some(Change::Added) => "+",
                Some(Change::Removed) => "-",
                Some(Change::Modified) => "~",
                None => " ",
            };
            Row::new(vec![
                Cell::from(mark),
                Cell::from(super::panes::shorten(&keyspace::text(r.key), key_width)),
                Cell::from(r.entry.value.type_name()),
                Cell::from(ttl_text(r.entry.expire_at_ms, app.shown_now_ms())),
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
        // Wrapped: beside the value view at 80 columns the list is narrow.
        frame.render_widget(
            Paragraph::new(text)
                .wrap(ratatui::widgets::Wrap { trim: true })
                .block(block),
            area,
        );
        return;
    }
    let table = Table::new(table_rows, widths)
        .header(Row::new(vec!["", "key", "type", "ttl", "size"]).style(theme.header))
        .row_highlight_style(theme.selected)
        .block(block);
    let mut state = TableState::default().with_selected(Some(selected - offset));
    frame.render_stateful_widget(table, area, &mut state);
    // The rows under the border and the header, for clicks.
    app.regions.borrow_mut().rows = Some(crate::tui::mouse::ListRows {
        area: Rect::new(
            area.x + 1,
            area.y + 2,
            area.width.saturating_sub(2),
            area.height.saturating_sub(3),
        ),
        first: offset,
    });
}

fn draw_value(
    frame: &mut Frame,
    area: Rect,
    app: &App,
    rows: &[KeyRow],
    theme: &Theme,
    focused: bool,
) {
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
        let key = rows.get(view.selected_index(rows.len())).map(|r| r.key);
        let lines = diff_lines(app, key);
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
        let what = match (view.diff, key) {
            (DiffMode::All, _) => "whole keyspace".to_string(),
            (_, Some(k)) => format!("'{}'", fit(&keyspace::text(k), 30)),
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
        fit(&keyspace::text(row.key), 30),
        describe(row.entry, app.shown_now_ms()),
        range(start, shown, total)
    );
    // Cut with an ellipsis inside the borders (and the focus mark), never silently by the border.
    let title = super::panes::shorten(
        &title,
        (area.width as usize).saturating_sub(if focused { 3 } else { 2 }),
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

#[cfg(test)]
mod tests {
    use crate::engine::keyspace::{Db, Value};
    use crate::engine::{RunRequest, Sandbox};
    use crate::tui::action::Action;
    use crate::tui::app::App;
    use crate::tui::config::Config;
    use crate::tui::theme::Theme;
    use crate::tui::worker::RunResult;
    use ratatui::backend::TestBackend;
    use ratatui::Terminal;

    /// An app after a run over `keys` seed keys that changes a few of them.
    fn app_after_run(keys: usize) -> App {
        let mut seed = Db::new();
        for i in 0..keys {
            seed.set(
                format!("key:{i:05}").into_bytes(),
                Value::Str(b"v".to_vec()),
            );
        }
        let mut sandbox = Sandbox::new();
        sandbox.config.snapshots = true;
        sandbox.set_db0(seed.clone());
        let request = RunRequest::new(
            "redis.call('SET','key:00001','w') redis.call('DEL','key:00002') \
             redis.call('RPUSH','new','a','b') return 1",
        );
        let report = sandbox.run(&request);
        let mut app = App::new("return 1", None, Config::default());
        app.now_ms = sandbox.now_ms();
        app.last_run = Some(RunResult {
            id: 1,
            request,
            report,
            before: seed,
            after: sandbox.keyspace().db(0).clone(),
            now_ms: app.now_ms,
            question: None,
            live: false,
            dry_run_ns: None,
            kill: None,
        });
        app.update(Action::TabKeyspace);
        app
    }

    fn screen(app: &App, w: u16, h: u16) -> String {
        let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
        term.draw(|f| super::super::draw(f, app, &Theme::dark()))
            .unwrap();
        let buf = term.backend().buffer().clone();
        (0..h)
            .map(|y| (0..w).map(|x| buf[(x, y)].symbol()).collect::<String>())
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn marks_changes_and_steps() {
        let mut app = app_after_run(5);
        let text = screen(&app, 140, 40);
        assert!(text.contains("Keys · after run (6)"), "{text}");
        assert!(text.contains("~ key:00001"));
        assert!(text.contains("- key:00002"));
        assert!(text.contains("+ new"));
        app.update(Action::StepForward);
        let text = screen(&app, 80, 24);
        assert!(text.contains("Keys · at step 1/3"), "{text}");
        assert!(text.contains("~ key:00001"));
        assert!(!text.contains("- key:00002"));
        app.update(Action::ToggleDiff);
        app.update(Action::ToggleDiff);
        app.update(Action::KeyspaceFocus);
        let text = screen(&app, 80, 24);
        assert!(
            text.contains("Diff of the last run · whole keyspace"),
            "{text}"
        );
    }

    /// `cargo test --release -- --ignored keyspace_frame_time --nocapture`
    #[test]
    #[ignore]
    fn keyspace_frame_time() {
        for keys in [100, 5_000] {
            let app = app_after_run(keys);
            let mut term = Terminal::new(TestBackend::new(140, 40)).unwrap();
            let theme = Theme::dark();
            let mut times: Vec<f64> = (0..50)
                .map(|_| {
                    let t = std::time::Instant::now();
                    term.draw(|f| super::super::draw(f, &app, &theme)).unwrap();
                    t.elapsed().as_secs_f64() * 1e3
                })
                .collect();
            times.sort_by(f64::total_cmp);
            println!("{keys} keys: median frame {:.3} ms", times[25]);
        }
    }
}
