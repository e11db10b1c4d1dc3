//! The on-call engineer's view of a live server: INFO highlights, the slow log and whether a
//! script keeps the server busy. Bounded reads only (SLOWLOG GET with a count); nothing is written.
//! Redis 7.0 names no running EVAL script while it runs (every command but SCRIPT KILL, SHUTDOWN and,
//! for a function, FUNCTION STATS answers BUSY): the overview says what the server can tell.

use super::{LiveBackend, LiveError};
use crate::engine::reply::Reply;

/// Slow-log entries read per refresh.
pub const SLOWLOG_ENTRIES: usize = 10;
/// A slow-log command is shown up to this many characters.
const SLOWLOG_COMMAND_CHARS: usize = 200;

/// The INFO fields shown, in order, with their labels.
const HIGHLIGHTS: &[(&str, &str)] = &[
    ("redis_version", "version"),
    ("role", "role"),
    ("uptime_in_seconds", "uptime"),
    ("used_memory_human", "used memory"),
    ("maxmemory_human", "maxmemory"),
    ("connected_clients", "clients"),
    ("blocked_clients", "blocked clients"),
    ("instantaneous_ops_per_sec", "ops/sec"),
    ("total_commands_processed", "commands"),
];

/// One SLOWLOG GET entry.
#[derive(Debug, Clone, PartialEq)]
pub struct SlowEntry {
    pub id: i64,
    /// Unix time the command started.
    pub started: i64,
    pub micros: i64,
    /// The command and its arguments as the server logged them (it shortens long ones itself).
    pub command: String,
    pub client: String,
    /// An EVAL of a copy evalbench traced (its prelude first): the copy's length in bytes, which
    /// tells which script it was (the slow log keeps only the first 128 bytes of it). `command`
    /// shows `TRACED_SCRIPT` in its place.
    pub traced: Option<usize>,
}

/// What the slow log shows in place of the traced copy of a script (its prelude is evalbench's,
/// not the user's).
pub const TRACED_SCRIPT: &str = "‹a script traced by evalbench›";

/// A function the server runs now (FUNCTION STATS answers while one is busy).
#[derive(Debug, Clone, PartialEq)]
pub struct RunningFunction {
    pub name: String,
    pub command: String,
    pub duration_ms: i64,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Overview {
    /// (label, value) of the INFO fields the server reported.
    pub highlights: Vec<(String, String)>,
    /// The INFO keyspace lines ("db0: keys=3,expires=0,avg_ttl=0").
    pub keyspace: Vec<String>,
    pub slowlog: Vec<SlowEntry>,
    /// SLOWLOG LEN: the entries the server keeps.
    pub slowlog_len: Option<i64>,
    /// The server's BUSY reply: a script (or function) runs past the busy threshold.
    pub busy: Option<String>,
    /// The function running now, when the server can name it.
    pub running: Option<RunningFunction>,
    /// FUNCTION LIST (without code): the libraries by name and how many there are;
    /// None when the server did not answer it (busy, or FUNCTION denied by an ACL).
    pub libraries: Option<(Vec<super::functions::LiveLibrary>, usize)>,
    /// On a cluster: each master as read now (the fields above are the node given to connect's;
    /// `busy` names the busy node).
    pub nodes: Vec<NodeOverview>,
    /// On a cluster: the node the fields above were read from, "127.0.0.1:7000 (master, the node
    /// connected to)", or another master when that one does not answer.
    pub node: Option<String>,
}

/// One master of a cluster in the overview.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NodeOverview {
    /// "127.0.0.1:7000 (master, slots 0-5460)".
    pub node: String,
    pub highlights: Vec<(String, String)>,
    /// Its BUSY reply, when a script keeps it busy.
    pub busy: Option<String>,
    pub slowlog: Vec<SlowEntry>,
    /// Its libraries by name (None: not answered).
    pub libraries: Option<Vec<String>>,
    /// It did not answer: why.
    pub error: Option<String>,
}

/// Each library of a cluster's masters and where it is: "counters: 2 of 3 masters (not on
/// 127.0.0.1:7002 (master, slots 10923-16383))" or "counters: every master (3)". Masters that did
/// not answer FUNCTION LIST are left out of the count.
pub fn library_coverage(nodes: &[NodeOverview]) -> Vec<String> {
    let answered: Vec<&NodeOverview> = nodes.iter().filter(|n| n.libraries.is_some()).collect();
    let mut names: Vec<&String> = answered
        .iter()
        .flat_map(|n| n.libraries.iter().flatten())
        .collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .map(|name| {
            let without: Vec<&str> = answered
                .iter()
                .filter(|n| !n.libraries.iter().flatten().any(|l| l == name))
                .map(|n| n.node.as_str())
                .collect();
            if without.is_empty() {
                format!("{name}: every master ({})", answered.len())
            } else {
                format!(
                    "{name}: {} of {} masters (not on {})",
                    answered.len() - without.len(),
                    answered.len(),
                    without.join(", ")
                )
            }
        })
        .collect()
}

