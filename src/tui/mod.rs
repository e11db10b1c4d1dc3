//! The terminal UI. The event loop drains the queued terminal events, routes each through
//! `App`, carries out the effects (engine commands), and draws once. The terminal is restored on
//! exit and on panic (`ratatui::init`).

pub mod action;
pub mod app;
pub mod buffer;
pub mod buffers; // several files open at once
pub mod command_prompt; // the redis> prompt of the Keyspace and Server tabs
pub mod config;
/// The live connection's state in the status bar.
pub mod connection;
pub mod debug_engine;
pub mod debugger;
pub mod editing;
pub mod editor;
pub mod export_run; // the last run as HTML / Markdown
pub mod file_actions;
pub mod files;
pub mod form_function; // the function F5 calls in a library buffer
pub mod harness;
pub mod highlight;
pub mod inputs;
pub mod inspector;
pub mod keymap;
pub mod keyspace;
pub mod lessons; // lessons in the workbench
/// Lint while typing.
pub mod lint_diagnostics;
pub mod live_function; // live FCALL and FUNCTION LOAD in the workbench
pub mod mouse;
pub mod palette;
pub mod race; // the Race tab
pub mod read_only; // read-only buffers (a server's library)
pub mod reply_compare; // the Reply tab under a second profile
pub mod server;
pub mod server_library; // a server's library opened read-only
pub mod server_overview; // the Server tab's overview
/// Tests in the workbench: save as case, the Tests tab.
pub mod tests_tab;
pub mod theme;
pub mod ui;
pub mod undo;
pub mod value_view; // the value inspector, full screen
pub mod worker;

use app::{App, Effect};
use inspector::Inspector;
use ratatui::crossterm::event::{
    self, DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
};
use ratatui::crossterm::execute;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use worker::{EngineCommand, Worker};

/// At most this many queued events are read before they are handled and a frame drawn.
const MAX_BATCH: usize = 1 << 16;

/// How often everything typed is autosaved.
const AUTOSAVE_EVERY: Duration = Duration::from_secs(3);

pub struct TuiOptions {
    /// The scripts to open, one buffer each; the first is shown.
    pub files: Vec<PathBuf>,
    pub theme: Option<String>,
    /// Run scripts on this live server (guarded) and browse its keyspace in the Server tab.
    pub server: Option<crate::engine::live::TargetSpec>,
    /// `--profile`: overrides config.toml's `profile` (a live server picks its own).
    pub profile: Option<&'static crate::engine::profile::Profile>,
    /// `--present`: start in presenter mode (ui/present.rs).
    pub present: bool,
}

/// After a request to the server, the loop ticks fast this long so the answer shows at once.
const ANSWER_WINDOW: Duration = Duration::from_secs(2);

/// Carry out effects against the worker and the live inspector; true when a request went to the
/// inspector.
pub fn apply(effects: Vec<Effect>, worker: &Worker, inspector: Option<&Inspector>) -> bool {
    let mut inspected = false;
    for effect in effects {
        match effect {
            Effect::Run {
                id,
                request,
                seed,
                busy_threshold_ms,
                consent,
                live,
                clock_ms,
                function,
            } => worker.send(match function {
                // a library's function on the live server, guarded
                Some(function) if live => EngineCommand::LiveFcall {
                    id,
                    request,
                    consent,
                    function,
                },
                // a library's function, in the sandbox
                Some(function) => EngineCommand::RunFunction {
                    id,
                    request,
                    seed,
                    busy_threshold_ms,
                    clock_ms,
                    function,
                },
                None => EngineCommand::Run {
                    id,
                    request,
                    seed,
                    busy_threshold_ms,
                    consent,
                    live,
                    clock_ms,
                },
            }),
            Effect::Inspect(request) => {
                if let Some(inspector) = inspector {
                    inspector.send(request);
                    inspected = true;
                }
            }
            // FUNCTION LOAD's plan and send, on the engine thread
            Effect::LiveFunction(job) => worker.send(EngineCommand::LiveFunction(job)),
            Effect::Cancel => worker.cancel(),
            Effect::Quit => {}
            // Copy/cut to the system clipboard: one OSC 52 write.
            Effect::Clipboard(bytes) => {
                use std::io::Write;
                let mut out = std::io::stdout();
                let _ = out.write_all(editing::osc52(&bytes).as_bytes());
                let _ = out.flush();
            }
            Effect::Debug(command) => worker.debug(command),
            Effect::Compare(job) => worker.send(EngineCommand::Compare(job)),
            Effect::RunTests(job) => job.spawn(),
            Effect::Lint(job) => job.spawn(),
        }
    }
    inspected
}

