//! The Server tab: the live server's keys as SCAN found them (type, TTL, size, encoding, memory,
//! node on a cluster) over the selected key's value, read a page at a time on the server.

use super::block;
use crate::tui::app::App;
use crate::tui::keyspace::{fit, text, ttl_text};
use crate::tui::server::{thousands, ServerView, MAX_LISTED, MAX_VALUE_LINES};
use crate::tui::theme::Theme;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Cell, Paragraph, Row, Table, TableState};
use ratatui::Frame;

pub fn draw(frame: &mut Frame, area: Rect, app: &App, theme: &Theme, focused: bool) {
    let Some(view) = &app.server else {
        let text = "No live server: start evalbench with --server URL (or -h/-p) to browse one.";
        frame.render_widget(
            Paragraph::new(text).block(block("Server", focused, theme)),
            area,
        );
        return;
    };
    if view.overview.shown {
        return super::server_overview::draw(frame, area, app, view, theme, focused);
    }
    let (list_area, value_area) = super::list_and_value(area, view.value_focus);
    if let Some(list_area) = list_area {
        let list_focused = focused && !view.value_focus;
        draw_list(frame, list_area, app, view, theme, list_focused);
    }
    if let Some(value_area) = value_area {
        draw_value(frame, value_area, view, theme, focused && view.value_focus);
    }
}

/// A value line cut to `width` with the length of the value it shows: "f1  xxxxx… 10,000 B".
fn cut(line: &str, width: usize, len: Option<u64>) -> String {
    match len {
        Some(len) if line.chars().count() > width => {
            let suffix = format!("… {} B", thousands(len));
            let keep = width.saturating_sub(suffix.chars().count());
            if keep < 4 {
                return fit(line, width);
            }
            line.chars().take(keep).collect::<String>() + &suffix
        }
        _ => fit(line, width),
    }
}

/// A string's rows at `width`: text split at its line breaks and every `width` characters
/// (escaped where it holds control characters), binary as hex rows that fit.
fn string_rows(bytes: &[u8], width: usize) -> Vec<String> {
    let width = width.max(1);
    let Ok(text) = std::str::from_utf8(bytes) else {
        return crate::engine::value_text::hex_rows(bytes, width);
    };
    let mut rows = Vec::new();
    for line in text.split('\n') {
        let chars: Vec<char> = crate::engine::display::display_safe(line).chars().collect();
        if chars.is_empty() {
            rows.push(String::new());
        }
        rows.extend(chars.chunks(width).map(|c| c.iter().collect::<String>()));
    }
    rows
}

fn bytes_text(n: u64) -> String {
    match n {
        // Binary units, named as such: 1 MiB is 1,048,576 bytes.
        n if n >= 1 << 20 => format!("{:.1} MiB", n as f64 / (1 << 20) as f64),
        n if n >= 10 << 10 => format!("{} KiB", n >> 10),
        n => format!("{n} B"),
    }
}

/// The selected row of the key list: "123/1,000+" while the scan may list more.
fn position(view: &ServerView) -> String {
    let listed = view.keys.len() as u64;
    let at = (view.list.selected as u64 + 1).min(listed);
    let more = if view.progress.done { "" } else { "+" };
    format!("{}/{}{more}", thousands(at), thousands(listed))
}

/// The width of the key column: the longest key in view, at least 10 and at most what leaves the
/// other columns their room (short keys leave the room to the columns that need it).
fn key_column(keys: &[String], available: u16) -> u16 {
    let longest = keys.iter().map(|k| k.chars().count()).max().unwrap_or(0);
    (longest.max(10) as u16).min(available.max(10))
}

/// "1,000 of 3,008 keys · ↓ for more", "~12,000 of 100,000 scanned · 3 match · done" and the like
/// (short: it fits the pane of a 120-column terminal).
fn progress_text(view: &ServerView) -> String {
    let p = &view.progress;
    let of = p
        .dbsize
        .map_or(String::new(), |n| format!(" of {}", thousands(n)));
    let state = if p.done {
        "done".to_string()
    } else if view.capped() {
        format!("stopped at {}: narrow with /", thousands(MAX_LISTED as u64))
    } else if view.waiting() {
        "scanning…".to_string()
    } else {
        "↓ for more".to_string()
    };
    let listed = thousands(view.keys.len() as u64);
    if view.pattern.is_empty() && view.type_filter.is_none() {
        format!("{listed}{of} keys · {state}")
    } else {
        let scanned = thousands(view.scanned());
        format!("~{scanned}{of} scanned · {listed} match · {state}")
    }
}

