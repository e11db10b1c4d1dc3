//! A Redis Cluster as evalbench talks to it: one plain connection per node, opened when first
//! needed, each command routed by the hash slot of its first key (the command table tells which
//! arguments are keys), MOVED and ASK followed once.
//!
//! The redis crate's cluster client is not used for this: it turns a reply holding an error anywhere
//! inside it (a script returning `{n, <error>}`, or the traced copy's envelope after an error) into
//! an error and drops the rest, it connects to every node up front (one node down stopped
//! everything), and it picks the node of a keyless command itself. Here every command knows the
//! node that answered it, and a node that does not answer is marked lost on its own while the others
//! go on.

use super::{describe_error, lint, to_reply, ClusterNode, LiveError, Target};
use crate::engine::reply::Reply;
use redis::ConnectionLike;
use std::collections::{BTreeMap, HashMap};

/// The node a command or a script went to (or goes to): its address, its role and the slot it was
/// routed by (None: no keys, the node chosen for keyless commands).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeRef {
    /// "host:port", as MOVED replies and CLUSTER SLOTS name it.
    pub addr: String,
    /// "master" or "replica".
    pub role: String,
    pub slot: Option<u16>,
}

impl NodeRef {
    /// "127.0.0.1:7002 (master, slot 15495)"; a keyless run: "127.0.0.1:7000 (master, no keys)".
    pub fn describe(&self) -> String {
        match self.slot {
            Some(slot) => format!("{} ({}, slot {slot})", self.addr, self.role),
            None => format!("{} ({}, no keys)", self.addr, self.role),
        }
    }

    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({ "addr": self.addr, "role": self.role, "slot": self.slot })
    }
}

/// The slot of the first key of a command, when it names keys: EVAL-like and FCALL-like commands by
/// their numkeys, the others by the command table.
pub fn command_slot(
    cache: &mut crate::engine::commands::ResolveCache,
    profile: &'static crate::engine::profile::Profile,
    args: &[&[u8]],
) -> Option<u16> {
    let name = args.first()?.to_ascii_uppercase();
    let scripted = matches!(
        name.as_slice(),
        b"EVAL" | b"EVALSHA" | b"EVAL_RO" | b"EVALSHA_RO" | b"FCALL" | b"FCALL_RO"
    );
    if scripted {
        let numkeys: usize = std::str::from_utf8(args.get(2)?).ok()?.parse().ok()?;
        return (numkeys > 0)
            .then(|| args.get(3))
            .flatten()
            .map(|k| lint::hash_slot(k));
    }
    let owned: Vec<Vec<u8>> = args.iter().map(|a| a.to_vec()).collect();
    let (keys, _) = crate::engine::commands::describe_call(cache, profile, &owned)?;
    keys.first().map(|k| lint::hash_slot(k))
}

/// What went wrong sending a command to one node.
#[derive(Debug)]
pub(crate) struct NodeFailure {
    /// The command was written to the node (it may have run there); false: it never left.
    pub sent: bool,
    /// No reply within the read timeout (the node is busy, not gone).
    pub timed_out: bool,
    /// The node replied, past the memory budget: the reply was refused unread (the command ran).
    pub too_large: bool,
    /// The failure in words, naming the node.
    pub message: String,
}

/// The connections to a cluster's nodes and what is known of each.
pub(crate) struct Pool {
    /// The node given by the user (`--server`): settings (credentials, TLS, timeouts) for every node.
    seed: Target,
    seed_addr: String,
    /// The masters and their slots (and replicas), from the last CLUSTER SLOTS.
    pub masters: Vec<ClusterNode>,
    conns: HashMap<String, redis::Connection>,
    /// Nodes that did not answer, with why (a node that answers again is taken off).
    lost: BTreeMap<String, String>,
    /// A node timed out or its connection was lost since the slot map was read: the cluster may
    /// be failing it over, so the map is read again before the next command is routed.
    pub(crate) stale: bool,
    /// The master keyless commands went to while the seed did not answer: they stay there while
    /// it answers (a slot map read again must not move them to another master unasked).
    keyless: Option<String>,
}

impl Pool {
    /// The pool around the seed's connection (already set up by discovery).
    pub(crate) fn new(seed: Target, con: redis::Connection) -> Pool {
        let seed_addr = target_addr(&seed);
        let mut conns = HashMap::new();
        conns.insert(seed_addr.clone(), con);
        Pool {
            seed,
            seed_addr,
            masters: Vec::new(),
            conns,
            lost: BTreeMap::new(),
            stale: false,
            keyless: None,
        }
    }

