//! The Debug tab (stack, variables tree, watches, console) and the debugger's marks in the
//! editor's gutter (breakpoints, the stopped line, line counts of the last debug run).

use super::block;
use crate::engine::debug::{StopReason, VarKind};
use crate::engine::display::display_safe;
use crate::tui::app::App;
use crate::tui::debug_engine::{reason_text, ConsoleKind, StopView};
use crate::tui::theme::Theme;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

/// Below this many inner rows the tab draws its compact form (one line of stack, no headers).
const COMPACT: u16 = 12;

pub fn draw(frame: &mut Frame, area: Rect, app: &App, theme: &Theme, focused: bool) {
    let d = &app.debugger;
    let title = match (&d.session, d.stop()) {
        (Some(s), Some(stop)) if s.paused => format!(
            "Debug · stopped at line {} ({}) · event {}",
            stop.line,
            match &stop.reason {
                // The message has a line of its own below.
                StopReason::Error { .. } => "error".into(),
                reason => display_safe(&reason_text(reason)).into_owned(),
            },
            stop.event
        ),
        (Some(_), _) => "Debug · running…".to_string(),
        (None, _) => "Debug".to_string(),
    };
    let outer = block(&title, focused, theme);
    let inner = outer.inner(area);
    frame.render_widget(outer, area);
    if inner.width == 0 || inner.height == 0 {
        return;
    }
    let lines = match d.stop() {
        Some(stop) => stopped_lines(app, stop, theme, focused, inner),
        None => idle_lines(app, theme, inner.height as usize),
    };
    frame.render_widget(Paragraph::new(lines), inner);
}

fn header(text: String, theme: &Theme) -> Line<'static> {
    Line::styled(text, theme.header.add_modifier(Modifier::BOLD))
}

/// No session: how to start one, the breakpoints, the last session's console.
fn idle_lines(app: &App, theme: &Theme, height: usize) -> Vec<Line<'static>> {
    let d = &app.debugger;
    let mut out = vec![
        Line::raw("No debug session. F9 sets a breakpoint on the cursor's line, F5 runs to it;"),
        Line::raw("F11 / F10 start at the first line, C-F10 runs to the cursor."),
    ];
    let bps: Vec<String> = d
        .breakpoints
        .iter()
        .map(|b| match (&b.condition, b.hit_count) {
            (Some(c), _) => format!("{} if {}", b.line, display_safe(c)),
            (None, Some(h)) => format!("{} from hit {h}", b.line),
            _ => b.line.to_string(),
        })
        .collect();
    let mut breaks = bps;
    breaks.extend(d.command_breaks.iter().map(|c| format!("before {c}")));
    breaks.extend(
        d.key_write_breaks
            .iter()
            .map(|k| format!("write to {}", crate::engine::reply::quote_bytes(k))),
    );
    out.push(Line::raw(if breaks.is_empty() {
        "Breakpoints: none".to_string()
    } else {
        format!("Breakpoints: {}", breaks.join(", "))
    }));
    if let Some(c) = d.coverage_for(&app.editor.sha1()) {
        let code: Vec<u32> = (1..=c.script.line_count())
            .filter(|l| c.script.has_code(*l))
            .collect();
        let ran = code.iter().filter(|l| c.counts.contains_key(l)).count();
        out.push(Line::raw(format!(
            "Last debug run: {ran} of {} code lines ran (counts in the gutter, 0 never reached)",
            code.len()
        )));
    }
    if let Some(run) = &app.last_run {
        let reply = run.report.reply.to_cli();
        let first = reply.lines().next().unwrap_or("");
        let more = if reply.lines().nth(1).is_some() {
            " …"
        } else {
            ""
        };
        out.push(Line::raw(format!(
            "Last run's reply: {}{more} (Alt-2 shows it, Alt-1 its calls)",
            display_safe(first)
        )));
    }
    if !d.console.is_empty() && height > out.len() + 1 {
        out.push(header("Console (last session)".into(), theme));
        let room = height - out.len();
        out.extend(console_lines(app, theme, room));
    }
    out
}

fn console_lines(app: &App, theme: &Theme, room: usize) -> Vec<Line<'static>> {
    let console = &app.debugger.console;
    console
        .iter()
        .skip(console.len().saturating_sub(room))
        .map(|l| {
            let style = match l.kind {
                ConsoleKind::Error => theme.error,
                ConsoleKind::Stop => theme.header,
                ConsoleKind::Note => theme.warning,
                ConsoleKind::Input => theme.text.add_modifier(Modifier::BOLD),
                _ => theme.text,
            };
            Line::styled(display_safe(&l.text).into_owned(), style)
        })
        .collect()
}

