//! Shared test support: a real `redis-server` on a free loopback port, a minimal RESP connection
//! (the engine's own parser), seeding and dumping a server keyspace in the sandbox's JSON format,
//! and the `.cases` file format of the differential corpus.

#![allow(dead_code)]

use evalbench::engine::reply::{parse_resp, Reply};
use serde_json::{json, Map, Value as Json};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A redis-server child process, killed on drop.
pub struct RedisServer {
    child: Child,
    pub port: u16,
    /// The server's own working directory: a replica (or SAVE) writes `dump.rdb` there, never into
    /// the crate root where every later test server would load it. Removed with the server.
    dir: tempfile::TempDir,
}

/// A fresh, empty working directory for one server.
fn server_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("evalbench-test-redis-")
        .tempdir()
        .expect("create the test server's directory")
}

impl RedisServer {
    /// Start a server, or `None` (with a notice) when redis-server is not installed outside CI.
    /// Under `CI=true` a missing server is a failure.
    pub fn start() -> Option<RedisServer> {
        RedisServer::start_with(&[])
    }

    /// `start` with extra redis-server arguments (`PORT` in them is replaced by the chosen port).
    pub fn start_with(extra: &[&str]) -> Option<RedisServer> {
        let binary = std::env::var("REDIS_SERVER").unwrap_or_else(|_| "redis-server".into());
        RedisServer::start_binary(&binary, extra)
    }

    /// The real server of a profile (`redis-7.0` is `redis-server`, or $REDIS_SERVER; the others
    /// are the launchers .ci/install-servers writes to $EVALBENCH_SERVERS, by default
    /// ~/.cache/redis-servers/bin). `None` with a notice when it is not installed, outside CI.
    pub fn start_profile(profile: &str) -> Option<RedisServer> {
        if profile == "redis-7.0" {
            return RedisServer::start();
        }
        let dir = std::env::var("EVALBENCH_SERVERS").unwrap_or_else(|_| {
            let cache = std::env::var("XDG_CACHE_HOME").unwrap_or_else(|_| {
                format!("{}/.cache", std::env::var("HOME").unwrap_or_default())
            });
            format!("{cache}/redis-servers/bin")
        });
        let binary = format!("{dir}/{profile}");
        RedisServer::start_binary(&binary, &[])
    }

    fn start_binary(binary: &str, extra: &[&str]) -> Option<RedisServer> {
        // Tests start servers in parallel: a port found free may be taken by another test's server
        // before ours binds it. Ours then exits; try another port.
        for _ in 0..5 {
            match RedisServer::try_start(binary, extra) {
                Ok(server) => return server,
                Err(()) => continue,
            }
        }
        panic!("could not start redis-server on a free port after 5 attempts");
    }