    /// The nodes that did not answer and why, in address order.
    pub(crate) fn lost(&self) -> Vec<(String, String)> {
        self.lost
            .iter()
            .map(|(a, w)| (a.clone(), w.clone()))
            .collect()
    }

    /// "master", "replica", or "node" when the slot map does not list it (a node failed and
    /// left out, or no map read yet).
    pub(crate) fn role_of(&self, addr: &str) -> String {
        if self.masters.iter().any(|m| m.addr() == addr) {
            "master".into()
        } else if self
            .masters
            .iter()
            .any(|m| m.replicas.iter().any(|r| r == addr))
        {
            "replica".into()
        } else {
            "node".into()
        }
    }

    /// The address of the node given to connect.
    pub(crate) fn seed_addr(&self) -> &str {
        &self.seed_addr
    }

    /// Read the slot map again (CLUSTER SLOTS), from the seed or, when it does not answer, from any
    /// master known.
    pub(crate) fn refresh(&mut self) -> Result<Vec<ClusterNode>, LiveError> {
        let mut candidates = vec![self.seed_addr.clone()];
        for m in &self.masters {
            if !candidates.contains(&m.addr()) {
                candidates.push(m.addr());
            }
        }
        let mut last = None;
        for addr in candidates {
            let node = NodeRef {
                role: self.role_of(&addr),
                addr,
                slot: None,
            };
            match self.request(&node, &redis::cmd("CLUSTER").arg("SLOTS").to_owned()) {
                Ok(reply) => match reply {
                    reply @ Reply::Array(_) => {
                        let host = node
                            .addr
                            .rsplit_once(':')
                            .map_or(String::new(), |(h, _)| h.to_string());
                        self.masters = super::parse_cluster_slots(&reply, &host);
                        self.stale = false;
                        return Ok(self.masters.clone());
                    }
                    Reply::Error(e) => {
                        last = Some(LiveError::Server(format!(
                            "{}: CLUSTER SLOTS: {e}",
                            node.describe()
                        )))
                    }
                    other => {
                        last = Some(LiveError::Server(format!(
                            "{}: CLUSTER SLOTS answered {}",
                            node.describe(),
                            other.to_cli().replace('\n', " ")
                        )))
                    }
                },
                Err(f) => last = Some(LiveError::Lost(f.message)),
            }
        }
        Err(last.unwrap_or_else(|| LiveError::Lost("no node of the cluster answers".into())))
    }

    /// The node a command with this slot goes to: the slot's master; with no slot, the seed while
    /// it answers, else the first master that does.
    pub(crate) fn route(&self, slot: Option<u16>) -> Result<NodeRef, LiveError> {
        match slot {
            Some(slot) => match self.masters.iter().find(|m| m.serves(slot)) {
                Some(m) => Ok(NodeRef {
                    addr: m.addr(),
                    role: "master".into(),
                    slot: Some(slot),
                }),
                None => Err(LiveError::Server(format!(
                    "no master of the cluster serves slot {slot} (CLUSTER SLOTS from {}); the cluster is down for these keys",
                    self.seed_addr
                ))),
            },
            None => {
                let answers = |a: &String| !self.lost.contains_key(a);
                let addr = if answers(&self.seed_addr) {
                    self.seed_addr.clone()
                } else {
                    let masters: Vec<String> =
                        self.masters.iter().map(ClusterNode::addr).collect();
                    self.keyless
                        .clone()
                        .filter(|k| masters.contains(k) && answers(k))
                        .or_else(|| masters.into_iter().find(answers))
                        .unwrap_or_else(|| self.seed_addr.clone())
                };
                Ok(NodeRef {
                    role: self.role_of(&addr),
                    addr,
                    slot: None,
                })
            }
        }
    }

    /// A node of the cluster by address, with the settings of the seed.
    pub(crate) fn node_target(&self, addr: &str) -> Target {
        node_target(&self.seed, addr)
    }