fn stopped_lines(
    app: &App,
    stop: &StopView,
    theme: &Theme,
    focused: bool,
    inner: Rect,
) -> Vec<Line<'static>> {
    let d = &app.debugger;
    let height = inner.height as usize;
    let compact = inner.height < COMPACT;
    let mut out = Vec::new();
    // An error's message, wrapped on up to three lines: it is why the script stopped.
    if let StopReason::Error { message } = &stop.reason {
        let text: Vec<char> = format!("✗ {}", display_safe(message)).chars().collect();
        let width = (inner.width as usize).max(10);
        for chunk in text.chunks(width).take(3) {
            out.push(Line::styled(chunk.iter().collect::<String>(), theme.error));
        }
    }
    // The stack, innermost first, the selected frame marked.
    if compact {
        let frames: Vec<String> = stop
            .frames
            .iter()
            .map(|f| {
                let mark = if f.index == stop.frame { "▶" } else { "" };
                format!("{mark}{}:{}", display_safe(&f.function), f.line)
            })
            .collect();
        out.push(Line::from(vec![
            Span::styled("Stack ", theme.header),
            Span::raw(frames.join(" ‹ ")),
        ]));
    } else {
        out.push(header("Stack ([ ] select a frame)".into(), theme));
        let shown = stop.frames.len().min(4);
        for f in stop.frames.iter().take(shown) {
            let selected = f.index == stop.frame;
            let style = if selected {
                theme.text.add_modifier(Modifier::BOLD)
            } else {
                theme.text
            };
            out.push(Line::styled(
                format!(
                    "{} {} {:<12} line {:<4} {}",
                    if selected { "▶" } else { " " },
                    f.index,
                    display_safe(&f.function),
                    f.line,
                    display_safe(f.source_line.trim())
                ),
                style,
            ));
        }
        if stop.frames.len() > shown {
            out.push(Line::raw(format!(
                "  … {} more frames",
                stop.frames.len() - shown
            )));
        }
    }
    // Watches.
    let mut watch_lines: Vec<Line<'static>> = stop
        .watches
        .iter()
        .enumerate()
        .map(|(i, (expr, value))| match value {
            Ok(v) => Line::raw(format!(
                "{} {} = {}",
                i + 1,
                display_safe(expr),
                display_safe(v)
            )),
            Err(e) => Line::styled(
                format!("{} {} : {}", i + 1, display_safe(expr), display_safe(e)),
                theme.error,
            ),
        })
        .collect();
    let watch_room = if compact { 1 } else { 4 };
    watch_lines.truncate(watch_room);
    let watches_h = if watch_lines.is_empty() {
        0
    } else {
        watch_lines.len() + usize::from(!compact)
    };
    // The console takes a third of what is left (at least two lines when there is room).
    let left = height.saturating_sub(out.len() + watches_h);
    let console_h = if compact {
        usize::from(left >= 4)
    } else {
        (left / 3).clamp(2, 10).min(left.saturating_sub(3)) + 1
    };
    let vars_h = left.saturating_sub(console_h);
    let frame_name = stop
        .frames
        .get(stop.frame)
        .map_or("?".into(), |f| display_safe(&f.function).into_owned());
    let mut vars = Vec::new();
    if !compact {
        vars.push(header(
            format!(
                "Variables · frame {} ({frame_name}) · Enter expands",
                stop.frame
            ),
            theme,
        ));
    }
    let rows_room = vars_h.saturating_sub(vars.len()).max(1);
    let selected = d.selected.min(stop.rows.len().saturating_sub(1));
    let first = selected.saturating_sub(rows_room.saturating_sub(1));
    if stop.rows.is_empty() {
        vars.push(Line::raw("  (no variables)"));
    }
    for (i, row) in stop.rows.iter().enumerate().skip(first).take(rows_room) {
        let indent = "  ".repeat(row.depth);
        let is_selected = i == selected;
        let mut spans = Vec::new();
        if let Some(n) = row.more {
            spans.push(Span::styled(
                format!("{indent}  … {n} more (Enter shows more)"),
                theme.line_number,
            ));
        } else {
            let arrow = match (row.var.expandable, row.expanded) {
                (true, true) => "▾ ",
                (true, false) => "▸ ",
                _ => "  ",
            };
            spans.push(Span::raw(format!(
                "{indent}{arrow}{} = {}",
                display_safe(&row.var.name),
                display_safe(&row.var.value)
            )));
            let mut notes = Vec::new();
            match row.var.kind {
                VarKind::Upvalue => notes.push("upvalue".to_string()),
                VarKind::Global => notes.push("global".to_string()),
                _ => {}
            }
            match (row.var.type_name.as_str(), row.var.len) {
                ("table", Some(1)) => notes.push("table, 1 entry".to_string()),
                ("table", Some(n)) => notes.push(format!("table, {n} entries")),
                _ => {}
            }
            if !notes.is_empty() {
                spans.push(Span::styled(
                    format!("  ({})", notes.join(", ")),
                    theme.line_number,
                ));
            }
        }
        let mut line = Line::from(spans);
        if is_selected && focused {
            line = line.style(theme.selected);
        }
        vars.push(line);
    }
    vars.truncate(vars_h);
    out.extend(vars);
    if watches_h > 0 {
        if !compact {
            out.push(header("Watches (w adds, W removes)".into(), theme));
        }
        out.extend(watch_lines);
    }
    if console_h > 0 {
        if !compact {
            out.push(header("Console (e evals in the frame)".into(), theme));
        }
        let room = console_h - usize::from(!compact);
        out.extend(console_lines(app, theme, room));
    }
    out
}

