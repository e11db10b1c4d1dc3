//! The value inspector, full screen (tui/value_view.rs holds its state and keys).

use super::block;
use crate::tui::theme::Theme;
use crate::tui::value_view::{Line as ViewLine, ValueView};
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};
use ratatui::Frame;

pub fn draw(frame: &mut Frame, area: Rect, view: &ValueView, theme: &Theme) {
    // The status bar's two rows stay in view: what a search found, what a yank copied.
    let area = if area.height >= 8 {
        Rect {
            height: area.height - 2,
            ..area
        }
    } else {
        area
    };
    frame.render_widget(Clear, area);
    let width = area.width.saturating_sub(2) as usize;
    // The last row inside the border is the search being typed.
    let typing = view.typing.is_some();
    let height = (area.height.saturating_sub(2) as usize).saturating_sub(usize::from(typing));
    view.page.set((height, width.max(1)));
    let rows = view.rows(width);
    let scroll = view.scroll.min(rows.len().saturating_sub(height.max(1)));
    let matches = view.matches(width);
    let current = matches.get(view.current).copied();
    let mut lines: Vec<Line> = rows
        .iter()
        .skip(scroll)
        .take(height)
        .map(|(line, start, row)| {
            let style = match row {
                ViewLine::Label(_) => theme.header.add_modifier(Modifier::BOLD),
                ViewLine::Note(_) => theme.warning,
                ViewLine::Body(_) => theme.text,
            };
            let chars: Vec<char> = row.text().chars().collect();
            // Without wrap: the columns from `left`, a line cut at the edge ending in "…".
            let (from, to, cut) = if view.wrap {
                (0, chars.len(), false)
            } else {
                let from = view.left.min(chars.len());
                let cut = chars.len() > from + width;
                let to = if cut { from + width - 1 } else { chars.len() };
                (from, to, cut)
            };
            // Which characters of the row a match covers (the current one stands out).
            let mut marks = vec![None; chars.len()];
            let len = view.query.chars().count();
            for &(l, at) in &matches {
                if l != *line {
                    continue;
                }
                let is_current = current == Some((l, at));
                for c in at..at + len {
                    if c >= *start && c - start < chars.len() {
                        marks[c - start] = Some(is_current);
                    }
                }
            }
            let mut spans: Vec<Span> = Vec::new();
            let mut i = from;
            while i < to {
                let mark = marks[i];
                let mut j = i;
                while j < to && marks[j] == mark {
                    j += 1;
                }
                let piece: String = chars[i..j].iter().collect();
                let piece_style = match mark {
                    Some(true) => theme.selected.add_modifier(Modifier::BOLD),
                    Some(false) => theme.selection,
                    None => style,
                };
                spans.push(Span::styled(piece, piece_style));
                i = j;
            }
            if cut {
                spans.push(Span::styled("…", theme.line_number));
            }
            Line::from(spans)
        })
        .collect();
    if let Some(typing) = &view.typing {
        while lines.len() < height {
            lines.push(Line::raw(""));
        }
        lines.push(Line::from(vec![
            Span::styled("/", theme.header),
            Span::raw(crate::engine::display::display_safe(typing).into_owned()),
            Span::styled(" ", Style::default().add_modifier(Modifier::REVERSED)),
            Span::styled("  Enter searches, Esc cancels", theme.line_number),
        ]));
    }
    let mut title = format!(
        "{} · {} · wrap {}",
        crate::engine::display::display_safe(&view.title),
        view.mode.name(),
        if view.wrap { "on" } else { "off" }
    );
    if rows.len() > height {
        title.push_str(&format!(
            " · rows {}-{}/{}",
            scroll + 1,
            (scroll + height).min(rows.len()),
            rows.len()
        ));
    }
    if !view.query.is_empty() {
        title.push_str(&if matches.is_empty() {
            format!(" · no match for '{}'", view.query)
        } else {
            format!(" · match {}/{}", view.current + 1, matches.len())
        });
    }
    let title = format!(" Inspect: {} ", crate::tui::keyspace::fit(&title, width));
    let hint = " w wrap · m text/JSON/msgpack/hex · / search · n N · y yank · Esc close ";
    frame.render_widget(
        Paragraph::new(lines).block(
            block(&title, true, theme).title_bottom(Line::from(hint).style(theme.line_number)),
        ),
        area,
    );
}