fn draw_list(
    frame: &mut Frame,
    area: Rect,
    app: &App,
    view: &ServerView,
    theme: &Theme,
    focused: bool,
) {
    let mut title = String::from("Server keys");
    if !view.pattern.is_empty() {
        title.push_str(&format!(
            " MATCH {}",
            crate::engine::display::display_safe(&view.pattern)
        ));
    }
    if let Some(t) = view.type_filter {
        title.push_str(&format!(" TYPE {t}"));
    }
    title.push_str(&format!(" · {}", position(view)));
    let hint = format!(" {} ", progress_text(view));
    let block =
        block(&title, focused, theme).title_bottom(Line::from(hint).style(theme.line_number));
    if view.keys.is_empty() {
        let text = match &view.error {
            Some(e) => e.clone(),
            None if view.progress.done => {
                "No key matches (/ sets the MATCH pattern, t the type, o opens a key by name)."
                    .to_string()
            }
            None => "Scanning the server (SCAN, never KEYS)…".to_string(),
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
    let cluster = view
        .summaries
        .values()
        .any(|s| s.as_ref().is_some_and(|s| s.node.is_some()));
    // Columns after the key, dropped from the right when the pane is narrow (the value view's
    // title repeats the encoding); the key keeps at least 20 columns.
    let mut columns: Vec<(&str, u16)> = vec![("type", 6), ("ttl", 7), ("size", 7), ("memory", 7)];
    let inner = area.width.saturating_sub(2);
    if inner >= 80 {
        columns.insert(3, ("encoding", 10));
    }
    if cluster {
        // Right after the type: on a cluster the node is what narrow panes keep longest.
        columns.insert(1, ("node", 21));
    }
    while columns.len() > 1 && inner < 20 + columns.iter().map(|(_, w)| w + 1).sum::<u16>() {
        columns.pop();
    }
    let available = inner.saturating_sub(columns.iter().map(|(_, w)| w + 1).sum::<u16>());
    // Only the visible window is built (borders and header take 3 rows).
    let height = (area.height as usize).saturating_sub(3).max(1);
    let selected = view.list.selected.min(view.keys.len() - 1);
    let offset = selected.saturating_sub(height - 1);
    let now = app.now_ms.max(1);
    let names: Vec<String> = view
        .keys
        .iter()
        .skip(offset)
        .take(height)
        .map(|k| text(k))
        .collect();
    let key_width = key_column(&names, available);
    let rows: Vec<Row> = view
        .keys
        .iter()
        .skip(offset)
        .take(height)
        .zip(&names)
        .map(|(key, name)| {
            let mut cells = vec![Cell::from(fit(name, key_width as usize))];
            match view.summaries.get(key) {
                Some(Some(s)) => {
                    for (name, _) in &columns {
                        cells.push(Cell::from(match *name {
                            "type" => s.kind.clone(),
                            "ttl" => ttl_text(s.ttl_ms.map(|t| now + t), now),
                            "size" => s.size.map_or("?".into(), thousands),
                            "encoding" => s.encoding.clone().unwrap_or_default(),
                            "memory" => s.memory_bytes.map_or(String::new(), bytes_text),
                            _ => s.node.clone().unwrap_or_default(),
                        }));
                    }
                }
                Some(None) => cells.push(Cell::from("(gone)")),
                None => cells.push(Cell::from("…")),
            }
            Row::new(cells).style(theme.text)
        })
        .collect();
    let mut widths = vec![Constraint::Length(key_width)];
    widths.extend(columns.iter().map(|(_, w)| Constraint::Length(*w)));
    let mut header = vec!["key"];
    header.extend(columns.iter().map(|(name, _)| *name));
    let table = Table::new(rows, widths)
        .header(Row::new(header).style(theme.header))
        .row_highlight_style(theme.selected)
        .block(block);
    let mut state = TableState::default().with_selected(Some(selected - offset));
    frame.render_stateful_widget(table, area, &mut state);
}

fn draw_value(frame: &mut Frame, area: Rect, view: &ServerView, theme: &Theme, focused: bool) {
    let Some(value) = &view.value else {
        let text = match view.selected_key() {
            Some(_) => "Reading the key…",
            None => "Select a key to see its value (o opens one by name).",
        };
        frame.render_widget(
            Paragraph::new(text).block(block("Value", focused, theme)),
            area,
        );
        return;
    };
    let body = area.height.saturating_sub(2) as usize;
    let width = area.width.saturating_sub(2) as usize;
    // A string in rows as wide as the pane (text, or hex for binary): no byte is hidden.
    let string_rows = (value.kind == "string").then(|| string_rows(&value.raw, width));
    let row_count = string_rows.as_ref().map_or(value.lines.len(), Vec::len);
    view.value_rows.set(row_count);
    let start = view.value_scroll.min(row_count.saturating_sub(body.max(1)));
    let lines: Vec<Line> = match &string_rows {
        Some(rows) => rows
            .iter()
            .skip(start)
            .take(body)
            .map(|r| Line::styled(r.clone(), theme.text))
            .collect(),
        None => {
            // A hash's values start in one column: after the widest field in view (at most a
            // third of the pane; longer fields are cut with an ellipsis).
            let fields = |i: usize| value.fields.get(i).and_then(Option::as_ref);
            let field_width = (start..(start + body).min(value.lines.len()))
                .filter_map(|i| fields(i).map(|(f, _)| f.chars().count()))
                .max()
                .unwrap_or(0)
                .min(width / 3);
            value
                .lines
                .iter()
                .zip(value.lengths.iter().chain(std::iter::repeat(&None)))
                .enumerate()
                .skip(start)
                .take(body)
                .map(|(i, (l, len))| {
                    let line = match fields(i) {
                        Some((f, v)) => format!("{:<field_width$}  {v}", fit(f, field_width)),
                        None => l.clone(),
                    };
                    Line::styled(cut(&line, width, *len), theme.text)
                })
                .collect()
        }
    };
    // "16,384/102,400 B" of a string, "200/5,000" rows of a collection: what was read of it.
    let summary = view.summaries.get(&value.key).cloned().flatten();
    let size = summary.as_ref().and_then(|s| s.size);
    let read = match (&value.kind[..], value.total) {
        ("string", Some(total)) => format!("{}/{} B", thousands(value.bytes), thousands(total)),
        _ => format!(
            "{}{}",
            thousands(value.lines.len() as u64),
            size.map_or(String::new(), |n| format!("/{}", thousands(n)))
        ),
    };
    let more = if value.stopped {
        "stopped (Esc: whole value)"
    } else if value.loading && value.pattern.is_some() {
        "searching… (Esc stops)"
    } else if value.loading {
        "reading…"
    } else if value.next.is_none() {
        "end"
    } else if value.lines.len() >= MAX_VALUE_LINES {
        "view limit"
    } else {
        "↓ more"
    };
    let title = match &value.pattern {
        // A search: the matches found and the calls it took, never a total it cannot know.
        Some(pattern) => format!(
            "{} '{}' MATCH {} · {} match · {} calls · {more}",
            value.kind,
            fit(&text(&value.key), 24),
            crate::engine::display::display_safe(pattern),
            thousands(value.lines.len() as u64),
            value.calls
        ),
        None => format!(
            "{} '{}' · {read} · {more}",
            value.kind,
            fit(&text(&value.key), 24)
        ),
    };
    let encoding = summary.and_then(|s| s.encoding);
    // The top row's position among the rows read: "row 12/200+" while more can be read.
    let position = if value.lines.is_empty() {
        None
    } else {
        let more = if value.next.is_some() && !value.stopped {
            "+"
        } else {
            ""
        };
        Some(format!(
            "row {}/{}{more}",
            thousands(start as u64 + 1),
            thousands(row_count as u64)
        ))
    };
    // Fitted to the pane by priority: the position first, the key hints last.
    let mut parts: Vec<String> = position.into_iter().chain(encoding).collect();
    parts.extend(["c: copy", "f: search", "v: inspect", "Enter: keys"].map(String::from));
    while parts.len() > 1 && parts.join(" · ").chars().count() + 4 > area.width as usize {
        parts.pop();
    }
    let hint = format!(" {} ", parts.join(" · "));
    frame.render_widget(
        Paragraph::new(lines).block(
            block(&title, focused, theme).title_bottom(Line::from(hint).style(theme.line_number)),
        ),
        area,
    );
}

#[cfg(test)]
mod tests {
    use super::bytes_text;

    #[test]
    fn sizes_are_in_binary_units_named_as_such() {
        assert_eq!(bytes_text(10_239), "10239 B");
        assert_eq!(bytes_text(10 << 10), "10 KiB");
        assert_eq!(bytes_text(3 << 20 | 1 << 19), "3.5 MiB");
    }
}
