//! The Server tab's overview for on-call engineers: INFO highlights, the slow log, the
//! server's busy state and our own live run, read on demand and every few seconds while shown, and
//! SCRIPT KILL after a y/n. State and actions only: reads go out as `Effect::Inspect`.

use super::app::{App, Confirm, Effect, Overlay};
use super::inspector::InspectRequest;
use crate::engine::live::overview::Overview;
use std::time::{Duration, Instant};

/// How often the overview is read again while it is shown.
pub const REFRESH_EVERY: Duration = Duration::from_secs(2);

#[derive(Debug, Clone, Default)]
pub struct OverviewState {
    /// The overview replaces the key list and value view.
    pub shown: bool,
    /// The last answer and when it came.
    pub data: Option<(Overview, Instant)>,
    /// The first answer of the current run of BUSY answers: the server has been busy since at
    /// least then.
    pub busy_since: Option<Instant>,
    /// The INFO and SLOWLOG shown were read before the server turned busy (it answers BUSY to them).
    pub kept: bool,
    /// The last SCRIPT KILL's answer, in words.
    pub kill_answer: Option<String>,
    /// The selected function library (tui/server_library.rs).
    pub library: usize,
    pending: bool,
    next_read: Option<Instant>,
}

impl OverviewState {
    /// The read due now, if any (only while shown).
    pub fn needs(&mut self) -> Option<Effect> {
        if !self.shown || self.pending || self.next_read.is_some_and(|t| Instant::now() < t) {
            return None;
        }
        self.pending = true;
        Some(Effect::Inspect(InspectRequest::Overview))
    }

    pub fn on_overview(&mut self, mut overview: Overview) {
        let now = Instant::now();
        // A busy server answers BUSY to INFO and SLOWLOG: keep what was read before.
        self.kept = false;
        if overview.busy.is_some() && overview.highlights.is_empty() {
            if let Some((before, _)) = &self.data {
                overview.highlights = before.highlights.clone();
                overview.keyspace = before.keyspace.clone();
                overview.slowlog = before.slowlog.clone();
                overview.slowlog_len = before.slowlog_len;
                overview.libraries = before.libraries.clone();
                self.kept = !overview.highlights.is_empty();
            }
        }
        self.pending = false;
        self.next_read = Some(now + REFRESH_EVERY);
        self.busy_since = match (&overview.busy, self.busy_since) {
            (Some(_), Some(since)) => Some(since),
            (Some(_), None) => Some(now),
            (None, _) => None,
        };
        self.data = Some((overview, now));
    }

    /// The read failed (the tab shows the error): try again at the next interval.
    pub fn on_failed(&mut self) {
        self.pending = false;
        self.next_read = Some(Instant::now() + REFRESH_EVERY);
    }

    fn read_now(&mut self) {
        self.next_read = None;
    }
}

/// `i`: show the overview, or the key list again.
pub fn toggle(app: &mut App) {
    let Some(view) = app.server.as_mut() else {
        return;
    };
    let state = &mut view.overview;
    state.shown = !state.shown;
    if state.shown {
        state.read_now();
        app.status = "server overview: INFO, SLOWLOG and the busy state, read every 2 s".into();
    }
}

/// `R` while the overview is shown: read it now.
pub fn refresh(app: &mut App) {
    if let Some(view) = app.server.as_mut() {
        view.overview.read_now();
        app.status = "reading the server overview again".into();
    }
}

/// `X`: ask before sending SCRIPT KILL.
pub fn ask_kill(app: &mut App) {
    if app.server.is_some() {
        app.overlay = Some(Overlay::Confirm(Confirm::ScriptKill));
    }
}

/// The question `X` asks.
pub const KILL_QUESTION: &str = "Send SCRIPT KILL to the server? It stops the Lua script running there now (a script that has written cannot be stopped: the server answers UNKILLABLE; evalbench never sends SHUTDOWN NOSAVE). (y/n)";

/// y to the question: SCRIPT KILL goes out on a fresh connection.
pub fn kill(app: &mut App) -> Vec<Effect> {
    app.status = "sending SCRIPT KILL…".into();
    vec![Effect::Inspect(InspectRequest::ScriptKill)]
}

/// SCRIPT KILL's answer: said in the status line and the overview, which is read again.
pub fn on_killed(app: &mut App, answer: String) {
    app.status = answer.clone();
    if let Some(view) = app.server.as_mut() {
        view.overview.kill_answer = Some(answer);
        view.overview.read_now();
    }
}
