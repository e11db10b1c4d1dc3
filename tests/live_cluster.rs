//! The live backend on a three-master Redis Cluster that the test starts on loopback ports: runs are
//! routed by the slot of KEYS, cross-slot KEYS are refused before sending, traces are kept; the
//! keyspace inspector scans every master and names each key's node; SCRIPT KILL reaches the node
//! running the script; MOVED and ASK are followed; the read timeout holds.

mod common;

use common::{Conn, RedisServer};
use evalbench::engine::live::inspect::{self, KeyScan, PageCursor, Row};
use evalbench::engine::live::{script_kill_for, LiveBackend, LiveError, TargetSpec, WriteMode};
use evalbench::engine::reply::Reply;
use evalbench::engine::report::Outcome;
use evalbench::engine::RunRequest;
use std::time::{Duration, Instant};

struct Cluster {
    nodes: Vec<RedisServer>,
    dir: std::path::PathBuf,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn start_cluster() -> Option<Cluster> {
    // One directory per cluster: tests run in parallel and each removes its own when done.
    static CLUSTERS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = CLUSTERS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("evalbench-cluster-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let dir_arg = dir.display().to_string();
    let mut nodes = Vec::new();
    for _ in 0..3 {
        nodes.push(RedisServer::start_with(&[
            "--cluster-enabled",
            "yes",
            "--cluster-config-file",
            "nodes-PORT.conf",
            "--dir",
            &dir_arg,
        ])?);
    }
    let ranges = [("0", "5460"), ("5461", "10922"), ("10923", "16383")];
    let mut conns: Vec<Conn> = nodes.iter().map(|n| n.connect()).collect();
    for (conn, (from, to)) in conns.iter_mut().zip(ranges) {
        assert_eq!(
            conn.cmd(&["CLUSTER", "ADDSLOTSRANGE", from, to]),
            Reply::ok()
        );
    }
    for node in &nodes[1..] {
        assert_eq!(
            conns[0].cmd(&["CLUSTER", "MEET", "127.0.0.1", &node.port.to_string()]),
            Reply::ok()
        );
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let ready = conns.iter_mut().all(|c| match c.cmd(&["CLUSTER", "INFO"]) {
            Reply::Bulk(b) => {
                let text = String::from_utf8_lossy(&b).into_owned();
                text.contains("cluster_state:ok") && text.contains("cluster_known_nodes:3")
            }
            _ => false,
        });
        if ready {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the test cluster did not become ready"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    Some(Cluster { nodes, dir })
}

fn request(script: &str, keys: &[&str]) -> RunRequest {
    RunRequest {
        script: script.as_bytes().to_vec(),
        keys: keys.iter().map(|k| k.as_bytes().to_vec()).collect(),
        ..RunRequest::default()
    }
}

#[test]
fn runs_are_routed_by_slot_and_cross_slot_is_refused_before_sending() {
    let Some(cluster) = start_cluster() else {
        return;
    };
    let target = TargetSpec {
        url: Some(format!("redis://127.0.0.1:{}", cluster.nodes[0].port)),
        ..TargetSpec::default()
    }
    .resolve()
    .unwrap();
    let mut live = LiveBackend::connect(target).expect("connect to the cluster");
    assert!(live.server.cluster);
    // Keys owned by each of the three masters: each run lands on the key's node.
    let mut conns: Vec<Conn> = cluster.nodes.iter().map(|n| n.connect()).collect();
    for key in ["a", "b", "c", "user:{42}:name", "z"] {
        let report = live
            .run(
                &request(
                    "redis.call('SET', KEYS[1], 'v') return redis.call('GET', KEYS[1])",
                    &[key],
                ),
                WriteMode::Allowed,
            )
            .unwrap();
        assert_eq!(report.reply, Reply::bulk("v"), "{key}");
        assert_eq!(report.trace.len(), 2);
        let slot = evalbench::engine::lint::hash_slot(key.as_bytes());
        let owner = match slot {
            0..=5460 => 0,
            5461..=10922 => 1,
            _ => 2,
        };
        for (i, conn) in conns.iter_mut().enumerate() {
            let exists = conn.cmd(&["EXISTS", key]);
            if i == owner {
                assert_eq!(exists, Reply::Int(1), "{key} (slot {slot}) on its node {i}");
            } else {
                assert!(
                    matches!(&exists, Reply::Error(e) if e.starts_with(&format!("MOVED {slot} "))),
                    "{key} (slot {slot}) on node {i}: {exists:?}"
                );
            }
        }
    }
    let report = live
        .run(
            &request("return redis.call('MGET', KEYS[1], KEYS[2])", &["a", "b"]),
            WriteMode::ReadOnly,
        )
        .unwrap();
    assert_eq!(report.outcome, Outcome::Refused);
    assert_eq!(
        report.reply,
        Reply::err("CROSSSLOT Keys in request don't hash to the same slot (evalbench did not send the script: a -> slot 15495, b -> slot 3300; put a common {hash tag} in the keys)")
    );
    // Same hash tag: one slot, sent.
    let report = live
        .run(
            &request("return #KEYS", &["{u}:a", "{u}:b"]),
            WriteMode::ReadOnly,
        )
        .unwrap();
    assert_eq!(report.reply, Reply::Int(2));
}

/// The slot ranges `start_cluster` gives each node, in node order.
const RANGES: [(u16, u16); 3] = [(0, 5460), (5461, 10922), (10923, 16383)];

/// The index of the node serving `slot`.
fn owner_of_slot(slot: u16) -> usize {
    RANGES
        .iter()
        .position(|(from, to)| (*from..=*to).contains(&slot))
        .unwrap()
}

/// The node of a key as the server computes its slot (CLUSTER KEYSLOT), not the crate.
fn owner(conn: &mut Conn, key: &str) -> usize {
    match conn.cmd(&["CLUSTER", "KEYSLOT", key]) {
        Reply::Int(slot) => owner_of_slot(slot as u16),
        other => panic!("CLUSTER KEYSLOT {key}: {other:?}"),
    }
}

/// The first `{prefix}:{n}` held by node `node`.
fn key_on(node: usize, prefix: &str) -> String {
    (0..)
        .map(|n| format!("{prefix}:{n}"))
        .find(|k| owner_of_slot(evalbench::engine::lint::hash_slot(k.as_bytes())) == node)
        .unwrap()
}

fn addr(cluster: &Cluster, node: usize) -> String {
    format!("127.0.0.1:{}", cluster.nodes[node].port)
}

fn spec(cluster: &Cluster) -> TargetSpec {
    TargetSpec {
        url: Some(format!("redis://127.0.0.1:{}", cluster.nodes[0].port)),
        ..TargetSpec::default()
    }
}

fn connect(cluster: &Cluster) -> LiveBackend {
    LiveBackend::connect(spec(cluster).resolve().unwrap()).expect("connect to the cluster")
}

/// Run SCAN to the end; every key returned, in order.
fn scan_all(live: &mut LiveBackend, scan: &mut KeyScan) -> Vec<Vec<u8>> {
    let mut keys = Vec::new();
    while !scan.done() {
        keys.extend(scan.step(live).unwrap());
        assert!(scan.scanned_calls() < 10_000, "the scan does not end");
    }
    keys
}

fn sorted(mut keys: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
    keys.sort();
    keys
}

fn names(keys: impl IntoIterator<Item = String>) -> Vec<Vec<u8>> {
    sorted(keys.into_iter().map(String::into_bytes).collect())
}

#[test]
fn the_inspector_scans_every_master_and_each_key_once() {
    let Some(cluster) = start_cluster() else {
        return;
    };
    let mut conns: Vec<Conn> = cluster.nodes.iter().map(|n| n.connect()).collect();
    let strings: Vec<String> = (0..300).map(|i| format!("key:{i}")).collect();
    let hashes: Vec<String> = (0..30).map(|i| format!("hash:{i}")).collect();
    let sets: Vec<String> = (0..20).map(|i| format!("set:{i}")).collect();
    for key in &strings {
        let node = owner(&mut conns[0], key);
        assert_eq!(conns[node].cmd(&["SET", key, "v"]), Reply::ok());
    }
    for key in &hashes {
        let node = owner(&mut conns[0], key);
        assert_eq!(conns[node].cmd(&["HSET", key, "f", "v"]), Reply::Int(1));
    }
    for key in &sets {
        let node = owner(&mut conns[0], key);
        assert_eq!(conns[node].cmd(&["SADD", key, "m"]), Reply::Int(1));
    }
    // Every master holds some of them: a scan of one node would miss keys.
    for conn in conns.iter_mut() {
        assert!(matches!(conn.cmd(&["DBSIZE"]), Reply::Int(n) if n > 50));
    }
    let everything = names(strings.iter().chain(&hashes).chain(&sets).cloned());
    let mut live = connect(&cluster);
    let masters = live.cluster_masters().unwrap();
    assert_eq!(
        masters.iter().map(|m| m.addr()).collect::<Vec<_>>(),
        (0..3).map(|i| addr(&cluster, i)).collect::<Vec<_>>()
    );
    assert_eq!(
        masters.iter().map(|m| m.slots.clone()).collect::<Vec<_>>(),
        RANGES.iter().map(|r| vec![*r]).collect::<Vec<_>>()
    );

    // All keys, a few per call: each exactly once (the keyspace does not change during the scan).
    let mut scan = KeyScan::new(None, None, 10);
    let found = scan_all(&mut live, &mut scan);
    assert_eq!(found.len(), 350);
    assert_eq!(sorted(found), everything);
    assert!(scan.done());
    assert_eq!(scan.progress(), (350, Some(350)));
    assert!(scan.scanned_calls() >= 3, "{}", scan.scanned_calls());
    assert_eq!(scan.step(&mut live).unwrap(), Vec::<Vec<u8>>::new());

    // MATCH and TYPE across the masters.
    let mut scan = KeyScan::new(Some(b"hash:*"), None, 10);
    assert_eq!(
        sorted(scan_all(&mut live, &mut scan)),
        names(hashes.clone())
    );
    assert_eq!(scan.progress(), (30, Some(350)));
    let mut scan = KeyScan::new(None, Some("set"), 10);
    assert_eq!(sorted(scan_all(&mut live, &mut scan)), names(sets.clone()));
    assert_eq!(scan.progress(), (20, Some(350)));
    let mut scan = KeyScan::new(Some(b"*:1*"), Some("string"), 1000);
    let ones = strings.iter().filter(|k| k.starts_with("key:1")).cloned();
    assert_eq!(sorted(scan_all(&mut live, &mut scan)), names(ones));
    // One call per master with a large COUNT.
    assert_eq!(scan.scanned_calls(), 3);

    // The first screen stops early and continues where it stopped.
    let (first, mut rest) = inspect::first_page(&mut live, None, None, 5, 100).unwrap();
    assert!(!first.is_empty() && !rest.done());
    let mut all = first;
    all.extend(scan_all(&mut live, &mut rest));
    assert_eq!(sorted(all), everything);
}

#[test]
fn summaries_name_the_keys_node_and_pages_are_read_there() {
    let Some(cluster) = start_cluster() else {
        return;
    };
    let mut conns: Vec<Conn> = cluster.nodes.iter().map(|n| n.connect()).collect();
    // Keys on the two nodes that are not the one the backend connects to.
    let hash = key_on(1, "hash");
    let set = key_on(2, "set");
    let stream = key_on(1, "stream");
    let string = key_on(2, "string");
    let list = key_on(1, "list");
    let zset = key_on(2, "zset");
    for i in 0..25 {
        let (f, v) = (format!("f{i}"), format!("v{i}"));
        conns[1].cmd(&["HSET", &hash, &f, &v]);
        conns[2].cmd(&["SADD", &set, &format!("m{i}")]);
        conns[1].cmd(&["RPUSH", &list, &format!("i{i}")]);
        conns[2].cmd(&["ZADD", &zset, &i.to_string(), &format!("z{i}")]);
    }
    for i in 1..=3 {
        conns[1].cmd(&["XADD", &stream, &format!("{i}-0"), "n", &i.to_string()]);
    }
    let text: String = (0..1000)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect();
    assert_eq!(conns[2].cmd(&["SET", &string, &text]), Reply::ok());
    assert_eq!(conns[2].cmd(&["PEXPIRE", &string, "100000"]), Reply::Int(1));

    let mut live = connect(&cluster);
    let keys = [
        &hash,
        &set,
        &stream,
        &string,
        &list,
        &zset,
        &key_on(0, "missing"),
    ];
    let keys: Vec<Vec<u8>> = keys.iter().map(|k| k.as_bytes().to_vec()).collect();
    let summaries = inspect::summarize_many(&mut live, &keys).unwrap();
    // (kind, size, node) of each key.
    type Shown = Option<(String, Option<u64>, Option<String>)>;
    let got: Vec<Shown> = summaries
        .iter()
        .map(|s| s.as_ref().map(|s| (s.kind.clone(), s.size, s.node.clone())))
        .collect();
    let node_of =
        |key: &str, conns: &mut Vec<Conn>| Some(addr(&cluster, owner(&mut conns[0], key)));
    assert_eq!(
        got,
        vec![
            Some(("hash".into(), Some(25), node_of(&hash, &mut conns))),
            Some(("set".into(), Some(25), node_of(&set, &mut conns))),
            Some(("stream".into(), Some(3), node_of(&stream, &mut conns))),
            Some(("string".into(), Some(1000), node_of(&string, &mut conns))),
            Some(("list".into(), Some(25), node_of(&list, &mut conns))),
            Some(("zset".into(), Some(25), node_of(&zset, &mut conns))),
            None,
        ]
    );
    assert_eq!(node_of(&hash, &mut conns), Some(addr(&cluster, 1)));
    assert_eq!(node_of(&set, &mut conns), Some(addr(&cluster, 2)));
    let one = inspect::summarize(&mut live, string.as_bytes())
        .unwrap()
        .unwrap();
    assert_eq!(one.node, Some(addr(&cluster, 2)));
    assert!(matches!(one.ttl_ms, Some(t) if t > 90_000 && t <= 100_000));
    assert_eq!(one.encoding.as_deref(), Some("raw"));
    for (key, node) in [(&hash, 1), (&set, 2), (&string, 2), (&key_on(0, "x"), 0)] {
        assert_eq!(
            live.node_for_key(key.as_bytes()),
            Some(addr(&cluster, node))
        );
    }

    // HSCAN on the hash's node, page by page: every field once.
    let mut fields = Vec::new();
    let mut cursor = PageCursor::Start;
    loop {
        let page = inspect::page(&mut live, hash.as_bytes(), "hash", cursor, 10).unwrap();
        fields.extend(page.rows);
        match page.next {
            Some(next) => cursor = next,
            None => break,
        }
    }
    let mut fields: Vec<(Vec<u8>, Vec<u8>)> = fields
        .into_iter()
        .map(|r| match r {
            Row::Field { field, value } => (field, value),
            other => panic!("{other:?}"),
        })
        .collect();
    fields.sort();
    let mut want: Vec<(Vec<u8>, Vec<u8>)> = (0..25)
        .map(|i| (format!("f{i}").into_bytes(), format!("v{i}").into_bytes()))
        .collect();
    want.sort();
    assert_eq!(fields, want);

    // SSCAN on the set's node.
    let mut members = Vec::new();
    let mut cursor = PageCursor::Start;
    loop {
        let page = inspect::page(&mut live, set.as_bytes(), "set", cursor, 10).unwrap();
        members.extend(page.rows.into_iter().map(|r| match r {
            Row::Member(m) => m,
            other => panic!("{other:?}"),
        }));
        match page.next {
            Some(next) => cursor = next,
            None => break,
        }
    }
    assert_eq!(sorted(members), names((0..25).map(|i| format!("m{i}"))));

    // XRANGE by id.
    let page = inspect::page(&mut live, stream.as_bytes(), "stream", PageCursor::Start, 2).unwrap();
    let entry = |id: &str, n: &str| Row::Entry {
        id: id.as_bytes().to_vec(),
        fields: vec![(b"n".to_vec(), n.as_bytes().to_vec())],
    };
    assert_eq!(page.rows, vec![entry("1-0", "1"), entry("2-0", "2")]);
    assert_eq!(page.next, Some(PageCursor::After(b"2-0".to_vec())));
    let page = inspect::page(
        &mut live,
        stream.as_bytes(),
        "stream",
        page.next.unwrap(),
        2,
    )
    .unwrap();
    assert_eq!(page.rows, vec![entry("3-0", "3")]);
    assert_eq!(page.next, None);

    // GETRANGE windows.
    let page = inspect::page(
        &mut live,
        string.as_bytes(),
        "string",
        PageCursor::Start,
        100,
    )
    .unwrap();
    assert_eq!(
        page.rows,
        vec![Row::Bytes {
            offset: 0,
            data: text.as_bytes()[..100].to_vec()
        }]
    );
    assert_eq!(
        (page.next, page.total),
        (Some(PageCursor::Index(100)), Some(1000))
    );
    let page = inspect::page(
        &mut live,
        string.as_bytes(),
        "string",
        PageCursor::Index(950),
        100,
    )
    .unwrap();
    assert_eq!(
        page.rows,
        vec![Row::Bytes {
            offset: 950,
            data: text.as_bytes()[950..].to_vec()
        }]
    );
    assert_eq!(page.next, None);

    // LRANGE and ZRANGE windows.
    let page = inspect::page(
        &mut live,
        list.as_bytes(),
        "list",
        PageCursor::Index(20),
        10,
    )
    .unwrap();
    assert_eq!(
        page.rows,
        (20..25)
            .map(|i| Row::Item {
                index: i,
                value: format!("i{i}").into_bytes()
            })
            .collect::<Vec<_>>()
    );
    let page = inspect::page(&mut live, zset.as_bytes(), "zset", PageCursor::Start, 2).unwrap();
    assert_eq!(
        page.rows,
        vec![
            Row::Scored {
                member: b"z0".to_vec(),
                score: 0.0
            },
            Row::Scored {
                member: b"z1".to_vec(),
                score: 1.0
            }
        ]
    );
}

/// The answers of `script_kill_for`, comparable.
fn answers(target: &evalbench::engine::live::Target, keys: &[&str]) -> Vec<(String, Reply)> {
    let keys: Vec<Vec<u8>> = keys.iter().map(|k| k.as_bytes().to_vec()).collect();
    script_kill_for(target, &keys)
        .expect("reach the cluster")
        .into_iter()
        .map(|(node, answer, _)| (node, answer.expect("reach the node")))
        .collect()
}

fn not_busy() -> Reply {
    Reply::err("NOTBUSY No scripts in execution right now.")
}

/// Run `while true do end` from a thread; the join handle gives its report.
fn spin(
    cluster: &Cluster,
    keys: &[&str],
) -> std::thread::JoinHandle<evalbench::engine::report::RunReport> {
    let mut live = connect(cluster);
    let request = request("while true do end", keys);
    std::thread::spawn(move || live.run(&request, WriteMode::ReadOnly).unwrap())
}

fn killed(report: &evalbench::engine::report::RunReport) -> bool {
    matches!(&report.reply, Reply::Error(e) if e.contains("Script killed by user with SCRIPT KILL"))
}

#[test]
fn script_kill_reaches_the_node_running_the_script() {
    use evalbench::engine::keyspace::Db;
    use evalbench::tui::worker::{EngineCommand, Worker};
    let Some(cluster) = start_cluster() else {
        return;
    };
    let mut conns: Vec<Conn> = cluster.nodes.iter().map(|n| n.connect()).collect();
    for conn in conns.iter_mut() {
        assert_eq!(
            conn.cmd(&["CONFIG", "SET", "busy-reply-threshold", "100"]),
            Reply::ok()
        );
    }
    let target = spec(&cluster).resolve().unwrap();
    // Nothing runs: the key's node answers NOTBUSY.
    let key = key_on(2, "spin");
    assert_eq!(
        answers(&target, &[&key]),
        vec![(addr(&cluster, 2), not_busy())]
    );

    // A script on a node that is not the one connected to.
    let running = spin(&cluster, &[&key]);
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(
        answers(&target, &[&key]),
        vec![(addr(&cluster, 2), Reply::ok())]
    );
    let report = running.join().unwrap();
    assert!(killed(&report), "{:?}", report.reply);
    assert_eq!(conns[2].cmd(&["PING"]), Reply::Status("PONG".into()));

    // No keys: the client chose the node; every master is asked, one answers OK.
    let running = spin(&cluster, &[]);
    std::thread::sleep(Duration::from_millis(500));
    let got = answers(&target, &[]);
    // The client sends a keyless script to any node. When that is the seed, the seed is busy and
    // cannot list the masters: it alone is asked, and it is the one running the script.
    if got.len() == 1 {
        assert_eq!(got, vec![(addr(&cluster, 0), Reply::ok())]);
    } else {
        assert_eq!(
            got.iter().map(|(node, _)| node.clone()).collect::<Vec<_>>(),
            (0..3).map(|i| addr(&cluster, i)).collect::<Vec<_>>()
        );
        let mut replies: Vec<Reply> = got.into_iter().map(|(_, r)| r).collect();
        replies.sort_by_key(|r| format!("{r:?}"));
        assert_eq!(replies, vec![not_busy(), not_busy(), Reply::ok()]);
    }
    assert!(killed(&running.join().unwrap()));

    // Esc in the workbench: the worker sends the kill to the node of the run's key.
    let worker = Worker::start_with(Some(connect(&cluster)));
    let key = key_on(1, "spin");
    let run = |consent| {
        worker.send(EngineCommand::Run {
            id: 1,
            request: request("local i = 0 while true do i = i + 1 end", &[&key]),
            seed: Db::new(),
            busy_threshold_ms: 100,
            consent,
            live: true,
            clock_ms: 0,
        })
    };
    // The dry run stops at the 100 ms threshold: the guard asks; with consent the live run spins
    // on node 1.
    run(Default::default());
    let question = worker
        .next_result(Duration::from_secs(20))
        .expect("a report")
        .question
        .expect("the guard asks");
    run(question.consent);
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while worker.live_phase() != evalbench::engine::live::guarded::Phase::OnServer {
        assert!(
            std::time::Instant::now() < deadline,
            "the run reaches the server"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    worker.cancel();
    let result = worker
        .next_result(Duration::from_secs(20))
        .expect("a report");
    assert!(killed(&result.report), "{:?}", result.report.reply);
    assert_eq!(conns[1].cmd(&["PING"]), Reply::Status("PONG".into()));
}

#[test]
fn the_read_timeout_holds_and_a_timed_out_script_is_not_sent_again() {
    let Some(cluster) = start_cluster() else {
        return;
    };
    let target = TargetSpec {
        read_timeout_ms: Some(300),
        ..spec(&cluster)
    }
    .resolve()
    .unwrap();
    let mut live = LiveBackend::connect(target).expect("connect to the cluster");
    let key = key_on(1, "slow");
    // One write, then 2 s of work (under the default 5 s busy threshold).
    let script = "redis.call('INCR', KEYS[1]) local s = redis.call('TIME') \
        while true do local n = redis.call('TIME') \
        if (n[1] - s[1]) * 1000000 + (n[2] - s[2]) > 2000000 then break end end return 1";
    let started = Instant::now();
    let result = live.run(&request(script, &[&key]), WriteMode::Allowed);
    let elapsed = started.elapsed();
    // Giving up sends SCRIPT KILL to the node running the script; the server reads it when the
    // script ends (2 s, under the busy threshold): it had ended, and it ran once.
    match result {
        Err(LiveError::Lost(message)) => assert_eq!(
            message,
            format!(
                "{}: gave up waiting for the script after 0.3s (--read-timeout); sent SCRIPT KILL to {}: NOTBUSY (the script had ended by then; its reply was not read)",
                live.target.display,
                live.node_for_key(key.as_bytes()).unwrap()
            )
        ),
        Err(e) => panic!("{e}"),
        Ok(report) => panic!("no timeout: {:?}", report.reply),
    }
    // The read timeout and the wait for the script's end, not one timeout per retry.
    assert!(elapsed < Duration::from_millis(3500), "{elapsed:?}");
    // The script ends on its own; it ran once.
    std::thread::sleep(Duration::from_millis(2500).saturating_sub(elapsed));
    let mut conn = cluster.nodes[1].connect();
    let deadline = Instant::now() + Duration::from_secs(10);
    while conn.cmd(&["PING"]) != Reply::Status("PONG".into()) {
        assert!(Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(conn.cmd(&["GET", &key]), Reply::bulk("1"));
    // The backend works again.
    assert_eq!(
        live.command(&[b"GET", key.as_bytes()]).unwrap(),
        Reply::bulk("1")
    );
}

#[test]
fn moved_and_ask_are_followed() {
    let Some(cluster) = start_cluster() else {
        return;
    };
    let mut conns: Vec<Conn> = cluster.nodes.iter().map(|n| n.connect()).collect();
    let ids: Vec<String> = conns
        .iter_mut()
        .map(|c| match c.cmd(&["CLUSTER", "MYID"]) {
            Reply::Bulk(b) => String::from_utf8(b).unwrap(),
            other => panic!("{other:?}"),
        })
        .collect();
    let mut live = connect(&cluster);
    let key = key_on(2, "moving");
    let slot = evalbench::engine::lint::hash_slot(key.as_bytes()).to_string();
    // The slot migrates from node 2 to node 1: node 2 answers ASK for a key it does not have.
    assert_eq!(
        conns[1].cmd(&["CLUSTER", "SETSLOT", &slot, "IMPORTING", &ids[2]]),
        Reply::ok()
    );
    assert_eq!(
        conns[2].cmd(&["CLUSTER", "SETSLOT", &slot, "MIGRATING", &ids[1]]),
        Reply::ok()
    );
    assert_eq!(
        live.command(&[b"SET", key.as_bytes(), b"v"]).unwrap(),
        Reply::ok()
    );
    assert_eq!(conns[1].cmd(&["ASKING"]), Reply::ok());
    assert_eq!(conns[1].cmd(&["GET", &key]), Reply::bulk("v"));
    // The migration ends: node 2 answers MOVED; the backend follows it and reloads the slot map.
    for conn in conns.iter_mut() {
        assert_eq!(
            conn.cmd(&["CLUSTER", "SETSLOT", &slot, "NODE", &ids[1]]),
            Reply::ok()
        );
    }
    assert_eq!(live.node_for_key(key.as_bytes()), Some(addr(&cluster, 2)));
    assert_eq!(
        live.command(&[b"GET", key.as_bytes()]).unwrap(),
        Reply::bulk("v")
    );
    assert_eq!(live.node_for_key(key.as_bytes()), Some(addr(&cluster, 1)));
    let summary = inspect::summarize(&mut live, key.as_bytes())
        .unwrap()
        .unwrap();
    assert_eq!(summary.node, Some(addr(&cluster, 1)));
}

#[test]
fn a_standalone_server_has_no_nodes_and_is_asked_itself_to_kill() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let target = TargetSpec {
        url: Some(format!("redis://127.0.0.1:{}", server.port)),
        ..TargetSpec::default()
    }
    .resolve()
    .unwrap();
    let mut live = LiveBackend::connect(target.clone()).unwrap();
    assert_eq!(live.node_for_key(b"k"), None);
    assert_eq!(live.cluster_masters().unwrap(), Vec::new());
    assert_eq!(
        answers(&target, &["k"]),
        vec![(format!("127.0.0.1:{}", server.port), not_busy())]
    );
}