    fn try_start(binary: &str, extra: &[&str]) -> Result<Option<RedisServer>, ()> {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|_| ())?
            .port();
        let dir = server_dir();
        let spawned = Command::new(binary)
            .arg("--dir")
            .arg(dir.path())
            .args([
                "--port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .args(extra.iter().map(|a| a.replace("PORT", &port.to_string())))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        let child = match spawned {
            Ok(c) => c,
            Err(e) => {
                if std::env::var("CI").is_ok_and(|v| v == "true") {
                    panic!("CI=true but {binary} could not be started: {e}");
                }
                eprintln!("NOTICE: skipping differential tests: {binary} not available ({e}); install redis-server (other servers: .ci/install-servers)");
                return Ok(None);
            }
        };
        let mut server = RedisServer { child, port, dir };
        let pid = format!("process_id:{}", server.child.id());
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if matches!(server.child.try_wait(), Ok(Some(_))) {
                return Err(()); // exited: the port was taken
            }
            if let Ok(mut c) = server.try_connect() {
                // The kernel accepts connections once the port listens, before the server is
                // ready: a server that then fails to start (a cluster node whose bus port,
                // port + 10000, another test's server holds) resets this connection. Retry
                // elsewhere rather than reconnect to it.
                let info = match c.send_and_read(b"*2\r\n$4\r\nINFO\r\n$6\r\nserver\r\n") {
                    Ok(reply) => reply,
                    Err(_) => {
                        let _ = server.child.kill();
                        let _ = server.child.wait();
                        return Err(());
                    }
                };
                if let Reply::Bulk(info) = info {
                    if String::from_utf8_lossy(&info)
                        .lines()
                        .any(|l| l.trim() == pid)
                    {
                        return Ok(Some(server));
                    }
                    // Another test's server answers on this port: ours will fail to bind.
                    let _ = server.child.kill();
                    let _ = server.child.wait();
                    return Err(());
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("redis-server on port {port} did not answer PING within 10 s");
    }

    fn try_connect(&self) -> std::io::Result<Conn> {
        let stream = TcpStream::connect(("127.0.0.1", self.port))?;
        stream.set_read_timeout(Some(Duration::from_secs(30)))?;
        stream.set_nodelay(true)?;
        Ok(Conn {
            stream,
            buffer: Vec::new(),
            port: self.port,
        })
    }

    /// Stop the server, as a crash or a restart would (tests of a server that goes away).
    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Start a server again on the same port (without `start_with`'s extra arguments) and wait for
    /// it to answer.
    pub fn restart(&mut self) {
        self.stop();
        let binary = std::env::var("REDIS_SERVER").unwrap_or_else(|_| "redis-server".into());
        self.child = Command::new(&binary)
            .arg("--dir")
            .arg(self.dir.path())
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("restart redis-server");
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.try_connect().is_err() {
            assert!(Instant::now() < deadline, "the restarted server answers");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn connect(&self) -> Conn {
        self.try_connect()
            .expect("connect to the test redis-server")
    }
}

/// A test server with `config` set (`CONFIG SET name value` each) and a connection to it; `None`
/// as `RedisServer::start` says.
pub fn server_with(config: &[(&str, &str)]) -> Option<(RedisServer, Conn)> {
    let server = RedisServer::start()?;
    let mut conn = server.connect();
    for (name, value) in config {
        assert_eq!(
            conn.cmd(&["CONFIG", "SET", name, value]),
            Reply::Status("OK".into()),
            "CONFIG SET {name} {value}"
        );
    }
    Some((server, conn))
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One RESP connection.
pub struct Conn {
    stream: TcpStream,
    buffer: Vec<u8>,
    port: u16,
}

/// A reset of a test's own connection, seen a few times in a thousand parallel runs without a known
/// cause (the server is still up): worth one new connection and one resend, noted on stderr.
fn is_reset(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::BrokenPipe
    )
}

impl Conn {
    pub fn cmd(&mut self, args: &[&str]) -> Reply {
        let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        self.cmd_bytes(&args)
    }

    pub fn cmd_bytes(&mut self, args: &[&[u8]]) -> Reply {
        let mut out = format!("*{}\r\n", args.len()).into_bytes();
        for a in args {
            out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            out.extend_from_slice(a);
            out.extend_from_slice(b"\r\n");
        }
        match self.send_and_read(&out) {
            Ok(reply) => reply,
            Err(e) if is_reset(&e) => {
                eprintln!("NOTICE: test connection reset ({e}); reconnecting once and resending");
                self.stream =
                    TcpStream::connect(("127.0.0.1", self.port)).expect("reconnect to redis");
                self.stream.set_nodelay(true).expect("nodelay");
                let timeout = Some(Duration::from_secs(30));
                self.stream.set_read_timeout(timeout).expect("read timeout");
                self.buffer.clear();
                self.send_and_read(&out).expect("resend to redis")
            }
            Err(e) => panic!("redis connection: {e}"),
        }
    }

    fn send_and_read(&mut self, out: &[u8]) -> std::io::Result<Reply> {
        self.stream.write_all(out)?;
        loop {
            if let Some((reply, used)) = parse_resp(&self.buffer).expect("valid RESP from redis") {
                self.buffer.drain(..used);
                return Ok(reply);
            }
            let mut chunk = [0u8; 65536];
            let n = self.stream.read(&mut chunk)?;
            assert!(n > 0, "redis closed the connection");
            self.buffer.extend_from_slice(&chunk[..n]);
        }
    }

    /// Send all commands in one write, then read all their replies.
    pub fn pipeline(&mut self, commands: &[Vec<Vec<u8>>]) -> Vec<Reply> {
        let mut out = Vec::new();
        for args in commands {
            out.extend_from_slice(format!("*{}\r\n", args.len()).as_bytes());
            for a in args {
                out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
                out.extend_from_slice(a);
                out.extend_from_slice(b"\r\n");
            }
        }
        self.stream.write_all(&out).expect("write to redis");
        (0..commands.len()).map(|_| self.read_reply()).collect()
    }

    fn read_reply(&mut self) -> Reply {
        loop {
            if let Some((reply, used)) = parse_resp(&self.buffer).expect("valid RESP from redis") {
                self.buffer.drain(..used);
                return reply;
            }
            let mut chunk = [0u8; 65536];
            let n = self.stream.read(&mut chunk).expect("read from redis");
            assert!(n > 0, "redis closed the connection");
            self.buffer.extend_from_slice(&chunk[..n]);
        }
    }
}

fn bytes_of(v: &Json) -> Vec<u8> {
    match v {
        Json::String(s) => s.as_bytes().to_vec(),
        Json::Number(n) => n.to_string().into_bytes(),
        Json::Object(o) => {
            use base64::Engine as _;
            base64::engine::general_purpose::STANDARD
                .decode(o.get("b64").and_then(Json::as_str).unwrap_or_default())
                .unwrap_or_default()
        }
        _ => Vec::new(),
    }
}

fn score_text(v: &Json) -> String {
    match v {
        Json::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The commands that give a seeded stream its `"stream"` metadata (src/engine/keyspace/stream_json.rs).
fn stream_meta_commands(k: &[u8], meta: &Json, empty: bool, commands: &mut Vec<Vec<Vec<u8>>>) {
    let cmd = |parts: &[&[u8]]| parts.iter().map(|p| p.to_vec()).collect::<Vec<_>>();
    if empty {
        commands.push(cmd(&[
            b"XGROUP",
            b"CREATE",
            k,
            b"__seed__",
            b"0",
            b"MKSTREAM",
        ]));
        commands.push(cmd(&[b"XGROUP", b"DESTROY", k, b"__seed__"]));
    }
    let text = |name: &str| meta.get(name).map(bytes_of);
    let mut setid = cmd(&[b"XSETID", k]);
    setid.push(text("last_id").unwrap_or_else(|| b"0-0".to_vec()));
    if let Some(n) = text("entries_added") {
        setid.extend([b"ENTRIESADDED".to_vec(), n]);
    }
    if let Some(m) = text("max_deleted_id").filter(|m| m != b"0-0") {
        setid.extend([b"MAXDELETEDID".to_vec(), m]);
    }
    commands.push(setid);
    for (name, g) in meta
        .get("groups")
        .and_then(Json::as_object)
        .into_iter()
        .flatten()
    {
        let last = g
            .get("last_delivered_id")
            .map(bytes_of)
            .unwrap_or(b"0".to_vec());
        let read = match g.get("entries_read") {
            Some(Json::Number(n)) => n.to_string().into_bytes(),
            _ => b"-1".to_vec(),
        };
        let mut create = cmd(&[b"XGROUP", b"CREATE", k, name.as_bytes()]);
        create.extend([last, b"ENTRIESREAD".to_vec(), read]);
        commands.push(create);
        for c in g
            .get("consumers")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
        {
            let mut create = cmd(&[b"XGROUP", b"CREATECONSUMER", k, name.as_bytes()]);
            create.push(bytes_of(c));
            commands.push(create);
        }
        for p in g
            .get("pending")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
        {
            let mut claim = cmd(&[b"XCLAIM", k, name.as_bytes()]);
            claim.extend([bytes_of(&p[1]), b"0".to_vec(), bytes_of(&p[0])]);
            claim.extend([b"FORCE".to_vec(), b"RETRYCOUNT".to_vec(), bytes_of(&p[2])]);
            claim.push(b"JUSTID".to_vec());
            commands.push(claim);
        }
    }
}

/// A stream's metadata as `XINFO STREAM key FULL COUNT 0` reports it, in the sandbox's
/// `"stream"` JSON form; `None` when the entries imply it.
fn stream_meta_json(
    conn: &mut Conn,
    k: &[u8],
    entries: usize,
    last_entry: Option<String>,
) -> Option<Json> {
    let flat = |r: Reply| -> Vec<Reply> {
        match r {
            Reply::Array(a) => a,
            Reply::Map(m) => m.into_iter().flat_map(|(a, b)| [a, b]).collect(),
            _ => Vec::new(),
        }
    };
    let field = |kv: &[Reply], name: &str| -> Reply {
        kv.chunks(2)
            .find(|p| reply_bytes(&p[0]) == name.as_bytes())
            .map(|p| p[1].clone())
            .unwrap_or(Reply::Nil)
    };
    let text = |r: &Reply| String::from_utf8_lossy(&reply_bytes(r)).into_owned();
    let info = flat(conn.cmd_bytes(&[b"XINFO", b"STREAM", k, b"FULL", b"COUNT", b"0"]));
    let last_id = text(&field(&info, "last-generated-id"));
    let max_deleted = text(&field(&info, "max-deleted-entry-id"));
    let added = match field(&info, "entries-added") {
        Reply::Int(n) => n,
        _ => -1,
    };
    let groups = flat(field(&info, "groups"));
    if last_id == last_entry.unwrap_or_else(|| "0-0".into())
        && added == entries as i64
        && max_deleted == "0-0"
        && groups.is_empty()
    {
        return None;
    }
    let mut meta = Map::new();
    meta.insert("last_id".into(), json!(last_id));
    meta.insert("entries_added".into(), json!(added));
    meta.insert("max_deleted_id".into(), json!(max_deleted));
    if !groups.is_empty() {
        let mut out = Map::new();
        for g in groups {
            let g = flat(g);
            let entries_read = match field(&g, "entries-read") {
                Reply::Int(n) => json!(n),
                _ => Json::Null,
            };
            let consumers: Vec<Json> = flat(field(&g, "consumers"))
                .into_iter()
                .map(|c| bulk_json(&field(&flat(c), "name")))
                .collect();
            let pending: Vec<Json> = flat(field(&g, "pending"))
                .into_iter()
                .map(|p| {
                    let p = flat(p);
                    let count = match p[3] {
                        Reply::Int(n) => n,
                        _ => -1,
                    };
                    json!([text(&p[0]), bulk_json(&p[1]), count])
                })
                .collect();
            out.insert(
                text(&field(&g, "name")),
                json!({
                    "last_delivered_id": text(&field(&g, "last-delivered-id")),
                    "entries_read": entries_read,
                    "consumers": consumers,
                    "pending": pending,
                }),
            );
        }
        meta.insert("groups".into(), Json::Object(out));
    }
    Some(Json::Object(meta))
}

/// The commands that write a keyspace JSON (the sandbox's format) into a server's db 0.
pub fn seed_commands(keyspace: &Json) -> Vec<Vec<Vec<u8>>> {
    let mut commands = Vec::new();
    let Some(map) = keyspace.as_object() else {
        return commands;
    };
    for (key, spec) in map {
        let k = key.as_bytes();
        let (kind, value, ttl) = match spec {
            Json::Object(o) if o.contains_key("value") => (
                o.get("type").and_then(Json::as_str).unwrap_or("string"),
                o.get("value").cloned().unwrap_or(Json::Null),
                o.get("ttl_ms").and_then(Json::as_i64),
            ),
            other => ("string", other.clone(), None),
        };
        let mut args: Vec<Vec<u8>> = Vec::new();
        match kind {
            "string" => args.extend([b"SET".to_vec(), k.to_vec(), bytes_of(&value)]),
            "hash" => {
                args.extend([b"HSET".to_vec(), k.to_vec()]);
                for (f, v) in value.as_object().into_iter().flatten() {
                    args.push(f.as_bytes().to_vec());
                    args.push(bytes_of(v));
                }
            }
            "list" => {
                args.extend([b"RPUSH".to_vec(), k.to_vec()]);
                args.extend(value.as_array().into_iter().flatten().map(bytes_of));
            }
            "set" => {
                args.extend([b"SADD".to_vec(), k.to_vec()]);
                args.extend(value.as_array().into_iter().flatten().map(bytes_of));
            }
            "zset" => {
                args.extend([b"ZADD".to_vec(), k.to_vec()]);
                for pair in value.as_array().into_iter().flatten() {
                    args.push(score_text(&pair[1]).into_bytes());
                    args.push(bytes_of(&pair[0]));
                }
            }
            "stream" => {
                for entry in value.as_array().into_iter().flatten() {
                    let mut xadd = vec![b"XADD".to_vec(), k.to_vec(), bytes_of(&entry[0])];
                    xadd.extend(entry[1].as_array().into_iter().flatten().map(bytes_of));
                    commands.push(xadd);
                }
                // Last ID, counters, groups.
                if let Some(meta) = spec.get("stream") {
                    let empty = value.as_array().is_none_or(|a| a.is_empty());
                    stream_meta_commands(k, meta, empty, &mut commands);
                }
            }
            other => panic!("unknown type {other} in seed"),
        }
        if !args.is_empty() {
            commands.push(args);
        }
        // Hash-field TTLs: one HPEXPIRE per field.
        if let Some(Json::Object(ttls)) = spec.get("field_ttl_ms") {
            for (f, ms) in ttls {
                commands.push(vec![
                    b"HPEXPIRE".to_vec(),
                    k.to_vec(),
                    ms.to_string().into_bytes(),
                    b"FIELDS".to_vec(),
                    b"1".to_vec(),
                    f.as_bytes().to_vec(),
                ]);
            }
        }
        if let Some(ms) = ttl {
            commands.push(vec![
                b"PEXPIRE".to_vec(),
                k.to_vec(),
                ms.to_string().into_bytes(),
            ]);
        }
    }
    commands
}

/// Write a keyspace JSON (the sandbox's format) into the server's db 0 with ordinary commands.
pub fn seed(conn: &mut Conn, keyspace: &Json) {
    for reply in conn.pipeline(&seed_commands(keyspace)) {
        assert!(!reply.is_error(), "seeding: {reply:?}");
    }
}

fn bulk_json(r: &Reply) -> Json {
    match r {
        Reply::Bulk(b) => evalbench::engine::keyspace::json::bytes_to_json(b),
        other => json!(format!("{other:?}")),
    }
}

/// Read the server's db 0 back in the sandbox's keyspace JSON format.
pub fn dump(conn: &mut Conn) -> Json {
    let mut keys: Vec<Vec<u8>> = match conn.cmd(&["KEYS", "*"]) {
        Reply::Array(items) => items
            .into_iter()
            .filter_map(|r| {
                if let Reply::Bulk(b) = r {
                    Some(b)
                } else {
                    None
                }
            })
            .collect(),
        other => panic!("KEYS: {other:?}"),
    };
    keys.sort();
    let mut out = Map::new();
    for key in keys {
        let k = key.as_slice();
        let kind = match conn.cmd_bytes(&[b"TYPE", k]) {
            Reply::Status(s) => s,
            other => panic!("TYPE: {other:?}"),
        };
        let items = |r: Reply| -> Vec<Reply> {
            match r {
                Reply::Array(a) => a,
                Reply::Map(m) => m.into_iter().flat_map(|(a, b)| [a, b]).collect(),
                Reply::Set(s) => s,
                other => panic!("expected an array: {other:?}"),
            }
        };
        let value = match kind.as_str() {
            "string" => bulk_json(&conn.cmd_bytes(&[b"GET", k])),
            "hash" => {
                let flat = items(conn.cmd_bytes(&[b"HGETALL", k]));
                Json::Object(
                    flat.chunks(2)
                        .map(|fv| {
                            (
                                String::from_utf8_lossy(&reply_bytes(&fv[0])).into_owned(),
                                bulk_json(&fv[1]),
                            )
                        })
                        .collect(),
                )
            }
            "list" => Json::Array(
                items(conn.cmd_bytes(&[b"LRANGE", k, b"0", b"-1"]))
                    .iter()
                    .map(bulk_json)
                    .collect(),
            ),
            "set" => Json::Array(
                items(conn.cmd_bytes(&[b"SMEMBERS", k]))
                    .iter()
                    .map(bulk_json)
                    .collect(),
            ),
            "zset" => {
                let flat = items(conn.cmd_bytes(&[b"ZRANGE", k, b"0", b"-1", b"WITHSCORES"]));
                Json::Array(
                    flat.chunks(2)
                        .map(|ms| {
                            let score = String::from_utf8_lossy(&reply_bytes(&ms[1])).into_owned();
                            let score = match score.as_str() {
                                "inf" => json!("inf"),
                                "-inf" => json!("-inf"),
                                s => json!(s.parse::<f64>().unwrap_or(f64::NAN)),
                            };
                            json!([bulk_json(&ms[0]), score])
                        })
                        .collect(),
                )
            }
            "stream" => Json::Array(
                items(conn.cmd_bytes(&[b"XRANGE", k, b"-", b"+"]))
                    .into_iter()
                    .map(|entry| {
                        let parts = items(entry);
                        let fields: Vec<Json> =
                            items(parts[1].clone()).iter().map(bulk_json).collect();
                        json!([String::from_utf8_lossy(&reply_bytes(&parts[0])), fields])
                    })
                    .collect(),
            ),
            other => json!(format!("unsupported type {other}")),
        };
        // Hash-field TTLs, on servers that have HPTTL.
        let field_ttls = match (&value, kind.as_str()) {
            (Json::Object(fields), "hash") => {
                let mut args: Vec<&[u8]> = vec![b"HPTTL", k, b"FIELDS"];
                let n = fields.len().to_string();
                args.push(n.as_bytes());
                args.extend(fields.keys().map(|f| f.as_bytes()));
                match conn.cmd_bytes(&args) {
                    Reply::Array(ttls) => fields
                        .keys()
                        .zip(ttls)
                        .filter_map(|(f, t)| match t {
                            Reply::Int(ms) if ms >= 0 => Some((f.clone(), json!(ms))),
                            _ => None,
                        })
                        .collect::<Map<String, Json>>(),
                    _ => Map::new(),
                }
            }
            _ => Map::new(),
        };
        let mut spec = Map::new();
        spec.insert("type".into(), json!(kind));
        if kind == "stream" {
            // Last ID, counters, groups when the entries do not imply them.
            let entries = value.as_array().map_or(0, Vec::len);
            let last = value
                .as_array()
                .and_then(|a| a.last())
                .and_then(|e| e[0].as_str())
                .map(str::to_string);
            spec.extend(stream_meta_json(conn, k, entries, last).map(|m| ("stream".into(), m)));
        }
        spec.insert("value".into(), value);
        if !field_ttls.is_empty() {
            spec.insert("field_ttl_ms".into(), Json::Object(field_ttls));
        }
        if let Reply::Int(ms) = conn.cmd_bytes(&[b"PTTL", k]) {
            if ms >= 0 {
                spec.insert("ttl_ms".into(), json!(ms));
            }
        }
        out.insert(String::from_utf8_lossy(k).into_owned(), Json::Object(spec));
    }
    Json::Object(out)
}

fn reply_bytes(r: &Reply) -> Vec<u8> {
    match r {
        Reply::Bulk(b) => b.clone(),
        Reply::Status(s) => s.as_bytes().to_vec(),
        other => format!("{other:?}").into_bytes(),
    }
}

/// Make two keyspace dumps comparable: set members sorted (sets have no order), TTLs kept only
/// as "has a TTL" plus the value rounded to seconds.
pub fn normalize_keyspace(ks: &Json) -> Json {
    let mut out = Map::new();
    for (key, spec) in ks.as_object().into_iter().flatten() {
        let mut spec = spec.clone();
        if spec["type"] == "set" {
            if let Some(items) = spec["value"].as_array_mut() {
                items.sort_by_key(|v| v.to_string());
            }
        }
        if let Some(ttl) = spec.get("ttl_ms").and_then(Json::as_i64) {
            spec["ttl_ms"] = json!(format!("~{}s", (ttl + 500) / 1000));
        }
        // A hash with field TTLs: seconds, and fields in byte order (Valkey keeps
        // such a hash in a hash table, whose order is its own).
        if let Some(ttls) = spec.get_mut("field_ttl_ms").and_then(Json::as_object_mut) {
            for ttl in ttls.values_mut() {
                *ttl = json!(format!("~{}s", (ttl.as_i64().unwrap_or(0) + 500) / 1000));
            }
            ttls.sort_keys();
            if let Some(fields) = spec["value"].as_object_mut() {
                fields.sort_keys();
            }
        }
        out.insert(key.clone(), spec);
    }
    Json::Object(out)
}

/// One case of a `.cases` file.
#[derive(Debug, Clone, Default)]
pub struct Case {
    pub file: String,
    pub name: String,
    pub keys: Vec<String>,
    pub argv: Vec<String>,
    pub seed: Json,
    pub resp: u8,
    pub script: String,
    /// Functions (`@library`, `@function_load`, `@fcall`, `@fcall_ro`): libraries loaded before
    /// the script, in order (a load error is the reply).
    pub libraries: Vec<String>,
    /// The script is a library: FUNCTION LOAD it (its reply is the case's reply without `fcall`).
    pub function_load: bool,
    /// FCALL (false) or FCALL_RO (true) this function of the loaded libraries with @keys/@argv.
    pub fcall: Option<(String, bool)>,
    /// `@profiles ["redis-7.4", ...]`: the profiles the case applies to (None: all).
    pub profiles: Option<Vec<String>>,
}

/// Parse a `.cases` file: `### name`, optional `@keys/@argv/@seed/@resp` JSON lines, the script.
pub fn parse_cases(file: &str, text: &str) -> Vec<Case> {
    let mut cases = Vec::new();
    let mut current: Option<Case> = None;
    let mut in_directives = false;
    for (n, line) in text.lines().enumerate() {
        if let Some(name) = line.strip_prefix("### ") {
            cases.extend(current.take());
            current = Some(Case {
                file: file.to_string(),
                name: name.trim().to_string(),
                keys: Vec::new(),
                argv: Vec::new(),
                seed: json!({}),
                resp: 2,
                script: String::new(),
                libraries: Vec::new(),
                function_load: false,
                fcall: None,
                profiles: None,
            });
            in_directives = true;
            continue;
        }
        let Some(case) = current.as_mut() else {
            continue;
        };
        if in_directives {
            if let Some((directive, value)) = line.strip_prefix('@').and_then(|l| l.split_once(' '))
            {
                let parsed: Json = serde_json::from_str(value)
                    .unwrap_or_else(|e| panic!("{file}:{}: bad @{directive}: {e}", n + 1));
                match directive {
                    "keys" => {
                        case.keys =
                            serde_json::from_value(parsed).expect("@keys is a list of strings")
                    }
                    "argv" => {
                        case.argv =
                            serde_json::from_value(parsed).expect("@argv is a list of strings")
                    }
                    "seed" => case.seed = parsed,
                    "resp" => case.resp = parsed.as_u64().expect("@resp is 2 or 3") as u8,
                    // Functions: see `Case`.
                    "library" => case
                        .libraries
                        .push(parsed.as_str().expect("@library is a JSON string").into()),
                    "function_load" => case.function_load = parsed.as_bool().unwrap_or(false),
                    "fcall" | "fcall_ro" => {
                        let name = parsed.as_str().expect("@fcall is a JSON string");
                        case.function_load = true;
                        case.fcall = Some((name.to_string(), directive == "fcall_ro"));
                    }
                    "profiles" => {
                        case.profiles = Some(
                            serde_json::from_value(parsed)
                                .expect("@profiles is a list of profile ids"),
                        )
                    }
                    other => panic!("{file}:{}: unknown directive @{other}", n + 1),
                }
                continue;
            }
            in_directives = false;
        }
        case.script.push_str(line);
        case.script.push('\n');
    }
    cases.extend(current);
    for case in &mut cases {
        let trimmed = case.script.trim_end_matches('\n').to_string();
        case.script = trimmed;
    }
    cases
}

/// Every case of every file in `tests/cases` (or the folder `EVALBENCH_CASES_DIR` names: a
/// corpus of one's own scripts), in file-name order.
pub fn all_cases() -> Vec<Case> {
    let dir = std::env::var_os("EVALBENCH_CASES_DIR").map_or_else(
        || std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases"),
        std::path::PathBuf::from,
    );
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("the cases folder {}: {e}", dir.display()))
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .collect();
    files.retain(|p| p.extension().is_some_and(|e| e == "cases"));
    files.sort();
    files
        .iter()
        .flat_map(|p| {
            parse_cases(
                &p.file_name().unwrap().to_string_lossy(),
                &std::fs::read_to_string(p).unwrap(),
            )
        })
        .collect()
}

/// A case as a plain EVAL on a real server (flushed, seeded): its typed reply and resulting keyspace.
pub fn plain_eval(conn: &mut Conn, case: &Case) -> (Json, Json) {
    conn.cmd(&["HELLO", &case.resp.to_string()]);
    conn.cmd(&["FLUSHALL"]);
    conn.cmd(&["SCRIPT", "FLUSH"]);
    conn.cmd(&["FUNCTION", "FLUSH"]);
    seed(conn, &case.seed);
    if case.function_load || !case.libraries.is_empty() {
        let reply = server_functions(conn, case);
        conn.cmd(&["HELLO", "2"]);
        return (reply.to_json(), normalize_keyspace(&dump(conn)));
    }
    let numkeys = case.keys.len().to_string();
    let mut args: Vec<&[u8]> = vec![b"EVAL", case.script.as_bytes(), numkeys.as_bytes()];
    args.extend(case.keys.iter().map(|k| k.as_bytes()));
    args.extend(case.argv.iter().map(|a| a.as_bytes()));
    let reply = conn.cmd_bytes(&args);
    conn.cmd(&["HELLO", "2"]);
    (reply.to_json(), normalize_keyspace(&dump(conn)))
}

/// A functions case on a real server: the libraries, the script as a library, the FCALL.
fn server_functions(conn: &mut Conn, case: &Case) -> Reply {
    let mut last = Reply::Nil;
    let script = case.function_load.then_some(&case.script);
    for code in case.libraries.iter().chain(script) {
        last = conn.cmd_bytes(&[b"FUNCTION", b"LOAD", code.as_bytes()]);
        if matches!(last, Reply::Error(_)) {
            return last;
        }
    }
    let Some((name, read_only)) = &case.fcall else {
        return last;
    };
    let numkeys = case.keys.len().to_string();
    let command: &[u8] = if *read_only { b"FCALL_RO" } else { b"FCALL" };
    let mut args: Vec<&[u8]> = vec![command, name.as_bytes(), numkeys.as_bytes()];
    args.extend(case.keys.iter().map(|k| k.as_bytes()));
    args.extend(case.argv.iter().map(|a| a.as_bytes()));
    conn.cmd_bytes(&args)
}

/// The sandbox twin of `server_functions`.
fn sandbox_functions(
    sandbox: &mut evalbench::engine::Sandbox,
    case: &Case,
    protocol: evalbench::engine::Protocol,
) -> Reply {
    let mut last = Reply::Nil;
    let script = case.function_load.then_some(&case.script);
    for code in case.libraries.iter().chain(script) {
        last = match sandbox.function_load(code.as_bytes(), false) {
            Ok(name) => Reply::Bulk(name.into_bytes()),
            Err(e) => return Reply::Error(e),
        };
    }
    let Some((name, read_only)) = &case.fcall else {
        return last;
    };
    let call = evalbench::engine::FunctionCall {
        name: name.clone(),
        keys: case.keys.iter().map(|k| k.as_bytes().to_vec()).collect(),
        argv: case.argv.iter().map(|a| a.as_bytes().to_vec()).collect(),
        protocol,
        read_only: *read_only,
    };
    sandbox.fcall(&call).reply_for(protocol)
}

/// The same case in the sandbox (scripts flushed, every database cleared, seeded): its typed
/// reply and resulting keyspace, as `plain_eval` gives them for a real server.
pub fn sandbox_eval(sandbox: &mut evalbench::engine::Sandbox, case: &Case) -> (Json, Json) {
    use evalbench::engine::keyspace::{keyspace_from_json, keyspace_to_json};
    use evalbench::engine::{Protocol, RunRequest};
    sandbox.script_flush();
    for db in &mut sandbox.keyspace_mut().dbs {
        db.clear();
    }
    let now = sandbox.now_ms();
    let db = keyspace_from_json(&case.seed.to_string(), now)
        .unwrap_or_else(|e| panic!("{}: {}: bad seed: {e}", case.file, case.name));
    sandbox.set_db0(db);
    let protocol = if case.resp == 3 {
        Protocol::Resp3
    } else {
        Protocol::Resp2
    };
    sandbox.function_flush();
    if case.function_load || !case.libraries.is_empty() {
        let reply = sandbox_functions(sandbox, case, protocol);
        let keyspace = keyspace_to_json(sandbox.keyspace().db(0), sandbox.now_ms());
        return (reply.to_json(), normalize_keyspace(&keyspace));
    }
    let request = RunRequest {
        script: case.script.as_bytes().to_vec(),
        keys: case.keys.iter().map(|k| k.as_bytes().to_vec()).collect(),
        argv: case.argv.iter().map(|a| a.as_bytes().to_vec()).collect(),
        protocol,
        read_only: false,
    };
    let report = sandbox.run(&request);
    let keyspace = keyspace_to_json(sandbox.keyspace().db(0), sandbox.now_ms());
    (
        report.reply_for(protocol).to_json(),
        normalize_keyspace(&keyspace),
    )
}

/// Keep the workbench's files (autosave, recent files, config) of TUI tests away from the user's
/// directories: a data and a config directory of this test binary, set once. The environment
/// lives as long as the process, longer than any `TempDir` could, so the folder is a fixed one per
/// test binary in Cargo's scratch space under `target/` (not the system's temporary folder), emptied
/// when a run begins: runs never pile up folders.
pub fn isolate_app_dirs() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let root = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(concat!("evalbench-app-dirs-", env!("CARGO_CRATE_NAME")));
        let _ = std::fs::remove_dir_all(&root);
        let data = root.join("data");
        let config = root.join("config");
        let _ = std::fs::create_dir_all(&data);
        let _ = std::fs::create_dir_all(&config);
        std::env::set_var("EVALBENCH_DATA_DIR", &data);
        std::env::set_var("EVALBENCH_CONFIG_DIR", &config);
    });
}

/// The median of measurements (the benchmarks that start their own redis-server share it).
pub fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// A file in a folder of its own, both removed when this is dropped (hold it while the file is
/// used). It reads as its path.
pub struct ScratchFile {
    path: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

impl std::ops::Deref for ScratchFile {
    type Target = std::path::Path;
    fn deref(&self) -> &std::path::Path {
        &self.path
    }
}

impl AsRef<std::path::Path> for ScratchFile {
    fn as_ref(&self) -> &std::path::Path {
        &self.path
    }
}

impl AsRef<std::ffi::OsStr> for ScratchFile {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.path.as_os_str()
    }
}

/// `contents` written to a file called `name` (the name is kept: tests read it in messages).
pub fn scratch_file(name: &str, contents: impl AsRef<[u8]>) -> ScratchFile {
    let dir = tempfile::Builder::new()
        .prefix("evalbench-file-")
        .tempdir()
        .expect("create a scratch folder");
    let path = dir.path().join(name);
    std::fs::write(&path, contents).expect("write a scratch file");
    ScratchFile { path, _dir: dir }
}
