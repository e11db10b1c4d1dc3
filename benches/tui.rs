//! TUI frame times, drawn into ratatui's TestBackend (no terminal I/O is measured).
//!
//! - keystroke-to-frame: a 5,000-line Lua script, cursor on line 2,500; one key (alternately a
//!   typed 'x' and Backspace) through `App::on_key`, then a whole 200x50 frame. Target ≤ 2 ms median.
//! - composite frame: the whole 200x50 screen after a run of the bundled sample (Trace tab, and
//!   Keyspace tab), nothing changed between frames. Target ≤ 1.5 ms.
//! - first frame: in a fresh child process of this bench binary (so syntect's lazily loaded syntax
//!   set and everything else is cold): from the child's `main` to the end of its first 200x50 frame:
//!   building the App as `evalbench` does (bundled sample + sidecar), loading the theme, loading the
//!   syntax set, and drawing. Also reported: the parent's wall time from spawning the child to reading the child's
//!   "frame done" line (adds process creation, dynamic loading and the pipe). Target ≤ 25 ms.
//!
//! `cargo bench --bench tui`. The figures are printed (medians of our own samples) before
//! criterion's own runs.

use criterion::{black_box, Criterion};
use evalbench::tui::action::Action;
use evalbench::tui::app::{App, Effect, Tab};
use evalbench::tui::config::Config;
use evalbench::tui::theme::Theme;
use evalbench::tui::worker::{EngineEvent, RunResult};
use evalbench::tui::{build_app, highlight, ui, TuiOptions};
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const CHILD_ENV: &str = "EVALBENCH_TUI_FIRST_FRAME";

fn terminal() -> Terminal<TestBackend> {
    Terminal::new(TestBackend::new(200, 50)).expect("test backend")
}

/// A 5,000-line script: the sample's lines repeated (real Lua: comments, strings, calls).
fn big_script() -> String {
    let sample = include_str!("../samples/rate_limiter.lua");
    let lines: Vec<&str> = sample.lines().collect();
    (0..5000)
        .map(|i| lines[i % lines.len()])
        .collect::<Vec<_>>()
        .join("\n")
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}

/// An app on the 5,000-line script with the cursor mid-file and the first frame drawn.
fn editing_setup() -> (App, Theme, Terminal<TestBackend>) {
    let mut app = App::new(&big_script(), None, Config::default());
    let theme = Theme::dark();
    let mut term = terminal();
    term.draw(|f| ui::draw(f, &app, &theme)).expect("draw");
    app.editor.goto_line(2500);
    app.on_key(key(KeyCode::End));
    term.draw(|f| ui::draw(f, &app, &theme)).expect("draw");
    (app, theme, term)
}

/// One keystroke and the frame after it; `n` picks typing or deleting so the line stays short.
fn keystroke(app: &mut App, theme: &Theme, term: &mut Terminal<TestBackend>, n: usize) {
    let code = if n.is_multiple_of(2) {
        KeyCode::Char('x')
    } else {
        KeyCode::Backspace
    };
    app.on_key(key(code));
    // As the event loop does after each batch of keys (lint while typing waits for a pause here).
    black_box(app.housekeeping());
    term.draw(|f| ui::draw(f, app, theme)).expect("draw");
}

/// The bundled sample, run once on the engine (synchronously), its result in the app.
fn after_run() -> (App, Theme, Terminal<TestBackend>) {
    let mut app = build_app(&TuiOptions {
        files: Vec::new(),
        theme: None,
        server: None,
        profile: None,
        present: false,
    });
    let theme = Theme::dark();
    for effect in app.update(Action::Run) {
        if let Effect::Run {
            id, request, seed, ..
        } = effect
        {
            let mut sandbox = evalbench::engine::Sandbox::new();
            sandbox.config.snapshots = true;
            sandbox.set_db0(seed.clone());
            let report = sandbox.run(&request);
            let result = RunResult {
                id,
                request,
                report,
                before: seed,
                after: sandbox.keyspace().db(0).clone(),
                now_ms: sandbox.now_ms(),
                question: None,
                dry_run_ns: None,
                kill: None,
                live: false,
            };
            app.on_engine_event(EngineEvent::Finished(Box::new(result)));
        }
    }
    let term = terminal();
    (app, theme, term)
}

/// The child process: time from main to the end of the first frame, in ns, on stdout.
fn first_frame_child() {
    let start = Instant::now();
    let options = TuiOptions {
        files: Vec::new(),
        theme: None,
        server: None,
        profile: None,
        present: false,
    };
    let mut app = build_app(&options);
    let (theme, _) = Theme::load(&app.config.theme.clone(), None);
    let _ = highlight::lua_syntax();
    let mut term = terminal();
    term.draw(|f| ui::draw(f, &app, &theme)).expect("draw");
    let elapsed = start.elapsed();
    app.status.clear();
    println!("{}", elapsed.as_nanos());
}