    /// Send one command to `node` on its connection (opened if needed). A server error stays a
    /// value, wherever it sits in the reply.
    pub(crate) fn request(
        &mut self,
        node: &NodeRef,
        cmd: &redis::Cmd,
    ) -> Result<Reply, NodeFailure> {
        if !self.conns.contains_key(&node.addr) {
            let target = self.node_target(&node.addr);
            match super::open(&target) {
                Ok(con) => {
                    self.conns.insert(node.addr.clone(), con);
                }
                Err(e) => {
                    // A node of a cluster is not what `--server` named: say what may bring it back.
                    let message = e
                        .to_string()
                        .replacen(&node.addr, &node.describe(), 1)
                        .replace(
                            "(is the server running? check --server or -h/-p)",
                            "(is the node running? its replica takes over its slots once the cluster fails it over)",
                        );
                    self.lost.insert(node.addr.clone(), message.clone());
                    self.stale = true;
                    return Err(NodeFailure {
                        sent: false,
                        timed_out: false,
                        too_large: false,
                        message,
                    });
                }
            }
        }
        let con = self.conns.get_mut(&node.addr).expect("opened above");
        match con.req_command(cmd) {
            Ok(value) => {
                self.lost.remove(&node.addr);
                Ok(to_reply(value))
            }
            Err(e) if e.code().is_some() => {
                self.lost.remove(&node.addr);
                Ok(Reply::Error(
                    super::server_error_text(&e).unwrap_or_else(|| e.to_string()),
                ))
            }
            Err(e) => {
                let timed_out = e.is_timeout();
                let too_large = e.reply_too_large().is_some();
                let message = describe_error(&e, &node.describe());
                // Either way this connection is of no more use: a late reply would be read as the
                // next command's (and a refused one is still on it, unread).
                self.conns.remove(&node.addr);
                // A node that replied, however large, answers: it is neither lost nor failed over.
                if !too_large {
                    self.stale = true;
                    if !timed_out {
                        self.lost.insert(node.addr.clone(), message.clone());
                    }
                }
                Err(NodeFailure {
                    // A write that failed never reached the node; anything later may have run.
                    sent: !e.is_connection_refusal(),
                    timed_out,
                    too_large,
                    message,
                })
            }
        }
    }

    /// Send `cmd` to `node`; a MOVED or ASK answer (the node did not run it) sends it once more to
    /// the node named, and a MOVED reloads the slot map. Returns the node that answered.
    pub(crate) fn send(
        &mut self,
        node: NodeRef,
        cmd: &redis::Cmd,
    ) -> (NodeRef, Result<Reply, NodeFailure>) {
        let mut node = node;
        let mut result = self.request(&node, cmd);
        // A master that cannot be reached (the command never left) may have been failed over:
        // read the slot map again and send to the slot's master now, if it changed.
        // A keyless command goes to the next node that answers (the failed one is marked lost).
        if matches!(&result, Err(f) if !f.sent) {
            let moved = match node.slot {
                Some(slot) if self.refresh().is_ok() => self.route(Some(slot)).ok(),
                Some(_) => None,
                None => self.route(None).ok(),
            };
            if let Some(now) = moved.filter(|now| now.addr != node.addr) {
                result = self.request(&now, cmd);
                node = now;
            }
        }
        if node.slot.is_none() && node.addr != self.seed_addr && result.is_ok() {
            self.keyless = Some(node.addr.clone());
        }
        let redirect = match &result {
            Ok(Reply::Error(e)) => {
                let mut parts = e.split_ascii_whitespace();
                match parts.next() {
                    Some(code @ ("MOVED" | "ASK")) => {
                        let slot = parts.next().and_then(|s| s.parse::<u16>().ok());
                        parts.next().map(|a| (code == "ASK", a.to_string(), slot))
                    }
                    _ => None,
                }
            }
            _ => None,
        };
        let Some((ask, addr, slot)) = redirect else {
            return (node, result);
        };
        let to = NodeRef {
            addr,
            role: "master".into(),
            slot: slot.or(node.slot),
        };
        if ask {
            // The slot is migrating: only this command goes to the importing node.
            if let Err(f) = self.request(&to, &redis::cmd("ASKING")) {
                return (to, Err(f));
            }
            let result = self.request(&to, cmd);
            return (to, result);
        }
        let result = self.request(&to, cmd);
        let _ = self.refresh();
        (to, result)
    }
}

/// "host:port" of a target's address (the socket path for a Unix socket).
pub(crate) fn target_addr(target: &Target) -> String {
    match target.info.addr() {
        redis::ConnectionAddr::Tcp(h, p) => format!("{h}:{p}"),
        redis::ConnectionAddr::TcpTls { host, port, .. } => format!("{host}:{port}"),
        redis::ConnectionAddr::Unix(path) => path.display().to_string(),
        other => format!("{other:?}"),
    }
}

/// The target of the node at `addr` ("host:port"): the seed's credentials, TLS and timeouts.
pub(crate) fn node_target(seed: &Target, addr: &str) -> Target {
    let (host, port) = match addr.rsplit_once(':') {
        Some((h, p)) => (h.to_string(), p.parse().unwrap_or(6379)),
        None => (addr.to_string(), 6379),
    };
    ClusterNode {
        host,
        port,
        slots: Vec::new(),
        replicas: Vec::new(),
    }
    .target(seed)
}

