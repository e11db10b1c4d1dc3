//! The live backend: a real Redis or Valkey server through EVAL/EVALSHA (redis crate), with traced runs
//! (see `instrument`), bounded type-aware copies of keys into the sandbox (`copy`), and server discovery.

/// A cluster's nodes: one connection each, routing by slot, per-node health.
pub mod cluster;
pub mod copy;
pub mod fcall; // FCALL/FCALL_RO on a live server, guarded
pub mod function_load; // FUNCTION LOAD [REPLACE] to a server, guarded
/// The server's function libraries: FUNCTION LIST, one library's code.
pub mod functions;
pub mod guard;
/// The whole guarded run with its phases and cancel.
pub mod guarded;
pub mod inspect;
pub mod instrument;
/// Redis's own Lua debugger (SCRIPT DEBUG) driven on its own connection.
pub mod ldb;
/// INFO highlights, the slow log and the busy state for the Server tab's overview.
pub mod overview;

use crate::engine::reply::{Protocol, Reply};
use crate::engine::report::{Outcome, RunReport, Warning, WarningKind};
use crate::engine::script::{parse_shebang, sha1_hex};
use crate::engine::{lint, RunRequest};
use cluster::{NodeRef, Pool};
use redis::{ConnectionLike, Value};
use std::time::{Duration, Instant};

/// Default connect and read timeouts.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

#[derive(Debug, thiserror::Error)]
pub enum LiveError {
    #[error("{0}")]
    Connect(String),
    #[error("{0}")]
    Lost(String),
    /// The script was sent, then the connection was lost before its reply: it may have run.
    #[error("{0}")]
    Sent(String),
    /// The server refused a command the engine sent on its own (WRONGTYPE, NOPERM, ...).
    #[error("{0}")]
    Server(String),
}

/// Where to connect; the password is kept in memory only and never printed.
#[derive(Clone)]
pub struct Target {
    pub info: redis::ConnectionInfo,
    /// `host:port` or the socket path, for messages.
    pub display: String,
    pub connect_timeout: Duration,
    /// How long to wait for a reply (a script may run up to the busy threshold and beyond).
    pub read_timeout: Option<Duration>,
    /// CA and client certificate for TLS (None: the system's roots, no client certificate).
    pub tls: Option<redis::TlsCertificates>,
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Target({})", self.display)
    }
}

/// Connection settings as redis-cli takes them; `url` wins over host/port.
#[derive(Debug, Clone, Default)]
pub struct TargetSpec {
    pub url: Option<String>,
    pub host: Option<String>,
    pub port: Option<u16>,
    pub user: Option<String>,
    pub password: Option<String>,
    pub db: Option<i64>,
    pub resp3: bool,
    pub connect_timeout_ms: Option<u64>,
    pub read_timeout_ms: Option<u64>,
    /// TLS (as `rediss://`), as redis-cli --tls.
    pub tls: bool,
    /// PEM files: the CA to trust, and a client certificate and key (mutual TLS).
    pub cacert: Option<std::path::PathBuf>,
    pub cert: Option<std::path::PathBuf>,
    pub key: Option<std::path::PathBuf>,
    /// Do not verify the server's certificate (redis-cli --insecure).
    pub insecure: bool,
}

fn read_pem(path: &std::path::Path, what: &str) -> Result<Vec<u8>, LiveError> {
    crate::engine::input::read_bounded(path, &crate::engine::input::SETTINGS)
        .map_err(|e| LiveError::Connect(format!("the {what}: {e}")))
}

impl TargetSpec {
    pub fn resolve(&self) -> Result<Target, LiveError> {
        let url = match (&self.url, &self.host, self.port) {
            (Some(url), _, _) => url.clone(),
            (None, None, None) => match std::env::var("REDIS_URL") {
                Ok(url) if !url.is_empty() => url,
                _ => "redis://127.0.0.1:6379".into(),
            },
            (None, host, port) => format!(
                "{}://{}:{}",
                if self.tls { "rediss" } else { "redis" },
                host.as_deref().unwrap_or("127.0.0.1"),
                port.unwrap_or(6379)
            ),
        };
        let mut url = if self.tls && url.starts_with("redis://") {
            url.replacen("redis://", "rediss://", 1)
        } else {
            url
        };
        if self.insecure && url.starts_with("rediss://") && !url.contains("#insecure") {
            url.push_str("#insecure");
        }
        let mut info: redis::ConnectionInfo = url.as_str().into_connection_info().map_err(|e| {
            LiveError::Connect(format!(
                "invalid server address '{}': {}; expected redis://[user:password@]host:port[/db], rediss://... or unix:///path/to/socket",
                redact(&url),
                e.detail().unwrap_or("unrecognised form")
            ))
        })?;
        let mut redis_info = info.redis_settings().clone();
        if let Some(user) = &self.user {
            redis_info = redis_info.set_username(user.clone());
        }
        if let Some(password) = &self.password {
            redis_info = redis_info.set_password(password.clone());
        }
        if let Some(db) = self.db {
            redis_info = redis_info.set_db(db);
        }
        if self.resp3 {
            redis_info = redis_info.set_protocol(redis::ProtocolVersion::RESP3);
        }
        info = info.set_redis_settings(redis_info);
        let display = match info.addr() {
            redis::ConnectionAddr::Tcp(h, p) => format!("{h}:{p}"),
            redis::ConnectionAddr::TcpTls { host, port, .. } => format!("{host}:{port} (TLS)"),
            redis::ConnectionAddr::Unix(path) => path.display().to_string(),
            other => format!("{other:?}"),
        };
        let tls = if self.cacert.is_some() || self.cert.is_some() {
            let client_tls =
                match (&self.cert, &self.key) {
                    (Some(cert), Some(key)) => Some(redis::ClientTlsConfig {
                        client_cert: read_pem(cert, "client certificate (--cert)")?,
                        client_key: read_pem(key, "client key (--key)")?,
                    }),
                    (None, None) => None,
                    _ => return Err(LiveError::Connect(
                        "--cert and --key go together (the client certificate and its private key)"
                            .into(),
                    )),
                };
            let root_cert = match &self.cacert {
                Some(path) => Some(read_pem(path, "CA certificate (--cacert)")?),
                None => None,
            };
            Some(redis::TlsCertificates {
                client_tls,
                root_cert,
            })
        } else {
            None
        };
        Ok(Target {
            tls,
            info,
            display,
            connect_timeout: Duration::from_millis(
                self.connect_timeout_ms
                    .unwrap_or(CONNECT_TIMEOUT.as_millis() as u64),
            ),
            read_timeout: self.read_timeout_ms.map(Duration::from_millis),
        })
    }
}

use redis::IntoConnectionInfo;

/// `redis://user:secret@host` -> `redis://user:***@host`.
pub fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let userinfo = &url[scheme + 3..at];
            let user = userinfo.split(':').next().unwrap_or("");
            if userinfo.contains(':') {
                format!("{}{user}:***{}", &url[..scheme + 3], &url[at..])
            } else {
                format!("{}***{}", &url[..scheme + 3], &url[at..])
            }
        }
        _ => url.to_string(),
    }
}

/// NOAUTH on connect: what to give.
fn password_needed(target: &str) -> String {
    format!("{target}: the server requires a password (give it with -a, --askpass or REDISCLI_AUTH, with --user for an ACL user, or in the URL: redis://user:password@host:port)")
}

/// A reply refused for its announced length: "the server announced a 2,147,483,648-byte reply,
/// past the memory budget (64 MiB): not read".
pub fn reply_too_large_text(refused: &redis::ReplyTooLarge) -> String {
    let unit = if refused.elements { "element" } else { "byte" };
    format!(
        "the server announced a {}-{unit} reply, past the memory budget ({}): not read",
        crate::engine::reply::grouped(refused.announced as usize),
        crate::engine::budget::size_text(refused.limit)
    )
}

/// One line saying what went wrong and what to do.
pub fn describe_error(e: &redis::RedisError, target: &str) -> String {
    let code = e.code().unwrap_or("");
    let detail = e.detail().unwrap_or("");
    let text = e.to_string();
    if let Some(refused) = e.reply_too_large() {
        return format!("{target}: {}", reply_too_large_text(refused));
    }
    if e.kind() == redis::ErrorKind::Parse {
        return format!(
            "{target}: did not answer as a Redis server (its reply is not RESP, the Redis protocol); check the address and port (a TLS port needs --tls)"
        );
    }
    if e.is_timeout() {
        return format!("{target}: timed out waiting for the server (check the address, firewalls, or a script blocking the server)");
    }
    if e.is_connection_refusal() {
        return format!(
            "{target}: connection refused (is the server running? check --server or -h/-p)"
        );
    }
    if code == "WRONGPASS"
        || text.contains("WRONGPASS")
        || text.contains("invalid password")
        || e.kind() == redis::ErrorKind::AuthenticationFailed
    {
        return format!("{target}: authentication failed: wrong user name or password (pass it with -a, --pass, --askpass or in the URL)");
    }
    if code == "NOAUTH" || text.contains("NOAUTH") {
        return password_needed(target);
    }
    if code == "NOPERM" || text.contains("NOPERM") {
        return format!("{target}: denied by the server's ACL: {detail} (ask for the permission or use another user)");
    }
    let lower = text.to_ascii_lowercase();
    if lower.contains("certificate") || lower.contains("tls") || lower.contains("handshake") {
        return format!("{target}: TLS failed: {text} (check --cacert, --cert/--key, and that this is the server's TLS port)");
    }
    if e.is_io_error() || e.is_connection_dropped() {
        return format!("{target}: connection lost: {text}");
    }
    format!("{target}: {text}")
}

/// What the server told about itself on connect.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerInfo {
    /// "redis" or "valkey".
    pub product: String,
    pub version: String,
    /// "master" or "slave" (a replica: runs are read-only).
    pub role: String,
    pub cluster: bool,
    pub busy_threshold_ms: u64,
    /// On a cluster: `cluster-node-timeout` (a master that does not answer its peers this long,
    /// busy with a script included, is failed over by its replica); None elsewhere or unread.
    pub cluster_node_timeout_ms: Option<u64>,
    pub maxmemory_policy: Option<String>,
    /// Notes about what could not be read (CONFIG denied, ...).
    pub notes: Vec<String>,
    /// The sandbox profile that follows this server (product and version from INFO).
    pub profile: &'static crate::engine::profile::Profile,
}

