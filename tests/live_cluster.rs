//! The live backend on a three-master Redis Cluster that the test starts on loopback ports: runs are
//! routed by the slot of KEYS, cross-slot KEYS are refused before sending, traces are kept.

mod common;

use common::{Conn, RedisServer};
use evalbench::engine::live::{LiveBackend, TargetSpec, WriteMode};
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
    let dir = std::env::temp_dir().join(format!("evalbench-cluster-{}", std::process::id()));
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
