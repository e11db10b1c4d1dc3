//! The Server tab's overview: INFO highlights, the running script (the server's busy
//! state, a function FUNCTION STATS names, our own live run), the last SCRIPT KILL and the slow log.

use super::block;
use crate::engine::live::overview::{SlowEntry, TRACED_SCRIPT};
use crate::tui::app::App;
use crate::tui::keyspace::fit;
use crate::tui::server::ServerView;
use crate::tui::theme::Theme;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Wrap};
use ratatui::Frame;

/// The running-script lines: what the server says, and our own live run when it is on the server.
fn running_lines(app: &App, view: &ServerView) -> Vec<String> {
    let mut lines = Vec::new();
    let state = &view.overview;
    let busy = state.data.as_ref().and_then(|(o, _)| o.busy.clone());
    match (&busy, state.busy_since) {
        (Some(text), since) => {
            let secs = since.map_or(0.0, |t| t.elapsed().as_secs_f64());
            lines.push(format!(
                "BUSY for at least {secs:.1} s: the server runs a script past its busy threshold and answers every other client: {text}"
            ));
        }
        (None, _) => lines.push("no script keeps the server busy".into()),
    }
    if let Some(f) = state.data.as_ref().and_then(|(o, _)| o.running.clone()) {
        lines.push(format!(
            "function '{}' running for {} ms: {}",
            f.name, f.duration_ms, f.command
        ));
    } else if busy.is_some() {
        lines.push(
            "Redis 7.0 does not name a running EVAL script: SCRIPT KILL (X) stops it unless it has written"
                .into(),
        );
    }
    if let Some(running) = &app.running {
        use crate::engine::live::guarded::Phase;
        if let Some((Phase::OnServer, since)) = running.phase {
            let sha = app.editor.sha1();
            lines.push(format!(
                "our live run: script {} on the server for {:.1} s (Esc sends SCRIPT KILL)",
                &sha[..sha.len().min(12)],
                since.elapsed().as_secs_f64()
            ));
        }
    }
    if let Some(answer) = &state.kill_answer {
        lines.push(format!("last SCRIPT KILL: {answer}"));
    }
    lines
}

/// The slow log's traced copies named as the user's scripts: the editor's script (or the last
/// run's) whose traced copy has the logged length, as its name and first code line; another
/// traced script as such. Computed only when the slow log holds a traced copy.
fn traced_names(app: &App, entries: &[&SlowEntry]) -> Vec<(usize, String)> {
    if entries.iter().all(|e| e.traced.is_none()) {
        return Vec::new();
    }
    let name = app
        .editor
        .path
        .as_ref()
        .and_then(|p| p.file_name())
        .map_or("untitled".to_string(), |n| n.to_string_lossy().into_owned());
    let mut scripts = vec![(name, app.editor.bytes())];
    if let Some(run) = &app.last_run {
        scripts.push(("the last run's script".into(), run.request.script.clone()));
    }
    scripts
        .into_iter()
        .filter_map(|(name, script)| {
            let copy = crate::engine::live::instrument::instrument(&script)?;
            let first = String::from_utf8_lossy(&script)
                .lines()
                .map(str::trim)
                .find(|l| !l.is_empty() && !l.starts_with("--") && !l.starts_with("#!"))
                .unwrap_or("")
                .to_string();
            let first = crate::engine::display::display_safe(&fit(&first, 60)).into_owned();
            Some((copy.text.len(), format!("‹{name}: {first}›")))
        })
        .collect()
}

/// One slow-log entry: its id, its time in readable units, the command (a traced copy named as
/// the user's script), the client.
fn slow_line(entry: &SlowEntry, names: &[(usize, String)]) -> String {
    let command = match entry
        .traced
        .and_then(|len| names.iter().find(|(l, _)| *l == len))
    {
        Some((_, name)) => entry.command.replacen(TRACED_SCRIPT, name, 1),
        None => entry.command.clone(),
    };
    format!(
        "#{:<4} {:>9}  {command}  {}",
        entry.id,
        crate::engine::value_text::micros_text(entry.micros),
        entry.client
    )
}

