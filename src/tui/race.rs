//! The Race tab's state: a race lab (engine/race) run from the editor, its outcomes per strategy,
//! and a chosen outcome's schedule replayed step by step (which client, which command, the
//! keyspace then). The editor holds either a lab file (TOML with `logic = ...`) or a script, which
//! then runs as the logic of 2 clients with the KEYS/ARGV fields and the seed keyspace.

use super::action::Action;
use super::app::{App, Effect, Tab};
use crate::engine::keyspace::json::keyspace_to_json;
use crate::engine::race::{self, lab, Lab, RaceOptions, RaceReport, Runner};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, TryRecvError};
use std::sync::Arc;

/// What the lab's thread sends: progress lines, then its end.
pub enum RaceMessage {
    Progress(String),
    Done(Box<Result<RaceReport, String>>),
}

/// A race lab running on its thread, and the flag that stops it (Esc).
pub struct RacePending {
    pub answer: Receiver<RaceMessage>,
    pub cancel: Arc<AtomicBool>,
    /// The lab that runs, kept to replay an outcome's other schedules.
    pub lab: Lab,
}

/// A lab's report and where the user is in it.
pub struct RaceView {
    pub report: RaceReport,
    /// The lab that ran, to replay another of an outcome's schedules.
    pub lab: Lab,
    /// Which of the selected outcome's listed schedules is shown (0: the first found).
    pub schedule: usize,
    /// That schedule's steps when it is not the first (replayed on choosing it).
    pub replayed: Option<Vec<race::Step>>,
    /// The rows of the outcome list: (strategy index, outcome index).
    pub rows: Vec<(usize, usize)>,
    pub selected: usize,
    /// The step shown of the selected outcome's schedule (0-based).
    pub step: usize,
}

impl RaceView {
    pub fn new(report: RaceReport, lab: Lab) -> RaceView {
        let rows = report
            .strategies
            .iter()
            .enumerate()
            .flat_map(|(s, strategy)| (0..strategy.outcomes.len()).map(move |o| (s, o)))
            .collect();
        RaceView {
            report,
            lab,
            schedule: 0,
            replayed: None,
            rows,
            selected: 0,
            step: 0,
        }
    }

    pub fn outcome(&self) -> Option<&race::Outcome> {
        let (s, o) = *self.rows.get(self.selected)?;
        self.report.strategies[s].outcomes.get(o)
    }

    /// The selected outcome's schedule shown: its clients in order and its steps.
    pub fn shown(&self) -> Option<(&[usize], &[race::Step])> {
        let outcome = self.outcome()?;
        let schedule = outcome
            .schedule_list
            .get(self.schedule)
            .map_or(&outcome.schedule[..], |s| &s[..]);
        let steps = self.replayed.as_deref().unwrap_or(&outcome.steps);
        Some((schedule, steps))
    }

    /// Show the selected outcome's next listed schedule (back to the first after the last),
    /// replayed from the seed.
    pub fn next_schedule(&mut self) -> Result<(), String> {
        let Some((s, _)) = self.rows.get(self.selected).copied() else {
            return Ok(());
        };
        let Some(outcome) = self.outcome() else {
            return Ok(());
        };
        let listed = outcome.schedule_list.len();
        if listed <= 1 {
            return Ok(());
        }
        let next = (self.schedule + 1) % listed;
        if next == 0 {
            self.schedule = 0;
            self.replayed = None;
            self.step = 0;
            return Ok(());
        }
        let order = outcome.schedule_list[next].clone();
        let strategy = self.report.strategies[s].strategy;
        let runner = Runner::new(&self.lab).map_err(|e| e.to_string())?;
        let run = race::replay_schedule(&runner, strategy, &order)?;
        self.schedule = next;
        self.replayed = Some(run.steps);
        self.step = 0;
        Ok(())
    }
}

/// A TOML file (a lab, or a test file): highlighted and checked as TOML, never as Lua.
pub fn is_toml(path: Option<&std::path::Path>) -> bool {
    path.is_some_and(|p| p.extension().is_some_and(|e| e == "toml"))
}

/// A race lab file: TOML that is not a test file (`*.test.toml`).
pub fn is_lab_file(path: Option<&std::path::Path>) -> bool {
    is_toml(path) && !path.is_some_and(|p| p.to_string_lossy().ends_with(".test.toml"))
}