/// Each master of the cluster: INFO, the slow log, FUNCTION LIST; a busy or lost node says so.
fn read_nodes(live: &mut LiveBackend) -> Vec<NodeOverview> {
    let masters = live
        .cluster_masters()
        .unwrap_or_else(|_| live.masters().to_vec());
    let count = SLOWLOG_ENTRIES.to_string();
    masters
        .iter()
        .map(|m| {
            let mut node = NodeOverview {
                node: format!("{} (master, slots {})", m.addr(), m.ranges()),
                ..NodeOverview::default()
            };
            match live.command_on(m, &[b"INFO"]) {
                Err(e) => {
                    node.error = Some(e.to_string());
                    return node;
                }
                Ok(reply) => match is_busy(&reply) {
                    Some(busy) => {
                        node.busy = Some(busy);
                        return node;
                    }
                    None => {
                        if let Some(info) = text(&reply) {
                            node.highlights = parse_info(&info).0;
                        }
                    }
                },
            }
            if let Ok(Reply::Array(entries)) =
                live.command_on(m, &[b"SLOWLOG", b"GET", count.as_bytes()])
            {
                node.slowlog = entries.iter().filter_map(slow_entry).collect();
            }
            node.libraries = super::functions::list_on(live, Some(m))
                .ok()
                .map(|(libs, _)| libs.into_iter().map(|l| l.name).collect());
            node
        })
        .collect()
}

pub(super) fn text(reply: &Reply) -> Option<String> {
    match reply {
        Reply::Bulk(b) => Some(String::from_utf8_lossy(b).into_owned()),
        Reply::Status(s) => Some(s.clone()),
        Reply::Verbatim { text, .. } => Some(String::from_utf8_lossy(text).into_owned()),
        Reply::Int(i) => Some(i.to_string()),
        _ => None,
    }
}

fn int(reply: &Reply) -> Option<i64> {
    match reply {
        Reply::Int(i) => Some(*i),
        other => text(other)?.parse().ok(),
    }
}

/// A field of a RESP3 map or a RESP2 flat array of pairs.
pub(super) fn field<'a>(reply: &'a Reply, name: &str) -> Option<&'a Reply> {
    match reply {
        Reply::Map(pairs) => pairs
            .iter()
            .find(|(k, _)| text(k).as_deref() == Some(name))
            .map(|(_, v)| v),
        Reply::Array(items) => items
            .chunks(2)
            .find(|p| p.len() == 2 && text(&p[0]).as_deref() == Some(name))
            .map(|p| &p[1]),
        _ => None,
    }
}

fn is_busy(reply: &Reply) -> Option<String> {
    match reply {
        Reply::Error(e) if e.starts_with("BUSY") => Some(e.clone()),
        _ => None,
    }
}

/// The highlights and keyspace lines of an INFO text.
pub fn parse_info(info: &str) -> (Vec<(String, String)>, Vec<String>) {
    let mut fields = std::collections::HashMap::new();
    let mut keyspace = Vec::new();
    for line in info.lines() {
        let Some((k, v)) = line.trim_end().split_once(':') else {
            continue;
        };
        if k.starts_with("db") && k[2..].chars().all(|c| c.is_ascii_digit()) && k.len() > 2 {
            keyspace.push(format!("{k}: {v}"));
        }
        fields.insert(k.to_string(), v.to_string());
    }
    let highlights = HIGHLIGHTS
        .iter()
        .filter_map(|(name, label)| {
            let value = fields.get(*name)?;
            // In the units people read: "8m 15s", and "no limit" for maxmemory 0 (0B).
            let value = match *name {
                "uptime_in_seconds" => value
                    .parse::<i64>()
                    .map_or(value.clone(), crate::engine::value_text::seconds_text),
                "maxmemory_human" if fields.get("maxmemory").is_some_and(|m| m == "0") => {
                    "no limit".to_string()
                }
                _ => value.clone(),
            };
            Some((label.to_string(), value))
        })
        .collect();
    (highlights, keyspace)
}