impl ServerInfo {
    pub fn is_replica(&self) -> bool {
        self.role != "master"
    }

    /// One line for a status bar or a report header.
    pub fn summary(&self) -> String {
        format!(
            "{} {} {}{}, busy threshold {} ms{}",
            self.product,
            self.version,
            if self.is_replica() {
                "replica"
            } else {
                "primary"
            },
            if self.cluster { " (cluster)" } else { "" },
            self.busy_threshold_ms,
            self.cluster_node_timeout_ms
                .map_or(String::new(), |t| format!(", cluster-node-timeout {t} ms"))
        )
    }

    /// On a cluster, `cluster-node-timeout` when a long script risks it. A node running a script
    /// does not answer the other nodes until the script passes the busy threshold; from then on it
    /// handles their messages while the script runs. So only a timeout shorter than the threshold
    /// (with a second's margin) lets the cluster flag the busy node as failed: past a longer one
    /// nothing happens.
    pub fn node_timeout_at_risk(&self) -> Option<u64> {
        let timeout = self.cluster_node_timeout_ms.filter(|t| *t > 0)?;
        (self.busy_threshold_ms > 0 && timeout < self.busy_threshold_ms + 1000).then_some(timeout)
    }

    /// On a cluster, what a long script risks besides the busy threshold (None when
    /// `cluster-node-timeout` is safely longer than it), for a script on a master or on a replica.
    pub fn cluster_timeout_note(&self, replica: bool) -> Option<String> {
        let timeout = self.node_timeout_at_risk()?;
        Some(format!(
            "on this cluster {}",
            node_timeout_consequence(timeout, self.busy_threshold_ms, replica)
        ))
    }
}

/// What a script busy past `cluster-node-timeout` does to the cluster. A master is flagged failed
/// and its replica takes over its slots (the old master, once it answers, becomes a replica of the
/// new one, and the script's writes never reach it). A replica is flagged failed until it answers
/// again, and nothing is failed over.
pub fn node_timeout_consequence(timeout_ms: u64, threshold_ms: u64, replica: bool) -> String {
    let lead = format!(
        "a node running a script answers the other nodes only once it passes the busy threshold ({threshold_ms} ms), so a"
    );
    if replica {
        format!("{lead} replica busy longer than cluster-node-timeout ({timeout_ms} ms) is flagged as failed until it answers; nothing is failed over (its master goes on serving its slots)")
    } else {
        format!("{lead} master busy longer than cluster-node-timeout ({timeout_ms} ms) is failed over by its replica, and the script's writes do not reach the new master")
    }
}

fn info_field<'a>(info: &'a str, name: &str) -> Option<&'a str> {
    info.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
        .map(str::trim)
}

/// Turn a redis-crate value into the engine's typed reply.
pub fn to_reply(value: Value) -> Reply {
    match value {
        Value::Nil => Reply::Nil,
        Value::Int(i) => Reply::Int(i),
        Value::BulkString(b) => Reply::Bulk(b),
        Value::Array(items) => Reply::Array(items.into_iter().map(to_reply).collect()),
        Value::SimpleString(s) => Reply::Status(s),
        Value::Okay => Reply::Status("OK".into()),
        Value::Map(pairs) => Reply::Map(
            pairs
                .into_iter()
                .map(|(k, v)| (to_reply(k), to_reply(v)))
                .collect(),
        ),
        Value::Attribute { data, .. } => to_reply(*data),
        Value::Set(items) => Reply::Set(items.into_iter().map(to_reply).collect()),
        Value::Double(d) => Reply::Double(d),
        Value::Boolean(b) => Reply::Bool(b),
        Value::VerbatimString { format, text } => Reply::Verbatim {
            format: format.to_string(),
            text: text.into_bytes(),
        },
        Value::BigNumber(digits) => Reply::BigNumber(String::from_utf8_lossy(&digits).into()),
        Value::Push { data, .. } => Reply::Array(data.into_iter().map(to_reply).collect()),
        Value::ServerError(e) => Reply::Error(match e.details() {
            Some(detail) => format!("{} {detail}", e.code()),
            None => e.code().to_string(),
        }),
        _ => Reply::Error("ERR evalbench: a reply kind this version does not know".into()),
    }
}

/// How a live run may touch the data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteMode {
    /// EVAL_RO: the server refuses every write.
    ReadOnly,
    /// Writes allowed (the user confirmed).
    Allowed,
}

/// One server, or a cluster (a connection per node, commands routed by the slot of their first key).
enum Con {
    Single(redis::Connection),
    Cluster(Box<Pool>),
}

pub struct LiveBackend {
    pub target: Target,
    pub server: ServerInfo,
    con: Con,
    protocol: Protocol,
    /// Record a trace (send the instrumented copy); off: the user's script is sent as is.
    pub tracing: bool,
    /// A scratch database scripts must stay in (`test --server --db N`): the copy refuses calls
    /// that reach another database, and a script that cannot be traced is not sent.
    pub confine_db: Option<i64>,
    /// Instrumented copies by user script (the last one; a changed script is instrumented again).
    last: Option<(Vec<u8>, std::sync::Arc<instrument::Instrumented>)>,
    /// Commands of traced calls already looked up in the command table.
    resolve_cache: crate::engine::commands::ResolveCache,
    /// On a cluster: the node the last script was sent to (or would have been, when refused before).
    pub last_node: Option<NodeRef>,
    /// Connections opened again after one dropped: the server may have restarted since, empty
    /// (its script cache with it), though commands work on as before.
    pub reconnects: u64,
}

impl LiveBackend {
    pub fn connect(target: Target) -> Result<LiveBackend, LiveError> {
        // Connecting and discovery together take the connect timeout at most (a silent peer).
        let deadline = Instant::now() + target.connect_timeout;
        let con = Con::Single(open_until(&target, deadline)?);
        let protocol = match target.info.redis_settings().protocol() {
            redis::ProtocolVersion::RESP3 => Protocol::Resp3,
            _ => Protocol::Resp2,
        };
        let mut backend = LiveBackend {
            server: ServerInfo {
                product: String::new(),
                version: String::new(),
                role: String::new(),
                cluster: false,
                busy_threshold_ms: crate::engine::sandbox::DEFAULT_BUSY_THRESHOLD_MS,
                cluster_node_timeout_ms: None,
                maxmemory_policy: None,
                notes: Vec::new(),
                profile: crate::engine::profile::DEFAULT,
            },
            target,
            con,
            protocol,
            tracing: true,
            confine_db: None,
            last: None,
            resolve_cache: Default::default(),
            last_node: None,
            reconnects: 0,
        };
        backend.server = backend.discover(deadline)?;
        if let Con::Single(c) = &mut backend.con {
            c.set_read_timeout(backend.target.read_timeout)
                .map_err(|e| LiveError::Connect(describe_error(&e, &backend.target.display)))?;
            c.set_read_deadline(None);
        }
        if backend.server.cluster {
            // The discovery's connection becomes the seed node's in the pool.
            backend.con = match backend.con {
                Con::Single(seed) => {
                    Con::Cluster(Box::new(Pool::new(backend.target.clone(), seed)))
                }
                cluster => cluster,
            };
            backend.cluster_masters()?;
        }
        Ok(backend)
    }

    /// Send one command; connection failures become `LiveError`, server errors stay replies.
    pub fn command(&mut self, args: &[&[u8]]) -> Result<Reply, LiveError> {
        let cmd = to_cmd(args);
        if matches!(self.con, Con::Cluster(_)) {
            let node = self.route(args)?;
            return self.cluster_command(node, &cmd, args);
        }
        let result = self.send(&cmd);
        // A connection found dead (the server restarted, a proxy closed it while idle) is reopened
        // and anything but a script is sent again once: the reads of the dry run and the inspector
        // heal the connection before a script is sent on it. A script is never sent twice: it may
        // have run before the connection dropped.
        if matches!(&result, Err(e) if e.is_connection_dropped()) && !is_script(args) {
            self.reconnect();
            let retried = self.send(&cmd);
            return self.reply_of(retried);
        }
        self.reply_of(result)
    }

    /// Send one command to one master of the cluster (as `cluster_masters` lists it) whatever its keys
    /// (SCAN, DBSIZE: per node on a cluster); on a standalone server, to the server.
    pub fn command_on(&mut self, node: &ClusterNode, args: &[&[u8]]) -> Result<Reply, LiveError> {
        let cmd = to_cmd(args);
        if matches!(self.con, Con::Cluster(_)) {
            let node = NodeRef {
                addr: node.addr(),
                role: "master".into(),
                slot: None,
            };
            return self.cluster_command(node, &cmd, args);
        }
        let result = self.send(&cmd);
        self.reply_of(result)
    }

    /// On a cluster, read the slot map again now (a failover leaves no trace on the connections:
    /// the old master still answers PING, as a replica). Nothing to do elsewhere.
    pub fn refresh_topology(&mut self) {
        let Con::Cluster(pool) = &mut self.con else {
            return;
        };
        if pool.refresh().is_ok() {
            self.sync_role();
        }
    }

    /// On a cluster, read the slot map again when a node timed out or was lost since it was last
    /// read (its replica may have taken over, or it may have been demoted): the node a command goes
    /// to, and the role of the node given to connect, are the cluster's as it is now. Nothing to do
    /// elsewhere, or when the map is fresh.
    pub fn follow_topology(&mut self) {
        let Con::Cluster(pool) = &mut self.con else {
            return;
        };
        if pool.stale && pool.refresh().is_ok() {
            self.sync_role();
        }
    }