/// The lab the editor describes: a lab file's text, or the script with the inputs and the seed.
fn lab_from_editor(app: &App) -> Result<Lab, String> {
    let text = app.editor.text();
    let path = app
        .editor
        .path
        .clone()
        .unwrap_or_else(|| PathBuf::from("(editor)"));
    if is_lab_file(Some(&path)) {
        return race::parse_lab(&path, &text).map_err(|e| e.to_string());
    }
    let keys = super::inputs::InputsState::values(&app.inputs.keys_text(), "KEYS")?;
    let argv = super::inputs::InputsState::values(&app.inputs.argv_text(), "ARGV")?;
    // Named by its file (the title has little room; the status bar has the path).
    let name = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    Ok(Lab {
        name,
        about: "the editor's script run by 2 clients with the KEYS and ARGV fields, on the seed"
            .into(),
        path,
        logic: text,
        logic_line: 1,
        clients: lab::MIN_CLIENTS,
        keys,
        argv,
        client_specs: Vec::new(),
        seed: keyspace_to_json(&app.seed, app.seed_now_ms),
        invariants: Vec::new(),
        max_retries: lab::DEFAULT_MAX_RETRIES,
        clock_ms: app.seed_now_ms,
    })
}

/// Run the lab the editor describes and show the Race tab.
pub fn open(app: &mut App) -> Vec<Effect> {
    match lab_from_editor(app) {
        Ok(lab) => start(app, lab),
        Err(e) => {
            app.status = format!("race lab: {e}");
            Vec::new()
        }
    }
}

/// The lab shown, run again with one client more or fewer (the Race tab's + and -).
fn rerun_with(app: &mut App, more: bool) -> Vec<Effect> {
    let Some(view) = &app.race else {
        return Vec::new();
    };
    let mut lab = view.lab.clone();
    let wanted = if more {
        lab.clients + 1
    } else {
        lab.clients.saturating_sub(1)
    };
    if !(lab::MIN_CLIENTS..=lab::MAX_CLIENTS).contains(&wanted) {
        app.status = format!(
            "race lab: {} clients already, the {} a lab runs ({} to {})",
            lab.clients,
            if more { "most" } else { "fewest" },
            lab::MIN_CLIENTS,
            lab::MAX_CLIENTS
        );
        return Vec::new();
    }
    lab.clients = wanted;
    start(app, lab)
}

/// Run `lab` on its own thread; the Race tab shows its report when it ends.
fn start(app: &mut App, lab: Lab) -> Vec<Effect> {
    if app.race_pending.is_some() {
        app.status = "race lab: still running the last one".into();
        return Vec::new();
    }
    // Off the UI thread (a lab of 8 clients runs tens of thousands of schedules); the Lua of the
    // clients is made there, as it cannot move between threads.
    let (answer, pending) = std::sync::mpsc::channel();
    let cancel = Arc::new(AtomicBool::new(false));
    let flag = cancel.clone();
    let kept = lab.clone();
    let clients = lab.clients;
    let spawned = std::thread::Builder::new()
        .name("race lab".into())
        .spawn(move || {
            let progress = answer.clone();
            let result = match Runner::with_cancel(&lab, flag) {
                Ok(runner) => race::race_with(&runner, &RaceOptions::default(), &mut |p| {
                    let _ = progress.send(RaceMessage::Progress(p.text()));
                })
                .map_err(|_| "cancelled".to_string()),
                Err(e) => Err(e.to_string()),
            };
            let _ = answer.send(RaceMessage::Done(Box::new(result)));
        });
    match spawned {
        Ok(_) => {
            app.race_pending = Some(RacePending {
                answer: pending,
                cancel,
                lab: kept,
            });
            app.status =
                format!("race lab: {clients} clients, running every interleaving… (Esc stops)");
        }
        Err(e) => app.status = format!("race lab: could not start: {e}"),
    }
    Vec::new()
}

/// Esc while a lab runs: raise its flag (the lab stops at its next step). False when none runs.
pub fn cancel(app: &mut App) -> bool {
    let Some(pending) = &app.race_pending else {
        return false;
    };
    pending.cancel.store(true, Ordering::Relaxed);
    app.status = "race lab: cancelling…".into();
    true
}

