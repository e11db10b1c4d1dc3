//! The editor pane, drawn from the TextArea's lines (tui-textarea cannot colour tokens): line
//! numbers, Lua highlighting, the cursor's line, the error line with its message, search matches,
//! the selection and the cursor. Only the visible lines are touched.

use super::block;
use crate::engine::display::{display_safe, is_unsafe, push_escape};
use crate::tui::app::{App, Focus};
use crate::tui::editor::{follow, raw_byte};
use crate::tui::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;
use ratatui::Frame;
use std::ops::Range;

/// How a tab is shown (tabs typed in the editor are already two spaces).
const TAB: &str = "  ";

pub fn draw(frame: &mut Frame, area: Rect, app: &App, theme: &Theme) {
    let editor = &app.editor;
    let focused = app.focus == Focus::Editor && app.overlay.is_none();
    let name = match (&editor.path, &editor.read_only) {
        (Some(p), _) => p.display().to_string(),
        // A server's library (tui/read_only.rs): where it came from, and that it is read-only.
        (None, Some(read_only)) => crate::tui::read_only::title(read_only),
        (None, None) => "untitled".into(),
    };
    // With several buffers open: which one this is, of how many (tui/buffers.rs).
    let title = format!(
        "{}{}{}",
        crate::tui::buffers::position_label(app),
        display_safe(&name),
        if editor.modified { " *" } else { "" }
    );
    let mut outer = block(&title, focused, theme);
    // The error also goes on the bottom border: the line may be off screen or too long.
    // Once the buffer changed after the run, its marker is dimmed and labelled stale.
    let stale = app.run_is_stale();
    if let Some((line, message)) = &editor.error {
        let (label, style) = if stale {
            (" (stale: edited since the run)", theme.line_number)
        } else {
            ("", theme.error)
        };
        let text = format!(" ✗ line {line}{label}: {} ", display_safe(message));
        // The border has room for the message less its corners: a cut one ends in an ellipsis.
        let text = ellipsize(&text, area.width.saturating_sub(2) as usize);
        outer = outer.title_bottom(Line::styled(text, style));
    }
    let inner = outer.inner(area);
    frame.render_widget(outer, area);
    if inner.width == 0 || inner.height == 0 {
        return;
    }
    // Recorded for key handling, which keeps the cursor in view with it.
    editor.viewport.set(inner.height);

    let lines = editor.textarea.lines();
    let (cur_row, cur_col) = editor.textarea.cursor();
    let height = inner.height as usize;
    // The stored offset follows the cursor on each key; recompute in case the pane was resized.
    let mut top = follow(editor.scroll, cur_row, height).min(lines.len().saturating_sub(1));
    let number_width = lines.len().to_string().len().max(3);
    // The debugger's marks and line counts (ui/debug.rs): no columns until it is used.
    let sha = editor.sha1();
    let debug_width = super::debug::gutter_width(app, &sha);
    let gutter = (number_width + 1 + debug_width) as u16;
    let text_width = inner.width.saturating_sub(gutter) as usize;
    // Horizontal scroll: keep the cursor's column on screen (escapes take several cells); with
    // wrapping, long lines continue on the next rows instead.
    let left = if editor.wrap {
        0
    } else {
        first_visible(&lines[cur_row], cur_col, text_width.max(1))
    };
    // Each line's rows: where they start (one row, from `left`, without wrapping).
    let starts = |row: usize| -> Vec<usize> {
        if editor.wrap {
            segments(&lines[row], text_width.max(1))
        } else {
            vec![left]
        }
    };
    if editor.wrap {
        // Wrapped lines above may push the cursor's row below the pane: start lower.
        let cursor_segment = |starts: &[usize]| starts.iter().filter(|&&s| s <= cur_col).count();
        while top < cur_row {
            let above: usize = (top..cur_row).map(|r| starts(r).len()).sum();
            if above + cursor_segment(&starts(cur_row)) <= height {
                break;
            }
            top += 1;
        }
    }
    let bottom = (top + height).min(lines.len());

    {
        let mut regions = app.regions.borrow_mut();
        regions.editor = inner;
        regions.gutter = gutter;
        regions.editor_top = top;
        regions.editor_left = left;
    }

    let highlighted = {
        let mut highlight = editor.highlight.borrow_mut();
        highlight.set_toml(crate::tui::race::is_toml(editor.path.as_deref()));
        highlight.highlight(lines, top..bottom, &theme.syntax)
    };
    let error = editor
        .error
        .as_ref()
        .map(|(line, msg)| ((*line as usize).saturating_sub(1), msg.as_str()));
    let selection = editor.textarea.selection_range();
    let search = editor.textarea.search_pattern();
    let match_style = theme.header.add_modifier(Modifier::REVERSED);

    let buf = frame.buffer_mut();
    let mut visual = 0usize;
    let mut shown_rows = Vec::with_capacity(height);
    'rows: for (i, spans) in highlighted.into_iter().enumerate() {
        let row = top + i;
        let text = &lines[row];
        let row_starts = starts(row);
        for (segment, &start) in row_starts.iter().enumerate() {
            if visual >= height {
                break 'rows;
            }
            let y = inner.y + visual as u16;
            visual += 1;
            shown_rows.push((row, start));
            let last_segment = segment + 1 == row_starts.len();
            let segment_width = if last_segment {
                text_width
            } else {
                cells_between(text, start, row_starts[segment + 1])
            };
            let is_error = error.is_some_and(|(r, _)| r == row);
            let mut line_style = theme.text;
            if row == cur_row {
                line_style = line_style.patch(theme.current_line);
            }
            if is_error && !stale {
                line_style = line_style.patch(theme.error_line);
            }
            // The line the debugger stopped at (ui/debug.rs).
            if let Some(stopped) = super::debug::stopped_line_style(app, row as u32 + 1, theme) {
                line_style = line_style.patch(stopped);
            }
            let row_rect = Rect::new(inner.x, y, inner.width, 1);
            buf.set_style(row_rect, line_style);

            // Gutter: the number, in the error colour on the error line (dimmed once stale).
            let number_style = if is_error && stale {
                theme.line_number.add_modifier(Modifier::DIM)
            } else if is_error {
                theme.error.add_modifier(Modifier::BOLD)
            } else if row == cur_row {
                theme
                    .line_number
                    .patch(theme.text)
                    .add_modifier(Modifier::BOLD)
            } else {
                theme.line_number
            };
            // A continuation row of a wrapped line has no number (nor debugger marks).
            let number = if segment == 0 {
                format!("{:>number_width$} ", row + 1)
            } else {
                format!("{:>number_width$} ", "↪")
            };
            let mut number_x = inner.x;
            if debug_width > 0 {
                // [mark][number] [count ]
                number_x = inner.x + 1;
                if segment == 0 {
                    let marks = super::debug::gutter_spans(app, &sha, row as u32 + 1, theme);
                    let mut x = inner.x;
                    for (i, span) in marks.iter().enumerate() {
                        if i == 1 {
                            x = inner.x + 1 + number_width as u16 + 1;
                        }
                        buf.set_span(x, y, span, gutter.saturating_sub(x - inner.x));
                    }
                }
            }
            buf.set_stringn(
                number_x,
                y,
                &number,
                (number_width + 1).min(inner.width as usize),
                number_style,
            );
            // Lint while typing: a mark after the number (tui/lint_diagnostics.rs).
            if segment == 0 && (number_width as u16) < inner.width {
                if let Some(mark) = crate::tui::lint_diagnostics::gutter_mark(app, row + 1, theme) {
                    buf.set_span(number_x + number_width as u16, y, &mark, 1);
                }
            }

            let matches: Vec<Range<usize>> = search
                .map(|re| re.find_iter(text).map(|m| m.range()).collect())
                .unwrap_or_default();
            let selected = selection.and_then(|((r0, c0), (r1, c1))| {
                (r0 <= row && row <= r1).then(|| {
                    let from = if row == r0 { c0 } else { 0 };
                    let to = if row == r1 { c1 } else { usize::MAX };
                    from..to
                })
            });
            let in_segment =
                cur_col >= start && (last_segment || cur_col < row_starts[segment + 1]);
            let cursor = (focused && row == cur_row && in_segment).then_some(cur_col);
            let styled = Styling {
                line_style,
                spans: &spans,
                matches: &matches,
                match_style,
                selected,
                selected_style: theme.selection,
                escape_style: theme.line_number,
                cursor,
            }
            .line(text, start, segment_width);
            let mut used = styled.width();
            let x = inner.x + gutter;
            buf.set_line(x, y, &styled, text_width as u16);

            // The error message after the error line's text (dimmed, labelled stale, once the
            // buffer changed since the run).
            if let Some((_, message)) = error.filter(|_| is_error && last_segment) {
                let room = text_width.saturating_sub(used + 2);
                if room > 0 {
                    let (message, style) = if stale {
                        (
                            format!("◀ (stale) {}", display_safe(message)),
                            line_style
                                .patch(theme.line_number)
                                .add_modifier(Modifier::DIM),
                        )
                    } else {
                        (
                            format!("◀ {}", display_safe(message)),
                            line_style.patch(theme.error),
                        )
                    };
                    used += 2;
                    buf.set_stringn(x + used as u16, y, ellipsize(&message, room), room, style);
                }
            }
        }
    }
    app.regions.borrow_mut().editor_rows = shown_rows;
    // Rows past the end of the buffer.
    for y in inner.y + visual as u16..inner.bottom() {
        let rect = Rect::new(inner.x, y, inner.width, 1);
        Line::styled("~", theme.line_number).render(rect, buf as &mut Buffer);
    }
}