    /// The node of the cluster a command goes to (the slot of its first key).
    fn route(&mut self, args: &[&[u8]]) -> Result<NodeRef, LiveError> {
        self.follow_topology();
        let slot = cluster::command_slot(&mut self.resolve_cache, self.server.profile, args);
        match &self.con {
            Con::Cluster(pool) => pool.route(slot),
            Con::Single(_) => Err(LiveError::Connect("not a cluster".into())),
        }
    }

    /// The node a script with these KEYS runs on: on a cluster the master of the first key's slot,
    /// or for a keyless script the node keyless commands go to (the one given to connect while it
    /// answers); None on a standalone server.
    pub fn node_for_keys(&self, keys: &[Vec<u8>]) -> Option<NodeRef> {
        match &self.con {
            Con::Cluster(pool) => pool.route(keys.first().map(|k| lint::hash_slot(k))).ok(),
            Con::Single(_) => None,
        }
    }

    /// The masters of the cluster as last read (CLUSTER SLOTS); empty on a standalone server.
    pub fn masters(&self) -> &[ClusterNode] {
        match &self.con {
            Con::Cluster(pool) => &pool.masters,
            Con::Single(_) => &[],
        }
    }

    /// A node of the cluster by address: a master with its slots, or any other node (a replica)
    /// with none.
    pub fn known_node(&self, addr: &str) -> Option<ClusterNode> {
        let Con::Cluster(pool) = &self.con else {
            return None;
        };
        if let Some(m) = pool.masters.iter().find(|m| m.addr() == addr) {
            return Some(m.clone());
        }
        let (host, port) = addr.rsplit_once(':')?;
        Some(ClusterNode {
            host: host.to_string(),
            port: port.parse().ok()?,
            slots: Vec::new(),
            replicas: Vec::new(),
        })
    }

    /// On a cluster, the refusal of a script whose KEYS span several slots (the cluster would answer
    /// CROSSSLOT), decided from the key names alone: nothing needs to be read or sent. None when the
    /// script may go (a standalone server, one slot, or the `allow-cross-slot-keys` flag).
    pub fn cross_slot_refusal(&self, request: &RunRequest) -> Option<String> {
        let (flags, _) = parse_shebang(&request.script).unwrap_or_default();
        if !self.server.cluster || flags.allow_cross_slot_keys {
            return None;
        }
        cross_slot(&request.keys, |slot| {
            self.masters()
                .iter()
                .find(|m| m.serves(slot))
                .map(ClusterNode::addr)
        })
    }

    /// PING where a script with these KEYS would go (the server, or on a cluster the node
    /// `node_for_keys` names): a dead connection is found and healed before a script is sent.
    pub fn ping_for(&mut self, keys: &[Vec<u8>]) -> Result<Reply, LiveError> {
        self.follow_topology();
        let Some(node) = self.node_for_keys(keys) else {
            return self.command(&[b"PING"]);
        };
        self.cluster_command(node, &redis::cmd("PING"), &[b"PING"])
    }

    /// Is the server there? A standalone server: PING. A cluster: the slot map read again, then PING
    /// to each master and to the node given to connect; the nodes that did not answer are listed
    /// ("127.0.0.1:7001 (master, slots 5461-10922): connection refused ..."), and only when none
    /// answered is the cluster unreachable (Err). BUSY is an answer.
    pub fn check_nodes(&mut self) -> Result<Vec<String>, LiveError> {
        let Con::Cluster(pool) = &mut self.con else {
            return self.command(&[b"PING"]).map(|_| Vec::new());
        };
        let _ = pool.refresh();
        let mut nodes: Vec<(NodeRef, String)> = pool
            .masters
            .iter()
            .map(|m| {
                let node = NodeRef {
                    addr: m.addr(),
                    role: "master".into(),
                    slot: None,
                };
                let label = format!("{} (master, slots {})", m.addr(), m.ranges());
                (node, label)
            })
            .collect();
        // The node given to connect, whatever the map says of it (down, it is named as down).
        let seed = pool.seed_addr().to_string();
        if !nodes.iter().any(|(n, _)| n.addr == seed) {
            let role = pool.role_of(&seed);
            let label = match role.as_str() {
                "node" => format!("{seed} (node connected to, not in the slot map)"),
                role => format!("{seed} ({role})"),
            };
            let node = NodeRef {
                addr: seed,
                role,
                slot: None,
            };
            nodes.push((node, label));
        }
        let mut down = Vec::new();
        let mut first_error = None;
        for (node, label) in &nodes {
            if let Err(f) = pool.request(node, &redis::cmd("PING")) {
                let why = f
                    .message
                    .strip_prefix(&format!("{}: ", node.describe()))
                    .unwrap_or(&f.message)
                    .to_string();
                first_error.get_or_insert_with(|| f.message.clone());
                down.push(format!("{label}: {why}"));
            }
        }
        // The slot map read now tells the role of the node given to connect (a failover).
        self.sync_role();
        match first_error {
            Some(e) if down.len() == nodes.len() => Err(LiveError::Lost(e)),
            _ => Ok(down),
        }
    }

    /// On a cluster that says `cluster_state:fail`, what its nodes say of why (asked of a node that
    /// answers); None when it is not down, on a standalone server, or when no node answers.
    pub fn cluster_down(&mut self) -> Option<cluster::ClusterDown> {
        match &mut self.con {
            Con::Cluster(pool) => pool.cluster_down(),
            Con::Single(_) => None,
        }
    }

    /// The refusal of a run with these KEYS on a cluster that is down: the cluster would answer
    /// CLUSTERDOWN without running it, so nothing is read, dry-run or sent. None when the run may go
    /// (not a cluster, the cluster is up, a keyless script, or reads allowed while down).
    pub fn cluster_down_refusal(&mut self, keys: &[Vec<u8>]) -> Option<String> {
        if keys.is_empty() || !self.server.cluster {
            return None;
        }
        let down = self.cluster_down().filter(|d| !d.reads_when_down)?;
        let to = self
            .node_for_keys(keys)
            .map_or_else(|| self.target.display.clone(), |n| n.describe());
        Some(format!("{}; nothing was sent to {to}", down.describe()))
    }

    /// On a cluster, the nodes that did not answer their last command and why; empty when every
    /// node answered (and on a standalone server).
    pub fn lost_nodes(&self) -> Vec<(String, String)> {
        match &self.con {
            Con::Cluster(pool) => pool.lost(),
            Con::Single(_) => Vec::new(),
        }
    }

    /// One command to one node of the cluster. A connection found dead is reopened and anything but
    /// a script is sent again once (a script is never sent twice: it may have run).
    fn cluster_command(
        &mut self,
        node: NodeRef,
        cmd: &redis::Cmd,
        args: &[&[u8]],
    ) -> Result<Reply, LiveError> {
        let Con::Cluster(pool) = &mut self.con else {
            return Err(LiveError::Connect("not a cluster".into()));
        };
        let (answered, result) = pool.send(node, cmd);
        let result = match result {
            Ok(reply) => Ok(reply),
            Err(f) if f.sent && !f.timed_out && !f.too_large && !is_script(args) => {
                let (_, retried) = pool.send(answered, cmd);
                retried.map_err(|f| LiveError::Lost(f.message))
            }
            Err(f) => Err(LiveError::Lost(f.message)),
        };
        self.sync_role();
        result
    }

    /// One command on the single connection.
    fn send(&mut self, cmd: &redis::Cmd) -> redis::RedisResult<Value> {
        self.arm();
        match &mut self.con {
            Con::Single(c) => c.req_command(cmd),
            Con::Cluster(_) => Err(redis::RedisError::from((
                redis::ErrorKind::Client,
                "a cluster command goes through its node",
            ))),
        }
    }

    /// A server error stays a reply; a connection failure becomes `LiveError::Lost` (after one
    /// reconnect attempt).
    fn reply_of(&mut self, result: redis::RedisResult<Value>) -> Result<Reply, LiveError> {
        match result {
            Ok(v) => Ok(to_reply(v)),
            // The cluster client returns the server's error replies as errors, those with a code it
            // does not know (WRONGTYPE, BUSY, ...) as `ErrorKind::Extension`.
            Err(e) if e.code().is_some() => Ok(Reply::Error(match (e.code(), e.detail()) {
                (Some(code), Some(detail)) => format!("{code} {detail}"),
                (Some(code), None) => code.to_string(),
                _ => e.to_string(),
            })),
            Err(e) => {
                let message = describe_error(&e, &self.target.display);
                self.reconnect();
                Err(LiveError::Lost(message))
            }
        }
    }

    /// Send several commands in one write and read all their replies (one round trip); server errors
    /// stay replies, in place.
    pub fn pipeline(&mut self, commands: &[Vec<Vec<u8>>]) -> Result<Vec<Reply>, LiveError> {
        if commands.is_empty() {
            return Ok(Vec::new());
        }
        let Con::Single(con) = &mut self.con else {
            // A cluster routes each command to its key's node: send them one by one.
            return commands
                .iter()
                .map(|args| {
                    let args: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
                    self.command(&args)
                })
                .collect();
        };
        let mut packed = Vec::new();
        for args in commands {
            let mut cmd = redis::Cmd::new();
            for a in args {
                cmd.arg(a.as_slice());
            }
            cmd.write_packed_command(&mut packed);
        }
        con.set_read_deadline(self.target.read_timeout.map(|t| Instant::now() + t));
        match con.req_packed_commands(&packed, 0, commands.len()) {
            Ok(values) => Ok(values.into_iter().map(to_reply).collect()),
            Err(e) => {
                let message = describe_error(&e, &self.target.display);
                self.reconnect();
                Err(LiveError::Lost(message))
            }
        }
    }

    /// The read timeout bounds the whole reply of the next command, not each read of it (a peer
    /// sending a byte at a time would otherwise hold the connection without end).
    fn arm(&mut self) {
        if let Con::Single(c) = &mut self.con {
            c.set_read_deadline(self.target.read_timeout.map(|t| Instant::now() + t));
        }
    }

    /// One reconnect attempt after a failure: the next command works again if the server is back.
    fn reconnect(&mut self) {
        // A cluster node's connection is dropped on failure and opened again when next needed.
        if let Con::Single(c) = &mut self.con {
            if let Ok(con) = open(&self.target) {
                *c = con;
                self.reconnects += 1;
            }
        }
    }

