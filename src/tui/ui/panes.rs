//! Trace, Reply and Warnings tabs.

use super::block;
use crate::engine::display::{display_bytes, display_safe};
use crate::engine::reply::Protocol;
use crate::tui::app::App;
use crate::tui::theme::Theme;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table, TableState, Wrap};
use ratatui::Frame;
use std::borrow::Cow;

/// `s` in at most `width` characters, a cut marked with `…`.
pub(super) fn shorten(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(width.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

pub fn draw_trace(frame: &mut Frame, area: Rect, app: &App, theme: &Theme, focused: bool) {
    let Some(run) = &app.last_run else {
        frame.render_widget(
            Paragraph::new("No run yet: F5 runs the script.").block(block("Trace", focused, theme)),
            area,
        );
        return;
    };
    let trace = &run.report.trace;
    let title = if app.run_is_stale() {
        // Its lines may no longer match the buffer's.
        "Trace (stale: edited since the run)"
    } else {
        "Trace"
    };
    if trace.is_empty() {
        // No call to list: why the run ended, in full (a compile error's place and words).
        let mut lines = vec![Line::raw("No redis.call in this run.")];
        if let crate::engine::Reply::Error(text) = &run.report.reply {
            let at = run
                .report
                .error_line
                .map_or(String::new(), |l| format!(" at line {l}"));
            lines.push(Line::styled(
                format!("It stopped with an error{at}:"),
                theme.error,
            ));
            lines.push(Line::styled(display_safe(text).into_owned(), theme.error));
        }
        frame.render_widget(
            Paragraph::new(lines)
                .wrap(Wrap { trim: false })
                .block(block(title, focused, theme)),
            area,
        );
        return;
    }
    // The call detail box only when there is room for the list too.
    let detail_height = if area.height >= 18 { 7 } else { 0 };
    let [list_area, detail_area] =
        Layout::vertical([Constraint::Min(3), Constraint::Length(detail_height)]).areas(area);
    // The fixed columns as wide as what they hold (a two-digit line needs no five columns);
    // the time column only where there is room (the call box says it otherwise) and the marks
    // only when a call has one. The command and the reply get the rest, each what it needs
    // when both fit, else the reply at most two fifths; text cut to its column ends in `…`.
    let inner = list_area.width.saturating_sub(2) as usize;
    let digits = |n: u64| n.max(1).ilog10() as usize + 1;
    let seq_width = (1 + digits(trace.iter().map(|e| e.seq as u64).max().unwrap_or(0))).max(3);
    let line_width = digits(trace.iter().map(|e| e.line as u64).max().unwrap_or(0)).max(4);
    let time = |e: &crate::engine::report::TraceEntry| {
        // A live run has no per-call times (no clock fine enough inside a script).
        if run.live {
            "-".to_string()
        } else {
            format!("{:.1}", e.elapsed_ns as f64 / 1000.0)
        }
    };
    let commands: Vec<String> = trace
        .iter()
        .map(|e| {
            let words: Vec<Cow<str>> = e.command.iter().map(|a| display_bytes(a)).collect();
            words.join(" ")
        })
        .collect();
    let replies: Vec<String> = trace
        .iter()
        .map(|e| display_safe(&e.reply.to_cli().replace('\n', " ")).into_owned())
        .collect();
    let undeclared = |e: &crate::engine::report::TraceEntry| {
        e.keys.iter().any(|k| !run.request.keys.contains(k))
    };
    let marks_width = if trace.iter().any(|e| e.write || undeclared(e)) {
        2
    } else {
        0
    };
    let time_width = trace
        .iter()
        .map(|e| time(e).len())
        .max()
        .unwrap_or(0)
        .max(2);
    let widest = |texts: &[String]| texts.iter().map(|t| t.chars().count()).max().unwrap_or(0);
    let (command_need, reply_need) = (widest(&commands), widest(&replies));
    let free_of = |columns: [usize; 4]| {
        let gaps = 1 + columns.iter().filter(|w| **w > 0).count();
        inner.saturating_sub(columns.iter().sum::<usize>() + gaps)
    };
    let with_time = [seq_width, line_width, time_width, marks_width];
    let show_time = inner >= 60 || command_need + reply_need <= free_of(with_time);
    let free = if show_time {
        free_of(with_time)
    } else {
        free_of([seq_width, line_width, 0, marks_width])
    };
    let reply_width = if command_need + reply_need <= free {
        // Room for both: the command four sevenths, as long as the reply keeps what it needs.
        free - command_need.max((free * 4 / 7).min(free - reply_need))
    } else {
        reply_need.min((free * 2 / 5).max(free.saturating_sub(command_need)))
    }
    // Never narrower than its title, "reply".
    .max(5)
    .min(free.saturating_sub(1).max(1));
    let command_width = free.saturating_sub(reply_width).max(1);
    let rows: Vec<Row> = trace
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let marks = format!(
                "{}{}",
                if e.write { "W" } else { " " },
                if undeclared(e) { "!" } else { " " }
            );
            let step = if app.step == Some(i) { "▶" } else { " " };
            let style = if e.reply.is_error() {
                theme.error
            } else {
                theme.text
            };
            let mut cells = vec![
                Cell::from(format!("{step}{}", e.seq)),
                Cell::from(e.line.to_string()),
                Cell::from(shorten(&commands[i], command_width)),
                Cell::from(shorten(&replies[i], reply_width)),
            ];
            if show_time {
                cells.push(Cell::from(time(e)));
            }
            if marks_width > 0 {
                cells.push(Cell::from(marks));
            }
            Row::new(cells).style(style)
        })
        .collect();
    let mut widths = vec![
        Constraint::Length(seq_width as u16),
        Constraint::Length(line_width as u16),
        Constraint::Length(command_width as u16),
        Constraint::Length(reply_width as u16),
    ];
    let mut titles = vec!["seq", "line", "command", "reply"];
    if show_time {
        widths.push(Constraint::Length(time_width as u16));
        titles.push("µs");
    }
    if marks_width > 0 {
        widths.push(Constraint::Length(marks_width as u16));
        titles.push("");
    }
    let header = Row::new(titles).style(theme.header);
    let table = Table::new(rows, widths)
        .header(header)
        .row_highlight_style(theme.selected)
        .block(block(title, focused, theme));
    let mut state = TableState::default().with_selected(Some(
        app.trace_list.selected.min(trace.len().saturating_sub(1)),
    ));
    frame.render_stateful_widget(table, list_area, &mut state);
    // The rows under the border and the header, for clicks.
    app.regions.borrow_mut().rows = Some(crate::tui::mouse::ListRows {
        area: Rect::new(
            list_area.x + 1,
            list_area.y + 2,
            list_area.width.saturating_sub(2),
            list_area.height.saturating_sub(3),
        ),
        first: state.offset(),
    });
    let detail: Vec<Line> = match trace.get(app.trace_list.selected) {
        Some(e) => vec![
            Line::from(vec![
                Span::styled("command: ", theme.header),
                Span::raw(
                    e.command
                        .iter()
                        .map(|a| crate::engine::reply::quote_bytes(a))
                        .collect::<Vec<_>>()
                        .join(" "),
                ),
            ]),
            Line::from(vec![
                Span::styled("reply:   ", theme.header),
                Span::raw(display_safe(&e.reply.to_cli().replace('\n', " | ")).into_owned()),
            ]),
            Line::from(vec![
                Span::styled("keys:    ", theme.header),
                Span::raw(
                    e.keys
                        .iter()
                        .map(|k| display_bytes(k).into_owned())
                        .collect::<Vec<_>>()
                        .join(" "),
                ),
                Span::raw(if e.write { "  (write)" } else { "" }),
            ]),
            // The list has no time column when narrow: the call's time is here.
            Line::from(vec![
                Span::styled("time:    ", theme.header),
                Span::raw(if run.live {
                    "- (a live run has no per-call times)".to_string()
                } else {
                    format!("{:.1} µs", e.elapsed_ns as f64 / 1000.0)
                }),
            ]),
        ],
        None => vec![Line::from("no calls")],
    };
    if detail_height > 0 {
        frame.render_widget(
            Paragraph::new(detail)
                .wrap(Wrap { trim: false })
                .block(block("Call", false, theme)),
            detail_area,
        );
    }
}

