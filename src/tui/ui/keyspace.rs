//! The Keyspace tab: keys with type, TTL and size, and the selected key's value.

use super::block;
use crate::engine::keyspace::json::bytes_to_json;
use crate::engine::keyspace::Value;
use crate::tui::app::App;
use crate::tui::theme::Theme;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::widgets::{Cell, Paragraph, Row, Table, TableState, Wrap};
use ratatui::Frame;

pub fn draw(frame: &mut Frame, area: Rect, app: &App, theme: &Theme, focused: bool) {
    let db = app.shown_keyspace();
    let keys = app.keyspace.visible_keys(app);
    let [list_area, value_area] =
        Layout::vertical([Constraint::Percentage(55), Constraint::Percentage(45)]).areas(area);
    let rows: Vec<Row> = keys
        .iter()
        .filter_map(|k| db.get(k, app.now_ms).map(|e| (k, e)))
        .map(|(k, e)| {
            let ttl = e.expire_at_ms.map_or("-".to_string(), |t| {
                format!("{:.1}s", (t - app.now_ms) as f64 / 1000.0)
            });
            Row::new(vec![
                Cell::from(String::from_utf8_lossy(k).into_owned()),
                Cell::from(e.value.type_name()),
                Cell::from(ttl),
                Cell::from(e.value.size().to_string()),
            ])
        })
        .collect();
    let title = format!(
        "Keyspace{}{}",
        if app.keyspace.filter.is_empty() {
            String::new()
        } else {
            format!(" /{}", app.keyspace.filter)
        },
        app.keyspace
            .type_filter
            .map(|t| format!(" [{t}]"))
            .unwrap_or_default()
    );
    let widths = [
        Constraint::Min(10),
        Constraint::Length(7),
        Constraint::Length(9),
        Constraint::Length(7),
    ];
    let table = Table::new(rows, widths)
        .header(Row::new(vec!["key", "type", "ttl", "size"]).style(theme.header))
        .row_highlight_style(theme.selected)
        .block(block(&title, focused, theme));
    let mut state = TableState::default().with_selected(Some(app.keyspace.list.selected));
    frame.render_stateful_widget(table, list_area, &mut state);
    let value = keys
        .get(app.keyspace.list.selected)
        .and_then(|k| db.get(k, app.now_ms))
        .map(|e| match &e.value {
            Value::Str(s) => crate::engine::reply::quote_bytes(s),
            other => serde_json::to_string_pretty(
                &crate::engine::keyspace::keyspace_to_json(&single(other), 0)["k"]["value"],
            )
            .unwrap_or_default(),
        });
    let _ = bytes_to_json;
    frame.render_widget(
        Paragraph::new(value.unwrap_or_default())
            .wrap(Wrap { trim: false })
            .block(block("Value", false, theme)),
        value_area,
    );
}

fn single(value: &Value) -> crate::engine::keyspace::Db {
    let mut db = crate::engine::keyspace::Db::new();
    db.set(b"k".to_vec(), value.clone());
    db
}