pub fn draw(
    frame: &mut Frame,
    area: Rect,
    app: &App,
    view: &ServerView,
    theme: &Theme,
    focused: bool,
) {
    let width = area.width.saturating_sub(2) as usize;
    let mut lines: Vec<Line> = Vec::new();
    // The selected library's lines: scrolled into view when the list is long.
    let mut keep_in_view: Option<std::ops::Range<usize>> = None;
    let header = |text: &str| Line::styled(fit(text, width), theme.header);
    let plain = |text: String| Line::styled(fit(&text, width), theme.text);
    let Some((overview, _)) = &view.overview.data else {
        let text = match &view.error {
            Some(e) => e.clone(),
            None => "Reading INFO, SLOWLOG and FUNCTION STATS…".into(),
        };
        frame.render_widget(
            Paragraph::new(text).block(block("Server overview", focused, theme)),
            area,
        );
        return;
    };
    // On a cluster the fields read first are one node's: it is named (each master follows).
    let seed_addr = overview
        .node
        .as_deref()
        .map(|n| n.split(' ').next().unwrap_or(n));
    if let Some(node) = &overview.node {
        lines.push(header(&format!("Node: {node}")));
    }
    if !overview.highlights.is_empty() {
        let parts: Vec<String> = overview
            .highlights
            .iter()
            .map(|(label, value)| format!("{label} {value}"))
            .collect();
        // As many "label value" pairs per line as fit.
        let mut line = String::new();
        for part in parts {
            if !line.is_empty() && line.chars().count() + 3 + part.chars().count() > width {
                lines.push(plain(std::mem::take(&mut line)));
            }
            if !line.is_empty() {
                line.push_str(" · ");
            }
            line.push_str(&part);
        }
        lines.push(plain(line));
    }
    for db in &overview.keyspace {
        lines.push(plain(db.clone()));
    }
    if view.overview.kept {
        lines.push(plain(
            "(INFO and SLOWLOG as read before the server turned busy)".into(),
        ));
    }
    lines.push(header("Running script"));
    // Wrapped, not cut: the BUSY text and the kill's answer say what to do.
    lines.extend(
        running_lines(app, view)
            .into_iter()
            .map(|l| Line::styled(l, theme.text)),
    );
    if let Some((libraries, total)) = &overview.libraries {
        lines.push(header(&match seed_addr {
            Some(addr) => format!("Function libraries on {addr} (FUNCTION LIST): {total}"),
            None => format!("Function libraries (FUNCTION LIST): {total}"),
        }));
        let selected = crate::tui::server_library::selected(app);
        let mut selected_lines = 0..0;
        for (i, lib) in libraries.iter().enumerate() {
            // By name: FUNCTION LIST gives a library's functions in the server's hash order.
            let mut sorted: Vec<&crate::engine::live::functions::LiveFunction> =
                lib.functions.iter().collect();
            sorted.sort_by(|a, b| a.name.cmp(&b.name));
            let functions: Vec<String> = sorted
                .iter()
                .map(|f| {
                    if f.flags.is_empty() {
                        f.name.clone()
                    } else {
                        format!("{} [{}]", f.name, f.flags.join(", "))
                    }
                })
                .collect();
            let line = crate::engine::display::display_safe(&format!(
                "{}: {}",
                lib.name,
                functions.join(", ")
            ))
            .into_owned();
            if selected != Some(i) {
                lines.push(plain(line));
                continue;
            }
            // The selected library: each function with its flags and description.
            selected_lines.start = lines.len();
            lines.push(Line::styled(fit(&line, width), theme.selected));
            for f in &sorted {
                let flags = if f.flags.is_empty() {
                    String::new()
                } else {
                    format!(" [{}]", f.flags.join(", "))
                };
                let description = f
                    .description
                    .as_ref()
                    .map_or(String::new(), |d| format!(": {d}"));
                lines.push(plain(
                    crate::engine::display::display_safe(&format!(
                        "  {}{flags}{description}",
                        f.name
                    ))
                    .into_owned(),
                ));
            }
            selected_lines.end = lines.len();
        }
        keep_in_view = Some(selected_lines);
        if libraries.len() < *total {
            lines.push(plain(format!("… {} more", total - libraries.len())));
        }
    }
    if !overview.nodes.is_empty() {
        // A cluster: each master on its own line, its libraries compared, its slow log by node.
        lines.push(header(&format!("Masters ({})", overview.nodes.len())));
        for node in &overview.nodes {
            let state = match (&node.error, &node.busy) {
                (Some(e), _) => format!("does not answer: {e}"),
                (None, Some(busy)) => busy.clone(),
                (None, None) => node
                    .highlights
                    .iter()
                    .map(|(label, value)| format!("{label} {value}"))
                    .collect::<Vec<_>>()
                    .join(" · "),
            };
            lines.push(Line::styled(
                crate::engine::display::display_safe(&format!("{}: {state}", node.node))
                    .into_owned(),
                theme.text,
            ));
        }
        let coverage = crate::engine::live::overview::library_coverage(&overview.nodes);
        if !coverage.is_empty() {
            lines.push(header("Function libraries on the masters"));
            for line in coverage {
                lines.push(plain(
                    crate::engine::display::display_safe(&line).into_owned(),
                ));
            }
            // Each master's own list, by node.
            for node in &overview.nodes {
                let addr = node.node.split(' ').next().unwrap_or("");
                let libraries = match &node.libraries {
                    Some(names) if names.is_empty() => "(none)".to_string(),
                    Some(names) => names.join(", "),
                    None => "(not answered)".to_string(),
                };
                lines.push(plain(
                    crate::engine::display::display_safe(&format!("{addr:<21} {libraries}"))
                        .into_owned(),
                ));
            }
        }
        lines.push(header("Slow log by node"));
        let mut any = false;
        let all: Vec<&SlowEntry> = overview.nodes.iter().flat_map(|n| &n.slowlog).collect();
        let names = traced_names(app, &all);
        for node in &overview.nodes {
            let addr = node.node.split(' ').next().unwrap_or("");
            for entry in &node.slowlog {
                any = true;
                lines.push(plain(format!("{addr:<21} {}", slow_line(entry, &names))));
            }
        }
        if !any {
            lines.push(plain("empty on every master".into()));
        }
    }
    let kept = overview
        .slowlog_len
        .map_or(String::new(), |n| format!(" of {n} kept"));
    // On a cluster a master's slow log is in "Slow log by node"; a replica connected to has its own.
    let seed_is_master = seed_addr.is_some_and(|addr| {
        overview
            .nodes
            .iter()
            .any(|n| n.node.split(' ').next() == Some(addr))
    });
    let seed_slowlog: &[crate::engine::live::overview::SlowEntry] = if seed_is_master {
        &[]
    } else {
        let title = match &overview.node {
            Some(node) => format!(
                "Slow log of {node} (SLOWLOG GET {}{kept})",
                crate::engine::live::overview::SLOWLOG_ENTRIES
            ),
            None => format!(
                "Slow log (SLOWLOG GET {}{kept})",
                crate::engine::live::overview::SLOWLOG_ENTRIES
            ),
        };
        lines.push(header(&title));
        if overview.slowlog.is_empty() && overview.busy.is_none() {
            lines.push(plain("empty".into()));
        }
        &overview.slowlog
    };
    let names = traced_names(app, &seed_slowlog.iter().collect::<Vec<_>>());
    for entry in seed_slowlog {
        lines.push(plain(slow_line(entry, &names)));
    }
    let title = format!(
        "Server overview · {}",
        app.live_server.as_deref().unwrap_or("live server")
    );
    let hint = if overview
        .libraries
        .as_ref()
        .is_some_and(|(l, _)| !l.is_empty())
    {
        " R: read now (every 2 s) · X: SCRIPT KILL · i: keys · ↑↓ Enter: open a library "
    } else {
        " R: read now (every 2 s) · X: SCRIPT KILL · i: keys "
    };
    let height = area.height.saturating_sub(2) as usize;
    let top = keep_in_view.map_or(0, |range| scroll_to(&lines, range, width, height));
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .scroll((top.min(u16::MAX as usize) as u16, 0))
            .block(
                block(&title, focused, theme)
                    .title_bottom(Line::from(hint).style(theme.line_number)),
            ),
        area,
    );
}

/// The first row to show so that the rows of `lines[range]` are in a pane of `height` rows:
/// 0 when they fit from the top, else the selected library's last line at the bottom (its first
/// line, when the library alone is taller than the pane). Rows count the wrapping of long lines.
fn scroll_to(lines: &[Line], range: std::ops::Range<usize>, width: usize, height: usize) -> usize {
    let rows = |line: &Line| line.width().max(1).div_ceil(width.max(1));
    let start: usize = lines[..range.start].iter().map(rows).sum();
    let end: usize = start + lines[range].iter().map(rows).sum::<usize>();
    if end <= height {
        0
    } else {
        (end - height).min(start)
    }
}