pub fn draw_reply(frame: &mut Frame, area: Rect, app: &App, theme: &Theme, focused: bool) {
    // The same run under a second profile, beside this one.
    let area = super::reply_compare::draw_beside(frame, area, app, theme);
    let Some(run) = &app.last_run else {
        frame.render_widget(
            Paragraph::new("No run yet.").block(block("Reply", focused, theme)),
            area,
        );
        return;
    };
    let report = &run.report;
    // A bounded preview (first elements, then "… N more"): a 10M-element reply is never
    // formatted whole on every frame.
    let shown = report.reply.preview();
    let mut lines: Vec<Line> = Vec::new();
    let section = |lines: &mut Vec<Line>, title: &str| {
        lines.push(Line::from(Span::styled(
            title.to_string(),
            theme.header.add_modifier(Modifier::BOLD),
        )))
    };
    section(&mut lines, "Lua value returned");
    lines.push(Line::from(report.lua_value.as_deref().map_or_else(
        || "(the script raised an error)".into(),
        |v| display_safe(v).into_owned(),
    )));
    section(&mut lines, "RESP2 client (redis-cli)");
    lines.extend(
        shown
            .for_protocol(Protocol::Resp2)
            .to_cli()
            .lines()
            .map(|l| Line::from(display_safe(l).into_owned())),
    );
    section(&mut lines, "RESP2 raw");
    lines.push(Line::from(format!(
        "{:?}",
        String::from_utf8_lossy(&shown.for_protocol(Protocol::Resp2).to_resp(Protocol::Resp2))
    )));
    section(&mut lines, "RESP3 client (redis-cli -3)");
    lines.extend(
        shown
            .for_protocol(Protocol::Resp3)
            .to_cli()
            .lines()
            .map(|l| Line::from(display_safe(l).into_owned())),
    );
    section(&mut lines, "RESP3 raw");
    lines.push(Line::from(format!(
        "{:?}",
        String::from_utf8_lossy(&shown.for_protocol(Protocol::Resp3).to_resp(Protocol::Resp3))
    )));
    section(&mut lines, "Conversion notes");
    if report.notes.is_empty() {
        lines.push(Line::from("none: the value converted without loss"));
    }
    lines.extend(
        report
            .notes
            .iter()
            .map(|n| Line::from(format!("- {}", display_safe(&n.to_string())))),
    );
    let paragraph = Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .block(block("Reply", focused, theme));
    let max = super::max_scroll(&paragraph, area);
    app.regions.borrow_mut().scroll_max = max;
    frame.render_widget(paragraph.scroll((app.reply_scroll.min(max), 0)), area);
}