    /// One command of the discovery on the new connection, answered by `deadline`; a failure is a
    /// connection error (no reconnect: the connection is new).
    fn ask(&mut self, args: &[&[u8]], deadline: Instant) -> Result<Reply, LiveError> {
        let left = time_left(deadline, &self.target)?;
        let display = self.target.display.clone();
        let connect_error = |e: redis::RedisError| LiveError::Connect(describe_error(&e, &display));
        let Con::Single(con) = &mut self.con else {
            return Err(LiveError::Connect(format!(
                "{display}: discovery needs a single connection"
            )));
        };
        con.set_read_timeout(Some(left)).map_err(connect_error)?;
        // The whole discovery ends by the connect deadline, however slowly a peer answers.
        con.set_read_deadline(Some(deadline));
        match con.req_command(&to_cmd(args)) {
            Ok(v) => Ok(to_reply(v)),
            Err(e) => match server_error_text(&e) {
                Some(text) => Ok(Reply::Error(text)),
                None => Err(connect_error(e)),
            },
        }
    }

    fn text(&mut self, args: &[&[u8]], deadline: Instant) -> Result<Option<String>, LiveError> {
        Ok(match self.ask(args, deadline)? {
            Reply::Bulk(b) => Some(String::from_utf8_lossy(&b).into_owned()),
            Reply::Verbatim { text, .. } => Some(String::from_utf8_lossy(&text).into_owned()),
            _ => None,
        })
    }

    fn config_get(
        &mut self,
        name: &str,
        deadline: Instant,
    ) -> Result<Result<Option<String>, String>, LiveError> {
        Ok(
            match self.ask(&[b"CONFIG", b"GET", name.as_bytes()], deadline)? {
                Reply::Array(items) => Ok(items.get(1).and_then(|v| match v {
                    Reply::Bulk(b) => Some(String::from_utf8_lossy(b).into_owned()),
                    _ => None,
                })),
                Reply::Map(pairs) => Ok(pairs.first().and_then(|(_, v)| match v {
                    Reply::Bulk(b) => Some(String::from_utf8_lossy(b).into_owned()),
                    _ => None,
                })),
                Reply::Error(e) => Err(e),
                _ => Ok(None),
            },
        )
    }

    fn discover(&mut self, deadline: Instant) -> Result<ServerInfo, LiveError> {
        // Valkey's INFO also has redis_version (the Redis version it is compatible with).
        let info = match self.ask(&[b"INFO", b"server"], deadline)? {
            Reply::Bulk(b) | Reply::Verbatim { text: b, .. } => {
                String::from_utf8_lossy(&b).into_owned()
            }
            // A password is needed: the connection is of no use (every command would answer NOAUTH).
            Reply::Error(e) if e.starts_with("NOAUTH") => {
                return Err(LiveError::Connect(password_needed(&self.target.display)))
            }
            // INFO denied by an ACL: the version stays unknown.
            Reply::Error(_) => String::new(),
            other => {
                return Err(LiveError::Connect(format!(
                    "{}: did not answer as a Redis server (INFO replied {}); check the address and port",
                    self.target.display,
                    short(&other.to_cli().replace('\n', " "), 60)
                )))
            }
        };
        let (product, version) = match info_field(&info, "valkey_version") {
            Some(v) => ("valkey".to_string(), v.to_string()),
            None => (
                "redis".to_string(),
                info_field(&info, "redis_version")
                    .unwrap_or("unknown")
                    .to_string(),
            ),
        };
        let role = match self.ask(&[b"ROLE"], deadline)? {
            Reply::Array(items) => match items.first() {
                Some(Reply::Bulk(b)) => String::from_utf8_lossy(b).into_owned(),
                _ => "master".into(),
            },
            _ => "master".into(),
        };
        let cluster_info = self
            .text(&[b"INFO", b"cluster"], deadline)?
            .unwrap_or_default();
        let cluster = info_field(&cluster_info, "cluster_enabled") == Some("1");
        let mut notes = Vec::new();
        let mut busy_threshold_ms = None;
        for name in ["busy-reply-threshold", "lua-time-limit"] {
            match self.config_get(name, deadline)? {
                Ok(Some(v)) => {
                    busy_threshold_ms = v.parse().ok();
                    break;
                }
                Ok(None) => continue,
                Err(e) => {
                    notes.push(format!("CONFIG GET {name} was refused ({e}); assuming the default busy threshold of 5000 ms"));
                    break;
                }
            }
        }
        let maxmemory_policy = self
            .config_get("maxmemory-policy", deadline)?
            .ok()
            .flatten();
        let cluster_node_timeout_ms = if cluster {
            self.config_get("cluster-node-timeout", deadline)?
                .ok()
                .flatten()
                .and_then(|v| v.parse().ok())
        } else {
            None
        };
        let (server_profile, note) =
            crate::engine::profile::Profile::for_server(&product, &version);
        notes.extend(note);
        Ok(ServerInfo {
            profile: server_profile,
            product,
            version,
            role,
            cluster,
            cluster_node_timeout_ms,
            busy_threshold_ms: busy_threshold_ms
                .unwrap_or(crate::engine::sandbox::DEFAULT_BUSY_THRESHOLD_MS),
            maxmemory_policy,
            notes,
        })
    }

    pub fn protocol(&self) -> Protocol {
        self.protocol
    }

    /// The masters of the cluster and the slots each serves, read now with CLUSTER SLOTS (this also
    /// refreshes the map `node_for_key` uses); empty on a standalone server.
    pub fn cluster_masters(&mut self) -> Result<Vec<ClusterNode>, LiveError> {
        if !self.server.cluster {
            return Ok(Vec::new());
        }
        let Con::Cluster(pool) = &mut self.con else {
            return Ok(Vec::new());
        };
        let masters = pool.refresh()?;
        self.sync_role();
        Ok(masters)
    }

    /// The node given to connect may have been failed over (or promoted) since the slot map was
    /// last read: its role as the map says now.
    fn sync_role(&mut self) {
        let Con::Cluster(pool) = &self.con else {
            return;
        };
        if pool.masters.is_empty() {
            return;
        }
        // A node the map does not list (failed, left out) keeps the role it was last seen with.
        match pool.role_of(pool.seed_addr()).as_str() {
            "master" => self.server.role = "master".into(),
            "replica" => self.server.role = "slave".into(),
            _ => {}
        }
    }

    /// Does a script with these KEYS run on a replica (writes refused)? A standalone server: when it
    /// is one. A cluster: when the node it goes to is (a keyless script on a replica given to
    /// connect); a keyed script goes to its slot's master.
    pub fn runs_on_replica(&self, keys: &[Vec<u8>]) -> bool {
        match self.node_for_keys(keys) {
            Some(node) => node.role != "master",
            None => self.server.is_replica(),
        }
    }

    /// On a cluster, the master holding `key` ("host:port"), from its hash slot and the slot map read
    /// on connect (or by the last `cluster_masters`); None on a standalone server.
    pub fn node_for_key(&self, key: &[u8]) -> Option<String> {
        let slot = lint::hash_slot(key);
        match &self.con {
            Con::Cluster(pool) => pool
                .masters
                .iter()
                .find(|m| m.serves(slot))
                .map(ClusterNode::addr),
            Con::Single(_) => None,
        }
    }

    /// Is the script (its traced copy) already in the server's script cache?
    pub fn is_cached(&mut self, script: &[u8]) -> Result<bool, LiveError> {
        let sha = match instrument::instrument_for(script, None, self.server.profile.server_alias) {
            Some(copy) => copy.sha,
            None => sha1_hex(script),
        };
        Ok(matches!(
            self.command(&[b"SCRIPT", b"EXISTS", sha.as_bytes()])?,
            Reply::Array(items) if items.first() == Some(&Reply::Int(1))
        ))
    }

    /// SCRIPT LOAD the traced copy (what a traced run sends with EVALSHA).
    pub fn script_load(&mut self, script: &[u8]) -> Result<Reply, LiveError> {
        match instrument::instrument_for(script, None, self.server.profile.server_alias) {
            Some(copy) => self.command(&[b"SCRIPT", b"LOAD", &copy.text]),
            None => self.command(&[b"SCRIPT", b"LOAD", script]),
        }
    }

    fn instrumented(&mut self, script: &[u8]) -> Option<std::sync::Arc<instrument::Instrumented>> {
        match &self.last {
            Some((s, copy)) if s == script => Some(copy.clone()),
            _ => {
                let copy = std::sync::Arc::new(instrument::instrument_for(
                    script,
                    self.confine_db,
                    self.server.profile.server_alias,
                )?);
                self.last = Some((script.to_vec(), copy.clone()));
                Some(copy)
            }
        }
    }

    /// EVALSHA, then EVAL on NOSCRIPT.
    fn eval(
        &mut self,
        text: &[u8],
        sha: &str,
        request: &RunRequest,
        mode: WriteMode,
    ) -> Result<Reply, LiveError> {
        let (evalsha, eval): (&[u8], &[u8]) = match mode {
            WriteMode::ReadOnly => (b"EVALSHA_RO", b"EVAL_RO"),
            WriteMode::Allowed => (b"EVALSHA", b"EVAL"),
        };
        let numkeys = request.keys.len().to_string();
        let mut args: Vec<&[u8]> = vec![evalsha, sha.as_bytes(), numkeys.as_bytes()];
        args.extend(request.keys.iter().map(Vec::as_slice));
        args.extend(request.argv.iter().map(Vec::as_slice));
        let reply = self.script_command(&args, &request.keys)?;
        if matches!(&reply, Reply::Error(e) if e.starts_with("NOSCRIPT")) {
            args[0] = eval;
            args[1] = text;
            return self.script_command(&args, &request.keys);
        }
        Ok(reply)
    }

