//! Copying a live hash into the sandbox (the guard's dry run, the Server tab's copy)
//! keeps its fields' TTLs on servers that have them (Redis 7.4+), and asks nothing more of
//! servers that do not (Redis 7.0).

mod common;

use common::RedisServer;
use evalbench::engine::keyspace::Value;
use evalbench::engine::live::copy::{read_key, CopyLimits};
use evalbench::engine::live::{LiveBackend, TargetSpec};

fn backend(server: &RedisServer) -> LiveBackend {
    let target = TargetSpec {
        url: Some(format!("redis://127.0.0.1:{}", server.port)),
        ..TargetSpec::default()
    }
    .resolve()
    .expect("target");
    LiveBackend::connect(target).expect("connect")
}

#[test]
fn a_copied_hash_keeps_its_field_ttls() {
    let Some(server) = RedisServer::start_profile("redis-7.4") else {
        return;
    };
    let mut conn = server.connect();
    conn.cmd(&["HSET", "h", "a", "1", "b", "2"]);
    conn.cmd(&["HPEXPIRE", "h", "50000", "FIELDS", "1", "a"]);
    let mut live = backend(&server);
    assert_eq!(live.server.profile.id, "redis-7.4");
    let now = 1_000_000;
    let entry = read_key(&mut live, b"h", &CopyLimits::default(), now)
        .unwrap()
        .expect("h exists");
    let Value::Hash(h) = entry.value else {
        panic!("a hash")
    };
    let at = h.field_expire_at(b"a").expect("a has a TTL");
    assert!((now + 49_000..=now + 50_000).contains(&at), "{at}");
    assert_eq!(h.field_expire_at(b"b"), None);
    assert_eq!(h.len(), 2);
}

#[test]
fn a_server_without_field_ttls_is_not_asked() {
    let Some(server) = RedisServer::start_profile("redis-7.0") else {
        return;
    };
    let mut conn = server.connect();
    conn.cmd(&["HSET", "h", "a", "1"]);
    let mut live = backend(&server);
    let entry = read_key(&mut live, b"h", &CopyLimits::default(), 0)
        .unwrap()
        .expect("h exists");
    let Value::Hash(h) = entry.value else {
        panic!("a hash")
    };
    assert!(!h.has_field_ttls());
    assert_eq!(
        h.get(b"a".as_slice()).map(Vec::as_slice),
        Some(b"1".as_slice())
    );
}