/// Build the app for `options`: the files given (the first shown), or the bundled sample. The user's config is
/// loaded here; its warnings go to the status bar.
pub fn build_app(options: &TuiOptions) -> App {
    let mut config = config::Config::load();
    if let Some(theme) = &options.theme {
        config.theme = theme.clone(); // --theme wins over the config file
    }
    let warnings = config.apply_key_overrides(&mut keymap::Keymap::default());
    let mut app = match options.files.as_slice() {
        paths @ [_, ..] => {
            // One buffer each, in order; the last opened is shown, so a question it raises (an
            // autosave to recover) is about the script on screen. Each file's status is kept.
            let mut app = App::new("", None, config);
            let mut said = Vec::new();
            for path in paths {
                app.open_file(path.clone());
                said.push(app.status.clone());
            }
            if paths.len() > 1 {
                // The keys first: a narrow status line cuts the end.
                app.status = format!(
                    "{} buffers (Ctrl-PageUp/PageDown switch, Alt-B lists them): {}",
                    paths.len(),
                    said.join("; ")
                );
            }
            app
        }
        [] => {
            // The sample of the working directory if there is one, else the built-in copy.
            let sample = PathBuf::from("samples/rate_limiter.lua");
            let source = if sample.is_file() {
                sample
            } else {
                PathBuf::from(format!("{}rate_limiter.lua", files::EMBEDDED_PREFIX))
            };
            let now = files::now_ms(0);
            match files::open_script(&source, now) {
                Ok(opened) => {
                    let mut app = App::new(&opened.text, opened.path.clone(), config);
                    // The sidecar's TTLs were read relative to `now`: the seed's time.
                    app.seed_now_ms = now;
                    app.now_ms = now;
                    if let Some(car) = opened.sidecar {
                        app.inputs = inputs::InputsState::from_lists(&car.keys, &car.argv);
                        app.seed = car.seed;
                    }
                    files::mark_clean(&app.autosave_state());
                    app
                }
                Err(e) => {
                    let mut app = App::new("", None, config);
                    app.status = e;
                    app
                }
            }
        }
    };
    app.present = options.present; // --present
    if !warnings.is_empty() {
        let warnings = warnings.join("; ");
        app.status = if !options.files.is_empty() {
            format!("{warnings} | {}", app.status)
        } else {
            warnings
        };
    }
    app
}

/// The theme named by `--theme`, else by the config; a problem with it goes to the status line.
fn load_theme(options: &TuiOptions, app: &mut App) -> theme::Theme {
    let name = options.theme.as_deref().unwrap_or(&app.config.theme);
    let config_dir = config::config_dir();
    let (theme, warnings) = theme::Theme::load(name, config_dir.as_deref());
    if let Some(w) = warnings.into_iter().next() {
        app.status = w;
    }
    theme
}