    /// Where SCRIPT KILL (or FUNCTION KILL) for a script of this connection goes: the same server and
    /// credentials, database 0 (a busy server refuses SELECT; a kill needs no database), and waits
    /// long enough for the server to read it (once the script has run for the busy threshold).
    pub fn killer_target(&self) -> Target {
        let wait =
            Duration::from_millis(self.server.busy_threshold_ms) + self.target.connect_timeout;
        let mut killer = self.target.clone();
        killer.connect_timeout = wait;
        killer.read_timeout = Some(wait);
        let settings = killer.info.redis_settings().clone().set_db(0);
        killer.info = killer.info.clone().set_redis_settings(settings);
        killer
    }

    /// Send a script. When the read timeout expires, the script would go on keeping the server busy:
    /// SCRIPT KILL it from a second connection (on the node running it) and say how that went.
    fn script_command(&mut self, args: &[&[u8]], keys: &[Vec<u8>]) -> Result<Reply, LiveError> {
        if matches!(self.con, Con::Cluster(_)) {
            return self.cluster_script(args, keys);
        }
        let result = self.send(&to_cmd(args));
        let timed_out = matches!(&result, Err(e) if e.is_timeout() && e.code().is_none());
        if let Err(e) = &result {
            if !timed_out && e.code().is_none() && !e.is_connection_refusal() {
                let message = describe_error(e, &self.target.display);
                self.reconnect();
                let addr = cluster::target_addr(&self.target);
                if e.reply_too_large().is_some() {
                    // The server replied: the script ran there, to its end.
                    return Err(LiveError::Sent(format!(
                        "{message}; the script ran on {addr} (the refused reply is its own)"
                    )));
                }
                return Err(lost_after_send(&message, &addr, args, keys));
            }
        }
        if !timed_out {
            return self.reply_of(result);
        }
        let answer = describe_kill(
            script_kill_for(&self.killer_target(), keys),
            self.server.cluster,
        );
        // The late reply of the script would be read as the next command's: a fresh connection (a
        // cluster connection skips it by itself).
        if matches!(self.con, Con::Single(_)) {
            self.reconnect();
        }
        let after = self
            .target
            .read_timeout
            .map_or("the read timeout".to_string(), |d| {
                format!("{}s", d.as_secs_f64())
            });
        Err(LiveError::Lost(format!(
            "{}: gave up waiting for the script after {after} (--read-timeout); {answer}",
            self.target.display
        )))
    }

    /// A script to the node of its first key (or the keyless node), never sent twice. A read
    /// timeout sends SCRIPT KILL to that node; a connection lost after the send says the script may
    /// have run there and how to check.
    fn cluster_script(&mut self, args: &[&[u8]], keys: &[Vec<u8>]) -> Result<Reply, LiveError> {
        let node = self.route(args)?;
        self.last_node = Some(node.clone());
        let Con::Cluster(pool) = &mut self.con else {
            return Err(LiveError::Connect("not a cluster".into()));
        };
        let (node, result) = pool.send(node, &to_cmd(args));
        self.last_node = Some(node.clone());
        self.sync_role();
        let Con::Cluster(pool) = &mut self.con else {
            return Err(LiveError::Connect("not a cluster".into()));
        };
        let failure = match result {
            Ok(reply) => return Ok(reply),
            Err(f) => f,
        };
        if failure.timed_out {
            let mut killer = pool.node_target(&node.addr);
            let wait =
                Duration::from_millis(self.server.busy_threshold_ms) + self.target.connect_timeout;
            killer.connect_timeout = wait;
            killer.read_timeout = Some(wait);
            let answer = describe_kill(
                Ok(vec![kill_split(
                    node.describe(),
                    open(&killer).and_then(|mut con| kill(&mut con, &killer, "SCRIPT")),
                )]),
                true,
            );
            let after = self
                .target
                .read_timeout
                .map_or("the read timeout".to_string(), |d| {
                    format!("{}s", d.as_secs_f64())
                });
            return Err(LiveError::Lost(format!(
                "{}: gave up waiting for the script after {after} (--read-timeout); {answer}",
                node.describe()
            )));
        }
        if !failure.sent {
            return Err(LiveError::Connect(format!(
                "{}; the script was not sent",
                failure.message
            )));
        }
        if failure.too_large {
            // The node replied: the script ran there, to its end.
            return Err(LiveError::Sent(format!(
                "{}; the script ran on {} (the refused reply is its own)",
                failure.message, node.addr
            )));
        }
        Err(lost_after_send(&failure.message, &node.addr, args, keys))
    }

    /// FCALL on a cluster: to the master of its first key (or the keyless node), never sent twice.
    /// A read timeout sends FUNCTION KILL to that node; a connection lost after the send says the
    /// function may have run there.
    pub(crate) fn cluster_fcall(
        &mut self,
        args: &[&[u8]],
        keys: &[Vec<u8>],
    ) -> Result<Reply, LiveError> {
        let node = self.route(args)?;
        let Con::Cluster(pool) = &mut self.con else {
            return Err(LiveError::Connect("not a cluster".into()));
        };
        let (node, result) = pool.send(node, &to_cmd(args));
        let killer = pool.node_target(&node.addr);
        self.last_node = Some(node.clone());
        self.sync_role();
        let failure = match result {
            Ok(reply) => return Ok(reply),
            Err(f) => f,
        };
        if failure.timed_out {
            let mut killer = killer;
            let wait =
                Duration::from_millis(self.server.busy_threshold_ms) + self.target.connect_timeout;
            killer.connect_timeout = wait;
            killer.read_timeout = Some(wait);
            let answer = fcall::function_kill(&killer);
            return Err(LiveError::Lost(format!(
                "{}: gave up waiting for the function (--read-timeout); {answer}",
                node.describe()
            )));
        }
        if !failure.sent {
            return Err(LiveError::Connect(format!(
                "{}; the function was not sent",
                failure.message
            )));
        }
        if failure.too_large {
            return Err(LiveError::Sent(format!(
                "{}; the function ran on {} (the refused reply is its own)",
                failure.message, node.addr
            )));
        }
        let keys = keys
            .iter()
            .map(|k| String::from_utf8_lossy(k).into_owned())
            .collect::<Vec<_>>()
            .join(", ");
        Err(LiveError::Sent(format!(
            "{}; the function was sent and may have run there before the connection dropped (evalbench never sends it twice): once the node answers, check the keys it was given ({keys})",
            failure.message
        )))
    }

    /// Run a script on the server as EVAL (or EVAL_RO) would, with a trace of its calls.
    pub fn run(&mut self, request: &RunRequest, mode: WriteMode) -> Result<RunReport, LiveError> {
        let started = Instant::now();
        let mut warnings = Vec::new();
        let (flags, _) = parse_shebang(&request.script).unwrap_or_default();
        let mode = if flags.no_writes {
            WriteMode::ReadOnly
        } else {
            mode
        };
        if let Some(refusal) = self.cross_slot_refusal(request) {
            self.last_node = None;
            return Ok(RunReport::refused(
                sha1_hex(&request.script),
                refusal,
                self.protocol,
                self.server.busy_threshold_ms,
            ));
        }
        let copy = if self.tracing || self.confine_db.is_some() {
            self.instrumented(&request.script)
        } else {
            None
        };
        if let (Some(db), None) = (self.confine_db, &copy) {
            return Ok(RunReport::refused(
                sha1_hex(&request.script),
                format!("evalbench: not sent: the script cannot be kept in the scratch db {db} (its shebang line is not valid, so it cannot be instrumented)"),
                self.protocol,
                self.server.busy_threshold_ms,
            ));
        }
        let user_sha = match &copy {
            Some(c) => c.user_sha.clone(),
            None => sha1_hex(&request.script),
        };
        let mut untraced = None;
        let reply = match &copy {
            Some(copy) => {
                let reply = self.eval(&copy.text, &copy.sha, request, mode)?;
                if matches!(&reply, Reply::Error(e) if e.starts_with("ERR Error compiling script"))
                    && self.confine_db.is_none()
                {
                    // Either the user's script does not compile (the plain EVAL says exactly how) or only
                    // the copy does not (then the plain run is exact but untraced).
                    untraced =
                        Some("the instrumented copy did not compile; the run was not traced");
                    self.eval(&request.script, &user_sha, request, mode)?
                } else {
                    reply
                }
            }
            None => self.eval(&request.script, &user_sha, request, mode)?,
        };
        let elapsed_ns = started.elapsed().as_nanos() as u64;
        let decoded = match &copy {
            Some(copy) if untraced.is_none() => instrument::decode(reply, copy),
            _ => Err(reply),
        };
        let (reply, trace, outcome, error_line, server_us) = match decoded {
            Ok(d) => {
                if d.untraced_calls > 0 {
                    warnings.push(Warning {
                        kind: WarningKind::TraceLimit, // a limit of evalbench's records
                        line: 0,
                        message: format!(
                            "{} more calls were made than the {} evalbench traces",
                            d.untraced_calls,
                            instrument::MAX_TRACED_CALLS
                        ),
                    });
                }
                let mut trace = d.trace;
                annotate(&mut self.resolve_cache, self.server.profile, &mut trace);
                match d.result {
                    instrument::Decision::Returned(r) => {
                        (r, trace, Outcome::Returned, None, d.server_us)
                    }
                    instrument::Decision::Raised { text, line } => (
                        Reply::Error(text),
                        trace,
                        Outcome::Raised,
                        line,
                        d.server_us,
                    ),
                    instrument::Decision::WouldCrash { line } => {
                        warnings.push(Warning {
                            kind: WarningKind::WouldCrash,
                            line: line.unwrap_or(0),
                            message: format!("the script raised a table without an 'err' field: a plain EVAL crashes {} (SIGSEGV); the traced run caught it", self.server.profile.display_name()),
                        });
                        (
                            Reply::Error("ERR unknown error".into()),
                            trace,
                            Outcome::Raised,
                            line,
                            d.server_us,
                        )
                    }
                }
            }
            Err(reply) => {
                let reply = match reply {
                    Reply::Error(e) => Reply::Error(
                        copy.as_ref()
                            .map_or(e.clone(), |c| e.replace(&c.sha, &user_sha)),
                    ),
                    other => other,
                };
                // An untraced run: an error raised while the script ran names the script's line
                // (`user_script:3:` or `@user_script:3.`); any other error refused it before it ran.
                let outcome = match &reply {
                    Reply::Error(e)
                        if e.contains("user_script:") && !e.contains("Error compiling script") =>
                    {
                        Outcome::Raised
                    }
                    Reply::Error(_) => Outcome::Refused,
                    _ => Outcome::Returned,
                };
                (reply, Vec::new(), outcome, None, None)
            }
        };
        if let Some(why) = untraced {
            if !matches!(outcome, Outcome::Refused) {
                warnings.push(Warning {
                    kind: WarningKind::TraceLimit, // a limit of evalbench's records
                    line: 0,
                    message: why.into(),
                });
            }
        }
        // The server's compile error, marked at its line as the sandbox's is.
        let error_line = error_line.or_else(|| {
            let probe = RunReport::refused(String::new(), String::new(), self.protocol, 0);
            RunReport {
                reply: reply.clone(),
                ..probe
            }
            .compile_error_line()
        });
        warnings.extend(lint::warnings(
            &request.keys,
            &trace,
            outcome,
            error_line,
            trace.iter().any(|t| t.write),
        ));
        Ok(RunReport {
            profile: self.server.profile.id,
            sha1: user_sha,
            reply,
            protocol: self.protocol,
            notes: Vec::new(),
            first_write_ns: None,
            busy_threshold_ms: self.server.busy_threshold_ms,
            warnings,
            logs: Vec::new(),
            snapshots: Vec::new(),
            lua_value: None,
            outcome,
            error_line,
            elapsed_ns: server_us.map_or(elapsed_ns, |us| us * 1000),
            round_trip_ns: Some(elapsed_ns),
            trace,
        })
    }
}

