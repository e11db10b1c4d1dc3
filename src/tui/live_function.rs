//! The workbench on a live server's Functions. F5 on a library buffer runs the guarded
//! FCALL of the server's function (engine/live/fcall.rs) when the server's library holding it has
//! the editor's code: the same consent dialog, phases and Esc as a live EVAL, the server's reply with
//! the dry run's trace in the Reply and Trace tabs. Alt-U plans FUNCTION LOAD [REPLACE] of the
//! editor's library (engine/live/function_load.rs), shows what changes and the code's diff, and
//! loads it on y (Esc or n: nothing is sent). The engine thread owns the live connection: both go
//! there as jobs.

use super::app::{App, Confirm, Effect, Overlay};
use super::worker::RunResult;
use crate::engine::keyspace::Db;
use crate::engine::live::fcall::{guarded_fcall, question_text, server_function_for};
use crate::engine::live::function_load::{
    load, load_every_master, masters_with, plan_load, LoadPlan,
};
use crate::engine::live::guarded::{Consent, Question, RunControl};
use crate::engine::live::LiveBackend;
use crate::engine::reply::Reply;
use crate::engine::report::Outcome;
use crate::engine::{FunctionCall, RunReport, RunRequest};
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use ratatui::Frame;

/// Work for the engine thread, which holds the live connection.
#[derive(Debug)]
pub enum LiveFunctionJob {
    /// What loading this library would change.
    Plan { code: Vec<u8>, label: String },
    /// Load it (the user said y to the plan).
    Load { code: Vec<u8>, plan: Box<LoadPlan> },
}

/// The engine thread's answer to a job.
pub enum LiveFunctionAnswer {
    Planned {
        code: Vec<u8>,
        plan: Result<Box<LoadPlan>, String>,
    },
    Loaded {
        library: String,
        answer: Result<Reply, String>,
    },
    /// On a cluster: each master's answer in words ("127.0.0.1:7000 (master, slots 0-5460):
    /// loaded counters"), and whether any failed; Err: nothing was sent.
    LoadedOnMasters {
        library: String,
        answers: Result<(Vec<String>, bool), String>,
    },
}

/// Carry out a job on the live connection (None: the workbench is not on a live server).
pub fn run_job(live: Option<&mut LiveBackend>, job: LiveFunctionJob) -> LiveFunctionAnswer {
    let Some(live) = live else {
        let why = "not connected to a live server".to_string();
        return match job {
            LiveFunctionJob::Plan { code, .. } => LiveFunctionAnswer::Planned {
                code,
                plan: Err(why),
            },
            LiveFunctionJob::Load { plan, .. } => LiveFunctionAnswer::Loaded {
                library: plan.library,
                answer: Err(why),
            },
        };
    };
    match job {
        LiveFunctionJob::Plan { code, label } => {
            // On a cluster each master has its own libraries: the load goes to every master, and
            // the plan says what each has.
            let plan = plan_load(live, &code, &label).and_then(|mut plan| {
                if live.server.cluster {
                    plan.masters = masters_with(live, &plan.library, &code)?;
                }
                Ok(plan)
            });
            let plan = plan.map(Box::new).map_err(|e| e.to_string());
            LiveFunctionAnswer::Planned { code, plan }
        }
        LiveFunctionJob::Load { code, plan } if !plan.masters.is_empty() => {
            let replace = plan.masters.iter().any(|m| m.exists);
            LiveFunctionAnswer::LoadedOnMasters {
                answers: load_every_master(live, &plan.library, &code, replace)
                    .map(|loads| {
                        let failed = loads.iter().any(|l| l.failed());
                        let said = loads
                            .iter()
                            .map(|l| format!("{}: {}", l.node, l.describe()))
                            .collect();
                        (said, failed)
                    })
                    .map_err(|e| e.to_string()),
                library: plan.library,
            }
        }
        LiveFunctionJob::Load { code, plan } => LiveFunctionAnswer::Loaded {
            answer: load(live, &plan, &code, plan.exists).map_err(|e| e.to_string()),
            library: plan.library,
        },
    }
}