/// A cluster that says `cluster_state:fail` (CLUSTER INFO on a node that answers), and why as the
/// cluster itself sees it (CLUSTER NODES on that node): such a cluster answers CLUSTERDOWN to every
/// command with keys, on the masters that still answer too.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterDown {
    /// The node that said so ("host:port").
    pub from: String,
    /// The masters it flags as failing (`fail` or `fail?`), each "host:port (slots 5461-10922)".
    pub lost: Vec<String>,
    /// The slots no master that answers serves, as "5461-16383" (empty: none).
    pub unserved: String,
    /// How many masters serve slots, and how many of them are not flagged failing.
    pub masters: usize,
    pub reachable: usize,
    /// `cluster-allow-reads-when-down yes` on that node: commands that only read still go on.
    pub reads_when_down: bool,
}

impl ClusterDown {
    /// One line for the status bar and the refusals.
    pub fn describe(&self) -> String {
        let lost = match self.lost.as_slice() {
            [] => String::new(),
            [one] => format!("master {one} does not answer the other nodes; "),
            many => format!("masters {} do not answer the other nodes; ", join_and(many)),
        };
        let unserved = if self.unserved.is_empty() {
            String::new()
        } else {
            format!("slots {} are not served; ", self.unserved)
        };
        // A failover needs the votes of a majority of the masters serving slots.
        let why = if self.reachable * 2 <= self.masters {
            format!(
                "{} of {} masters {}, fewer than the majority a failover needs, so no replica can take over until a lost master is back: ",
                self.reachable,
                self.masters,
                if self.reachable == 1 { "answers" } else { "answer" }
            )
        } else {
            String::new()
        };
        let refused = if self.reads_when_down {
            "the cluster refuses every write (CLUSTERDOWN), on the masters that answer too; reads of the slots they serve go on (cluster-allow-reads-when-down)"
        } else {
            "the cluster refuses every run with keys (CLUSTERDOWN), on the masters that answer too; a keyless script still runs, but each command on a key inside it fails"
        };
        format!(
            "the cluster is down (cluster_state:fail on {}): {lost}{unserved}{why}{refused}",
            self.from
        )
    }
}