/// The keys a run's traced write calls changed (calls that answered an error wrote nothing), each
/// once, in the order first written.
pub fn written_keys(report: &RunReport) -> Vec<Vec<u8>> {
    let mut keys: Vec<Vec<u8>> = Vec::new();
    for entry in report
        .trace
        .iter()
        .filter(|t| t.write && !t.reply.is_error())
    {
        for key in &entry.keys {
            if !keys.contains(key) {
                keys.push(key.clone());
            }
        }
    }
    keys
}

/// What a live run did, in words: "wrote 1 key (counter), then failed", "returned", "refused: nothing
/// ran". A run that failed after writing says so: the writes stay (Redis does not roll back).
pub fn outcome_summary(report: &RunReport) -> String {
    let written = written_keys(report);
    let wrote = match written.len() {
        0 => None,
        n => Some(format!(
            "wrote {n} key{} ({})",
            if n == 1 { "" } else { "s" },
            written
                .iter()
                .take(5)
                .map(|k| String::from_utf8_lossy(k).into_owned())
                .collect::<Vec<_>>()
                .join(", ")
                + if n > 5 { ", ..." } else { "" }
        )),
    };
    match (report.outcome, wrote) {
        (Outcome::Refused, _) => "refused: nothing ran".into(),
        (Outcome::Raised | Outcome::Killed, Some(w)) => format!("{w}, then failed"),
        (Outcome::Raised, None) => "failed before any write".into(),
        (Outcome::Returned, Some(w)) => format!("{w}, then returned"),
        (Outcome::Returned, None) => "returned, no writes".into(),
        (Outcome::Killed, None) => "killed before any write".into(),
        (Outcome::Cancelled, _) => "cancelled: nothing was sent".into(),
        (Outcome::Lost, _) => "sent, then the connection was lost: the script may have run".into(),
    }
}

/// The refusal text when KEYS span several hash slots (checked before reading or sending anything,
/// as the cluster would refuse it), with each key's slot and the node serving it (`node_of`).
pub fn cross_slot(keys: &[Vec<u8>], node_of: impl Fn(u16) -> Option<String>) -> Option<String> {
    let slots: Vec<u16> = keys.iter().map(|k| lint::hash_slot(k)).collect();
    if slots.windows(2).all(|w| w[0] == w[1]) {
        return None;
    }
    let listed: Vec<String> = keys
        .iter()
        .zip(&slots)
        .map(|(k, s)| match node_of(*s) {
            Some(node) => format!("{} -> slot {s} on {node}", String::from_utf8_lossy(k)),
            None => format!("{} -> slot {s}", String::from_utf8_lossy(k)),
        })
        .collect();
    Some(format!(
        "CROSSSLOT Keys in request don't hash to the same slot (evalbench read nothing and did not send the script: {}; put a common {{hash tag}} in the keys)",
        listed.join(", ")
    ))
}

/// Fill keys and the write flag from Redis 7.0.15's command table.
fn annotate(
    cache: &mut crate::engine::commands::ResolveCache,
    profile: &'static crate::engine::profile::Profile,
    trace: &mut [crate::engine::report::TraceEntry],
) {
    for entry in trace {
        if let Some((keys, write)) =
            crate::engine::commands::describe_call(cache, profile, &entry.command)
        {
            entry.keys = keys;
            entry.write = write;
        }
    }
}

/// SCRIPT KILL on a fresh connection (the running script's connection is blocked): the server's answer,
/// or the connection error.
pub fn script_kill(target: &Target) -> Result<Reply, LiveError> {
    kill(&mut open(target)?, target, "SCRIPT").map(|(reply, _)| reply)
}

/// How long the server has, after an OK to SCRIPT KILL or FUNCTION KILL, to answer PING with
/// anything but BUSY before the kill is reported as not having stopped the script.
pub const KILL_CONFIRM: Duration = Duration::from_secs(5);

/// How long SCRIPT KILL's own answer is awaited when the target has no read timeout: the server
/// reads it only once the script has run for the busy threshold.
const KILL_REPLY_WAIT: Duration = Duration::from_secs(60);

/// What the server did after SCRIPT KILL (or FUNCTION KILL) answered OK. OK only sets a flag that
/// the script's hook reads; code the hook cannot interrupt (a loop in an error handler) keeps
/// running, so only a PING that is answered tells that the script stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AfterKill {
    /// Not checked: the kill was not answered OK.
    NotChecked,
    /// PING was answered (not BUSY): the script stopped.
    Answers,
    /// The server still answered BUSY after this long.
    StillBusy(Duration),
    /// PING got no answer within this long (or the connection broke): the server is frozen.
    Silent(Duration),
}

/// `what` KILL ("SCRIPT" or "FUNCTION") on `con`: the server's answer (an error reply such as
/// NOTBUSY or UNKILLABLE is an answer), and after an OK, whether PING is answered again.
fn kill(
    con: &mut redis::Connection,
    target: &Target,
    what: &str,
) -> Result<(Reply, AfterKill), LiveError> {
    let lost = |e: redis::RedisError| LiveError::Lost(describe_error(&e, &target.display));
    let wait = target.read_timeout.unwrap_or(KILL_REPLY_WAIT);
    con.set_read_timeout(Some(wait)).map_err(lost)?;
    con.set_read_deadline(Some(Instant::now() + wait));
    let cmd = redis::cmd(what).arg("KILL").to_owned();
    let answer = con
        .req_command(&cmd)
        .map(to_reply)
        .or_else(|e| match server_error_text(&e) {
            Some(text) => Ok(Reply::Error(text)),
            None => Err(lost(e)),
        })?;
    if answer != Reply::Status("OK".into()) {
        return Ok((answer, AfterKill::NotChecked));
    }
    Ok((answer, confirm_stopped(con, KILL_CONFIRM)))
}