/// A refusal before anything is sent, as a run's result (the Reply tab shows it).
fn refused(id: u64, request: RunRequest, live: &LiveBackend, text: String) -> RunResult {
    let mut report = RunReport::refused(
        String::new(),
        text,
        live.protocol(),
        live.server.busy_threshold_ms,
    );
    report.outcome = Outcome::Refused;
    RunResult {
        id,
        request,
        report,
        before: Db::new(),
        after: Db::new(),
        now_ms: crate::engine::clock::Clock::now_ms(&crate::engine::clock::SystemClock),
        question: None,
        live: false,
        dry_run_ns: None,
        kill: None,
    }
}

/// F5 on a library with a live backend: the guarded FCALL of the server's `function`, when the
/// server's library holding it is the editor's (`request.script`).
pub fn run_live_fcall(
    live: &mut LiveBackend,
    id: u64,
    request: RunRequest,
    consent: &Consent,
    control: &RunControl,
    function: &str,
) -> RunResult {
    match server_function_for(live, function, &request.keys) {
        Ok(Some(f)) if f.code == request.script => {}
        Ok(Some(f)) => {
            let text = format!(
                "evalbench: not sent: the server's library {} (which holds {}) differs from the editor's: Alt-U loads the editor's to the server (it shows what changes first)",
                f.library, f.name
            );
            return refused(id, request, live, text);
        }
        Ok(None) => {
            let text = format!(
                "evalbench: not sent: the server has no function named {function}: Alt-U loads the editor's library to the server (it shows what changes first)"
            );
            return refused(id, request, live, text);
        }
        Err(e) => return refused(id, request, live, format!("evalbench: not sent: {e}")),
    }
    let call = FunctionCall {
        name: function.to_string(),
        keys: request.keys.clone(),
        argv: request.argv.clone(),
        protocol: request.protocol,
        read_only: request.read_only,
    };
    let now = crate::engine::clock::Clock::now_ms(&crate::engine::clock::SystemClock);
    control.begin(&call.keys);
    let run = guarded_fcall(live, &call, consent, control, now);
    let kill = control.kill_answer(std::time::Duration::from_secs(3));
    RunResult::of_guarded(id, request, run, now, kill)
}

/// The guard asked about a live FCALL: the dialog names FCALL/FCALL_RO and the function.
pub fn ask(app: &mut App, request: RunRequest, question: Question, function: String) {
    app.overlay = Some(Overlay::Confirm(Confirm::LiveFcall(
        Box::new(request),
        Box::new(question),
        function,
    )));
}

/// The text of that dialog.
pub fn dialog_text(question: &Question, function: &str) -> String {
    question_text(question, function)
}

/// y in the dialog: the same FCALL again with the consent given.
pub fn send_with_consent(
    app: &mut App,
    request: RunRequest,
    question: Question,
    function: String,
) -> Vec<Effect> {
    app.live_function = Some(function.clone());
    let mut effects = app.rerun(request, question.consent);
    if let Some(Effect::Run { function: f, .. }) = effects.first_mut() {
        *f = Some(function);
    }
    effects
}

/// Alt-U: plan loading the editor's library to the live server.
pub fn start_load(app: &mut App) -> Vec<Effect> {
    if !app.use_live {
        app.status = "Alt-U loads a library to a live server: start evalbench with --server URL (F7 switches to it when connected)".into();
        return Vec::new();
    }
    let code = app.editor.bytes();
    if super::form_function::for_run(app).is_none() {
        app.status =
            "Alt-U loads a function library (#!lua name=...): the editor holds a script".into();
        return Vec::new();
    }
    let label = app
        .editor
        .path
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "the editor".into());
    app.status = "reading the server's library to show what changes…".into();
    vec![Effect::LiveFunction(LiveFunctionJob::Plan { code, label })]
}