pub fn run(options: TuiOptions) -> anyhow::Result<()> {
    let mut app = build_app(&options);
    let theme = load_theme(&options, &mut app);
    app.offer_recovery();
    // Connect before the terminal is taken over, so a failure prints as one plain line.
    let (live, inspector) = match &options.server {
        Some(spec) => {
            let live = crate::engine::live::LiveBackend::connect(spec.resolve()?)?;
            // A second connection for browsing, so a long script never stalls the Server tab.
            let inspector = Inspector::start(live.target.clone())?;
            app.set_live_server(format!(
                "{} {} {}",
                live.server.product, live.server.version, live.target.display
            ));
            app.config.busy_threshold_ms = live.server.busy_threshold_ms;
            app.connection.role = Some(live.server.role.clone());
            app.cluster_timeout_note = live.server.cluster_timeout_note(false);
            app.connection.replica_timeout_note = live.server.cluster_timeout_note(true);
            app.config.profile = live.server.profile;
            if !live.server.notes.is_empty() {
                app.status = live.server.notes.join("; ");
            }
            (Some(live), Some(inspector))
        }
        None => (None, None),
    };
    let budget = (app.config.memory_limit_mb as usize).saturating_mul(1 << 20);
    // Seeds the workbench loads and race labs it runs take the same budget as its runs.
    crate::engine::budget::set_limit(budget);
    if let (Some(p), None) = (options.profile, &live) {
        app.config.profile = p;
    }
    let worker = Worker::start_with_profile(live, budget, app.config.profile);
    let mut terminal = ratatui::init();
    // Pastes arrive whole, the mouse reports to us; both are switched off again on exit and on
    // a panic (before ratatui's own hook restores the rest).
    let restore_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let _ = execute!(
            std::io::stdout(),
            DisableMouseCapture,
            DisableBracketedPaste
        );
        restore_hook(info);
    }));
    execute!(std::io::stdout(), EnableBracketedPaste, EnableMouseCapture)?;
    let mut last_autosave = Instant::now();
    let mut answer_due = None::<Instant>;
    let result = (|| -> anyhow::Result<()> {
        loop {
            terminal.draw(|frame| ui::draw(frame, &app, &theme))?;
            // Tick faster while a script runs (spinner, elapsed counter) or the server answers.
            let awaiting = answer_due.is_some_and(|due| Instant::now() < due);
            // (A script paused in the debugger waits for the user: no fast tick.)
            let running = app.running.is_some() && app.debugger.paused_line().is_none();
            let background = app.tests.running() || app.lint.busy(); // tests, lint
                                                                     // Highlighting guessed after a jump: the exact pass goes on between keys.
            let highlighting = app.editor.highlight_behind();
            let timeout = if highlighting {
                Duration::from_millis(10)
            } else if running || app.inspecting() || awaiting || background {
                Duration::from_millis(50)
            } else {
                Duration::from_millis(500)
            };
            if !event::poll(timeout)? {
                if highlighting {
                    app.editor.catch_up_highlight(Duration::from_millis(8));
                }
            } else {
                // Drain everything queued (a paste typed key by key arrives as one batch), then
                // draw once.
                let mut batch = vec![event::read()?];
                while batch.len() < MAX_BATCH && event::poll(Duration::ZERO)? {
                    batch.push(event::read()?);
                }
                for ev in editing::key_by_key_paste(&app, batch) {
                    let effects = app.on_event(&ev);
                    if apply(effects, &worker, inspector.as_ref()) {
                        answer_due = Some(Instant::now() + ANSWER_WINDOW);
                    }
                    if app.quit {
                        break;
                    }
                }
            }
            while let Ok(ev) = worker.events.try_recv() {
                app.on_engine_event(ev);
            }
            if let Some(inspector) = &inspector {
                while let Ok(ev) = inspector.events.try_recv() {
                    app.on_inspect_event(ev);
                }
            }
            if apply(app.housekeeping(), &worker, inspector.as_ref()) {
                answer_due = Some(Instant::now() + ANSWER_WINDOW);
            }
            if last_autosave.elapsed() >= AUTOSAVE_EVERY {
                app.autosave();
                last_autosave = Instant::now();
            }
            if app.quit {
                break;
            }
        }
        Ok(())
    })();
    app.autosave();
    let _ = execute!(
        std::io::stdout(),
        DisableMouseCapture,
        DisableBracketedPaste
    );
    ratatui::restore();
    if app.quit && !app.editor.modified {
        files::discard_autosave(app.autosave_slot());
    }
    result
}