/// PING until it is answered with anything but BUSY, for `window` at most.
fn confirm_stopped(con: &mut redis::Connection, window: Duration) -> AfterKill {
    let started = Instant::now();
    let ping = redis::cmd("PING").to_owned();
    loop {
        let left = window.saturating_sub(started.elapsed());
        if left.is_zero() {
            return AfterKill::StillBusy(window);
        }
        if con.set_read_timeout(Some(left)).is_err() {
            return AfterKill::Silent(started.elapsed());
        }
        con.set_read_deadline(Some(Instant::now() + left));
        let busy = match con.req_command(&ping) {
            Ok(Value::ServerError(e)) => e.code() == "BUSY",
            Ok(_) => false,
            Err(e) if e.code() == Some("BUSY") => true,
            Err(e) if e.code().is_some() => false,
            // No answer at all: the server does not read its clients any more.
            Err(e) if e.is_timeout() => return AfterKill::Silent(window),
            Err(_) => return AfterKill::Silent(started.elapsed()),
        };
        if !busy {
            return AfterKill::Answers;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// How a kill ended, for a front end to act on (the words are in `KillReport::text`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KillVerdict {
    /// Killed, and the server answers PING again.
    Stopped,
    /// NOTBUSY: no script was running by then.
    NotRunning,
    /// UNKILLABLE: the script has written; only SHUTDOWN NOSAVE stops it.
    Unkillable,
    /// Killed (OK), but the server still answers BUSY.
    StillBusy,
    /// The server does not answer at all (it may need a restart).
    NotAnswering,
    /// Another answer, or the kill could not be sent.
    Other,
}

/// A kill's verdict and what happened in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KillReport {
    pub verdict: KillVerdict,
    pub text: String,
}

/// `what` KILL's answer and the PING check after it, in words: "sent SCRIPT KILL: OK; ...". `to`:
/// " to host:port" on a cluster, else empty.
pub fn judge_kill(
    what: &str,
    to: &str,
    answer: &Result<Reply, LiveError>,
    after: &AfterKill,
) -> KillReport {
    let subject = if what == "FUNCTION" {
        "function"
    } else {
        "script"
    };
    let (verdict, text) = match (answer, after) {
        (Ok(Reply::Status(s)), AfterKill::Answers) if s == "OK" => (
            KillVerdict::Stopped,
            format!("sent {what} KILL{to}: OK; the {subject} was stopped (the server answers PING)"),
        ),
        (Ok(Reply::Status(s)), AfterKill::StillBusy(d)) if s == "OK" => (
            KillVerdict::StillBusy,
            format!(
                "sent {what} KILL{to}: OK, but the server still answers BUSY after {}s: the {subject} did not stop (it may be in code the server cannot interrupt); wait for it, or have an administrator restart the server",
                d.as_secs_f64()
            ),
        ),
        (Ok(Reply::Status(s)), AfterKill::Silent(d)) if s == "OK" => (
            KillVerdict::NotAnswering,
            format!(
                "sent {what} KILL{to}: OK, but the server does not answer PING within {}s: the {subject} did not stop and the server is frozen (a loop the server cannot interrupt, such as one in an error handler); it may need a restart",
                d.as_secs_f64()
            ),
        ),
        (Ok(Reply::Error(e)), _) if e.starts_with("NOTBUSY") => (
            KillVerdict::NotRunning,
            format!(
                "sent {what} KILL{to}: NOTBUSY (the {subject} had ended by then; its reply was not read)"
            ),
        ),
        (Ok(Reply::Error(e)), _) if e.starts_with("UNKILLABLE") => (
            KillVerdict::Unkillable,
            format!(
                "sent {what} KILL{to}: UNKILLABLE: the {subject} has written, so only SHUTDOWN NOSAVE stops it (which loses the writes since the last save; evalbench never sends it); otherwise the server stays busy until the {subject} ends"
            ),
        ),
        (Ok(other), _) => (
            KillVerdict::Other,
            format!("sent {what} KILL{to}: {}", other.to_cli().replace('\n', " ")),
        ),
        (Err(e), _) => (
            KillVerdict::NotAnswering,
            format!(
                "{what} KILL{to} could not be sent: {e} (a server that does not answer may need a restart)"
            ),
        ),
    };
    KillReport { verdict, text }
}

/// What SCRIPT KILL answered, for a message: "sent SCRIPT KILL: OK; ...". On a cluster, the node that
/// The role a node gives in its HELLO reply ("master" or "replica"); HELLO is answered even while a
/// script keeps the node busy.
fn hello_role(con: &mut redis::Connection) -> Option<String> {
    let reply = to_reply(con.req_command(&redis::cmd("HELLO")).ok()?);
    let role = match &reply {
        Reply::Array(items) => items
            .chunks(2)
            .find(|pair| pair[0] == Reply::bulk("role"))
            .and_then(|pair| pair.get(1).cloned()),
        Reply::Map(pairs) => pairs
            .iter()
            .find(|(k, _)| *k == Reply::bulk("role"))
            .map(|(_, v)| v.clone()),
        _ => None,
    }?;
    match role {
        Reply::Bulk(b) => Some(String::from_utf8_lossy(&b).into_owned()),
        Reply::Status(s) => Some(s),
        _ => None,
    }
}

/// What SCRIPT KILL answered, for a message: "sent SCRIPT KILL: OK; ...". On a cluster, the node that
/// ran the script (the one not answering NOTBUSY) is named.
pub fn describe_kill(answers: Result<KillAnswers, LiveError>, cluster: bool) -> String {
    judge_kills(answers, cluster).text
}

/// `describe_kill` with its verdict.
pub fn judge_kills(answers: Result<KillAnswers, LiveError>, cluster: bool) -> KillReport {
    let answers = match answers {
        Ok(answers) if !answers.is_empty() => answers,
        Ok(_) => {
            return KillReport {
                verdict: KillVerdict::Other,
                text: "SCRIPT KILL was not sent (no node to ask)".into(),
            }
        }
        Err(e) => return judge_kill("SCRIPT", "", &Err(e), &AfterKill::NotChecked),
    };
    let not_busy =
        |a: &Result<Reply, LiveError>| matches!(a, Ok(Reply::Error(e)) if e.starts_with("NOTBUSY"));
    // The node that ran the script answered something but NOTBUSY; a node that could not be
    // reached is told only when no node answered so.
    let (node, answer, after) = answers
        .iter()
        .find(|(_, a, _)| a.is_ok() && !not_busy(a))
        .or_else(|| answers.iter().find(|(_, a, _)| !not_busy(a)))
        .unwrap_or(&answers[0]);
    let to = if cluster {
        format!(" to {node}")
    } else {
        String::new()
    };
    judge_kill("SCRIPT", &to, answer, after)
}

/// The nodes `script_kill_for` asked, each with its answer: ("host:port", SCRIPT KILL's reply or the
/// connection error, the PING check after an OK).
pub type KillAnswers = Vec<(String, Result<Reply, LiveError>, AfterKill)>;

/// `what` KILL on a fresh connection to `target`, with the PING check after an OK.
/// A kill's result as one entry of `KillAnswers`.
fn kill_split(
    name: String,
    result: Result<(Reply, AfterKill), LiveError>,
) -> (String, Result<Reply, LiveError>, AfterKill) {
    match result {
        Ok((reply, after)) => (name, Ok(reply), after),
        Err(e) => (name, Err(e), AfterKill::NotChecked),
    }
}

pub(crate) fn kill_on(target: &Target, what: &str) -> (Result<Reply, LiveError>, AfterKill) {
    match open(target).and_then(|mut con| kill(&mut con, target, what)) {
        Ok((reply, after)) => (Ok(reply), after),
        Err(e) => (Err(e), AfterKill::NotChecked),
    }
}

/// SCRIPT KILL where a script with these KEYS runs, on fresh connections (the running script's one is
/// blocked). A standalone server: the server (as `script_kill`). A cluster: the master serving the first
/// key's slot (CLUSTER SLOTS read from the target's node); with no keys, the target's node itself
/// (where `LiveBackend` sends keyless scripts). A target node that is busy itself cannot list its
/// peers: it is the one asked. Each node is named with its role and slot. Err: the target's node is
/// unreachable.
pub fn script_kill_for(target: &Target, keys: &[Vec<u8>]) -> Result<KillAnswers, LiveError> {
    let mut seed = open(target)?;
    let slots = seed.req_command(&redis::cmd("CLUSTER").arg("SLOTS").to_owned());
    // A standalone server refuses CLUSTER SLOTS; a busy node answers BUSY.
    let slots = slots.map(to_reply);
    let busy = matches!(&slots, Ok(Reply::Error(e)) if e.starts_with("BUSY"));
    let masters = match slots {
        Ok(reply @ Reply::Array(_)) => parse_cluster_slots(&reply, &seed_host(target)),
        _ => Vec::new(),
    };
    let seed_addr = cluster::target_addr(target);
    // A keyless script went to the node given to connect (as `LiveBackend` routes it); a node busy
    // with a script cannot list its peers (CLUSTER SLOTS answers BUSY): it is the one running it.
    if keys.is_empty() || (busy && masters.is_empty()) {
        if masters.is_empty() && !busy {
            return Ok(vec![kill_split(
                target.display.clone(),
                kill(&mut seed, target, "SCRIPT"),
            )]);
        }
        let node = NodeRef {
            addr: seed_addr,
            // HELLO answers even while the node is busy.
            role: hello_role(&mut seed).unwrap_or_else(|| "node".into()),
            slot: keys.first().map(|k| lint::hash_slot(k)),
        };
        return Ok(vec![kill_split(
            node.describe(),
            kill(&mut seed, target, "SCRIPT"),
        )]);
    }
    if masters.is_empty() {
        return Ok(vec![kill_split(
            target.display.clone(),
            kill(&mut seed, target, "SCRIPT"),
        )]);
    }
    let Some(key) = keys.first() else {
        return Ok(Vec::new());
    };
    let slot = lint::hash_slot(key);
    let Some(owner) = masters.iter().find(|m| m.serves(slot)) else {
        return Err(LiveError::Server(format!(
            "{}: no master of the cluster serves slot {slot} (CLUSTER SLOTS)",
            target.display
        )));
    };
    let node = NodeRef {
        addr: owner.addr(),
        role: "master".into(),
        slot: Some(slot),
    };
    let node_target = owner.target(target);
    let (answer, after) = kill_on(&node_target, "SCRIPT");
    Ok(vec![(node.describe(), answer, after)])
}

impl LiveBackend {
    /// SCRIPT KILL on every node (the overview's X) as `script_kill_everywhere`, the nodes from
    /// this connection's slot map read again (a node given to connect that is down is not needed).
    pub fn script_kill_on_every_node(&mut self) -> Result<KillAnswers, LiveError> {
        let killer = self.killer_target();
        if !self.server.cluster {
            return script_kill_everywhere(&killer);
        }
        let masters = self
            .cluster_masters()
            .unwrap_or_else(|_| self.masters().to_vec());
        if masters.is_empty() {
            return script_kill_everywhere(&killer);
        }
        Ok(kill_on_nodes(&killer, &masters))
    }
}

/// SCRIPT KILL on each master and replica of `masters`, each named with its role and slots.
fn kill_on_nodes(target: &Target, masters: &[ClusterNode]) -> KillAnswers {
    let mut nodes: Vec<(String, String)> = Vec::new();
    for m in masters {
        nodes.push((
            m.addr(),
            format!("{} (master, slots {})", m.addr(), m.ranges()),
        ));
        for r in &m.replicas {
            nodes.push((r.clone(), format!("{r} (replica of {})", m.addr())));
        }
    }
    nodes
        .into_iter()
        .map(|(addr, name)| {
            let node = cluster::node_target(target, &addr);
            let (answer, after) = kill_on(&node, "SCRIPT");
            (name, answer, after)
        })
        .collect()
}

/// SCRIPT KILL where any script may run, when its keys are unknown (the overview's X): a standalone
/// server, or a node busy itself, as `script_kill_for`; a cluster: every master and replica (the
/// ones running no script answer NOTBUSY), each named with its role and slots.
pub fn script_kill_everywhere(target: &Target) -> Result<KillAnswers, LiveError> {
    let mut seed = open(target)?;
    let masters = match seed
        .req_command(&redis::cmd("CLUSTER").arg("SLOTS").to_owned())
        .map(to_reply)
    {
        Ok(reply @ Reply::Array(_)) => parse_cluster_slots(&reply, &seed_host(target)),
        _ => Vec::new(),
    };
    if masters.is_empty() {
        return script_kill_for(target, &[]);
    }
    Ok(kill_on_nodes(target, &masters))
}

/// A master of a cluster as CLUSTER SLOTS lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterNode {
    pub host: String,
    pub port: u16,
    /// The slot ranges it serves (inclusive), in order.
    pub slots: Vec<(u16, u16)>,
    /// Its replicas ("host:port"), as CLUSTER SLOTS lists them.
    pub replicas: Vec<String>,
}

