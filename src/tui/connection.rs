//! The live server's connection state in the status bar: a PING on the inspector's connection
//! every few seconds (more often while the server is away), so a server that goes away shows as
//! disconnected until it answers again. The inspector's connection reconnects by itself.

use super::app::{App, Effect};
use super::inspector::InspectRequest;
use std::time::{Duration, Instant};

/// How often the connection is checked while the server answers, and while it does not.
pub const CHECK_EVERY: Duration = Duration::from_secs(5);
pub const CHECK_EVERY_WHILE_AWAY: Duration = Duration::from_secs(2);

/// Where the live connection is.
#[derive(Debug, Clone, Default)]
pub struct ConnectionState {
    /// The server did not answer the last check: what went wrong (None: connected).
    pub lost: Option<String>,
    /// When the next check is due (None: as soon as possible).
    pub next_check: Option<Instant>,
    /// A check is on its way.
    pub pending: bool,
    /// On a cluster that answers: the nodes that did not (each "host:port (role, slots): why").
    pub down: Vec<String>,
}

impl ConnectionState {
    /// Check at the next housekeeping (after a live run, or when a test asks).
    pub fn check_now(&mut self) {
        self.next_check = None;
    }
}

/// The PING due now, if any (with a live server only).
pub fn housekeeping(app: &mut App) -> Option<Effect> {
    app.server.as_ref()?;
    let state = &mut app.connection;
    if state.pending || state.next_check.is_some_and(|due| Instant::now() < due) {
        return None;
    }
    state.pending = true;
    Some(Effect::Inspect(InspectRequest::Ping))
}

/// The answer of a PING: `error` is None when the server answered.
pub fn on_health(app: &mut App, error: Option<String>) {
    let state = &mut app.connection;
    state.pending = false;
    let every = if error.is_some() {
        CHECK_EVERY_WHILE_AWAY
    } else {
        CHECK_EVERY
    };
    state.next_check = Some(Instant::now() + every);
    match (&state.lost, error) {
        (None, Some(e)) => {
            app.status = format!("the live server does not answer: {e}");
            state.lost = Some(e);
        }
        (Some(_), None) => {
            state.lost = None;
            app.status = "the live server answers again".into();
        }
        (Some(_), Some(e)) => state.lost = Some(e),
        (None, None) => {}
    }
}

/// The nodes of a cluster that did not answer the last check: the status bar names them (runs to
/// the other nodes go on), and a change is told once.
pub fn on_nodes(app: &mut App, down: Vec<String>) {
    let state = &mut app.connection;
    if state.down == down {
        return;
    }
    if let Some(first) = down.iter().find(|d| !state.down.contains(d)) {
        app.status =
            format!("a cluster node does not answer: {first}; runs to the other nodes go on");
    } else if down.is_empty() {
        app.status = "every cluster node answers again".into();
    }
    state.down = down;
}