/// Take the lab's report when it is ready (called after every event and tick).
pub fn housekeeping(app: &mut App) {
    let Some(pending) = &app.race_pending else {
        return;
    };
    let result = loop {
        match pending.answer.try_recv() {
            Ok(RaceMessage::Progress(text)) => {
                if !pending.cancel.load(Ordering::Relaxed) {
                    app.status = format!("{text}… (Esc stops)");
                }
            }
            Ok(RaceMessage::Done(result)) => break *result,
            Err(TryRecvError::Empty) => return,
            Err(TryRecvError::Disconnected) => {
                break Err("the lab's thread ended without a report".into())
            }
        }
    };
    let Some(RacePending { lab, .. }) = app.race_pending.take() else {
        return;
    };
    match result {
        Ok(report) => {
            let lost: usize = report.strategies.iter().map(|s| s.lost_updates).sum();
            let errors: usize = report.strategies.iter().map(|s| s.errors).sum();
            app.status = format!(
                "race lab: {} clients, 4 strategies; {lost} schedules lose an update, {errors} end in a client's error. ↑↓ an outcome, Enter its next schedule, ] [ its steps, + - clients",
                report.clients
            );
            if let Some((id, why)) = report
                .strategies
                .iter()
                .find_map(|s| s.stopped.as_ref().map(|w| (s.strategy.id(), w)))
            {
                app.status = format!("race lab: {id}: {why}. ↑↓ an outcome, ] [ its steps");
            }
            app.race = Some(RaceView::new(report, lab));
            app.tab = Tab::Race;
            app.focus = super::app::Focus::Panes;
        }
        Err(e) => app.status = format!("race lab: {e}"),
    }
}

/// The Race tab's own keys (when it shows): choose an outcome, step through its schedule.
pub fn handles(app: &App, action: Action) -> bool {
    app.tab == Tab::Race
        && app.focus == super::app::Focus::Panes
        && matches!(
            action,
            Action::Up
                | Action::Down
                | Action::PageUp
                | Action::PageDown
                | Action::Top
                | Action::Bottom
                | Action::StepForward
                | Action::StepBack
                | Action::Select
                | Action::MoreClients
                | Action::FewerClients
        )
}

pub fn update(app: &mut App, action: Action) -> Vec<Effect> {
    match action {
        Action::MoreClients => return rerun_with(app, true),
        Action::FewerClients => return rerun_with(app, false),
        _ => {}
    }
    let Some(view) = app.race.as_mut() else {
        return Vec::new();
    };
    let rows = view.rows.len();
    let move_to = |view: &mut RaceView, to: usize| {
        if to != view.selected {
            view.selected = to;
            view.step = 0;
            view.schedule = 0;
            view.replayed = None;
        }
    };
    match action {
        Action::Up => move_to(view, view.selected.saturating_sub(1)),
        Action::Down => move_to(view, (view.selected + 1).min(rows.saturating_sub(1))),
        Action::PageUp => move_to(view, view.selected.saturating_sub(10)),
        Action::PageDown => move_to(view, (view.selected + 10).min(rows.saturating_sub(1))),
        Action::Top => move_to(view, 0),
        Action::Bottom => move_to(view, rows.saturating_sub(1)),
        Action::Select => {
            if let Err(e) = view.next_schedule() {
                app.status = format!("race lab: {e}");
            }
        }
        Action::StepForward => {
            let steps = view.shown().map_or(0, |(_, steps)| steps.len());
            view.step = (view.step + 1).min(steps.saturating_sub(1));
        }
        Action::StepBack => view.step = view.step.saturating_sub(1),
        _ => {}
    }
    Vec::new()
}

/// The selected outcome for the value inspector: how each client ended, the keyspace it ends
/// with (and the seed's, to compare).
pub fn inspect_selected(app: &App) -> Result<super::value_view::ValueView, String> {
    use super::value_view::{Part, ValueView};
    let view = app
        .race
        .as_ref()
        .ok_or("no race lab yet: Alt-8 runs the editor's script as clients")?;
    let outcome = view.outcome().ok_or("no outcome selected")?;
    let clients: Vec<String> = outcome
        .clients
        .iter()
        .map(|c| format!("client {} {}: {}", c.client, c.outcome.word(), c.result))
        .collect();
    let (s, _) = view.rows[view.selected];
    let title = format!(
        "{} outcome {}/{} ({} schedules)",
        view.report.strategies[s].strategy.id(),
        view.selected + 1,
        view.rows.len(),
        outcome.schedules
    );
    let deltas =
        crate::engine::keyspace_diff::keyspace_delta(&view.report.seed_keyspace, &outcome.keyspace);
    let changes = if deltas.is_empty() {
        "keyspace as seeded".to_string()
    } else {
        crate::engine::keyspace_diff::delta_lines(&deltas, usize::MAX).join("\n")
    };
    Ok(ValueView::new(
        title,
        vec![
            Part::text("clients", clients.join("\n")),
            Part::text("changes from the seed", changes),
            Part::json("keyspace", outcome.keyspace.clone()),
            Part::json("seed keyspace", view.report.seed_keyspace.clone()),
        ],
    ))
}