/// `text` in at most `width` characters, its end replaced by an ellipsis when it is longer.
fn ellipsize(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let mut out: String = text.chars().take(width.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// How a buffer character is drawn: a tab as `TAB`, a byte that is not UTF-8 as `\xNN`, a control,
/// C1 or bidi character escaped (the terminal would act on it), anything else as it is.
fn shown(ch: char, tmp: &mut String) -> &str {
    tmp.clear();
    if ch == '\t' {
        return TAB;
    }
    if let Some(b) = raw_byte(ch) {
        tmp.push_str(&format!("\\x{b:02x}"));
    } else if is_unsafe(ch) {
        push_escape(tmp, ch);
    } else {
        tmp.push(ch);
    }
    tmp
}

/// The character column shown `cells` cells right of the text's left edge, when the line is drawn
/// from character column `left` (a click's column; past the end: the end).
pub fn column_at(line: &str, left: usize, cells: usize) -> usize {
    let mut tmp = String::new();
    let mut used = 0;
    let mut col = left;
    for ch in line.chars().skip(left) {
        let width = shown(ch, &mut tmp).chars().count();
        if used + width > cells {
            return col;
        }
        used += width;
        col += 1;
    }
    col
}

/// Where the rows of `line` wrapped at `width` cells start (character columns; at least one).
fn segments(line: &str, width: usize) -> Vec<usize> {
    let mut tmp = String::new();
    let mut starts = vec![0];
    let mut used = 0;
    for (col, ch) in line.chars().enumerate() {
        let w = shown(ch, &mut tmp).chars().count();
        if used + w > width && used > 0 {
            starts.push(col);
            used = 0;
        }
        used += w;
    }
    starts
}

/// The cells characters `from..to` of `line` take.
fn cells_between(line: &str, from: usize, to: usize) -> usize {
    let mut tmp = String::new();
    line.chars()
        .skip(from)
        .take(to - from)
        .map(|c| shown(c, &mut tmp).chars().count())
        .sum()
}

/// The first character column to draw so that the cursor's column `col` of `line` fits in `width`
/// cells.
fn first_visible(line: &str, col: usize, width: usize) -> usize {
    let mut tmp = String::new();
    let mut used = 0;
    let mut left = col + 1;
    // Walk back from the cursor (the cell past the end of the line counts as one).
    let widths = line
        .chars()
        .map(|c| shown(c, &mut tmp).chars().count())
        .chain(std::iter::repeat(1));
    let widths: Vec<usize> = widths.take(col + 1).collect();
    for w in widths.iter().rev() {
        if used + w > width {
            break;
        }
        used += w;
        left -= 1;
    }
    left.min(col)
}

/// Everything that decides a character's style on one line.
struct Styling<'a> {
    line_style: Style,
    spans: &'a [(Style, Range<usize>)],
    matches: &'a [Range<usize>],
    match_style: Style,
    /// Selected character columns.
    selected: Option<Range<usize>>,
    selected_style: Style,
    /// Escaped characters (`\x1b`, `\xff`): told apart from the same text typed.
    escape_style: Style,
    /// The cursor's column when it is on this line and the pane has focus.
    cursor: Option<usize>,
}

impl Styling<'_> {
    /// The visible part of `text` (from character column `left`, at most `width` cells) as
    /// spans, neighbouring characters of the same style merged.
    fn line(&self, text: &str, left: usize, width: usize) -> Line<'static> {
        let mut out: Vec<Span<'static>> = Vec::new();
        let mut run = String::new();
        let mut run_style = Style::default();
        let mut cells = 0;
        let mut span = 0;
        let mut push = |piece: &str, style: Style, run: &mut String, run_style: &mut Style| {
            if style != *run_style && !run.is_empty() {
                out.push(Span::styled(std::mem::take(run), *run_style));
            }
            *run_style = style;
            run.push_str(piece);
        };
        let mut col = 0;
        for (byte, ch) in text.char_indices() {
            if cells >= width {
                break;
            }
            while span < self.spans.len() && self.spans[span].1.end <= byte {
                span += 1;
            }
            if col >= left {
                let mut style = self.line_style;
                if let Some((s, r)) = self.spans.get(span) {
                    if r.contains(&byte) {
                        style = style.patch(*s);
                    }
                }
                if self.matches.iter().any(|m| m.contains(&byte)) {
                    style = style.patch(self.match_style);
                }
                if self.selected.as_ref().is_some_and(|s| s.contains(&col)) {
                    style = style.patch(self.selected_style);
                }
                if self.cursor == Some(col) {
                    style = style.add_modifier(Modifier::REVERSED);
                }
                let mut tmp = String::new();
                let piece = shown(ch, &mut tmp);
                if piece.len() > 1 && piece.starts_with('\\') {
                    style = style.patch(self.escape_style);
                }
                cells += piece.chars().count();
                push(piece, style, &mut run, &mut run_style);
            }
            col += 1;
        }
        // The cursor past the end of the line.
        if let Some(c) = self.cursor {
            if c >= col && c >= left && cells < width {
                let style = self.line_style.add_modifier(Modifier::REVERSED);
                push(" ", style, &mut run, &mut run_style);
            }
        }
        if !run.is_empty() {
            out.push(Span::styled(run, run_style));
        }
        Line::from(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::app::App;
    use crate::tui::config::Config;
    use ratatui::backend::TestBackend;
    use ratatui::Terminal;

    fn screen(app: &App, w: u16, h: u16) -> String {
        let theme = Theme::dark();
        let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
        terminal.draw(|f| draw(f, f.area(), app, &theme)).unwrap();
        let buf = terminal.backend().buffer().clone();
        (0..h)
            .map(|y| (0..w).map(|x| buf[(x, y)].symbol()).collect::<String>())
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn draws_numbers_text_and_error() {
        let mut app = App::new("local a = 1\n\treturn a +", None, Config::default());
        app.editor.set_error(Some((2, "unexpected symbol".into())));
        let s = screen(&app, 60, 6);
        assert!(s.contains("  1 local a = 1"), "{s}");
        assert!(s.contains("  2   return a +"), "{s}");
        assert!(s.contains("◀ unexpected symbol"), "{s}");
        assert!(s.contains("✗ line 2: unexpected symbol"), "{s}");
        assert!(s.contains("~"), "{s}");
    }

    #[test]
    fn scrolls_to_the_cursor_and_survives_tiny_areas() {
        let text: Vec<String> = (1..=200).map(|i| format!("local v{i} = {i}")).collect();
        let mut app = App::new(&text.join("\n"), None, Config::default());
        app.editor.goto_line(150);
        let s = screen(&app, 40, 12);
        assert!(s.contains("150 local v150"), "{s}");
        for (w, h) in [(1, 1), (3, 3), (5, 2), (10, 4)] {
            screen(&app, w, h);
        }
    }

    #[test]
    fn control_bidi_and_raw_bytes_are_shown_escaped() {
        let bytes = b"return '\x1b]0;pwned\x07' .. '\xe2\x80\xae' .. '\xff'\n\tx";
        let text = crate::tui::editor::decode_script(bytes);
        let app = App::new(&text, None, Config::default());
        let s = screen(&app, 80, 5);
        assert!(
            s.contains("  1 return '\\x1b]0;pwned\\a' .. '\\u{202e}' .. '\\xff'"),
            "{s}"
        );
        assert!(s.contains("  2   x"), "{s}");
        assert!(!s
            .chars()
            .any(|c| c != '\n' && crate::engine::display::is_unsafe(c)));
    }

    #[test]
    fn the_cursor_stays_in_view_past_wide_escapes() {
        // 20 escaped bytes (80 cells) then "end": the cursor at the end of the line is on screen.
        let text = crate::tui::editor::decode_script(&[&[0xffu8; 20][..], b"end"].concat());
        let mut app = App::new(&text, None, Config::default());
        app.editor
            .textarea
            .move_cursor(tui_textarea::CursorMove::End);
        let s = screen(&app, 40, 4);
        assert!(s.contains("\\xff\\xffend"), "{s}");
    }
}