/// "a", "a and b", "a, b and c".
fn join_and(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// Slot ranges "0-5460, 10923-16383" of the slots marked in `slots`.
fn slot_ranges(slots: &[bool]) -> String {
    let mut out = Vec::new();
    let mut slot = 0;
    while slot < slots.len() {
        if !slots[slot] {
            slot += 1;
            continue;
        }
        let from = slot;
        while slot + 1 < slots.len() && slots[slot + 1] {
            slot += 1;
        }
        out.push(if from == slot {
            from.to_string()
        } else {
            format!("{from}-{slot}")
        });
        slot += 1;
    }
    out.join(", ")
}

/// Why a cluster is down, from CLUSTER NODES as the node `from` answered it: the masters it flags
/// failing and the slots without a master that answers (unassigned ones included).
pub(crate) fn cluster_down_from_nodes(
    from: &str,
    nodes: &str,
    reads_when_down: bool,
) -> ClusterDown {
    let mut served = vec![false; 16384];
    let mut unserved = vec![false; 16384];
    let (mut lost, mut masters, mut reachable) = (Vec::new(), 0, 0);
    for line in nodes.lines() {
        let fields: Vec<&str> = line.split_ascii_whitespace().collect();
        if fields.len() < 8 {
            continue;
        }
        let flags: Vec<&str> = fields[2].split(',').collect();
        if !flags.contains(&"master") {
            continue;
        }
        // "127.0.0.1:7001@17001" (7.0 may add ",hostname").
        let addr = fields[1].split(['@', ',']).next().unwrap_or(fields[1]);
        let mut ranges = Vec::new();
        let mut slots = Vec::new();
        for range in &fields[8..] {
            // "[5461->-id]" marks a slot migrating: its owner is listed too.
            if range.starts_with('[') {
                continue;
            }
            let (a, b) = range.split_once('-').unwrap_or((range, range));
            if let (Ok(a), Ok(b)) = (a.parse::<usize>(), b.parse::<usize>()) {
                if a <= b && b < 16384 {
                    slots.push((a, b));
                    ranges.push(range.to_string());
                }
            }
        }
        if slots.is_empty() {
            continue;
        }
        masters += 1;
        let failing = flags.iter().any(|f| f.starts_with("fail"));
        for &(a, b) in &slots {
            for s in a..=b {
                served[s] = true;
                if failing {
                    unserved[s] = true;
                }
            }
        }
        if failing {
            lost.push((slots[0].0, format!("{addr} (slots {})", ranges.join(", "))));
        } else {
            reachable += 1;
        }
    }
    for (s, u) in served.iter().zip(unserved.iter_mut()) {
        *u |= !s;
    }
    // In slot order (CLUSTER NODES lists the nodes in no order of its own).
    lost.sort();
    let lost = lost.into_iter().map(|(_, l)| l).collect();
    ClusterDown {
        from: from.to_string(),
        lost,
        unserved: slot_ranges(&unserved),
        masters,
        reachable,
        reads_when_down,
    }
}

impl Pool {
    /// The cluster's own word on its state, from the first node that answers (the node given to
    /// connect, then the masters, then their replicas): Some when it says `cluster_state:fail`.
    pub(crate) fn cluster_down(&mut self) -> Option<ClusterDown> {
        let mut candidates = vec![self.seed_addr.clone()];
        for m in &self.masters {
            candidates.push(m.addr());
        }
        for m in &self.masters {
            candidates.extend(m.replicas.iter().cloned());
        }
        let mut asked = Vec::new();
        for addr in candidates {
            if asked.contains(&addr) || self.lost.contains_key(&addr) {
                continue;
            }
            asked.push(addr.clone());
            let node = NodeRef {
                role: self.role_of(&addr),
                addr,
                slot: None,
            };
            let Some(info) = self
                .request(&node, &redis::cmd("CLUSTER").arg("INFO").to_owned())
                .ok()
                .and_then(text_of)
            else {
                continue;
            };
            if super::info_field(&info, "cluster_state") != Some("fail") {
                return None;
            }
            let nodes = self
                .request(&node, &redis::cmd("CLUSTER").arg("NODES").to_owned())
                .ok()
                .and_then(text_of)
                .unwrap_or_default();
            // A server that refuses CONFIG (renamed, ACL) is taken as the default: no reads.
            let yes = Reply::Bulk(b"yes".to_vec());
            let reads = match self.request(
                &node,
                &redis::cmd("CONFIG")
                    .arg("GET")
                    .arg("cluster-allow-reads-when-down")
                    .to_owned(),
            ) {
                Ok(Reply::Array(pair)) => pair.get(1) == Some(&yes),
                Ok(Reply::Map(pairs)) => pairs.iter().any(|(_, v)| *v == yes),
                _ => false,
            };
            return Some(cluster_down_from_nodes(&node.addr, &nodes, reads));
        }
        None
    }
}

/// The text of a bulk or verbatim reply (CLUSTER INFO and CLUSTER NODES under RESP2 and RESP3).
fn text_of(reply: Reply) -> Option<String> {
    match reply {
        Reply::Bulk(b) | Reply::Verbatim { text: b, .. } => {
            Some(String::from_utf8_lossy(&b).into_owned())
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_down_cluster_is_described_from_its_own_nodes() {
        // Node 7001 flagged failing by the majority, 7002 by this node only; slots 16000-16383
        // assigned to no one; a migrating slot's marker is not a range.
        let nodes = "\
a1 127.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-5460 [5460->-b2]
b2 127.0.0.1:7001@17001 master,fail - 0 0 2 disconnected 5461-10922
c3 127.0.0.1:7002@17002,host master,fail? - 0 0 3 disconnected 10923-15999
d4 127.0.0.1:7003@17003 slave a1 0 0 1 connected
e5 127.0.0.1:7004@17004 master,fail - 0 0 0 disconnected
";
        let down = cluster_down_from_nodes("127.0.0.1:7000", nodes, false);
        assert_eq!(
            down,
            ClusterDown {
                from: "127.0.0.1:7000".into(),
                lost: vec![
                    "127.0.0.1:7001 (slots 5461-10922)".into(),
                    "127.0.0.1:7002 (slots 10923-15999)".into()
                ],
                unserved: "5461-16383".into(),
                masters: 3,
                reachable: 1,
                reads_when_down: false,
            }
        );
        // Unassigned slots alone, a majority answering, reads allowed while down.
        let nodes = "\
a1 127.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-5460
b2 127.0.0.1:7001@17001 master - 0 0 2 connected 5461-10922 10924
";
        assert_eq!(
            cluster_down_from_nodes("127.0.0.1:7000", nodes, true).describe(),
            "the cluster is down (cluster_state:fail on 127.0.0.1:7000): slots 10923, 10925-16383 are not served; the cluster refuses every write (CLUSTERDOWN), on the masters that answer too; reads of the slots they serve go on (cluster-allow-reads-when-down)"
        );
    }
}