impl ClusterNode {
    /// "host:port", as MOVED replies and `KeySummary::node` name it.
    pub fn addr(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }

    /// Its slot ranges as "0-5460" or "0-100, 200-300".
    pub fn ranges(&self) -> String {
        self.slots
            .iter()
            .map(|(from, to)| {
                if from == to {
                    from.to_string()
                } else {
                    format!("{from}-{to}")
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    pub fn serves(&self, slot: u16) -> bool {
        self.slots
            .iter()
            .any(|(from, to)| (*from..=*to).contains(&slot))
    }

    /// The target with this node's address (same credentials, TLS and timeouts).
    pub(crate) fn target(&self, target: &Target) -> Target {
        let addr = match target.info.addr().clone() {
            redis::ConnectionAddr::TcpTls {
                insecure,
                tls_params,
                ..
            } => redis::ConnectionAddr::TcpTls {
                host: self.host.clone(),
                port: self.port,
                insecure,
                tls_params,
            },
            _ => redis::ConnectionAddr::Tcp(self.host.clone(), self.port),
        };
        Target {
            info: target.info.clone().set_addr(addr),
            display: self.addr(),
            ..target.clone()
        }
    }
}

/// The host of the target's address (CLUSTER SLOTS leaves a node's address empty when it is the one
/// answering).
fn seed_host(target: &Target) -> String {
    match target.info.addr() {
        redis::ConnectionAddr::Tcp(host, _) => host.clone(),
        redis::ConnectionAddr::TcpTls { host, .. } => host.clone(),
        _ => "127.0.0.1".into(),
    }
}

/// The masters in a CLUSTER SLOTS reply (`[[from, to, [host, port, id, ...], replicas...], ...]`),
/// ordered by their first slot. Hosts are named as the redis crate names them (an empty or wildcard
/// address is the answering node's host, "?" an unknown node), so routing by address reuses its
/// connections.
pub(crate) fn parse_cluster_slots(reply: &Reply, answering_host: &str) -> Vec<ClusterNode> {
    let Reply::Array(ranges) = reply else {
        return Vec::new();
    };
    let mut masters: Vec<ClusterNode> = Vec::new();
    for range in ranges {
        let Reply::Array(parts) = range else {
            continue;
        };
        let (Some(Reply::Int(from)), Some(Reply::Int(to)), Some(Reply::Array(master))) =
            (parts.first(), parts.get(1), parts.get(2))
        else {
            continue;
        };
        let host = match master.first() {
            Some(Reply::Bulk(h)) => String::from_utf8_lossy(h).into_owned(),
            Some(Reply::Nil) => String::new(),
            _ => continue,
        };
        let host = match host.as_str() {
            "?" => continue,
            "" | "0.0.0.0" | "::" => answering_host.to_string(),
            _ => host,
        };
        let Some(Reply::Int(port)) = master.get(1) else {
            continue;
        };
        let (port, range) = (*port as u16, (*from as u16, *to as u16));
        let replicas: Vec<String> = parts[3..]
            .iter()
            .filter_map(|r| match r {
                Reply::Array(r) => match (r.first(), r.get(1)) {
                    (Some(Reply::Bulk(h)), Some(Reply::Int(p))) => {
                        let h = String::from_utf8_lossy(h);
                        let h = match h.as_ref() {
                            "" | "0.0.0.0" | "::" => answering_host,
                            "?" => return None,
                            h => h,
                        };
                        Some(format!("{h}:{p}"))
                    }
                    _ => None,
                },
                _ => None,
            })
            .collect();
        match masters
            .iter_mut()
            .find(|m| m.host == host && m.port == port)
        {
            Some(m) => m.slots.push(range),
            None => masters.push(ClusterNode {
                host,
                port,
                slots: vec![range],
                replicas,
            }),
        }
    }
    for m in &mut masters {
        m.slots.sort_unstable();
    }
    masters.sort_by_key(|m| m.slots.first().copied());
    masters
}

/// A script was sent to `addr`, then its connection was lost (`message`): it may have run there.
fn lost_after_send(message: &str, addr: &str, args: &[&[u8]], keys: &[Vec<u8>]) -> LiveError {
    let sha = match args.first() {
        Some(name) if name.len() >= 7 && name[..7].eq_ignore_ascii_case(b"EVALSHA") => {
            String::from_utf8_lossy(args.get(1).copied().unwrap_or_default()).into_owned()
        }
        _ => sha1_hex(args.get(1).copied().unwrap_or_default()),
    };
    let keys = if keys.is_empty() {
        String::new()
    } else {
        format!(
            " and the keys it was given ({})",
            keys.iter()
                .map(|k| String::from_utf8_lossy(k).into_owned())
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    LiveError::Sent(format!(
        "{message}; the script was sent and may have run there before the connection dropped (evalbench never sends it twice): once the node answers, check SCRIPT EXISTS {sha} on {addr}{keys}"
    ))
}

/// EVAL, EVALSHA, FCALL and their read-only forms: a script, never sent twice.
fn is_script(args: &[&[u8]]) -> bool {
    args.first().is_some_and(|name| {
        (name.len() >= 4 && name[..4].eq_ignore_ascii_case(b"EVAL"))
            || (name.len() >= 5 && name[..5].eq_ignore_ascii_case(b"FCALL"))
    })
}

fn to_cmd(args: &[&[u8]]) -> redis::Cmd {
    let mut cmd = redis::Cmd::new();
    for a in args {
        cmd.arg(*a);
    }
    cmd
}

pub(crate) fn open(target: &Target) -> Result<redis::Connection, LiveError> {
    let con = open_until(target, Instant::now() + target.connect_timeout)?;
    con.set_read_timeout(target.read_timeout)
        .map_err(|e| LiveError::Connect(describe_error(&e, &target.display)))?;
    Ok(con)
}

/// The time left until `deadline`, or the connect timeout's error.
fn time_left(deadline: Instant, target: &Target) -> Result<Duration, LiveError> {
    match deadline.saturating_duration_since(Instant::now()) {
        left if left.is_zero() => Err(LiveError::Connect(format!(
            "{}: timed out waiting for the server (check the address, firewalls, or a script blocking the server)",
            target.display
        ))),
        left => Ok(left),
    }
}

/// A connection set up (TCP, TLS, AUTH or HELLO, SELECT) by `deadline`, its read timeout the time
/// left. The crate waits its timeout once per command of its setup pipeline, so it gets one command
/// at most: no CLIENT SETINFO (Redis 7.0 does not know it), and SELECT is sent here.
/// A plain connection to the target (the LDB session needs one of its own: it reads replies as they come).
pub(crate) fn open_single(target: &Target) -> Result<redis::Connection, LiveError> {
    let con = open_until(target, Instant::now() + target.connect_timeout)?;
    con.set_read_timeout(target.read_timeout)
        .map_err(|e| LiveError::Connect(describe_error(&e, &target.display)))?;
    Ok(con)
}

fn open_until(target: &Target, deadline: Instant) -> Result<redis::Connection, LiveError> {
    // rustls needs a process-wide crypto provider; installing it twice is harmless.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let db = target.info.redis_settings().db();
    let settings = target
        .info
        .redis_settings()
        .clone()
        .set_skip_set_lib_name()
        // The handshake's replies (HELLO, AUTH) are refused past the budget too.
        .set_reply_limit(Some(crate::engine::budget::limit() as u64))
        .set_db(0);
    let info = target.info.clone().set_redis_settings(settings);
    let client = match &target.tls {
        Some(certs) => redis::Client::build_with_tls(info, certs.clone()),
        None => redis::Client::open(info),
    }
    .map_err(|e| LiveError::Connect(describe_error(&e, &target.display)))?;
    let mut con = client
        .get_connection_with_timeout(time_left(deadline, target)?)
        .map_err(|e| LiveError::Connect(describe_error(&e, &target.display)))?;
    // A reply announced past the memory budget is refused before it is allocated.
    con.set_reply_limit(Some(crate::engine::budget::limit() as u64));
    let left = time_left(deadline, target)?;
    con.set_read_timeout(Some(left))
        .map_err(|e| LiveError::Connect(describe_error(&e, &target.display)))?;
    if db != 0 {
        con.set_read_deadline(Some(deadline));
        let select = redis::cmd("SELECT").arg(db).to_owned();
        let refusal = match con.req_command(&select).map(to_reply) {
            Ok(Reply::Error(e)) => Some(e),
            Ok(_) => None,
            Err(e) => match server_error_text(&e) {
                Some(text) => Some(text),
                None => return Err(LiveError::Connect(describe_error(&e, &target.display))),
            },
        };
        match refusal {
            Some(e) if e.starts_with("NOAUTH") => {
                return Err(LiveError::Connect(password_needed(&target.display)))
            }
            Some(e) => {
                return Err(LiveError::Connect(format!(
                    "{}: SELECT {db} was refused: {e}",
                    target.display
                )))
            }
            None => {}
        }
        con.set_read_timeout(Some(time_left(deadline, target)?))
            .map_err(|e| LiveError::Connect(describe_error(&e, &target.display)))?;
        con.set_read_deadline(None);
    }
    Ok(con)
}

/// The text of a server's error reply the crate returned as an error ("CODE detail").
pub(crate) fn server_error_text(e: &redis::RedisError) -> Option<String> {
    match (e.code(), e.detail()) {
        (Some(code), Some(detail)) => Some(format!("{code} {detail}")),
        (Some(code), None) => Some(code.to_string()),
        _ => None,
    }
}

fn short(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(width - 1).collect();
        t.push('…');
        t
    }
}