/// What the Warnings tab lists: a compile error first (it is marked at its line in the editor
/// too), then the run's warnings, each as (kind, line, message).
pub fn listed_warnings(report: &crate::engine::RunReport) -> Vec<(&'static str, u32, String)> {
    let mut out = Vec::new();
    if let Some(line) = report.compile_error_line() {
        out.push(("compile-error", line, report.reply.to_cli()));
    }
    out.extend(
        report
            .warnings
            .iter()
            .map(|w| (w.kind.name(), w.line, w.message.clone())),
    );
    out
}

pub fn draw_warnings(frame: &mut Frame, area: Rect, app: &App, theme: &Theme, focused: bool) {
    let listed = app
        .last_run
        .as_ref()
        .map(|run| listed_warnings(&run.report));
    let lint = crate::tui::lint_diagnostics::warning_lines(app, theme); // lint while typing
    let mut lines: Vec<Line> = match &listed {
        None if !lint.is_empty() => Vec::new(),
        None => vec![Line::from("No run yet.")],
        Some(listed) if listed.is_empty() && !lint.is_empty() => Vec::new(),
        Some(listed) if listed.is_empty() => vec![Line::from("No warnings.")],
        Some(listed) => listed
            .iter()
            .map(|(kind, line, message)| {
                let at = if *line > 0 {
                    format!("line {line}: ")
                } else {
                    String::new()
                };
                Line::from(vec![
                    Span::styled(format!("[{kind}] "), theme.warning),
                    Span::raw(format!("{at}{}", display_safe(message))),
                ])
            })
            .collect(),
    };
    lines.extend(lint);
    let paragraph = Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .block(block("Warnings", focused, theme));
    let max = super::max_scroll(&paragraph, area);
    app.regions.borrow_mut().scroll_max = max;
    frame.render_widget(paragraph.scroll((app.warnings_scroll.min(max), 0)), area);
}