/// The engine thread answered a job.
pub fn on_answer(app: &mut App, answer: LiveFunctionAnswer) {
    match answer {
        LiveFunctionAnswer::Planned { plan: Err(e), .. } => {
            app.status = format!("not loaded: {e}");
        }
        LiveFunctionAnswer::Planned {
            code,
            plan: Ok(plan),
        } => {
            if !plan.masters.is_empty() && plan.masters.iter().all(|m| m.same_code) {
                app.status = format!(
                    "nothing to load: every master's library {} has the editor's code ({} masters)",
                    plan.library,
                    plan.masters.len()
                );
                return;
            }
            if plan.same_code && plan.masters.is_empty() {
                app.status = format!(
                    "nothing to load: the server's library {} has the editor's code",
                    plan.library
                );
                return;
            }
            app.status = "nothing was sent: FUNCTION LOAD asks first (y/n)".into();
            app.overlay = Some(Overlay::Confirm(Confirm::LoadLibrary(Box::new((
                code, *plan,
            )))));
        }
        LiveFunctionAnswer::Loaded { library, answer } => {
            app.status = match answer {
                Ok(Reply::Bulk(name)) => format!(
                    "loaded library {} to the server",
                    String::from_utf8_lossy(&name)
                ),
                Ok(other) => format!(
                    "the server refused the library {library}: {}",
                    other.to_cli()
                ),
                Err(e) => format!("library {library} not loaded: {e}"),
            };
        }
        LiveFunctionAnswer::LoadedOnMasters { library, answers } => {
            app.status = match answers {
                Ok((said, false)) => format!("library {library}: {}", said.join("; ")),
                Ok((said, true)) => format!(
                    "library {library} not loaded on every master: {}",
                    said.join("; ")
                ),
                Err(e) => format!("library {library} not loaded: {e}"),
            };
        }
    }
}

/// y to the load plan: send FUNCTION LOAD [REPLACE].
pub fn confirm_load(app: &mut App, code: Vec<u8>, plan: LoadPlan) -> Vec<Effect> {
    app.status = if plan.masters.is_empty() {
        format!("loading library {} to the server…", plan.library)
    } else {
        format!("loading library {} on every master…", plan.library)
    };
    vec![Effect::LiveFunction(LiveFunctionJob::Load {
        code,
        plan: Box::new(plan),
    })]
}

/// The question shown with the plan (its last line).
pub fn load_question(plan: &LoadPlan) -> String {
    if !plan.masters.is_empty() {
        let to = plan.masters.iter().filter(|m| !m.same_code).count();
        return format!(
            "y sends FUNCTION LOAD{} to the {to} master{} without this code (one y for all); n or Esc: nothing is sent.",
            if plan.masters.iter().any(|m| m.exists) {
                " REPLACE"
            } else {
                ""
            },
            if to == 1 { "" } else { "s" }
        );
    }
    format!(
        "y sends FUNCTION LOAD{} to the server; n or Esc: nothing is sent.",
        if plan.exists { " REPLACE" } else { "" }
    )
}

/// The load plan's dialog: what changes, the diff (as many lines as fit), the question.
pub fn draw_plan(frame: &mut Frame, area: Rect, plan: &LoadPlan, border: Style) {
    let mut summary = plan.summary();
    if !plan.masters.is_empty() {
        // Each master's state first: the diff is against the first master's library.
        let states: String = plan
            .masters
            .iter()
            .map(|m| format!("  {}\n", m.describe()))
            .collect();
        summary = format!(
            "on {} masters (the changes below are the first's):\n{states}{summary}",
            plan.masters.len()
        );
    }
    let mut lines: Vec<String> = summary
        .lines()
        .map(|l| crate::engine::display::display_safe(l).into_owned())
        .collect();
    let width = area.width.saturating_sub(4).clamp(20, 100);
    let height = area.height.saturating_sub(2).max(5);
    // Room for the border, a blank line and the question.
    let room = height.saturating_sub(4) as usize;
    if lines.len() > room {
        let more = lines.len() - room + 1;
        lines.truncate(room.saturating_sub(1));
        lines.push(format!(
            "… {more} more lines (evalbench function load shows them all)"
        ));
    }
    lines.push(String::new());
    lines.push(load_question(plan));
    let rows = lines.len() as u16 + 2;
    let rect = Rect {
        x: area.x + (area.width.saturating_sub(width + 2)) / 2,
        y: area.y + (area.height.saturating_sub(rows)) / 2,
        width: (width + 2).min(area.width),
        height: rows.min(area.height),
    };
    frame.render_widget(Clear, rect);
    let text: Vec<Line> = lines.into_iter().map(Line::from).collect();
    frame.render_widget(
        Paragraph::new(text).block(
            Block::default()
                .borders(Borders::ALL)
                .border_style(border)
                .title("Load library to the server"),
        ),
        rect,
    );
}
