//! The terminal UI. The event loop drains the queued terminal events, routes each through
//! `App`, carries out the effects (engine commands), and draws once. The terminal is restored on
//! exit and on panic (`ratatui::init`).

pub mod action;
pub mod app;
pub mod config;
pub mod editor;
pub mod files;
pub mod highlight;
pub mod inputs;
pub mod keymap;
pub mod keyspace;
pub mod theme;
pub mod ui;
pub mod worker;

use app::{App, Effect};
use ratatui::crossterm::event::{self, DisableBracketedPaste, EnableBracketedPaste};
use ratatui::crossterm::execute;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use worker::{EngineCommand, Worker};

/// How often everything typed is autosaved.
const AUTOSAVE_EVERY: Duration = Duration::from_secs(3);

pub struct TuiOptions {
    pub file: Option<PathBuf>,
    pub theme: Option<String>,
}

/// Carry out effects against the worker.
fn apply(effects: Vec<Effect>, worker: &Worker) {
    for effect in effects {
        match effect {
            Effect::Run {
                id,
                request,
                seed,
                busy_threshold_ms,
            } => worker.send(EngineCommand::Run {
                id,
                request,
                seed,
                busy_threshold_ms,
            }),
            Effect::Cancel => worker.cancel(),
            Effect::AdvanceClock { ms } => worker.send(EngineCommand::AdvanceClock { ms }),
            Effect::Quit => {}
        }
    }
}

/// Build the app for `options`: the file given, or the bundled sample.
pub fn build_app(options: &TuiOptions) -> App {
    let config = config::Config::default();
    match &options.file {
        Some(path) => {
            let mut app = App::new("", None, config);
            app.open_file(path.clone());
            app
        }
        None => {
            let mut app = App::new(
                include_str!("../../samples/rate_limiter.lua"),
                Some(PathBuf::from("samples/rate_limiter.lua")),
                config,
            );
            if let Ok(car) = serde_json::from_str::<crate::cli::Sidecar>(include_str!(
                "../../samples/rate_limiter.json"
            )) {
                app.inputs = inputs::InputsState::from_lists(&car.keys, &car.argv);
                if let Some(ks) = car.keyspace {
                    let now = std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map(|d| d.as_millis() as i64)
                        .unwrap_or(0);
                    if let Ok(db) =
                        crate::engine::keyspace::keyspace_from_json(&ks.to_string(), now)
                    {
                        app.seed = db;
                    }
                }
            }
            app
        }
    }
}

/// The theme named by `--theme`, else by the config; a problem with it goes to the status line.
fn load_theme(options: &TuiOptions, app: &mut App) -> theme::Theme {
    let name = options.theme.as_deref().unwrap_or(&app.config.theme);
    let config_dir = directories::ProjectDirs::from("", "", "evalbench")
        .map(|dirs| dirs.config_dir().to_path_buf());
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
    let worker = Worker::start();
    let mut terminal = ratatui::init();
    execute!(std::io::stdout(), EnableBracketedPaste)?;
    let mut last_autosave = Instant::now();
    let result = (|| -> anyhow::Result<()> {
        loop {
            terminal.draw(|frame| ui::draw(frame, &app, &theme))?;
            // Tick faster while a script runs (spinner, elapsed counter).
            let timeout = if app.running.is_some() {
                Duration::from_millis(50)
            } else {
                Duration::from_millis(500)
            };
            if event::poll(timeout)? {
                // Drain everything queued, then draw once.
                loop {
                    let ev = event::read()?;
                    let effects = app.on_event(&ev);
                    apply(effects, &worker);
                    if app.quit || !event::poll(Duration::ZERO)? {
                        break;
                    }
                }
            }
            while let Ok(ev) = worker.events.try_recv() {
                app.on_engine_event(ev);
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
    let _ = execute!(std::io::stdout(), DisableBracketedPaste);
    ratatui::restore();
    if app.quit && !app.editor.modified {
        files::discard_autosave();
    }
    result
}
