//! The guarded FCALL on a live server and its report: `function call`, and `run --function
//! --server` once the server's library is the file's.

use super::report::render_text;
use super::{CliError, EXIT_BACKEND, EXIT_ERROR_REPLY, EXIT_OK};
use crate::engine::display::display_text;
use crate::engine::live::fcall::{guarded_fcall, sends_read_only, server_function_for};
use crate::engine::live::guarded::{describe_concern, Consent, GuardedRun};
use crate::engine::live::LiveBackend;
use crate::engine::reply::Reply;
use crate::engine::{FunctionCall, Protocol, RunRequest};
use serde_json::json;

pub fn server_line(live: &LiveBackend) -> String {
    format!("{} ({})", live.target.display, live.server.summary())
}

pub fn protocol(resp: u8) -> Protocol {
    if resp == 3 {
        Protocol::Resp3
    } else {
        Protocol::Resp2
    }
}

/// The guarded FCALL and its report (text or JSON); `--yes` answers the guard's question.
pub fn live_call(
    live: &mut LiveBackend,
    call: &FunctionCall,
    yes: bool,
    json: bool,
    request: Option<&RunRequest>,
) -> Result<(i32, String), CliError> {
    let now = crate::engine::clock::Clock::now_ms(&crate::engine::clock::SystemClock);
    // Ctrl-C: nothing is sent before the call reaches the server; FUNCTION KILL once it runs there.
    let control = crate::cli::common::interrupt::watch(live);
    control.begin(&call.keys);
    let mut run: GuardedRun = guarded_fcall(live, call, &Consent::default(), &control, now);
    crate::cli::common::interrupt::finish()?;
    if let Some(question) = run.question.take() {
        if !yes {
            let concerns: Vec<String> = question.concerns.iter().map(describe_concern).collect();
            return Err(CliError::input(format!(
                "refused: {}.\nNothing was sent to {}. Rerun with --yes to send it.",
                concerns.join("; "),
                live.target.display
            )));
        }
        control.begin(&call.keys);
        run = guarded_fcall(live, call, &question.consent, &control, now);
        crate::cli::common::interrupt::finish()?;
    }
    let report = run.report;
    if !run.sent {
        let text = match &report.reply {
            Reply::Error(e) => e.strip_prefix("evalbench: ").unwrap_or(e).to_string(),
            other => other.to_cli(),
        };
        return Err(CliError::input(text));
    }
    if let Reply::Error(e) = &report.reply {
        if let Some(lost) = e.strip_prefix("evalbench: ") {
            return Err(CliError {
                code: EXIT_BACKEND,
                message: lost.to_string(),
            });
        }
    }
    // The function and its library as the server has them (read before the call).
    let function = server_function_for(live, &call.name, &call.keys)
        .ok()
        .flatten();
    let read_only = function
        .as_ref()
        .is_some_and(|f| sends_read_only(live, call, f));
    let mode = if read_only { "FCALL_RO" } else { "FCALL" };
    let library = function
        .as_ref()
        .map(|f| f.library.clone())
        .unwrap_or_default();
    let fname = function
        .as_ref()
        .map_or(call.name.clone(), |f| f.name.clone());
    let trace_source = if report.trace.is_empty() {
        "none (the server's reply differs from the dry run's, or no call was made)"
    } else {
        "the dry run's in the sandbox on a copy of KEYS (the server replied the same)"
    };
    let code = if report.is_error() {
        EXIT_ERROR_REPLY
    } else {
        EXIT_OK
    };
    let server = server_line(live);
    if json {
        let mut obj = report.to_json();
        obj["backend"] = json!("live");
        obj["server"] = json!(server);
        obj["function"] = json!(fname);
        obj["library"] = json!(library);
        obj["mode"] = json!(mode);
        obj["trace_source"] = json!(if report.trace.is_empty() {
            "none"
        } else {
            "dry-run"
        });
        return Ok((
            code,
            serde_json::to_string_pretty(&obj).expect("JSON") + "\n",
        ));
    }
    let request = request.cloned().unwrap_or_else(|| RunRequest {
        script: function
            .as_ref()
            .map(|f| f.code.clone())
            .unwrap_or_default(),
        keys: call.keys.clone(),
        argv: call.argv.clone(),
        protocol: call.protocol,
        read_only: call.read_only,
    });
    let mut text = format!(
        "backend: live\nserver: {server}\nfunction: {fname} of library {library} ({mode})\ntrace: {trace_source}\n"
    );
    text.push_str(&render_text(&report, &request));
    Ok((code, display_text(&text).into_owned()))
}