/// Extra gutter columns the debugger needs in the editor: a mark column (with breakpoints or a
/// session), and the line counts of the last debug run while the script is the one it ran. None
/// without either, so the editor looks as it always did until the debugger is used.
pub fn gutter_width(app: &App, sha: &str) -> usize {
    let d = &app.debugger;
    let counts = d.coverage_for(sha).is_some();
    let marks =
        counts || d.session.is_some() || !d.breakpoints.is_empty() || stepped_line(app).is_some();
    usize::from(marks) + if counts { COUNT_WIDTH + 1 } else { 0 }
}

const COUNT_WIDTH: usize = 4;

/// A count in at most four cells: 9999, 12k, 3.4M.
fn short_count(n: u64) -> String {
    match n {
        0..=9999 => n.to_string(),
        10_000..=999_999 => format!("{}k", n / 1000),
        _ if n < 10_000_000 => format!("{:.1}M", n as f64 / 1e6),
        _ => format!("{}M", (n / 1_000_000).min(999)),
    }
}

/// The debugger's gutter cells for `line` (1-based): a breakpoint `●` (`◆` with a condition or a
/// hit count), the stopped line `▶`; then the line's count, `0` in the error colour for a code line
/// the last debug run never reached.
pub fn gutter_spans(app: &App, sha: &str, line: u32, theme: &Theme) -> Vec<Span<'static>> {
    let d = &app.debugger;
    let stopped = d.paused_line() == Some(line) || stepped_line(app) == Some(line);
    let bp = d.breakpoint_at(line);
    let mark = match (stopped, bp) {
        (true, _) => Span::styled("▶", theme.warning.add_modifier(Modifier::BOLD)),
        (false, Some(b)) if b.condition.is_some() || b.hit_count.is_some() => {
            Span::styled("◆", theme.error)
        }
        (false, Some(_)) => Span::styled("●", theme.error),
        (false, None) => Span::raw(" "),
    };
    let mut out = vec![mark];
    if let Some(c) = d.coverage_for(sha) {
        let cell = match c.counts.get(&line) {
            Some(&n) => Span::styled(
                format!("{:>COUNT_WIDTH$} ", short_count(n)),
                theme.line_number,
            ),
            None if c.script.has_code(line) => Span::styled(
                format!("{:>COUNT_WIDTH$} ", "0"),
                theme.error.add_modifier(Modifier::BOLD),
            ),
            None => Span::raw(" ".repeat(COUNT_WIDTH + 1)),
        };
        out.push(cell);
    }
    out
}

/// The style of the line the script is stopped at.
pub fn stopped_line_style(app: &App, line: u32, theme: &Theme) -> Option<Style> {
    (app.debugger.paused_line() == Some(line) || stepped_line(app) == Some(line))
        .then(|| theme.selected.add_modifier(Modifier::BOLD))
}

/// The line of the redis.call shown while stepping through the last run (`]` / `[`): marked as a
/// debugger stop is (a gutter arrow and the line in the selection colour), not by the cursor's
/// faint background alone, which a projector loses.
fn stepped_line(app: &App) -> Option<u32> {
    let step = app.step?;
    let run = app.last_run.as_ref()?;
    run.report
        .trace
        .get(step)
        .map(|entry| entry.line)
        .filter(|&line| line > 0)
}

#[cfg(test)]
mod tests {
    use super::short_count;

    #[test]
    fn counts_fit_four_cells() {
        for (n, text) in [
            (0, "0"),
            (9999, "9999"),
            (12_345, "12k"),
            (3_400_000, "3.4M"),
            (123_000_000, "123M"),
        ] {
            assert_eq!(short_count(n), text);
            assert!(short_count(n).len() <= 4);
        }
    }
}
