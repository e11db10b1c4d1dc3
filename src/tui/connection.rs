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
    /// On a cluster that says `cluster_state:fail`: why, as its nodes see it (runs with keys are
    /// refused by the cluster).
    pub cluster_down: Option<String>,
    /// On a cluster, what a long script risks on a replica (`app.cluster_timeout_note` is a
    /// master's): the question picks the one for the node it names.
    pub replica_timeout_note: Option<String>,
    /// The role of the node connected to ("master", "slave"), as read on connect and, on a
    /// cluster, again at each check (a failover changes it).
    pub role: Option<String>,
}

impl ConnectionState {
    /// The server as the status bar names it: "(replica)" after it when the node connected to is
    /// one (runs there are read-only; on a cluster, runs with keys go to their slot's master).
    pub fn server_label(&self, server: &str) -> String {
        match self.role.as_deref() {
            Some(role) if role != "master" => format!("{server} (replica)"),
            _ => server.to_string(),
        }
    }
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
            // A server that went away may come back empty (a restart, a failover): its script
            // cache is unknown until asked again.
            app.script_cache = None;
        }
        (Some(_), None) => {
            state.lost = None;
            app.status = "the live server answers again".into();
            app.script_cache = None;
        }
        (Some(_), Some(e)) => state.lost = Some(e),
        (None, None) => {}
    }
}

/// The connection to the server dropped and was opened again: a restart empties the server's
/// script cache, so the cache mark is asked again rather than kept.
pub fn on_reconnect(app: &mut App) {
    app.script_cache = None;
    app.status = "the live server's connection dropped and was opened again (a restart?): its script cache is asked again".into();
}

/// The role of the node connected to, read again on a cluster: a change (a failover) is told once.
pub fn on_role(app: &mut App, role: String) {
    let state = &mut app.connection;
    if state.role.as_deref() == Some(role.as_str()) {
        return;
    }
    if state.role.is_some() {
        // Another node answers for the slots now, with a cache of its own.
        app.script_cache = None;
        app.status = if role == "master" {
            "the node connected to is a master now (a failover promoted it)".into()
        } else {
            "the node connected to is a replica now (its master was failed over): runs with keys go to their slot's master; runs without keys stay on it, read-only".into()
        };
    }
    state.role = Some(role);
}

/// The nodes of a cluster that did not answer the last check, and the cluster's own state: the
/// status bar names them, and a change is told once. Runs to the other nodes go on unless the
/// cluster says it is down (it then refuses every run with keys, on the masters that answer too).
pub fn on_nodes(app: &mut App, down: Vec<String>, cluster_down: Option<String>) {
    let state = &mut app.connection;
    if state.down == down && state.cluster_down == cluster_down {
        return;
    }
    if let Some(why) = cluster_down
        .as_ref()
        .filter(|w| state.cluster_down.as_ref() != Some(*w))
    {
        app.status = why.clone();
    } else if let (Some(first), None) =
        (down.iter().find(|d| !state.down.contains(d)), &cluster_down)
    {
        app.status =
            format!("a cluster node does not answer: {first}; runs to the other nodes go on");
    } else if cluster_down.is_none() && state.cluster_down.is_some() {
        app.status = if down.is_empty() {
            "the cluster is up again (cluster_state:ok); every node answers".into()
        } else {
            format!(
                "the cluster is up again (cluster_state:ok); {} node{} still down: runs to the other nodes go on",
                down.len(),
                if down.len() == 1 { "" } else { "s" }
            )
        };
    } else if down.is_empty() && cluster_down.is_none() {
        app.status = "every cluster node answers again".into();
    }
    state.down = down;
    state.cluster_down = cluster_down;
}

