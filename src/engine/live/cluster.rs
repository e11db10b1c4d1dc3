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
                let message = describe_error(&e, &node.describe());
                // Either way this connection is of no more use: a late reply would be read as the
                // next command's.
                self.conns.remove(&node.addr);
                self.stale = true;
                if !timed_out {
                    self.lost.insert(node.addr.clone(), message.clone());
                }
                Err(NodeFailure {
                    // A write that failed never reached the node; anything later may have run.
                    sent: !e.is_connection_refusal(),
                    timed_out,
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
