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

/// The nodes are declared first: they stop before their folder is removed.
struct Cluster {
    nodes: Vec<RedisServer>,
    dir: tempfile::TempDir,
}

fn start_cluster() -> Option<Cluster> {
    start_cluster_with(0)
}

/// Three masters (nodes 0, 1, 2 with the slot ranges of `RANGES`) and `replicas` replicas: node
/// 3 + i replicates master i. `cluster-node-timeout` is long (30 s), so nothing fails over by
/// itself during a test: a failover is the test's own doing.
fn start_cluster_with(replicas: usize) -> Option<Cluster> {
    // One directory per cluster (the nodes' config files): tests run in parallel.
    let dir = tempfile::Builder::new()
        .prefix("evalbench-cluster-")
        .tempdir()
        .unwrap();
    let dir_arg = dir.path().display().to_string();
    let mut nodes = Vec::new();
    for _ in 0..3 + replicas {
        nodes.push(RedisServer::start_with(&[
            "--cluster-enabled",
            "yes",
            "--cluster-config-file",
            "nodes-PORT.conf",
            "--cluster-node-timeout",
            "30000",
            // A replica's first sync starts at once (the default waits 5 s for more replicas).
            "--repl-diskless-sync-delay",
            "0",
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
    let known = format!("cluster_known_nodes:{}", nodes.len());
    let deadline = Instant::now() + Duration::from_secs(20);
    let wait = |conns: &mut Vec<Conn>, ready: &dyn Fn(&mut Conn, usize) -> bool| loop {
        if conns.iter_mut().enumerate().all(|(i, c)| ready(c, i)) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the test cluster did not become ready"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    wait(&mut conns, &|c, _| match c.cmd(&["CLUSTER", "INFO"]) {
        Reply::Bulk(b) => {
            let text = String::from_utf8_lossy(&b).into_owned();
            text.contains("cluster_state:ok") && text.contains(&known)
        }
        _ => false,
    });
    if replicas > 0 {
        let ids: Vec<String> = conns[..3]
            .iter_mut()
            .map(|c| match c.cmd(&["CLUSTER", "MYID"]) {
                Reply::Bulk(b) => String::from_utf8(b).unwrap(),
                other => panic!("{other:?}"),
            })
            .collect();
        for i in 0..replicas {
            assert_eq!(
                conns[3 + i].cmd(&["CLUSTER", "REPLICATE", &ids[i]]),
                Reply::ok()
            );
        }
        // Each replica in sync with its master, and node 0 lists every replica in CLUSTER SLOTS.
        wait(&mut conns, &|c, i| {
            i < 3
                || matches!(c.cmd(&["ROLE"]), Reply::Array(r)
                    if r.get(3) == Some(&Reply::bulk("connected")))
        });
        wait(&mut conns, &|c, i| {
            i != 0
                || matches!(c.cmd(&["CLUSTER", "SLOTS"]), Reply::Array(ranges)
                    if ranges.iter().enumerate().all(|(m, r)| matches!(r, Reply::Array(p)
                        if p.len() == if m < replicas { 4 } else { 3 })))
        });
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
        Reply::err(format!("CROSSSLOT Keys in request don't hash to the same slot (evalbench read nothing and did not send the script: a -> slot 15495 on {}, b -> slot 3300 on {}; put a common {{hash tag}} in the keys)", addr(&cluster, 2), addr(&cluster, 0)))
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
    let Some(cluster) = start_cluster_with(3) else {
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
        vec![(node_of_key(&cluster, &key), not_busy())]
    );

    // A script on a node that is not the one connected to.
    let running = spin(&cluster, &[&key]);
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(
        answers(&target, &[&key]),
        vec![(node_of_key(&cluster, &key), Reply::ok())]
    );
    let report = running.join().unwrap();
    assert!(killed(&report), "{:?}", report.reply);
    for conn in conns.iter_mut() {
        assert_eq!(conn.cmd(&["PING"]), pong());
    }

    // No keys: the script goes to the node given to connect, and the kill too.
    let running = spin(&cluster, &[]);
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(
        answers(&target, &[]),
        vec![(
            format!("{} (master, no keys)", addr(&cluster, 0)),
            Reply::ok()
        )]
    );
    assert!(killed(&running.join().unwrap()));
    for conn in conns.iter_mut() {
        assert_eq!(conn.cmd(&["PING"]), pong());
    }

    // Connected to a replica: a keyless read-only script runs on the replica, and is killed there.
    let replica = TargetSpec {
        url: Some(format!("redis://{}", addr(&cluster, 4))),
        ..TargetSpec::default()
    }
    .resolve()
    .unwrap();
    let mut on_replica = LiveBackend::connect(replica.clone()).unwrap();
    assert!(on_replica.server.is_replica());
    assert_eq!(
        on_replica.node_for_keys(&[]).map(|n| n.describe()),
        Some(format!("{} (replica, no keys)", addr(&cluster, 4)))
    );
    let running = std::thread::spawn(move || {
        let report = on_replica
            .run(&request("while true do end", &[]), WriteMode::ReadOnly)
            .unwrap();
        (report, on_replica.last_node.clone())
    });
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(conns[4].cmd(&["PING"]), Reply::err("BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."));
    assert_eq!(
        answers(&replica, &[]),
        vec![(
            format!("{} (replica, no keys)", addr(&cluster, 4)),
            Reply::ok()
        )]
    );
    let (report, node) = running.join().unwrap();
    assert!(killed(&report), "{:?}", report.reply);
    assert_eq!(
        node.map(|n| n.describe()),
        Some(format!("{} (replica, no keys)", addr(&cluster, 4)))
    );
    for conn in conns.iter_mut() {
        assert_eq!(conn.cmd(&["PING"]), pong());
    }
    // With keys, the replica's reads go to the slot's master, and the report names it.
    let mut on_replica = LiveBackend::connect(replica).unwrap();
    let report = on_replica
        .run(
            &request("return redis.call('EXISTS', KEYS[1])", &[&key]),
            WriteMode::ReadOnly,
        )
        .unwrap();
    assert_eq!(report.reply, Reply::Int(0));
    assert_eq!(
        on_replica.last_node.map(|n| n.describe()),
        Some(node_of_key(&cluster, &key))
    );

    // The overview: each master, the busy one named, the libraries compared; X kills on the node
    // that runs the script.
    use evalbench::engine::live::overview;
    let library = "#!lua name=counters\nredis.register_function('bump', function(keys) return redis.call('INCR', keys[1]) end)";
    for conn in conns[..2].iter_mut() {
        assert_eq!(
            conn.cmd(&["FUNCTION", "LOAD", library]),
            Reply::bulk("counters")
        );
    }
    let mut watcher = connect(&cluster);
    let master = |i: usize| {
        format!(
            "{} (master, slots {}-{})",
            addr(&cluster, i),
            RANGES[i].0,
            RANGES[i].1
        )
    };
    let seen = overview::read(&mut watcher).unwrap();
    assert_eq!(seen.busy, None);
    assert_eq!(
        seen.nodes
            .iter()
            .map(|n| n.node.clone())
            .collect::<Vec<_>>(),
        (0..3).map(master).collect::<Vec<_>>()
    );
    assert_eq!(
        overview::library_coverage(&seen.nodes),
        vec![format!("counters: 2 of 3 masters (not on {})", master(2))]
    );
    assert!(seen.nodes.iter().all(|n| n
        .highlights
        .iter()
        .any(|(l, v)| l == "role" && v == "master")));
    let running = spin(&cluster, &[&key]);
    let deadline = Instant::now() + Duration::from_secs(10);
    let seen = loop {
        let seen = overview::read(&mut watcher).unwrap();
        if seen.busy.is_some() {
            break seen;
        }
        assert!(Instant::now() < deadline, "the node did not turn busy");
        std::thread::sleep(Duration::from_millis(20));
    };
    let busy =
        "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";
    assert_eq!(seen.busy, Some(format!("on {}: {busy}", master(2))));
    assert_eq!(seen.nodes[2].busy.as_deref(), Some(busy));
    assert_eq!(
        overview::describe_kill(
            evalbench::engine::live::script_kill_everywhere(&target),
            true
        ),
        format!(
            "sent SCRIPT KILL to {}: OK; the script was stopped (the server answers PING)",
            master(2)
        )
    );
    assert!(killed(&running.join().unwrap()));
    for conn in conns.iter_mut() {
        assert_eq!(conn.cmd(&["PING"]), pong());
    }

    // FUNCTION LOAD on every master: each master's state, one --yes, each master's answer.
    let file = cluster.dir.path().join("counters.lua");
    std::fs::write(&file, library).unwrap();
    let load = |extra: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_evalbench"))
            .args([
                "function",
                "load",
                "--server",
                &format!("redis://{}", addr(&cluster, 0)),
                "--every-master",
            ])
            .args(extra)
            .arg(&file)
            .env_remove("REDIS_URL")
            .output()
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let states = format!(
        "library counters: on 3 masters\n  {}: has this code already (nothing to send)\n  {}: has this code already (nothing to send)\n  {}: does not have it (FUNCTION LOAD)\n",
        master(0),
        master(1),
        master(2)
    );
    assert_eq!(
        load(&[]),
        (
            2,
            states.clone(),
            "evalbench: refused: FUNCTION LOAD writes to 1 master (their state is above). Nothing was sent. Rerun with --yes to load it on each.\n".to_string()
        )
    );
    assert_eq!(conns[2].cmd(&["FUNCTION", "LIST"]), Reply::Array(vec![]));
    assert_eq!(
        load(&["--yes"]),
        (
            0,
            format!(
                "{states}{}: has this code already: nothing sent\n{}: has this code already: nothing sent\n{}: loaded counters\n",
                master(0),
                master(1),
                master(2)
            ),
            String::new()
        )
    );
    let seen = overview::read(&mut watcher).unwrap();
    assert_eq!(
        overview::library_coverage(&seen.nodes),
        vec!["counters: every master (3)".to_string()]
    );
    // --json: an object per master, its state before and its own answer.
    assert_eq!(
        conns[1].cmd(&["FUNCTION", "DELETE", "counters"]),
        Reply::ok()
    );
    let node_json = |i: usize, state: &str, sent: bool, reply: serde_json::Value| serde_json::json!({"node": master(i), "addr": addr(&cluster, i), "state": state, "sent": sent, "reply": reply, "error": null});
    let json = |out: &str| -> serde_json::Value { serde_json::from_str(out).unwrap() };
    let (code, stdout, stderr) = load(&["--json"]);
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(
        json(&stdout)["masters"],
        serde_json::json!([
            node_json(0, "has this code already", false, serde_json::Value::Null),
            node_json(1, "does not have it", false, serde_json::Value::Null),
            node_json(2, "has this code already", false, serde_json::Value::Null),
        ])
    );
    assert_eq!(conns[1].cmd(&["FUNCTION", "LIST"]), Reply::Array(vec![]));
    let (code, stdout, stderr) = load(&["--json", "--yes"]);
    assert_eq!((code, stderr.as_str()), (0, ""));
    let out = json(&stdout);
    assert_eq!(
        out["masters"],
        serde_json::json!([
            node_json(0, "has this code already", false, serde_json::Value::Null),
            node_json(
                1,
                "does not have it",
                true,
                serde_json::json!({"bulk": "counters"})
            ),
            node_json(2, "has this code already", false, serde_json::Value::Null),
        ])
    );
    assert_eq!(
        (&out["library"], &out["loaded"], &out["failed"]),
        (
            &serde_json::json!("counters"),
            &serde_json::json!(1),
            &serde_json::json!(0)
        )
    );
    let seen = overview::read(&mut watcher).unwrap();
    assert_eq!(
        overview::library_coverage(&seen.nodes),
        vec!["counters: every master (3)".to_string()]
    );

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
                "{0}: gave up waiting for the script after 0.3s (--read-timeout); sent SCRIPT KILL to {0}: NOTBUSY (the script had ended by then; its reply was not read)",
                node_of_key(&cluster, &key)
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

/// Commands each node ran since `reset_stats` (INFO commandstats), the node's own INFO and CONFIG
/// left out, and the REPLCONF ACK a replica sends its master every second (replication, not ours).
fn commands_run(conns: &mut [Conn]) -> Vec<Vec<String>> {
    conns
        .iter_mut()
        .map(|c| match c.cmd(&["INFO", "commandstats"]) {
            Reply::Bulk(b) => String::from_utf8_lossy(&b)
                .lines()
                .filter_map(|l| l.strip_prefix("cmdstat_"))
                .filter_map(|l| l.split(':').next())
                .filter(|name| !["info", "config|resetstat", "replconf"].contains(name))
                .map(str::to_string)
                .collect(),
            other => panic!("{other:?}"),
        })
        .collect()
}

fn reset_stats(conns: &mut [Conn]) {
    for c in conns.iter_mut() {
        assert_eq!(c.cmd(&["CONFIG", "RESETSTAT"]), Reply::ok());
    }
}

fn pong() -> Reply {
    Reply::Status("PONG".into())
}

fn wrong_type() -> Reply {
    Reply::err("WRONGTYPE Operation against a key holding the wrong kind of value")
}

/// "127.0.0.1:port (master, slot N)" of the master of `key`.
fn node_of_key(cluster: &Cluster, key: &str) -> String {
    let slot = evalbench::engine::lint::hash_slot(key.as_bytes());
    format!(
        "{} (master, slot {slot})",
        addr(cluster, owner_of_slot(slot))
    )
}

#[test]
fn runs_keep_their_trace_and_writes_whatever_the_reply_holds() {
    use evalbench::engine::live::guarded::{guarded_run, Consent, RunControl};
    use evalbench::engine::live::{outcome_summary, written_keys};
    let Some(cluster) = start_cluster_with(3) else {
        return;
    };
    let mut conns: Vec<Conn> = cluster.nodes.iter().map(|n| n.connect()).collect();
    // Two keys of one slot on node 2 (not the node connected to): a counter and a string.
    let (counter, text) = ("{t}:n", "{t}:s");
    let node = owner(&mut conns[0], counter);
    assert_eq!(node, 2);
    assert_eq!(conns[node].cmd(&["SET", text, "x"]), Reply::ok());
    let mut live = connect(&cluster);
    assert_eq!(
        live.masters()
            .iter()
            .map(|m| m.replicas.clone())
            .collect::<Vec<_>>(),
        (3..6).map(|i| vec![addr(&cluster, i)]).collect::<Vec<_>>()
    );

    // A write, then an error inside the returned array: the script returned, its trace is kept.
    let script =
        "local n = redis.call('INCR', KEYS[1]) return {n, redis.pcall('HGET', KEYS[2], 'f')}";
    let report = live
        .run(&request(script, &[counter, text]), WriteMode::Allowed)
        .unwrap();
    assert_eq!(
        report.reply,
        Reply::Array(vec![Reply::Int(1), wrong_type()])
    );
    assert_eq!(report.outcome, Outcome::Returned);
    assert_eq!(
        report
            .trace
            .iter()
            .map(|t| (
                String::from_utf8_lossy(&t.command[0]).into_owned(),
                t.reply.clone()
            ))
            .collect::<Vec<_>>(),
        vec![
            ("INCR".to_string(), Reply::Int(1)),
            ("HGET".to_string(), wrong_type())
        ]
    );
    assert_eq!(written_keys(&report), vec![counter.as_bytes().to_vec()]);
    assert_eq!(
        outcome_summary(&report),
        "wrote 1 key ({t}:n), then returned"
    );
    assert_eq!(
        live.last_node.as_ref().map(|n| n.describe()),
        Some(node_of_key(&cluster, counter))
    );
    assert_eq!(conns[node].cmd(&["GET", counter]), Reply::bulk("1"));

    // A write, then an error raised: the write stays, the report says so.
    let script = "redis.call('INCR', KEYS[1]) return redis.call('HGET', KEYS[2], 'f')";
    let report = live
        .run(&request(script, &[counter, text]), WriteMode::Allowed)
        .unwrap();
    assert_eq!(report.outcome, Outcome::Raised);
    assert_eq!(report.trace.len(), 2);
    assert_eq!(report.trace[0].reply, Reply::Int(2));
    assert_eq!(outcome_summary(&report), "wrote 1 key ({t}:n), then failed");
    assert!(
        report.warnings.iter().any(|w| w.message
            == "the script failed after 1 write(s): Redis does not roll back, the writes before the error stay"),
        "{:?}",
        report.warnings
    );
    assert_eq!(conns[node].cmd(&["GET", counter]), Reply::bulk("2"));

    // Read-only, an error inside the array: the reply as the server gave it.
    let script = "return {redis.call('GET', KEYS[1]), redis.pcall('HGET', KEYS[2], 'f')}";
    let report = live
        .run(&request(script, &[counter, text]), WriteMode::ReadOnly)
        .unwrap();
    assert_eq!(
        report.reply,
        Reply::Array(vec![Reply::bulk("2"), wrong_type()])
    );
    assert_eq!(report.trace.len(), 2);
    assert_eq!(outcome_summary(&report), "returned, no writes");

    // RESP3: the same run, the same trace.
    let target = TargetSpec {
        resp3: true,
        ..spec(&cluster)
    }
    .resolve()
    .unwrap();
    let mut resp3 = LiveBackend::connect(target).unwrap();
    let script =
        "local n = redis.call('INCR', KEYS[1]) return {n, redis.pcall('HGET', KEYS[2], 'f')}";
    let report = resp3
        .run(&request(script, &[counter, text]), WriteMode::Allowed)
        .unwrap();
    assert_eq!(
        report.reply,
        Reply::Array(vec![Reply::Int(3), wrong_type()])
    );
    assert_eq!(report.trace.len(), 2);
    assert_eq!(
        outcome_summary(&report),
        "wrote 1 key ({t}:n), then returned"
    );

    // Untraced: a runtime error is a failure of a script that ran, not a refusal.
    live.tracing = false;
    let script = "redis.call('INCR', KEYS[1]) return redis.call('HGET', KEYS[2], 'f')";
    let report = live
        .run(&request(script, &[counter, text]), WriteMode::Allowed)
        .unwrap();
    assert_eq!(report.outcome, Outcome::Raised);
    assert_eq!(conns[node].cmd(&["GET", counter]), Reply::bulk("4"));
    live.tracing = true;

    // The guarded run with consent: the same truth, sent once.
    let control = RunControl::default();
    control.begin(&[counter.as_bytes().to_vec(), text.as_bytes().to_vec()]);
    let run = guarded_run(
        &mut live,
        &request(script, &[counter, text]),
        &Consent {
            writes: true,
            ..Consent::default()
        },
        &control,
        0,
    );
    assert!(run.sent);
    assert_eq!(run.report.outcome, Outcome::Raised);
    assert_eq!(run.report.trace.len(), 2);
    assert_eq!(
        outcome_summary(&run.report),
        "wrote 1 key ({t}:n), then failed"
    );
    assert_eq!(conns[node].cmd(&["GET", counter]), Reply::bulk("5"));

    // CROSSSLOT: decided from the names; no node reads or runs anything.
    reset_stats(&mut conns);
    let (a, b) = (key_on(0, "a"), key_on(1, "b"));
    let control = RunControl::default();
    control.begin(&[]);
    let run = guarded_run(
        &mut live,
        &request("return redis.call('SET', KEYS[1], KEYS[2])", &[&a, &b]),
        &Consent::default(),
        &control,
        0,
    );
    assert!(!run.sent && run.question.is_none() && run.dry_run_ns.is_none());
    assert_eq!(run.report.outcome, Outcome::Refused);
    let slot = |k: &str| evalbench::engine::lint::hash_slot(k.as_bytes());
    assert_eq!(
        run.report.reply,
        Reply::err(format!(
            "CROSSSLOT Keys in request don't hash to the same slot (evalbench read nothing and did not send the script: {a} -> slot {} on {}, {b} -> slot {} on {}; put a common {{hash tag}} in the keys)",
            slot(&a),
            addr(&cluster, 0),
            slot(&b),
            addr(&cluster, 1)
        ))
    );
    assert_eq!(commands_run(&mut conns), vec![Vec::<String>::new(); 6]);

    // The CLI: the JSON names the node and says what was written.
    let url = format!("redis://{}", addr(&cluster, 0));
    let dir = cluster.dir.path().join("scripts");
    std::fs::create_dir_all(&dir).unwrap();
    let file = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    };
    let in_array = file(
        "in_array.lua",
        "local n = redis.call('INCR', KEYS[1]) return {n, redis.pcall('HGET', KEYS[2], 'f')}",
    );
    let (code, stdout, stderr) = cli(&[
        "--server", &url, "--yes", "--json", &in_array, counter, text,
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(json["outcome"], "returned");
    assert_eq!(json["result"], "wrote 1 key ({t}:n), then returned");
    assert_eq!(json["written"], serde_json::json!(["{t}:n"]));
    assert_eq!(json["trace"].as_array().unwrap().len(), 2);
    assert_eq!(
        json["node"],
        serde_json::json!({"addr": addr(&cluster, 2), "role": "master", "slot": slot(counter)})
    );
    assert_eq!(conns[node].cmd(&["GET", counter]), Reply::bulk("6"));
    let raises = file(
        "raises.lua",
        "redis.call('INCR', KEYS[1]) return redis.call('HGET', KEYS[2], 'f')",
    );
    let (code, stdout, stderr) = cli(&["--server", &url, "--yes", &raises, counter, text]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stdout.contains(&format!(
            "\nnode: {}\nresult: wrote 1 key ({{t}}:n), then failed\n",
            node_of_key(&cluster, counter)
        )),
        "{stdout}"
    );
    // A live trace has no time per call: "-", not 0.000.
    assert!(
        stdout
            .lines()
            .any(|l| l.contains("INCR {t}:n") && l.ends_with("        - W")),
        "{stdout}"
    );
    assert!(!stdout.contains("0.000"), "{stdout}");
    assert_eq!(conns[node].cmd(&["GET", counter]), Reply::bulk("7"));
    // A write refused without --yes names the node it would have gone to.
    let (code, _, stderr) = cli(&["--server", &url, &raises, counter, text]);
    assert_eq!(code, 2);
    assert!(
        stderr.ends_with(&format!(
            "\nNothing was sent to {}. Rerun with --yes to allow writes.\n",
            node_of_key(&cluster, counter)
        )),
        "{stderr}"
    );
    assert_eq!(conns[node].cmd(&["GET", counter]), Reply::bulk("7"));

    // A dry run stopped at the busy threshold: the threshold (200 ms) is far under
    // cluster-node-timeout (30 s), and a busy node answers the other nodes once past it, so no
    // failover is foretold.
    assert_eq!(
        conns[0].cmd(&["CONFIG", "SET", "busy-reply-threshold", "200"]),
        Reply::ok()
    );
    let spins = file("spins.lua", "while true do end");
    let (code, _, stderr) = cli(&["--server", &url, &spins, counter]);
    assert_eq!(code, 2);
    assert!(stderr.starts_with("evalbench: refused: the dry run in the sandbox on a copy of KEYS did not complete: stopped at the busy threshold (200 ms) after "), "{stderr}");
    assert!(
        stderr.ends_with(&format!(
            " (on the server it would keep every other client waiting until it ends or is killed).\nNothing was sent to {}. Rerun with --yes to send it anyway (with --read-timeout SECONDS evalbench gives up and sends SCRIPT KILL).\n",
            node_of_key(&cluster, counter)
        )),
        "{stderr}"
    );
    assert_eq!(
        conns[0].cmd(&["CONFIG", "SET", "busy-reply-threshold", "5000"]),
        Reply::ok()
    );

    // CROSSSLOT from the CLI: exit 2, the slots named; the nodes ran only the connection's
    // discovery (on the node connected to).
    reset_stats(&mut conns);
    let (code, stdout, stderr) = cli(&["--server", &url, "--yes", &raises, &a, &b]);
    assert_eq!((code, stdout.as_str()), (2, ""));
    assert_eq!(
        stderr,
        format!(
            "evalbench: refused: CROSSSLOT Keys in request don't hash to the same slot (evalbench read nothing and did not send the script: {a} -> slot {} on {}, {b} -> slot {} on {}; put a common {{hash tag}} in the keys)\n",
            slot(&a),
            addr(&cluster, 0),
            slot(&b),
            addr(&cluster, 1)
        )
    );
    let mut ran = commands_run(&mut conns);
    ran[0].sort();
    assert_eq!(
        ran,
        [vec![
            "cluster|slots".to_string(),
            "config|get".into(),
            "role".into()
        ]]
        .into_iter()
        .chain(vec![Vec::new(); 5])
        .collect::<Vec<_>>()
    );
    for conn in conns.iter_mut() {
        assert_eq!(conn.cmd(&["PING"]), pong());
    }
}

/// `evalbench run ARGS`: (exit code, stdout, stderr).
fn cli(args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_evalbench"))
        .arg("run")
        .args(args)
        .env_remove("REDIS_URL")
        .output()
        .expect("run evalbench");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Wait until node `asked` names node `master` as the master of `slot` in CLUSTER SLOTS.
fn wait_for_master(cluster: &Cluster, asked: usize, slot: u16, master: usize) {
    let mut conn = cluster.nodes[asked].connect();
    let port = Reply::Int(cluster.nodes[master].port as i64);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let owner = match conn.cmd(&["CLUSTER", "SLOTS"]) {
            Reply::Array(ranges) => ranges.into_iter().find_map(|r| match r {
                Reply::Array(p)
                    if matches!((&p[0], &p[1]), (Reply::Int(a), Reply::Int(b))
                        if (*a..=*b).contains(&(slot as i64))) =>
                {
                    match &p[2] {
                        Reply::Array(m) => m.get(1).cloned(),
                        _ => None,
                    }
                }
                _ => None,
            }),
            _ => None,
        };
        if owner.as_ref() == Some(&port) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "slot {slot} did not move to node {master}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_lost_master_is_that_node_alone_and_a_failover_is_followed() {
    use evalbench::engine::live::guarded::{guarded_run, Consent, RunControl};
    let Some(mut cluster) = start_cluster_with(3) else {
        return;
    };
    let mut conns: Vec<Conn> = cluster.nodes.iter().map(|n| n.connect()).collect();
    let mut live = connect(&cluster);
    let incr = "return redis.call('INCR', KEYS[1])";
    let keys: Vec<String> = (0..3).map(|i| key_on(i, "c")).collect();
    let slot = |k: &str| evalbench::engine::lint::hash_slot(k.as_bytes());

    // A failover between the workbench's question and y: the question named node 0; y reads the
    // slot map again, sends nothing and asks again, naming node 3; y then sends it there, once.
    let asked = key_on(0, "q");
    let mut bench = WorkbenchOn::new(&cluster, incr, &asked);
    bench.press("<F5>");
    let first = bench.question().expect("the write is asked about");
    let (n0, n3) = (
        format!("{} (master, slot {})", addr(&cluster, 0), slot(&asked)),
        format!("{} (master, slot {})", addr(&cluster, 3), slot(&asked)),
    );
    assert!(
        first.ends_with(&format!("Send it to {n0}? (y/n)")),
        "{first}"
    );
    assert_eq!(conns[3].cmd(&["CLUSTER", "FAILOVER"]), Reply::ok());
    wait_for_master(&cluster, 0, slot(&keys[0]), 3);
    reset_stats(&mut conns);
    bench.press("y");
    assert_eq!(
        bench.question(),
        Some(format!("The cluster's topology changed since the question: the script's slot moved from {n0} to {n3} (a failover). Nothing was sent. y sends it with writes allowed; Esc on the server sends SCRIPT KILL. Send it to {n3}? (y/n)"))
    );
    assert!(commands_run(&mut conns)
        .iter()
        .all(|ran| !ran.iter().any(|c| c.starts_with("eval"))));
    bench.press("y");
    assert_eq!(bench.question(), None);
    assert_eq!(conns[3].cmd(&["GET", &asked]), Reply::bulk("1"));
    let evals: Vec<bool> = commands_run(&mut conns)
        .iter()
        .map(|ran| ran.iter().any(|c| c.starts_with("eval")))
        .collect();
    assert_eq!(evals, vec![false, false, false, true, false, false]);
    drop(bench);

    // The failover seen from a connection made before it: the write meets MOVED on node 0,
    // follows it once, and the report names the new master.
    let report = live
        .run(&request(incr, &[&keys[0]]), WriteMode::Allowed)
        .unwrap();
    assert_eq!(report.reply, Reply::Int(1));
    assert_eq!(
        live.last_node.as_ref().map(|n| n.describe()),
        Some(format!(
            "{} (master, slot {})",
            addr(&cluster, 3),
            slot(&keys[0])
        ))
    );
    assert_eq!(conns[3].cmd(&["GET", &keys[0]]), Reply::bulk("1"));
    // The slot map read after the MOVED tells the node connected to is a replica now; keyed
    // scripts still go to their masters, a keyless one would stay on the replica.
    assert_eq!(live.server.role, "slave");
    assert_eq!(
        live.server.summary(),
        "redis 7.0.15 replica (cluster), busy threshold 5000 ms, cluster-node-timeout 30000 ms"
    );
    assert!(!live.runs_on_replica(&[keys[0].as_bytes().to_vec()]));
    assert!(live.runs_on_replica(&[]));

    // Master 1 is killed: runs to it are not sent and name it; the other masters go on.
    cluster.nodes[1].stop();
    let lost = format!(
        "{} (master, slot {}): connection refused (is the node running? its replica takes over its slots once the cluster fails it over)",
        addr(&cluster, 1),
        slot(&keys[1])
    );
    match live.run(&request(incr, &[&keys[1]]), WriteMode::Allowed) {
        Err(LiveError::Connect(message)) => {
            assert_eq!(message, format!("{lost}; the script was not sent"))
        }
        other => panic!("{other:?}"),
    }
    let control = RunControl::default();
    control.begin(&[keys[1].as_bytes().to_vec()]);
    let consent = Consent {
        writes: true,
        ..Consent::default()
    };
    let run = guarded_run(
        &mut live,
        &request(incr, &[&keys[1]]),
        &consent,
        &control,
        0,
    );
    assert!(!run.sent);
    assert_eq!(run.report.outcome, Outcome::Refused);
    assert_eq!(
        run.report.reply,
        Reply::err(format!("evalbench: not sent: {lost}"))
    );
    control.begin(&[keys[2].as_bytes().to_vec()]);
    let run = guarded_run(
        &mut live,
        &request(incr, &[&keys[2]]),
        &consent,
        &control,
        0,
    );
    assert!(run.sent);
    assert_eq!(run.report.reply, Reply::Int(1));
    assert_eq!(
        live.check_nodes().unwrap(),
        vec![format!(
            "{} (master, slots 5461-10922): connection refused (is the node running? its replica takes over its slots once the cluster fails it over)",
            addr(&cluster, 1)
        )]
    );

    // Master 2 is killed while a script that wrote runs there: it may have run; how to check.
    let script = "redis.call('INCR', KEYS[1]) local s = redis.call('TIME') \
        while true do local n = redis.call('TIME') \
        if (n[1] - s[1]) * 1000000 + (n[2] - s[2]) > 1500000 then break end end return 1";
    let sent = evalbench::engine::live::instrument::instrument(script.as_bytes())
        .unwrap()
        .sha;
    let key = keys[2].clone();
    assert_eq!(
        conns[2].cmd(&["CONFIG", "SET", "busy-reply-threshold", "100"]),
        Reply::ok()
    );
    let running = std::thread::spawn(move || {
        let result = live.run(&request(script, &[&key]), WriteMode::Allowed);
        (live, result)
    });
    // The node answers BUSY once the script has run for the threshold (100 ms here).
    let deadline = Instant::now() + Duration::from_secs(10);
    while !matches!(conns[2].cmd(&["PING"]), Reply::Error(e) if e.starts_with("BUSY")) {
        assert!(Instant::now() < deadline, "the script did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    cluster.nodes[2].stop();
    let (mut live, result) = running.join().unwrap();
    let node = format!("{} (master, slot {})", addr(&cluster, 2), slot(&keys[2]));
    // Guarded, to the lost node: not sent (the PING first), so refused.
    control.begin(&[keys[2].as_bytes().to_vec()]);
    let run = guarded_run(
        &mut live,
        &request(incr, &[&keys[2]]),
        &consent,
        &control,
        0,
    );
    assert!(!run.sent);
    assert_eq!(run.report.outcome, Outcome::Refused);
    match result {
        Err(LiveError::Sent(message)) => {
            assert!(message.starts_with(&format!("{node}: ")), "{message}");
            assert!(
                message.ends_with(&format!(
                    "; the script was sent and may have run there before the connection dropped (evalbench never sends it twice): once the node answers, check SCRIPT EXISTS {sent} on {} and the keys it was given ({})",
                    addr(&cluster, 2),
                    keys[2]
                )),
                "{message}"
            );
        }
        other => panic!("{:?}", other.map(|r| r.reply)),
    }

    // Its replica takes over: the next write reaches it, once, and the report names it. The
    // killed script's INCR never reached the replica (a script's writes are replicated when it
    // ends): the counter there was 1.
    assert_eq!(
        conns[5].cmd(&["CLUSTER", "FAILOVER", "TAKEOVER"]),
        Reply::ok()
    );
    wait_for_master(&cluster, 3, slot(&keys[2]), 5);
    let report = live
        .run(&request(incr, &[&keys[2]]), WriteMode::Allowed)
        .unwrap();
    assert_eq!(report.reply, Reply::Int(2));
    assert_eq!(
        live.last_node.as_ref().map(|n| n.describe()),
        Some(format!(
            "{} (master, slot {})",
            addr(&cluster, 5),
            slot(&keys[2])
        ))
    );
    assert_eq!(conns[5].cmd(&["GET", &keys[2]]), Reply::bulk("2"));
    for i in [0, 3, 4, 5] {
        assert_eq!(conns[i].cmd(&["PING"]), pong(), "node {i}");
    }
}

#[test]
fn copy_says_which_keys_are_missing_and_where() {
    let Some(cluster) = start_cluster() else {
        return;
    };
    let mut conn = cluster.nodes[1].connect();
    let here = key_on(1, "here");
    assert_eq!(conn.cmd(&["SET", &here, "v"]), Reply::ok());
    let copy = |keys: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_evalbench"))
            .args([
                "copy",
                "--server",
                &format!("redis://{}", addr(&cluster, 0)),
            ])
            .args(keys)
            .env_remove("REDIS_URL")
            .output()
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let slot = |k: &str| evalbench::engine::lint::hash_slot(k.as_bytes());
    let (code, stdout, stderr) = copy(&["nope:key"]);
    assert_eq!((code, stdout.as_str()), (1, ""));
    assert_eq!(
        stderr,
        format!(
            "evalbench: no such key on {0}: nope:key (slot {1} on {2}); nothing was copied\n",
            addr(&cluster, 0),
            slot("nope:key"),
            addr(&cluster, owner_of_slot(slot("nope:key")))
        )
    );
    let (code, stdout, stderr) = copy(&[&here, "nope:key"]);
    assert_eq!(code, 0, "{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(json[&here]["value"], "v");
    assert_eq!(
        stderr,
        format!(
            "evalbench: not on {0}, left out: nope:key (slot {1} on {2})\n",
            addr(&cluster, 0),
            slot("nope:key"),
            addr(&cluster, owner_of_slot(slot("nope:key")))
        )
    );
}

/// The worker's events until its next finished run: the node it named, and the result.
fn node_and_result(
    worker: &evalbench::tui::worker::Worker,
) -> (Option<String>, Box<evalbench::tui::worker::RunResult>) {
    use evalbench::tui::worker::EngineEvent;
    let mut node = None;
    loop {
        match worker.events.recv_timeout(Duration::from_secs(30)) {
            Ok(EngineEvent::Node(n)) => node = n,
            Ok(EngineEvent::Finished(result)) => return (node, result),
            Ok(_) => continue,
            Err(e) => panic!("no result: {e}"),
        }
    }
}

#[test]
fn a_timeout_a_failover_and_a_lost_seed_are_followed_to_the_node_that_acts() {
    use evalbench::engine::keyspace::Db;
    use evalbench::engine::live::guarded::{
        describe_concern, guarded_run, Concern, Consent, Phase, RunControl,
    };
    use evalbench::tui::harness::Harness;
    use evalbench::tui::worker::{EngineCommand, Worker};
    let Some(mut cluster) = start_cluster_with(3) else {
        return;
    };
    let mut conns: Vec<Conn> = cluster.nodes.iter().map(|n| n.connect()).collect();
    let slot = |k: &str| evalbench::engine::lint::hash_slot(k.as_bytes());

    // The guard weighs cluster-node-timeout as well as the busy threshold: with 400 ms on the node
    // connected to and a busy threshold of 60 s, a dry run of 0.3 s is far under the busy
    // threshold's share and over the node timeout's: asked, nothing sent.
    for (name, value) in [
        ("cluster-node-timeout", "400"),
        ("busy-reply-threshold", "60000"),
    ] {
        assert_eq!(conns[0].cmd(&["CONFIG", "SET", name, value]), Reply::ok());
    }
    let mut live = connect(&cluster);
    assert_eq!(live.server.cluster_node_timeout_ms, Some(400));
    let slow_script = "local s = redis.call('TIME') while true do local n = redis.call('TIME') \
        if (n[1] - s[1]) * 1000000 + (n[2] - s[2]) > 300000 then break end end return 1";
    let slow_file = cluster.dir.path().join("slow.lua");
    std::fs::write(&slow_file, slow_script).unwrap();
    let url = format!("redis://{}", addr(&cluster, 0));
    let (code, stdout, stderr) = cli(&["--server", &url, slow_file.to_str().unwrap()]);
    assert_eq!((code, stdout.as_str()), (2, ""), "{stderr}");
    assert!(
        stderr
            .starts_with("evalbench: refused: the dry run in the sandbox on a copy of KEYS took "),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("% of this cluster's cluster-node-timeout of 400 ms (the server may be slower): a node running a script answers the other nodes only once it passes the busy threshold (60000 ms), so a master busy longer than cluster-node-timeout (400 ms) is failed over by its replica, and the script's writes do not reach the new master.\nNothing was sent to {} (master, no keys). Rerun with --yes", addr(&cluster, 0))),
        "{stderr}"
    );
    for (name, value) in [
        ("cluster-node-timeout", "30000"),
        ("busy-reply-threshold", "5000"),
    ] {
        assert_eq!(conns[0].cmd(&["CONFIG", "SET", name, value]), Reply::ok());
    }
    reset_stats(&mut conns);
    let control = RunControl::default();
    control.begin(&[]);
    let slow = request(slow_script, &[]);
    let run = guarded_run(&mut live, &slow, &Consent::default(), &control, 0);
    assert!(!run.sent);
    let question = run.question.expect("the guard asks");
    // (The dry run's TIME calls are a concern of their own: their replies differ on the server.)
    assert!(!question
        .concerns
        .iter()
        .any(|c| matches!(c, Concern::Slow { .. } | Concern::Incomplete { .. })));
    let timeouts: Vec<&Concern> = question
        .concerns
        .iter()
        .filter(|c| matches!(c, Concern::NodeTimeout { .. }))
        .collect();
    match timeouts.as_slice() {
        [concern @ Concern::NodeTimeout {
            ms,
            timeout_ms: 400,
            replica: false,
            ..
        }] => {
            assert!(*ms >= 300.0, "{ms}");
            assert!(
                describe_concern(concern).ends_with("% of this cluster's cluster-node-timeout of 400 ms (the server may be slower): a node running a script answers the other nodes only once it passes the busy threshold (60000 ms), so a master busy longer than cluster-node-timeout (400 ms) is failed over by its replica, and the script's writes do not reach the new master"),
                "{}",
                describe_concern(concern)
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(question.consent.slow);
    assert!(commands_run(&mut conns)
        .iter()
        .all(|ran| !ran.iter().any(|c| c.starts_with("eval"))));

    // The workbench, connected before the failover: its status bar follows the role.
    let library = "#!lua name=tally\nredis.register_function('tally', function(keys) return redis.call('INCR', keys[1]) end)";
    assert_eq!(
        conns[1].cmd(&["FUNCTION", "LOAD", library]),
        Reply::bulk("tally")
    );
    let mut workbench = Harness::new(library, &[], &[], "{}")
        .with_live(spec(&cluster).resolve().unwrap(), "redis 7.0.15 cluster")
        .unwrap();
    assert_eq!(
        workbench.app.backend_label(),
        "live redis 7.0.15 cluster guarded"
    );
    // Alt-U on a cluster: the library on every master, each master's state shown first, one y,
    // each master's own answer.
    let master = |i: usize| {
        format!(
            "{} (master, slots {}-{})",
            addr(&cluster, i),
            RANGES[i].0,
            RANGES[i].1
        )
    };
    assert_eq!(
        conns[2].cmd(&["CONFIG", "SET", "slowlog-log-slower-than", "0"]),
        Reply::ok()
    );
    workbench.press("<A-u>");
    let screen = workbench.render(120, 40);
    for line in [
        "on 3 masters (the changes below are the first's):".to_string(),
        format!("{}: does not have it (FUNCTION LOAD)", master(0)),
        format!("{}: has this code already (nothing to send)", master(1)),
        format!("{}: does not have it (FUNCTION LOAD)", master(2)),
        "y sends FUNCTION LOAD REPLACE to the 2 masters without this code (one y for all)"
            .to_string(),
    ] {
        assert!(screen.contains(&line), "{line}\n{screen}");
    }
    workbench.press("y");
    assert_eq!(
        workbench.app.status,
        format!(
            "library tally: {}: loaded tally; {}: has this code already: nothing sent; {}: loaded tally",
            master(0),
            master(1),
            master(2)
        )
    );
    for conn in conns[..3].iter_mut() {
        assert!(matches!(conn.cmd(&["FUNCTION", "LIST"]), Reply::Array(libs) if libs.len() == 1));
    }
    // The overview: the first fields named by their node, then each master's state, libraries
    // and slow log with a node column (the load is in master 2's slow log).
    workbench.press("<A-5>").press("i");
    let screen = workbench.render(200, 60);
    let mut expected = vec![
        format!(
            "Node: {} (master, the node connected to)",
            addr(&cluster, 0)
        ),
        format!(
            "Function libraries on {} (FUNCTION LIST): 1",
            addr(&cluster, 0)
        ),
        "Masters (3)".to_string(),
        "tally: every master (3)".to_string(),
        "Slow log by node".to_string(),
    ];
    expected.extend((0..3).map(|i| format!("{:<21} tally", addr(&cluster, i))));
    for line in expected {
        assert!(screen.contains(&line), "{line}\n{screen}");
    }
    assert!(
        screen
            .lines()
            .any(|l| l.contains(&format!("{:<21} #", addr(&cluster, 2)))
                && l.contains("FUNCTION LOAD REPLACE #!lua name=tally")),
        "{screen}"
    );
    assert!(!screen.contains("Slow log (SLOWLOG GET"), "{screen}");
    workbench.press("i");

    // A script times out on master 0 (it ran once: the kill came after its end), then master 0 is
    // failed over to node 3. The write after it goes to node 3 at once (the slot map is read
    // again after the timeout): node 0 never sees it.
    let target = TargetSpec {
        read_timeout_ms: Some(300),
        ..spec(&cluster)
    }
    .resolve()
    .unwrap();
    let mut live = LiveBackend::connect(target).unwrap();
    let key = key_on(0, "t");
    let script = "redis.call('INCR', KEYS[1]) local s = redis.call('TIME') \
        while true do local n = redis.call('TIME') \
        if (n[1] - s[1]) * 1000000 + (n[2] - s[2]) > 1500000 then break end end return 1";
    match live.run(&request(script, &[&key]), WriteMode::Allowed) {
        Err(LiveError::Lost(message)) => assert!(
            message.starts_with(&format!(
                "{}: gave up waiting for the script after 0.3s",
                node_of_key(&cluster, &key)
            )),
            "{message}"
        ),
        other => panic!("{:?}", other.map(|r| r.reply)),
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while conns[0].cmd(&["PING"]) != pong() {
        assert!(Instant::now() < deadline, "node 0 stays busy");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(conns[3].cmd(&["CLUSTER", "FAILOVER"]), Reply::ok());
    wait_for_master(&cluster, 0, slot(&key), 3);
    reset_stats(&mut conns);
    let report = live
        .run(
            &request("return redis.call('INCR', KEYS[1])", &[&key]),
            WriteMode::Allowed,
        )
        .unwrap();
    assert_eq!(report.reply, Reply::Int(2));
    assert_eq!(
        live.last_node.as_ref().map(|n| n.describe()),
        Some(format!(
            "{} (master, slot {})",
            addr(&cluster, 3),
            slot(&key)
        ))
    );
    let ran = commands_run(&mut conns);
    assert!(!ran[0].iter().any(|c| c.starts_with("eval")), "{ran:?}");
    assert!(ran[3].iter().any(|c| c == "evalsha"), "{ran:?}");
    // The node connected to is a replica now: a keyless script stays there, and says so.
    assert_eq!(live.server.role, "slave");
    // A load on every master from it: the masters are the slot map's (node 3 now).
    let file = cluster.dir.path().join("tally.lua");
    std::fs::write(&file, library).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_evalbench"))
        .args(["function", "load", "--every-master", "--json", "--server"])
        .arg(format!("redis://{}", addr(&cluster, 0)))
        .arg(&file)
        .env_remove("REDIS_URL")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let nodes: Vec<(String, String, bool)> = json["masters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["addr"].as_str().unwrap().to_string(),
                m["state"].as_str().unwrap().to_string(),
                m["sent"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        nodes,
        [3, 1, 2]
            .map(|i| (
                addr(&cluster, i),
                "has this code already".to_string(),
                false
            ))
            .to_vec()
    );
    live.run(&request("return 1", &[]), WriteMode::ReadOnly)
        .unwrap();
    assert_eq!(
        live.last_node.as_ref().map(|n| n.describe()),
        Some(format!("{} (replica, no keys)", addr(&cluster, 0)))
    );
    // The workbench's next check reads the role again.
    workbench.app.connection.check_now();
    workbench.settle();
    assert_eq!(
        workbench.app.backend_label(),
        "live redis 7.0.15 cluster (replica) guarded"
    );
    assert_eq!(
        workbench.app.status,
        "the node connected to is a replica now (its master was failed over): runs with keys go to their slot's master; runs without keys stay on it, read-only"
    );

    // The node connected to is lost: a keyless script goes to a master that answers, the question
    // names it, and Esc kills the script there; every node answers PING right after.
    for conn in conns[1..].iter_mut() {
        assert_eq!(
            conn.cmd(&["CONFIG", "SET", "busy-reply-threshold", "100"]),
            Reply::ok()
        );
    }
    let worker = Worker::start_with(Some(connect(&cluster)));
    cluster.nodes[0].stop();
    let run = |consent| {
        worker.send(EngineCommand::Run {
            id: 1,
            request: request("local i = 0 while true do i = i + 1 end", &[]),
            seed: Db::new(),
            busy_threshold_ms: 100,
            consent,
            live: true,
            clock_ms: 0,
        })
    };
    let running_on = format!("{} (master, no keys)", addr(&cluster, 3));
    run(Default::default());
    let (node, result) = node_and_result(&worker);
    assert_eq!(node.as_deref(), Some(running_on.as_str()));
    run(result.question.expect("the guard asks").consent);
    let deadline = Instant::now() + Duration::from_secs(20);
    while worker.live_phase() != Phase::OnServer {
        assert!(Instant::now() < deadline, "the run reaches the server");
        std::thread::sleep(Duration::from_millis(5));
    }
    worker.cancel();
    let (node, result) = node_and_result(&worker);
    assert!(killed(&result.report), "{:?}", result.report.reply);
    assert_eq!(node.as_deref(), Some(running_on.as_str()));
    assert_eq!(
        result.kill.as_deref(),
        Some(
            format!(
                "sent SCRIPT KILL to {running_on}: OK; the script was stopped (the server answers PING)"
            )
            .as_str()
        )
    );
    for (i, conn) in conns.iter_mut().enumerate().skip(1) {
        assert_eq!(conn.cmd(&["PING"]), pong(), "node {i}");
    }
    // The workbench's check names the node connected to as down, whatever the map says of it.
    workbench.app.connection.check_now();
    workbench.settle();
    let down = workbench.app.connection.down.clone();
    assert!(
        down.iter()
            .any(|d| d.starts_with(&format!("{} (", addr(&cluster, 0)))
                && d.contains(": connection refused")),
        "{down:?}"
    );
    assert!(
        workbench
            .app
            .backend_label()
            .contains(" guarded · 1 node down: "),
        "{}",
        workbench.app.backend_label()
    );
    // X in the overview with the node connected to down and a replica stopped: the nodes of the
    // slot map (read from a master that answers) are asked; no script runs: NOTBUSY, and the
    // replica is named as not reached (not a refused kill).
    cluster.nodes[4].stop();
    workbench.press("i").press("X").press("y");
    let status = workbench.app.status.clone();
    assert!(
        status.starts_with("sent SCRIPT KILL: NOTBUSY on the 4 nodes that answered (no script was running there); not reached: ")
            || status.starts_with("sent SCRIPT KILL: NOTBUSY on the 5 nodes that answered (no script was running there); not reached: "),
        "{status}"
    );
    assert!(
        status.contains(&format!(
            "{0} (replica of {1}): {0}: connection refused",
            addr(&cluster, 4),
            addr(&cluster, 1)
        )),
        "{status}"
    );
}

/// Wait until node `asked` says `cluster_state:STATE` in CLUSTER INFO.
fn wait_for_state(cluster: &Cluster, asked: usize, state: &str) {
    let mut conn = cluster.nodes[asked].connect();
    let want = format!("cluster_state:{state}");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !matches!(conn.cmd(&["CLUSTER", "INFO"]), Reply::Bulk(b)
        if String::from_utf8_lossy(&b).contains(&want))
    {
        assert!(Instant::now() < deadline, "node {asked} is not {want}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_cluster_that_is_down_is_said_to_be_down_and_nothing_is_sent() {
    use evalbench::engine::live::guarded::{guarded_run, Consent, RunControl};
    let Some(mut cluster) = start_cluster_with(1) else {
        return;
    };
    let mut conn = cluster.nodes[0].connect();
    // A short cluster-node-timeout once the cluster is up: the nodes flag one that does not answer
    // within a second or two.
    for node in &cluster.nodes {
        assert_eq!(
            node.connect()
                .cmd(&["CONFIG", "SET", "cluster-node-timeout", "1000"]),
            Reply::ok()
        );
    }

    // First, what a script busy past it does on a replica (node 3, of master 0): the guard's words
    // for it, then the cluster doing what they say.
    let mut replica_conn = cluster.nodes[3].connect();
    let mut on_replica = LiveBackend::connect(
        TargetSpec {
            url: Some(format!("redis://{}", addr(&cluster, 3))),
            ..TargetSpec::default()
        }
        .resolve()
        .unwrap(),
    )
    .unwrap();
    let busy = |us: u32| {
        format!(
            "local s = redis.call('TIME') while true do local n = redis.call('TIME') \
        if (n[1] - s[1]) * 1000000 + (n[2] - s[2]) > {us} then break end end return 1"
        )
    };
    let control = RunControl::default();
    control.begin(&[]);
    let run = guarded_run(
        &mut on_replica,
        &request(&busy(600_000), &[]),
        &Consent::default(),
        &control,
        0,
    );
    assert!(!run.sent);
    let question = run.question.expect("asked").text();
    assert!(question.contains("% of this cluster's cluster-node-timeout of 1000 ms (the server may be slower): a node running a script answers the other nodes only once it passes the busy threshold (5000 ms), so a replica busy longer than cluster-node-timeout (1000 ms) is flagged as failed until it answers; nothing is failed over (its master goes on serving its slots)"), "{question}");
    let flagged = |conn: &mut Conn, node: usize| match conn.cmd(&["CLUSTER", "NODES"]) {
        Reply::Bulk(b) => String::from_utf8_lossy(&b)
            .lines()
            .find(|l| l.contains(&format!(":{}@", cluster.nodes[node].port)))
            .map(|l| l.split(' ').nth(2).unwrap_or_default().to_string())
            .unwrap_or_default(),
        other => panic!("{other:?}"),
    };
    // 3 s, under the busy threshold: the replica answers no other node meanwhile.
    let script = busy(3_000_000);
    let running = std::thread::spawn(move || replica_conn.cmd(&["EVAL", &script, "0"]));
    let deadline = Instant::now() + Duration::from_secs(10);
    // "fail" (the masters agreed), not only "fail?" (node 0's own view).
    while !flagged(&mut conn, 3).split(',').any(|f| f == "fail") {
        assert!(
            Instant::now() < deadline,
            "the busy replica was never flagged"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(running.join().unwrap(), Reply::Int(1));
    assert_eq!(flagged(&mut conn, 0), "myself,master");
    let deadline = Instant::now() + Duration::from_secs(10);
    while flagged(&mut conn, 3).contains("fail") {
        assert!(Instant::now() < deadline, "the replica stayed flagged");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(flagged(&mut conn, 3), "slave");

    let mut live = connect(&cluster);
    let key = key_on(0, "d");
    assert_eq!(conn.cmd(&["SET", &key, "1"]), Reply::ok());
    cluster.nodes[1].stop();
    cluster.nodes[2].stop();
    // Until the cluster flags them, it is up: runs to master 0 go on.
    assert_eq!(live.cluster_down(), None);
    wait_for_state(&cluster, 0, "fail");
    assert_eq!(live.check_nodes().unwrap().len(), 2);
    let (a0, a1, a2) = (addr(&cluster, 0), addr(&cluster, 1), addr(&cluster, 2));
    let why = format!(
        "the cluster is down (cluster_state:fail on {a0}): masters {a1} (slots 5461-10922) and {a2} (slots 10923-16383) do not answer the other nodes; slots 5461-16383 are not served; 1 of 3 masters answers, fewer than the majority a failover needs, so no replica can take over until a lost master is back: the cluster refuses every run with keys (CLUSTERDOWN), on the masters that answer too; a keyless script still runs, but each command on a key inside it fails"
    );
    assert_eq!(live.cluster_down().map(|d| d.describe()), Some(why.clone()));
    // What it says is what the cluster does: master 0 refuses its own key, runs a keyless script,
    // and refuses the key inside it.
    assert_eq!(
        conn.cmd(&["GET", &key]),
        Reply::err("CLUSTERDOWN The cluster is down")
    );
    assert_eq!(conn.cmd(&["EVAL", "return 1", "0"]), Reply::Int(1));
    match conn.cmd(&["EVAL", &format!("return redis.call('GET', '{key}')"), "0"]) {
        Reply::Error(e) => assert!(
            e.starts_with("ERR Script attempted to execute a command while the cluster is down"),
            "{e}"
        ),
        other => panic!("{other:?}"),
    }

    // The guard sends nothing (not even the copy's reads): the refusal says why and where.
    reset_stats(std::slice::from_mut(&mut conn));
    let control = RunControl::default();
    control.begin(&[key.as_bytes().to_vec()]);
    let run = guarded_run(
        &mut live,
        &request("return redis.call('GET', KEYS[1])", &[&key]),
        &Consent::default(),
        &control,
        0,
    );
    assert!(!run.sent);
    assert_eq!(run.report.outcome, Outcome::Refused);
    let slot = evalbench::engine::lint::hash_slot(key.as_bytes());
    assert_eq!(
        run.report.reply,
        Reply::err(format!(
            "evalbench: not sent: {why}; nothing was sent to {a0} (master, slot {slot})"
        ))
    );
    assert_eq!(keyed_or_scripts(&mut conn), Vec::<String>::new());
    // The CLI says the same (exit 3: the cluster cannot run it), with --yes too.
    let url = format!("redis://{a0}");
    let dir = tempfile::TempDir::new().unwrap();
    let script = dir.path().join("incr.lua");
    std::fs::write(&script, "return redis.call('INCR', KEYS[1])").unwrap();
    let (code, out, err) = cli(&["--server", &url, "--yes", script.to_str().unwrap(), &key]);
    assert_eq!((code, out.as_str()), (3, ""), "{err}");
    assert_eq!(
        err,
        format!("evalbench: refused: {why}; nothing was sent to {a0} (master, slot {slot})\n")
    );
    assert_eq!(keyed_or_scripts(&mut conn), Vec::<String>::new());
    assert_eq!(conn.cmd(&["PING"]), pong());
}

/// The commands a node ran (or refused) since `reset_stats` other than evalbench's own questions
/// about the cluster and the connection: key reads, writes and scripts.
fn keyed_or_scripts(conn: &mut Conn) -> Vec<String> {
    let own = ["ping", "hello", "select", "auth", "readonly", "role"];
    commands_run(std::slice::from_mut(conn))
        .remove(0)
        .into_iter()
        .filter(|n| {
            !(n.starts_with("cluster|")
                || n.starts_with("config|")
                || n.starts_with("client|")
                || n.starts_with("command")
                || own.contains(&n.as_str()))
        })
        .collect()
}

/// The workbench on the cluster (the App with the real engine thread), one key given.
struct WorkbenchOn {
    app: evalbench::tui::app::App,
    worker: evalbench::tui::worker::Worker,
}

impl WorkbenchOn {
    fn new(cluster: &Cluster, script: &str, key: &str) -> WorkbenchOn {
        common::isolate_app_dirs();
        let live = connect(cluster);
        let mut app =
            evalbench::tui::app::App::new(script, None, evalbench::tui::config::Config::default());
        app.inputs = evalbench::tui::inputs::InputsState::from_lists(&[key.to_string()], &[]);
        app.config.busy_threshold_ms = live.server.busy_threshold_ms;
        app.set_live_server("redis cluster".into());
        WorkbenchOn {
            app,
            worker: evalbench::tui::worker::Worker::start_with(Some(live)),
        }
    }

    /// A key, then the run it starts to its end.
    fn press(&mut self, key: &str) {
        let key = evalbench::tui::keymap::parse_key(key).expect("key notation");
        let effects = self
            .app
            .on_event(&ratatui::crossterm::event::Event::Key(key));
        evalbench::tui::apply(effects, &self.worker, None);
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            while let Ok(event) = self.worker.events.try_recv() {
                self.app.on_engine_event(event);
            }
            if self.app.running.is_none() {
                return;
            }
            assert!(Instant::now() < deadline, "the run did not end");
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// The y/n question shown, as the workbench words it (naming the node).
    fn question(&self) -> Option<String> {
        use evalbench::tui::app::{Confirm, Overlay};
        match &self.app.overlay {
            Some(Overlay::Confirm(Confirm::LiveSend(_, q))) => {
                Some(evalbench::tui::connection::live_send_text(
                    q,
                    self.app.live_node.as_deref(),
                    None,
                    None,
                ))
            }
            _ => None,
        }
    }
}

/// `evalbench debug ARGS` (stdin empty): (exit code, stdout, stderr).
fn debug_cli(args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_evalbench"))
        .arg("debug")
        .args(args)
        .env_remove("REDIS_URL")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run evalbench debug");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The "used_memory ..." figure of a fork's cost line, which differs from run to run, as `MEM`.
fn without_memory(text: &str) -> String {
    let re = regex::Regex::new(r"used_memory \S+ \(\d+ bytes\)").unwrap();
    re.replace_all(text, "used_memory MEM").into_owned()
}

/// The nodes that received SCRIPT DEBUG (an LDB session was opened there), in node order.
fn ldb_nodes(conns: &mut [Conn]) -> Vec<usize> {
    commands_run(conns)
        .iter()
        .enumerate()
        .filter(|(_, ran)| ran.iter().any(|c| c == "script|debug"))
        .map(|(i, _)| i)
        .collect()
}

#[test]
fn debug_server_opens_its_session_on_the_master_of_the_keys_slot() {
    let Some(cluster) = start_cluster() else {
        return;
    };
    let mut conns: Vec<Conn> = cluster.nodes.iter().map(|n| n.connect()).collect();
    let file = cluster.dir.path().join("debugged.lua");
    std::fs::write(&file, "local n = redis.call('INCR', KEYS[1])\nreturn n\n").unwrap();
    let script = file.display().to_string();
    let seed = format!("redis://{}", addr(&cluster, 0));
    let key = key_on(2, "d");
    let node = node_of_key(&cluster, &key);

    // KEYS on node 2, given node 0: the session runs on node 2, and every line names it.
    reset_stats(&mut conns);
    let (code, out, err) = debug_cli(&[
        "--server",
        &seed,
        "--yes",
        "--commands",
        "n; p",
        &script,
        &key,
    ]);
    assert_eq!((code, err.as_str()), (0, ""));
    assert_eq!(
        without_memory(&out),
        format!(
            "server: {node}, reached through {seed_addr} (redis 7.0.15 primary (cluster), busy threshold 5000 ms, cluster-node-timeout 30000 ms)
SCRIPT DEBUG YES forks {node} (used_memory MEM): the fork grows by every page the server changes while the session lasts; the script's changes are rolled back.
Lua debugging session started on {node} (Redis's LDB). Type h for help.
Not on a live server (sandbox only): back, rc, goto, watch, cond, bw, o, over, finish, u, until, b LINE if/hits, b COMMAND, coverage.

* Stopped at 1, stop reason = step over
-> 1   local n = redis.call('INCR', KEYS[1])
lua debugger> n
<redis> INCR {key}
<reply> 1
* Stopped at 2, stop reason = step over
-> 2   return n
lua debugger> p
<value> n = 1
(no more commands: the script runs to the end)

(Lua debugging session on {node} ended -- dataset changes rolled back)

(integer) 1
",
            seed_addr = addr(&cluster, 0)
        )
    );
    assert_eq!(ldb_nodes(&mut conns), vec![2]);
    // The fork's INCR was rolled back.
    assert_eq!(conns[2].cmd(&["GET", &key]), Reply::Nil);

    // KEYS in two slots: refused before anything is read or sent (exit 2), each key's slot named.
    let other = key_on(0, "d");
    reset_stats(&mut conns);
    let (code, out, err) = debug_cli(&["--server", &seed, "--yes", &script, &key, &other]);
    assert_eq!(
        (code, out.as_str(), err),
        (2, "", format!(
            "evalbench: refused: CROSSSLOT Keys in request don't hash to the same slot (evalbench read nothing and did not send the script: {key} -> slot {} on {}, {other} -> slot {} on {}; put a common {{hash tag}} in the keys)\n",
            evalbench::engine::lint::hash_slot(key.as_bytes()),
            addr(&cluster, 2),
            evalbench::engine::lint::hash_slot(other.as_bytes()),
            addr(&cluster, 0),
        ))
    );
    // What connecting asks (the role, the slot map, settings) and nothing else.
    let read_or_sent: Vec<Vec<String>> = commands_run(&mut conns)
        .into_iter()
        .map(|ran| {
            ran.into_iter()
                .filter(|c| {
                    !c.starts_with("cluster|")
                        && ![
                            "role",
                            "ping",
                            "hello",
                            "client|setinfo",
                            "config|get",
                            "command|docs",
                            "command",
                        ]
                        .contains(&c.as_str())
                })
                .collect()
        })
        .collect();
    assert_eq!(read_or_sent, vec![Vec::<String>::new(); 3]);

    // Keyless, given node 1: the session stays on the node given; the JSON end names it.
    std::fs::write(&file, "return 'hi'\n").unwrap();
    reset_stats(&mut conns);
    let given = format!("redis://{}", addr(&cluster, 1));
    let (code, out, err) = debug_cli(&["--server", &given, "--yes", "--json", &script]);
    assert_eq!((code, err.as_str()), (0, ""));
    let keyless = format!("{} (master, no keys)", addr(&cluster, 1));
    assert_eq!(
        out.lines().last().unwrap(),
        format!(
            r#"{{"event":"end","text":"(Lua debugging session on {keyless} ended -- dataset changes rolled back)","reply":"\"hi\"","error":false,"node":{{"addr":"{}","role":"master","slot":null}}}}"#,
            addr(&cluster, 1)
        )
    );
    assert_eq!(ldb_nodes(&mut conns), vec![1]);
}

/// A terminal's answers to the debugger's questions, one per question; `before(n)` runs just before
/// the n-th answer is read (what happens while the user reads the question).
struct Answers<F: FnMut(usize)> {
    answers: Vec<&'static str>,
    asked: usize,
    before: F,
}

impl<F: FnMut(usize)> std::io::Read for Answers<F> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let Some(answer) = self.answers.get(self.asked) else {
            return Ok(0);
        };
        (self.before)(self.asked);
        self.asked += 1;
        let line = format!("{answer}\n");
        buf[..line.len()].copy_from_slice(line.as_bytes());
        Ok(line.len())
    }
}

/// `evalbench debug`'s options (-h is the host, as in redis-cli).
#[derive(clap::Parser)]
#[command(disable_help_flag = true)]
struct DebugCli {
    #[command(flatten)]
    args: evalbench::cli::debug::DebugArgs,
}

#[test]
fn debug_servers_question_holds_for_the_node_it_named() {
    use clap::Parser;
    let Some(cluster) = start_cluster_with(1) else {
        return;
    };
    let mut conns: Vec<Conn> = cluster.nodes.iter().map(|n| n.connect()).collect();
    let file = cluster.dir.path().join("asked.lua");
    std::fs::write(&file, "return redis.call('INCR', KEYS[1])\n").unwrap();
    let key = key_on(0, "q");
    let slot = evalbench::engine::lint::hash_slot(key.as_bytes());
    let (n0, n3) = (
        format!("{} (master, slot {slot})", addr(&cluster, 0)),
        format!("{} (master, slot {slot})", addr(&cluster, 3)),
    );
    let seed = format!("redis://{}", addr(&cluster, 0));
    let args = DebugCli::parse_from([
        "debug",
        "--server",
        &seed,
        &file.display().to_string(),
        &key,
    ])
    .args;
    reset_stats(&mut conns);
    // The replica takes over between the question naming node 0 and the y; the question asked
    // again names node 3, and is answered n.
    let stdin = std::io::BufReader::new(Answers {
        answers: vec!["y", "n"],
        asked: 0,
        before: |n| {
            if n == 0 {
                let mut replica = cluster.nodes[3].connect();
                assert_eq!(replica.cmd(&["CLUSTER", "FAILOVER"]), Reply::ok());
                wait_for_master(&cluster, 0, slot, 3);
                reset_stats(
                    &mut cluster
                        .nodes
                        .iter()
                        .map(|n| n.connect())
                        .collect::<Vec<_>>(),
                );
            }
        },
    });
    let mut out = Vec::new();
    let result = evalbench::cli::debug::debug_command(&args, &mut out, Some(Box::new(stdin)), true);
    let out = without_memory(&String::from_utf8(out).unwrap());
    // The node given is named as it is now: the replica it became after the failover.
    let server = |node: &str, through: &str| {
        format!("server: {node}{through} (redis 7.0.15 {} (cluster), busy threshold 5000 ms, cluster-node-timeout 30000 ms)", if through.is_empty() { "primary" } else { "replica" })
    };
    let forks = |node: &str| {
        format!("SCRIPT DEBUG YES forks {node} (used_memory MEM): the fork grows by every page the server changes while the session lasts; the script's changes are rolled back.")
    };
    assert_eq!(
        out,
        format!(
            "{}\n{}\nFork {n0}? [y/N] The cluster's topology changed since the question: the script's slot moved from {n0} to {n3} (a failover). Nothing was sent; asking again.\n{}\n{}\nFork {n3}? [y/N] ",
            server(&n0, ""),
            forks(&n0),
            server(&n3, &format!(", reached through {}", addr(&cluster, 0))),
            forks(&n3),
        )
    );
    let refused = result.unwrap_err();
    assert_eq!(
        (refused.code, without_memory(&refused.message)),
        (2, format!("refused: SCRIPT DEBUG YES would fork {n3} (used_memory MEM); rerun with --yes to allow the fork"))
    );
    assert_eq!(ldb_nodes(&mut conns), Vec::<usize>::new());
}
