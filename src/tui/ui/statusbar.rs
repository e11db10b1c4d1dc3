//! The status bar: backend, profile, file, SHA1, time against the busy threshold, key hints.

use crate::engine::display::display_safe;
use crate::tui::app::App;
use crate::tui::keymap::Context;
use crate::tui::theme::Theme;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

pub fn draw(frame: &mut Frame, area: Rect, app: &App, theme: &Theme) {
    let sha = app.editor.sha1();
    let threshold = app.config.busy_threshold_ms;
    // Elapsed time against the busy threshold as a bar: a full bar means the script was stopped.
    let fraction = match (&app.running, &app.last_run) {
        (Some(_), _) if threshold > 0 && app.debugger.stop().is_some() => {
            app.debugger.stop().map_or(0, |s| s.active_ns) as f64 / 1e6 / threshold as f64
        }
        // A live run: the time of the phase it is in (the dry run, then the server's).
        (Some(r), _) if threshold > 0 => {
            let since = r.phase.map_or(r.started, |(_, since)| since);
            since.elapsed().as_secs_f64() * 1000.0 / threshold as f64
        }
        (None, Some(run)) => run.report.threshold_ratio(),
        _ => 0.0,
    };
    let filled = ((fraction.clamp(0.0, 1.0) * 10.0).round() as usize).min(10);
    let bar = format!("[{}{}]", "█".repeat(filled), "░".repeat(10 - filled));
    let debug_stop = app.debugger.stop().filter(|_| app.running.is_some());
    let gauge = match (&app.running, &app.last_run) {
        // Debugging: the script's own time (stops excluded), as the busy threshold counts it.
        (Some(_), _) if debug_stop.is_some() => format!(
            "debug {:.3} ms / {} ms",
            debug_stop.map_or(0, |s| s.active_ns) as f64 / 1e6,
            threshold
        ),
        (Some(r), _) => running_gauge(r, threshold),
        (None, Some(run)) => {
            let gauge = format!(
                "{:.3} ms / {} ms ({:.2}%)",
                run.report.elapsed_ns as f64 / 1e6,
                threshold,
                run.report.threshold_ratio() * 100.0
            );
            // A live run: server time against the threshold, then the client's round trip.
            let gauge = match run.report.round_trip_ns {
                Some(rt) => format!("{gauge} rtt {:.3} ms", rt as f64 / 1e6),
                None => gauge,
            };
            match run.dry_run_ns {
                Some(dry) => format!("{gauge} · dry run {:.3} ms", dry as f64 / 1e6),
                None => gauge,
            }
        }
        _ => format!("- / {threshold} ms"),
    };
    let file = app
        .editor
        .path
        .as_ref()
        .map_or("untitled".to_string(), |p| {
            display_safe(&p.display().to_string()).into_owned()
        });
    let first = Line::from(vec![
        Span::styled(
            format!(" {} ", display_safe(&app.backend_label())),
            // A server gone away stands out until it is back.
            if app.connection.lost.is_some() {
                theme.error
            } else {
                theme.header
            },
        ),
        Span::styled(
            bar,
            if fraction >= 1.0 {
                theme.error
            } else {
                theme.text
            },
        ),
        Span::raw(format!(" {} ", app.config.profile.display_name())),
        Span::raw(format!(
            " {file}{} ",
            if app.editor.modified { " *" } else { "" }
        )),
        Span::raw(format!(" sha {}{} ", &sha[..8], cache_mark(app, &sha))),
        Span::styled(format!(" {gauge} "), theme.text),
    ]);
    let context = app.context();
    let mut hints = Vec::new();
    for ctx in [context, Context::Global] {
        for b in app.keymap.bindings.iter().filter(|b| b.context == ctx) {
            let key = crate::tui::keymap::format_key(&b.key);
            if hints.len() < 8 && !hints.iter().any(|(_, a)| *a == b.action) {
                hints.push((key, b.action));
            }
        }
    }
    // The last message first (the feedback of the last action), then the focused pane's keys.
    let mut second = vec![
        Span::styled(
            format!(" {}", display_safe(&app.status)),
            theme.text.add_modifier(Modifier::BOLD),
        ),
        Span::raw(" │"),
    ];
    let hint_spans = hints.iter().flat_map(|(k, a)| {
        [
            Span::styled(format!(" {k}"), theme.header),
            Span::raw(format!(" {}", a.name())),
        ]
    });
    second.extend(hint_spans);
    frame.render_widget(Paragraph::new(vec![first, Line::from(second)]), area);
}

/// Whether the live server's script cache holds the script (what an application's EVALSHA needs);
/// nothing in the sandbox.
fn cache_mark(app: &App, sha: &str) -> &'static str {
    if app.live_server.is_none() {
        return "";
    }
    match &app.script_cache {
        Some((s, Some(cached))) if s == sha && cached.script => " cached",
        Some((s, Some(_))) if s == sha => " not cached (F8 loads)",
        _ => " cache ?",
    }
}

/// The counter of a run in progress; a live run's names its phase, and once on the server also how
/// long the dry run took ("on the server 0.3 s / 5000 ms · dry run 1.2 s").
fn running_gauge(r: &crate::tui::app::Running, threshold: u64) -> String {
    use crate::engine::live::guarded::Phase;
    let Some((phase, since)) = r.phase else {
        return format!(
            "running {:.1} s / {} ms",
            r.started.elapsed().as_secs_f64(),
            threshold
        );
    };
    let gauge = format!(
        "{} {:.1} s / {} ms",
        phase.label(),
        since.elapsed().as_secs_f64(),
        threshold
    );
    match (phase, r.dry_run) {
        (Phase::OnServer, Some(dry)) => format!("{gauge} · dry run {:.1} s", dry.as_secs_f64()),
        _ => gauge,
    }
}