fn slow_entry(reply: &Reply) -> Option<SlowEntry> {
    let Reply::Array(parts) = reply else {
        return None;
    };
    let mut args = match parts.get(3)? {
        Reply::Array(args) => args.iter().filter_map(text).collect::<Vec<_>>(),
        _ => Vec::new(),
    };
    let mut traced = None;
    let eval = args
        .first()
        .is_some_and(|c| c.eq_ignore_ascii_case("EVAL") || c.eq_ignore_ascii_case("EVAL_RO"));
    if let Some(script) = args
        .get_mut(1)
        .filter(|s| eval && s.contains(TRACED_PRELUDE))
    {
        traced = Some(logged_length(script));
        *script = TRACED_SCRIPT.to_string();
    }
    let mut command = args.join(" ");
    if command.chars().count() > SLOWLOG_COMMAND_CHARS {
        command = command
            .chars()
            .take(SLOWLOG_COMMAND_CHARS)
            .collect::<String>()
            + "…";
    }
    Some(SlowEntry {
        id: int(parts.first()?)?,
        started: int(parts.get(1)?)?,
        micros: int(parts.get(2)?)?,
        command: crate::engine::display::display_safe(&command).into_owned(),
        client: parts.get(4).and_then(text).unwrap_or_default(),
        traced,
    })
}

/// The start of the traced copy's prelude (engine/live/instrument.rs).
const TRACED_PRELUDE: &str = "local __eb_rcall, __eb_type";

/// The length of an argument as the slow log gives it: whole, or its first bytes and
/// `... (N more bytes)`.
fn logged_length(arg: &str) -> usize {
    if let Some(rest) = arg.strip_suffix(" more bytes)") {
        if let Some((head, n)) = rest.rsplit_once("... (") {
            if let Ok(n) = n.parse::<usize>() {
                return head.len() + n;
            }
        }
    }
    arg.len()
}

fn running_function(stats: &Reply) -> Option<RunningFunction> {
    let running = field(stats, "running_script")?;
    let command = match field(running, "command")? {
        Reply::Array(args) => args.iter().filter_map(text).collect::<Vec<_>>().join(" "),
        other => text(other).unwrap_or_default(),
    };
    Some(RunningFunction {
        name: text(field(running, "name")?)?,
        command: crate::engine::display::display_safe(&command).into_owned(),
        duration_ms: int(field(running, "duration_ms")?)?,
    })
}

/// Read the overview: INFO, SLOWLOG GET (bounded), SLOWLOG LEN and FUNCTION STATS in one round trip.
/// A server busy with a script answers BUSY to all but FUNCTION STATS (and that only for a function).
pub fn read(live: &mut LiveBackend) -> Result<Overview, LiveError> {
    let count = SLOWLOG_ENTRIES.to_string();
    let commands: Vec<Vec<Vec<u8>>> = [
        vec!["INFO"],
        vec!["SLOWLOG", "GET", &count],
        vec!["SLOWLOG", "LEN"],
        vec!["FUNCTION", "STATS"],
    ]
    .iter()
    .map(|c| c.iter().map(|a| a.as_bytes().to_vec()).collect())
    .collect();
    let replies = live.pipeline(&commands)?;
    let [info, slowlog, slowlog_len, stats] = <[Reply; 4]>::try_from(replies)
        .map_err(|r| LiveError::Server(format!("{} replies to 4 commands", r.len())))?;
    let mut overview = Overview {
        busy: [&info, &slowlog, &stats].into_iter().find_map(is_busy),
        running: running_function(&stats),
        slowlog_len: int(&slowlog_len),
        ..Overview::default()
    };
    match &info {
        Reply::Error(e) if overview.busy.is_none() => {
            return Err(LiveError::Server(format!("INFO: {e}")))
        }
        reply => {
            if let Some(info) = text(reply) {
                (overview.highlights, overview.keyspace) = parse_info(&info);
            }
        }
    }
    if overview.busy.is_none() {
        overview.libraries = super::functions::list(live).ok();
    }
    if let Reply::Array(entries) = &slowlog {
        overview.slowlog = entries
            .iter()
            .take(SLOWLOG_ENTRIES)
            .filter_map(slow_entry)
            .collect();
    }
    if live.server.cluster {
        overview.nodes = read_nodes(live);
        let connected = super::cluster::target_addr(&live.target);
        overview.node = live.node_for_keys(&[]).map(|n| {
            if n.addr == connected {
                format!("{} ({}, the node connected to)", n.addr, n.role)
            } else {
                format!(
                    "{} ({}; the node connected to, {connected}, does not answer)",
                    n.addr, n.role
                )
            }
        });
        // The banner names the node that is busy (the one given to connect, or another master).
        let seed = live.node_for_keys(&[]).map(|n| n.addr);
        overview.busy = match overview.busy.take() {
            Some(busy) => Some(match seed {
                Some(addr) => format!("on {addr}: {busy}"),
                None => busy,
            }),
            None => overview
                .nodes
                .iter()
                .find_map(|n| Some(format!("on {}: {}", n.node, n.busy.as_ref()?))),
        };
    }
    Ok(overview)
}