/// Spawn the child `runs` times; (in-child times, spawn-to-frame times).
fn first_frames(runs: usize) -> (Vec<Duration>, Vec<Duration>) {
    let exe = std::env::current_exe().expect("bench binary path");
    let mut inside = Vec::new();
    let mut outside = Vec::new();
    for _ in 0..runs {
        let spawned = Instant::now();
        let mut child = Command::new(&exe)
            .env(CHILD_ENV, "1")
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn the bench binary");
        let mut line = String::new();
        if let Some(out) = child.stdout.take() {
            let _ = BufReader::new(out).read_line(&mut line);
        }
        outside.push(spawned.elapsed());
        let _ = child.wait();
        if let Ok(ns) = line.trim().parse::<u64>() {
            inside.push(Duration::from_nanos(ns));
        }
    }
    (inside, outside)
}

fn report() {
    // Cold pieces, in this process (the first call pays the load).
    let t = Instant::now();
    let _ = highlight::lua_syntax();
    let syntax_load = t.elapsed();

    let (mut app, theme, mut term) = editing_setup();
    let samples: Vec<Duration> = (0..2000)
        .map(|n| {
            let t = Instant::now();
            keystroke(&mut app, &theme, &mut term, n);
            t.elapsed()
        })
        .collect();
    let keystroke_median = median(samples);

    // Worst case: a key that changes the state of every visible line below it (the second '[' of
    // "--[[" opens a block comment), alternating with the Backspace that closes it again.
    let (mut app, theme, mut term) = editing_setup();
    app.on_key(key(KeyCode::Home));
    for c in "--[".chars() {
        app.on_key(key(KeyCode::Char(c)));
    }
    term.draw(|f| ui::draw(f, &app, &theme)).expect("draw");
    let samples: Vec<Duration> = (0..400usize)
        .map(|n| {
            let code = if n.is_multiple_of(2) {
                KeyCode::Char('[')
            } else {
                KeyCode::Backspace
            };
            let t = Instant::now();
            app.on_key(key(code));
            term.draw(|f| ui::draw(f, &app, &theme)).expect("draw");
            t.elapsed()
        })
        .collect();
    let state_changing = median(samples);

    // A jump from the top to line 2,500 of a fresh buffer: highlights every line above the view.
    let jumps: Vec<Duration> = (0..5)
        .map(|_| {
            let mut app = App::new(&big_script(), None, Config::default());
            let mut term = terminal();
            term.draw(|f| ui::draw(f, &app, &theme)).expect("draw");
            app.editor.goto_line(2500);
            let t = Instant::now();
            term.draw(|f| ui::draw(f, &app, &theme)).expect("draw");
            t.elapsed()
        })
        .collect();
    let cold_jump = median(jumps);

    let (mut app, theme, mut term) = after_run();
    let mut composite = Vec::new();
    for tab in [Tab::Trace, Tab::Keyspace] {
        app.tab = tab;
        let samples: Vec<Duration> = (0..2000)
            .map(|_| {
                let t = Instant::now();
                term.draw(|f| ui::draw(f, &app, &theme)).expect("draw");
                t.elapsed()
            })
            .collect();
        composite.push((tab, median(samples)));
    }

    let (inside, outside) = first_frames(21);

    println!("\n== evalbench TUI frame times (TestBackend 200x50, medians) ==");
    println!(
        "syntax set load (cold, this process):         {}",
        ms(syntax_load)
    );
    println!(
        "keystroke-to-frame, 5,000-line script:        {}  (target ≤ 2 ms)",
        ms(keystroke_median)
    );
    println!(
        "  same, key changing all lines below ('[['):  {}",
        ms(state_changing)
    );
    println!(
        "jump to line 2,500 of a fresh buffer (cold):  {}  (one-off: highlights 2,500 lines)",
        ms(cold_jump)
    );
    for (tab, d) in composite {
        println!(
            "composite frame after a run, {:<9} tab:    {}  (target ≤ 1.5 ms)",
            tab.title(),
            ms(d)
        );
    }
    if !inside.is_empty() {
        println!(
            "first frame, fresh process, main → frame:    {}  (target ≤ 25 ms; {} runs)",
            ms(median(inside.clone())),
            inside.len()
        );
    }
    println!(
        "first frame, spawn → frame line read:        {}",
        ms(median(outside))
    );
    println!();
}

fn benches(c: &mut Criterion) {
    let (mut app, theme, mut term) = editing_setup();
    let mut n = 0;
    c.bench_function("keystroke_to_frame_5000_lines", |b| {
        b.iter(|| {
            keystroke(&mut app, &theme, &mut term, n);
            n += 1;
        })
    });
    let (app, theme, mut term) = after_run();
    c.bench_function("composite_frame_after_run", |b| {
        b.iter(|| {
            term.draw(|f| ui::draw(f, black_box(&app), &theme))
                .expect("draw");
        })
    });
}

fn main() {
    if std::env::var_os(CHILD_ENV).is_some() {
        first_frame_child();
        return;
    }
    report();
    let mut c = Criterion::default()
        .configure_from_args()
        .measurement_time(Duration::from_secs(3));
    benches(&mut c);
    c.final_summary();
}
