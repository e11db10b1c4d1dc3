//! DUMP and RESTORE across the sandbox and the real server of each profile: every key a real
//! server DUMPs restores in the sandbox to the same value and encoding, and every payload the
//! sandbox DUMPs restores on the server to the same value (hash tables included, whose order
//! on the server is its own). tests/cases/dump_restore.cases compares the payloads byte for byte.

mod common;

use common::{normalize_keyspace, RedisServer};
use evalbench::engine::keyspace::keyspace_to_json;
use evalbench::engine::profile::{Profile, PROFILES};
use evalbench::engine::{Reply, RunRequest, Sandbox};

/// Commands that build one key of each type in each encoding.
fn setups() -> Vec<Vec<Vec<u8>>> {
    let mut out: Vec<Vec<Vec<u8>>> = Vec::new();
    let cmd = |args: &[&str]| {
        args.iter()
            .map(|a| a.as_bytes().to_vec())
            .collect::<Vec<_>>()
    };
    out.push(cmd(&["SET", "str:short", "hello"]));
    out.push(cmd(&["SET", "str:int", "-123456"]));
    out.push(cmd(&["SET", "str:bigint", "9223372036854775807"]));
    out.push(cmd(&["SET", "str:long", &"abcabcabd".repeat(30)]));
    out.push(cmd(&["SET", "str:binary", "a\0b\u{7f}\r\n"]));
    out.push(cmd(&["RPUSH", "list:small", "a", "1", "-70000", "b"]));
    let mut big = vec![b"RPUSH".to_vec(), b"list:nodes".to_vec()];
    big.extend((0..1500).map(|i| format!("element-{i}").into_bytes()));
    out.push(big);
    out.push(cmd(&["RPUSH", "list:large", "a", &"x".repeat(9000), "c"]));
    out.push(cmd(&["SADD", "set:intset", "5", "-3", "100000"]));
    out.push(cmd(&["SADD", "set:small", "x", "y", "7"]));
    let mut set = vec![b"SADD".to_vec(), b"set:table".to_vec()];
    set.extend((0..300).map(|i| format!("m{i}").into_bytes()));
    out.push(set);
    out.push(cmd(&["HSET", "hash:small", "f", "v", "n", "12"]));
    let mut hash = vec![b"HSET".to_vec(), b"hash:table".to_vec()];
    for i in 0..700 {
        hash.push(format!("f{i}").into_bytes());
        hash.push(format!("{}", i * 3).into_bytes());
    }
    out.push(hash);
    out.push(cmd(&[
        "ZADD",
        "zset:small",
        "1",
        "a",
        "0.1",
        "b",
        "-inf",
        "c",
    ]));
    let mut zset = vec![b"ZADD".to_vec(), b"zset:skiplist".to_vec()];
    for i in 0..300 {
        zset.push(format!("{}", f64::from(i) / 7.0).into_bytes());
        zset.push(format!("member{i}").into_bytes());
    }
    out.push(zset);
    out
}

fn keys(setups: &[Vec<Vec<u8>>]) -> Vec<Vec<u8>> {
    setups.iter().map(|c| c[1].clone()).collect()
}

fn sandbox_call(sandbox: &mut Sandbox, script: &str, keys: &[&[u8]], argv: &[&[u8]]) -> Reply {
    let request = RunRequest {
        script: script.as_bytes().to_vec(),
        keys: keys.iter().map(|k| k.to_vec()).collect(),
        argv: argv.iter().map(|a| a.to_vec()).collect(),
        ..RunRequest::default()
    };
    sandbox.run(&request).reply
}

fn encoding_on_server(conn: &mut common::Conn, key: &[u8]) -> Reply {
    conn.cmd_bytes(&[b"OBJECT", b"ENCODING", key])
}

fn encoding_in_sandbox(sandbox: &mut Sandbox, key: &[u8]) -> Reply {
    match sandbox_call(
        sandbox,
        "return redis.call('OBJECT', 'ENCODING', KEYS[1])",
        &[key],
        &[],
    ) {
        Reply::Status(s) => Reply::Bulk(s.into_bytes()),
        other => other,
    }
}

fn across(profile: &'static Profile) {
    let Some(server) = RedisServer::start_profile(profile.id) else {
        return;
    };
    let mut conn = server.connect();
    let setups = setups();
    let keys = keys(&setups);
    for c in &setups {
        let args: Vec<&[u8]> = c.iter().map(Vec::as_slice).collect();
        assert!(!matches!(conn.cmd_bytes(&args), Reply::Error(_)));
    }
    // Where the server has field TTLs (7.4, 8.0, Valkey 9.1), the small hash gets one.
    let _ = conn.cmd(&[
        "HPEXPIREAT",
        "hash:small",
        "1900000000000",
        "FIELDS",
        "1",
        "n",
    ]);
    let server_keyspace = normalize_keyspace(&common::dump(&mut conn));

    // Server payloads restored in the sandbox.
    let mut sandbox = Sandbox::new();
    sandbox.set_profile(profile);
    for key in &keys {
        let Reply::Bulk(payload) = conn.cmd_bytes(&[b"DUMP", key]) else {
            panic!(
                "{}: DUMP {} answered no payload",
                profile.id,
                String::from_utf8_lossy(key)
            );
        };
        let reply = sandbox_call(
            &mut sandbox,
            "return redis.call('RESTORE', KEYS[1], 0, ARGV[1])",
            &[key],
            &[&payload],
        );
        assert_eq!(
            reply,
            Reply::Status("OK".into()),
            "{}: RESTORE {}",
            profile.id,
            String::from_utf8_lossy(key)
        );
        assert_eq!(
            encoding_in_sandbox(&mut sandbox, key),
            encoding_on_server(&mut conn, key),
            "{}: encoding of {} restored from the server's payload",
            profile.id,
            String::from_utf8_lossy(key)
        );
    }
    let sandbox_keyspace = normalize_keyspace(&keyspace_to_json(
        sandbox.keyspace().db(0),
        sandbox.now_ms(),
    ));
    assert_eq!(
        sandbox_keyspace, server_keyspace,
        "{}: server payloads restored in the sandbox",
        profile.id
    );

    // Sandbox payloads restored on the server.
    let mut payloads = Vec::new();
    for key in &keys {
        let Reply::Bulk(payload) = sandbox_call(
            &mut sandbox,
            "return redis.call('DUMP', KEYS[1])",
            &[key],
            &[],
        ) else {
            panic!(
                "{}: the sandbox's DUMP of {} gave no payload",
                profile.id,
                String::from_utf8_lossy(key)
            );
        };
        payloads.push(payload);
    }
    assert_eq!(conn.cmd(&["FLUSHALL"]), Reply::Status("OK".into()));
    for (key, payload) in keys.iter().zip(&payloads) {
        assert_eq!(
            conn.cmd_bytes(&[b"RESTORE", key, b"0", payload]),
            Reply::Status("OK".into()),
            "{}: the server refused the sandbox's payload of {}",
            profile.id,
            String::from_utf8_lossy(key)
        );
    }
    assert_eq!(
        normalize_keyspace(&common::dump(&mut conn)),
        sandbox_keyspace,
        "{}: sandbox payloads restored on the server",
        profile.id
    );
}

#[test]
fn payloads_cross_between_the_sandbox_and_each_server() {
    for profile in &PROFILES {
        across(profile);
    }
}