/// The live guard's y/n question as shown: on a cluster it names the node the script goes to, and a
/// dry run that was slow or did not complete also says what `cluster-node-timeout` risks.
pub fn live_send_text(
    question: &crate::engine::live::guarded::Question,
    node: Option<&str>,
    cluster_note: Option<&str>,
    replica_note: Option<&str>,
) -> String {
    use crate::engine::live::guarded::Concern;
    // "127.0.0.1:7004 (replica, no keys)": a keyless script on a replica given to connect.
    let cluster_note = match node {
        Some(n) if n.contains("(replica,") => replica_note,
        _ => cluster_note,
    };
    let mut text = question.text();
    let slow = question
        .concerns
        .iter()
        .any(|c| matches!(c, Concern::Slow { .. } | Concern::Incomplete { .. }))
        // The cluster's own clock named already.
        && !question
            .concerns
            .iter()
            .any(|c| matches!(c, Concern::NodeTimeout { .. }));
    if let (true, Some(note)) = (slow, cluster_note) {
        text = text.replacen(
            ". Nothing was sent.",
            &format!("; {note}. Nothing was sent."),
            1,
        );
    }
    if let Some(node) = node {
        text = text.replace(
            "Send it to the live server?",
            &format!("Send it to {node}?"),
        );
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::live::guarded::{Concern, Consent, Question};

    #[test]
    fn the_question_names_the_node_and_the_cluster_timeout() {
        let question = Question {
            concerns: vec![Concern::Slow {
                ms: 3000.0,
                threshold_ms: 5000,
            }],
            consent: Consent {
                slow: true,
                ..Consent::default()
            },
        };
        assert_eq!(
            live_send_text(
                &question,
                Some("127.0.0.1:7002 (master, slot 15495)"),
                Some("on this cluster MASTER NOTE"),
                Some("on this cluster REPLICA NOTE"),
            ),
            "The dry run took 3000.0 ms, 60% of the server's busy threshold of 5000 ms (the server may be slower); on this cluster MASTER NOTE. Nothing was sent. y sends it as EVAL_RO (the server refuses any write); Esc on the server sends SCRIPT KILL. Send it to 127.0.0.1:7002 (master, slot 15495)? (y/n)"
        );
        // Writes only: no word of the timeout; a standalone server: the question as it is.
        let writes = Question {
            concerns: vec![Concern::Writes(vec!["line 1: SET k v".into()])],
            consent: Consent {
                writes: true,
                ..Consent::default()
            },
        };
        assert_eq!(
            live_send_text(&writes, Some("127.0.0.1:7000 (master, slot 1)"), Some("note"), None),
            "The dry run WRITES (line 1: SET k v). Nothing was sent. y sends it with writes allowed; Esc on the server sends SCRIPT KILL. Send it to 127.0.0.1:7000 (master, slot 1)? (y/n)"
        );
        assert_eq!(live_send_text(&writes, None, None, None), writes.text());
        // A keyless script on a replica: the replica's note.
        assert!(live_send_text(
            &question,
            Some("127.0.0.1:7004 (replica, no keys)"),
            Some("on this cluster MASTER NOTE"),
            Some("on this cluster REPLICA NOTE"),
        )
        .contains("; on this cluster REPLICA NOTE. Nothing was sent."));
    }

    #[test]
    fn a_cluster_node_down_is_named_and_the_rest_stays_live() {
        use crate::tui::app::App;
        use crate::tui::config::Config;
        let mut app = App::new("", None, Config::default());
        app.set_live_server("redis 7.0.15 127.0.0.1:7000".into());
        on_health(&mut app, None);
        let down = "127.0.0.1:7001 (master, slots 5461-10922): connection refused".to_string();
        on_nodes(&mut app, vec![down.clone()], None);
        assert_eq!(
            app.status,
            format!("a cluster node does not answer: {down}; runs to the other nodes go on")
        );
        assert_eq!(
            app.backend_label(),
            format!("live redis 7.0.15 127.0.0.1:7000 guarded · 1 node down: {down}")
        );
        // The same answer again says nothing new; every node back is told once.
        app.status.clear();
        on_nodes(&mut app, vec![down.clone()], None);
        assert_eq!(app.status, "");
        on_nodes(&mut app, Vec::new(), None);
        assert_eq!(app.status, "every cluster node answers again");
        assert_eq!(
            app.backend_label(),
            "live redis 7.0.15 127.0.0.1:7000 guarded"
        );
    }

    #[test]
    fn a_cluster_that_says_it_is_down_is_not_said_to_go_on() {
        use crate::tui::app::App;
        use crate::tui::config::Config;
        let mut app = App::new("", None, Config::default());
        app.set_live_server("redis 7.0.15 127.0.0.1:7000".into());
        on_health(&mut app, None);
        let down = vec![
            "127.0.0.1:7001 (master, slots 5461-10922): connection refused".to_string(),
            "127.0.0.1:7002 (master, slots 10923-16383): connection refused".to_string(),
        ];
        // Before the cluster flags them (cluster-node-timeout), runs to the master left go on.
        on_nodes(&mut app, down.clone(), None);
        assert_eq!(
            app.status,
            format!(
                "a cluster node does not answer: {}; runs to the other nodes go on",
                down[0]
            )
        );
        let why = "the cluster is down (cluster_state:fail on 127.0.0.1:7000): ...".to_string();
        on_nodes(&mut app, down.clone(), Some(why.clone()));
        assert_eq!(app.status, why);
        assert_eq!(
            app.backend_label(),
            "live redis 7.0.15 127.0.0.1:7000 CLUSTER DOWN"
        );
        // The same again says nothing new; one master back (the cluster up) is told once.
        app.status.clear();
        on_nodes(&mut app, down.clone(), Some(why));
        assert_eq!(app.status, "");
        on_nodes(&mut app, down[1..].to_vec(), None);
        assert_eq!(
            app.status,
            "the cluster is up again (cluster_state:ok); 1 node still down: runs to the other nodes go on"
        );
        assert!(app.backend_label().contains("guarded · 1 node down"));
    }
}