/// SCRIPT KILL's answers (`script_kill_for`) in words for the overview: as a live run's kill, except
/// NOTBUSY, which here means no script was running (not one that ended before the kill).
pub fn describe_kill(answers: Result<super::KillAnswers, LiveError>, cluster: bool) -> String {
    let not_busy =
        |r: &Result<Reply, LiveError>| matches!(r, Ok(Reply::Error(e)) if e.starts_with("NOTBUSY"));
    let all_not_busy = answers
        .as_ref()
        .is_ok_and(|a| !a.is_empty() && a.iter().all(|(_, r, _)| not_busy(r)));
    if all_not_busy {
        return "sent SCRIPT KILL: NOTBUSY (no script was running)".into();
    }
    // Every node that answered said NOTBUSY; the others could not be reached: say both.
    if let Ok(a) = &answers {
        let unreachable: Vec<String> = a
            .iter()
            .filter_map(|(node, r, _)| Some(format!("{node}: {}", r.as_ref().err()?)))
            .collect();
        let answered = a.iter().filter(|(_, r, _)| r.is_ok()).count();
        if answered > 0 && a.iter().all(|(_, r, _)| r.is_err() || not_busy(r)) {
            return format!(
                "sent SCRIPT KILL: NOTBUSY on the {answered} node{} that answered (no script was running there); not reached: {}",
                if answered == 1 { "" } else { "s" },
                unreachable.join("; ")
            );
        }
    }
    super::describe_kill(answers, cluster)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn info_highlights_in_order() {
        let info = "# Server\r\nredis_version:7.0.15\r\nuptime_in_seconds:495\r\n# Memory\r\nmaxmemory:0\r\nmaxmemory_human:0B\r\n# Clients\r\nconnected_clients:3\r\n# Replication\r\nrole:master\r\n# Keyspace\r\ndb0:keys=2,expires=1,avg_ttl=5\r\ndb12:keys=1,expires=0,avg_ttl=0\r\n";
        let (highlights, keyspace) = parse_info(info);
        assert_eq!(
            highlights,
            vec![
                ("version".to_string(), "7.0.15".to_string()),
                ("role".into(), "master".into()),
                ("uptime".into(), "8m 15s".into()),
                ("maxmemory".into(), "no limit".into()),
                ("clients".into(), "3".into()),
            ]
        );
        assert_eq!(
            keyspace,
            vec![
                "db0: keys=2,expires=1,avg_ttl=5".to_string(),
                "db12: keys=1,expires=0,avg_ttl=0".into()
            ]
        );
    }

    #[test]
    fn a_traced_copy_in_the_slow_log_is_marked_with_its_length() {
        let copy = format!("{TRACED_PRELUDE}, __eb_rawequal, __eb_handler = redis.call, type, rawequal, __redis__err__handler local __eb_t0 = __e");
        assert_eq!(copy.len(), 128);
        let entry = |args: Vec<&str>| {
            slow_entry(&Reply::Array(vec![
                Reply::Int(7),
                Reply::Int(1_700_000_000),
                Reply::Int(5_017_984),
                Reply::Array(args.into_iter().map(Reply::bulk).collect()),
                Reply::bulk("127.0.0.1:5000"),
            ]))
            .unwrap()
        };
        let logged = format!("{copy}... (372 more bytes)");
        let traced = entry(vec!["EVAL", &logged, "1", "k"]);
        assert_eq!(traced.traced, Some(500));
        assert_eq!(traced.command, format!("EVAL {TRACED_SCRIPT} 1 k"));
        let own = entry(vec!["EVAL", "return 1", "0"]);
        assert_eq!(
            (own.traced, own.command.as_str()),
            (None, "EVAL return 1 0")
        );
    }

    #[test]
    fn running_function_from_resp2_and_resp3() {
        let running = |r: Reply| {
            Reply::Array(vec![
                Reply::bulk("running_script"),
                r,
                Reply::bulk("engines"),
                Reply::Array(vec![]),
            ])
        };
        assert_eq!(running_function(&running(Reply::Nil)), None);
        let stats = running(Reply::Map(vec![
            (Reply::bulk("name"), Reply::bulk("spin")),
            (
                Reply::bulk("command"),
                Reply::Array(vec![
                    Reply::bulk("fcall"),
                    Reply::bulk("spin"),
                    Reply::bulk("0"),
                ]),
            ),
            (Reply::bulk("duration_ms"), Reply::Int(1500)),
        ]));
        assert_eq!(
            running_function(&stats),
            Some(RunningFunction {
                name: "spin".into(),
                command: "fcall spin 0".into(),
                duration_ms: 1500
            })
        );
    }
}
