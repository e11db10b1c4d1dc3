//! The `redis>` prompt (tui/command_prompt.rs): a box at the foot of the screen, above the status
//! bar, with the last multi-line reply over the line being typed. Every line fits its row: a
//! longer one is cut with `…`, and rows left unshown are counted.

use super::super::app::App;
use super::super::theme::Theme;
use crate::engine::display::display_safe;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};
use ratatui::Frame;

/// `text` in `width` columns: cut at the end with `…` when longer.
fn fit_end(text: &str, width: usize) -> String {
    fit(text, width, false)
}

/// `text` in `width` columns: its end kept, `…` first when longer (the line being typed).
fn fit_start(text: &str, width: usize) -> String {
    fit(text, width, true)
}

fn fit(text: &str, width: usize, keep_end: bool) -> String {
    // Columns as ratatui counts them (a wide character takes two).
    let width_of = |c: char| Span::raw(c.to_string()).width();
    let cols = |s: &str| s.chars().map(width_of).sum::<usize>();
    if cols(text) <= width {
        return text.to_string();
    }
    let room = width.saturating_sub(1);
    let mut kept: Vec<char> = Vec::new();
    let mut used = 0;
    let chars: Vec<char> = if keep_end {
        text.chars().rev().collect()
    } else {
        text.chars().collect()
    };
    for c in chars {
        let w = width_of(c);
        if used + w > room {
            break;
        }
        used += w;
        kept.push(c);
    }
    if keep_end {
        kept.reverse();
        format!("…{}", kept.into_iter().collect::<String>())
    } else {
        format!("{}…", kept.into_iter().collect::<String>())
    }
}

/// `text` in rows of at most `width` columns.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut rows = vec![String::new()];
    let mut used = 0;
    for c in text.chars() {
        let w = Span::raw(c.to_string()).width();
        if used + w > width.max(1) {
            rows.push(String::new());
            used = 0;
        }
        used += w;
        if let Some(row) = rows.last_mut() {
            row.push(c);
        }
    }
    rows
}

pub fn draw(frame: &mut Frame, area: Rect, app: &App, theme: &Theme) {
    let cmd = &app.command;
    // Above the status bar's two rows.
    let body_height = area.height.saturating_sub(2);
    if body_height < 3 || area.width < 10 {
        return;
    }
    let inner_width = area.width.saturating_sub(2) as usize;
    let room = (body_height / 2).saturating_sub(3) as usize;
    // A line wider than the box wraps, so an answer (a refusal's reason) is read whole.
    let rows: Vec<String> = cmd
        .output
        .iter()
        .flat_map(|line| wrap(&display_safe(line), inner_width))
        .collect();
    let total = rows.len();
    let first = cmd.scroll.min(total.saturating_sub(1));
    let shown = total.saturating_sub(first).min(room);
    let mut lines: Vec<Line> = Vec::new();
    for (i, text) in rows.iter().skip(first).take(shown).enumerate() {
        // Lines from this row on that are not shown when this row counts them.
        let left = total - first - i;
        if i + 1 == shown && left > 1 {
            // The last row says how many follow.
            lines.push(Line::styled(
                fit_end(&format!("… {left} more lines (PgDn)"), inner_width),
                theme.line_number,
            ));
        } else {
            lines.push(Line::raw(fit_end(text, inner_width)));
        }
    }
    let input_line = match &cmd.asking {
        Some((_, why)) => Line::styled(
            fit_end(
                &format!("{why}: send it? y sends, n or Esc sends nothing"),
                inner_width,
            ),
            theme.warning,
        ),
        None => {
            let label = cmd.label();
            // The cursor's cell shows reversed, where it is in the line; a long line keeps the
            // cursor in view, `…` where it is cut on either side.
            let at = cmd.input.char_indices().nth(cmd.cursor).map(|(i, _)| i);
            let (before, under, after) = match at {
                Some(i) => {
                    let c = cmd.input[i..].chars().next().unwrap_or(' ');
                    let next = i + c.len_utf8();
                    (
                        &cmd.input[..i],
                        display_safe(&cmd.input[i..next]).into_owned(),
                        &cmd.input[next..],
                    )
                }
                None => (cmd.input.as_str(), " ".to_string(), ""),
            };
            let room = inner_width.saturating_sub(label.len() + Span::raw(under.as_str()).width());
            let before = fit_start(&display_safe(before), room);
            let rest = room.saturating_sub(Span::raw(before.as_str()).width());
            let after = fit_end(&display_safe(after), rest);
            Line::from(vec![
                Span::styled(label, theme.header),
                Span::raw(before),
                Span::styled(under, Style::default().add_modifier(Modifier::REVERSED)),
                Span::raw(after),
            ])
        }
    };
    lines.push(input_line);
    let height = lines.len() as u16 + 2;
    let rect = Rect {
        x: area.x,
        y: area.y + body_height - height,
        width: area.width,
        height,
    };
    frame.render_widget(Clear, rect);
    let title = if cmd.waiting.is_some() {
        "redis> · waiting for the server"
    } else {
        "redis> · Enter runs · Tab completes · Esc closes"
    };
    let title = fit_end(title, inner_width);
    frame.render_widget(
        Paragraph::new(lines).block(super::block(&title, true, theme)),
        rect,
    );
}

#[cfg(test)]
mod tests {
    #[test]
    fn long_lines_are_cut_with_an_ellipsis() {
        assert_eq!(super::fit_end("abcdef", 4), "abc…");
        assert_eq!(super::fit_start("abcdef", 4), "…def");
        assert_eq!(super::fit_end("abc", 4), "abc");
        assert_eq!(super::wrap("abcdef", 4), vec!["abcd", "ef"]);
    }
}
