//! The live keyspace inspector against a real redis-server: SCAN with MATCH/TYPE finds exactly the
//! matching keys, summaries give the exact type, size, TTL and encoding (as Redis 7.0 names them),
//! and every typed page reads a bounded window that together cover the value exactly once.

mod common;

use common::{Conn, RedisServer};
use evalbench::engine::live::inspect::{
    first_page, page, page_matching, summarize, summarize_many, KeyScan, Page, PageCursor, Row,
};
use evalbench::engine::live::{LiveBackend, LiveError, TargetSpec};
use evalbench::engine::reply::Reply;
use std::collections::{BTreeSet, HashMap};

fn backend(server: &RedisServer, resp3: bool) -> LiveBackend {
    let target = TargetSpec {
        url: Some(format!("redis://127.0.0.1:{}", server.port)),
        resp3,
        ..TargetSpec::default()
    }
    .resolve()
    .expect("target");
    LiveBackend::connect(target).expect("connect")
}

fn args(parts: &[&str]) -> Vec<Vec<u8>> {
    parts.iter().map(|p| p.as_bytes().to_vec()).collect()
}

/// Send commands in one pipeline and check none failed.
fn run(conn: &mut Conn, commands: Vec<Vec<Vec<u8>>>) {
    for reply in conn.pipeline(&commands) {
        assert!(!reply.is_error(), "{reply:?}");
    }
}

/// Page through a key from the start; every page must hold at most `count` rows.
fn all_pages(live: &mut LiveBackend, key: &str, kind: &str, count: usize) -> (Vec<Row>, usize) {
    let mut cursor = PageCursor::Start;
    let mut rows = Vec::new();
    let mut pages = 0;
    loop {
        let Page { rows: r, next, .. } = page(live, key.as_bytes(), kind, cursor, count).unwrap();
        pages += 1;
        rows.extend(r);
        match next {
            Some(c) => cursor = c,
            None => return (rows, pages),
        }
        assert!(pages < 100_000, "paging does not end");
    }
}

fn s(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn scan_with_match_and_type_returns_exactly_the_matching_set() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let mut conn = server.connect();
    // 1,000 keys: 400 string users, 200 hash users, 400 string sessions.
    let mut commands = Vec::new();
    for i in 0..400 {
        commands.push(args(&["SET", &format!("user:{i}"), "x"]));
    }
    for i in 400..600 {
        commands.push(args(&["HSET", &format!("user:{i}"), "f", "v"]));
    }
    for i in 600..1000 {
        commands.push(args(&["SET", &format!("session:{i}"), "x"]));
    }
    run(&mut conn, commands);
    let mut live = backend(&server, false);

    let mut scan = KeyScan::new(Some(b"user:*"), Some("string"), 10);
    let mut seen = Vec::new();
    while !scan.done() {
        seen.extend(scan.step(&mut live).unwrap());
    }
    let unique: BTreeSet<String> = seen.iter().map(|k| s(k)).collect();
    let expected: BTreeSet<String> = (0..400).map(|i| format!("user:{i}")).collect();
    assert_eq!(unique, expected);
    assert_eq!(seen.len(), 400, "no duplicates on a static keyspace");
    assert!(scan.scanned_calls() > 10, "COUNT 10 takes many calls");
    assert_eq!(scan.progress(), (400, Some(1000)));
    // A finished scan sends nothing more.
    let calls = scan.scanned_calls();
    assert!(scan.step(&mut live).unwrap().is_empty());
    assert_eq!(scan.scanned_calls(), calls);

    let mut scan = KeyScan::new(Some(b"user:*"), Some("hash"), 100);
    let mut hashes = BTreeSet::new();
    while !scan.done() {
        hashes.extend(scan.step(&mut live).unwrap().iter().map(|k| s(k)));
    }
    assert_eq!(hashes, (400..600).map(|i| format!("user:{i}")).collect());

    // Unfiltered: progress reaches DBSIZE.
    let mut scan = KeyScan::new(None, None, 100);
    let mut all = BTreeSet::new();
    while !scan.done() {
        all.extend(scan.step(&mut live).unwrap());
    }
    assert_eq!(all.len(), 1000);
    assert_eq!(scan.progress(), (1000, Some(1000)));

    // first_page stops once it has `want` keys (COUNT 1000 returns them all in one call here).
    let (keys, scan) = first_page(&mut live, Some(b"session:*"), None, 50, 10).unwrap();
    assert_eq!(scan.scanned_calls(), 1);
    assert_eq!(keys.len(), 400);
    assert!(keys.iter().all(|k| k.starts_with(b"session:")));
    // ... or after max_calls, with what it found so far.
    let (keys, scan) = first_page(&mut live, Some(b"nomatch:*"), None, 50, 0).unwrap();
    assert!(keys.is_empty());
    assert_eq!(scan.scanned_calls(), 0);
    assert!(!scan.done());
}

#[test]
fn scan_of_an_empty_db_is_done_at_once() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let mut live = backend(&server, false);
    let mut scan = KeyScan::new(None, None, 100);
    assert!(!scan.done(), "not done before the first call");
    assert!(scan.step(&mut live).unwrap().is_empty());
    assert!(scan.done());
    assert_eq!(scan.scanned_calls(), 1);
    assert_eq!(scan.progress(), (0, Some(0)));
    let (keys, scan) = first_page(&mut live, Some(b"a*"), Some("hash"), 100, 50).unwrap();
    assert!(keys.is_empty());
    assert_eq!(scan.scanned_calls(), 1);
    assert!(scan.done());
}

#[test]
fn summaries_give_exact_type_size_ttl_and_encoding() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let mut conn = server.connect();
    let mut big_hash = args(&["HSET", "bighash"]);
    // Above the listpack limits (Debian's redis-server raises them to 512).
    for i in 0..1000 {
        big_hash.extend(args(&[&format!("f{i}"), "v"]));
    }
    let mut big_zset = args(&["ZADD", "bigzset"]);
    for i in 0..1000 {
        big_zset.extend(args(&[&i.to_string(), &format!("m{i}")]));
    }
    run(
        &mut conn,
        vec![
            args(&["SET", "str", "hello"]),
            args(&["SET", "num", "12345"]),
            args(&["SET", "long", &"x".repeat(100)]),
            args(&["PEXPIRE", "str", "100000"]),
            args(&["HSET", "hash", "a", "1", "b", "2"]),
            big_hash,
            args(&["RPUSH", "list", "a", "b", "c"]),
            args(&["SADD", "ints", "1", "2", "3", "4"]),
            args(&["SADD", "words", "a", "b"]),
            args(&["ZADD", "zset", "1", "a", "2", "b", "3", "c"]),
            big_zset,
            args(&["XADD", "stream", "1-1", "f", "v"]),
            args(&["XADD", "stream", "2-1", "f", "v"]),
        ],
    );
    let mut live = backend(&server, false);
    let expected: &[(&str, &str, u64, &str)] = &[
        ("str", "string", 5, "embstr"),
        ("num", "string", 5, "int"),
        ("long", "string", 100, "raw"),
        ("hash", "hash", 2, "listpack"),
        ("bighash", "hash", 1000, "hashtable"),
        ("list", "list", 3, "quicklist"),
        ("ints", "set", 4, "intset"),
        ("words", "set", 2, "hashtable"),
        ("zset", "zset", 3, "listpack"),
        ("bigzset", "zset", 1000, "skiplist"),
        ("stream", "stream", 2, "stream"),
    ];
    for &(key, kind, size, encoding) in expected {
        let summary = summarize(&mut live, key.as_bytes()).unwrap().expect(key);
        assert_eq!(s(&summary.key), key);
        assert_eq!(summary.kind, kind, "{key}");
        assert_eq!(summary.size, Some(size), "{key}");
        assert_eq!(summary.encoding.as_deref(), Some(encoding), "{key}");
        assert!(summary.memory_bytes.is_some_and(|m| m > 0), "{key}");
        if key == "str" {
            let ttl = summary.ttl_ms.expect("str has a TTL");
            assert!((90_000..=100_000).contains(&ttl), "{ttl}");
        } else {
            assert_eq!(summary.ttl_ms, None, "{key}");
        }
    }
    assert_eq!(summarize(&mut live, b"missing").unwrap(), None);

    // The pipelined form gives the same, in order, None for the missing key.
    let keys: Vec<Vec<u8>> = ["list", "missing", "bigzset"]
        .iter()
        .map(|k| k.as_bytes().to_vec())
        .collect();
    let many = summarize_many(&mut live, &keys).unwrap();
    assert_eq!(many.len(), 3);
    assert_eq!(many[0].as_ref().map(|m| m.size), Some(Some(3)));
    assert_eq!(many[1], None);
    assert_eq!(many[2].as_ref().map(|m| m.kind.as_str()), Some("zset"));
    assert_eq!(many[2].as_ref().and_then(|m| m.size), Some(1000));
}

#[test]
fn hscan_pages_a_1000_field_hash_exactly_once() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let mut conn = server.connect();
    let mut hset = args(&["HSET", "h"]);
    for i in 0..1000 {
        hset.extend(args(&[&format!("field{i}"), &format!("value{i}")]));
    }
    run(&mut conn, vec![hset]);
    let mut live = backend(&server, false);
    let (rows, pages) = all_pages(&mut live, "h", "hash", 100);
    assert!(pages > 1, "HSCAN of a hashtable takes several pages");
    let mut fields = HashMap::new();
    for row in rows {
        let Row::Field { field, value } = row else {
            panic!("not a field: {row:?}");
        };
        assert!(fields.insert(s(&field), s(&value)).is_none(), "repeated");
    }
    assert_eq!(fields.len(), 1000);
    for i in 0..1000 {
        assert_eq!(fields[&format!("field{i}")], format!("value{i}"));
    }

    // SSCAN the same way.
    let mut sadd = args(&["SADD", "s"]);
    for i in 0..500 {
        sadd.push(format!("m{i}").into_bytes());
    }
    run(&mut conn, vec![sadd]);
    let (rows, _) = all_pages(&mut live, "s", "set", 50);
    let members: BTreeSet<String> = rows
        .iter()
        .map(|r| match r {
            Row::Member(m) => s(m),
            other => panic!("not a member: {other:?}"),
        })
        .collect();
    assert_eq!(rows.len(), 500);
    assert_eq!(members, (0..500).map(|i| format!("m{i}")).collect());
}

#[test]
fn a_10000_element_list_pages_by_windows_of_100() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let mut conn = server.connect();
    let mut rpush = args(&["RPUSH", "l"]);
    for i in 0..10_000 {
        rpush.push(format!("e{i}").into_bytes());
    }
    run(&mut conn, vec![rpush]);
    let mut live = backend(&server, false);

    let first = page(&mut live, b"l", "list", PageCursor::Start, 100).unwrap();
    assert_eq!(first.rows.len(), 100);
    assert_eq!(first.next, Some(PageCursor::Index(100)));
    let middle = page(&mut live, b"l", "list", PageCursor::Index(5000), 100).unwrap();
    assert_eq!(
        middle.rows[0],
        Row::Item {
            index: 5000,
            value: b"e5000".to_vec()
        }
    );
    assert_eq!(
        middle.rows[99],
        Row::Item {
            index: 5099,
            value: b"e5099".to_vec()
        }
    );

    let (rows, pages) = all_pages(&mut live, "l", "list", 100);
    // 100 full windows, then an empty one that ends it.
    assert_eq!(pages, 101);
    assert_eq!(rows.len(), 10_000);
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(
            row,
            &Row::Item {
                index: i as u64,
                value: format!("e{i}").into_bytes()
            }
        );
    }
    // A count of 0 reads one element, never the whole list.
    let one = page(&mut live, b"l", "list", PageCursor::Start, 0).unwrap();
    assert_eq!(one.rows.len(), 1);
}

#[test]
fn zrange_pages_carry_scores_in_resp2_and_resp3() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let mut conn = server.connect();
    let mut zadd = args(&["ZADD", "z"]);
    for i in 0..250 {
        zadd.extend(args(&[&format!("{}.5", i), &format!("m{i:03}")]));
    }
    run(&mut conn, vec![zadd]);
    for resp3 in [false, true] {
        let mut live = backend(&server, resp3);
        let (rows, pages) = all_pages(&mut live, "z", "zset", 100);
        assert_eq!(pages, 3, "100 + 100 + 50");
        assert_eq!(rows.len(), 250);
        for (i, row) in rows.iter().enumerate() {
            assert_eq!(
                row,
                &Row::Scored {
                    member: format!("m{i:03}").into_bytes(),
                    score: i as f64 + 0.5
                },
                "resp3={resp3}"
            );
        }
    }
}

#[test]
fn a_stream_pages_by_id_without_repeats() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let mut conn = server.connect();
    let commands = (1..=95)
        .map(|i| args(&["XADD", "x", &format!("{i}-0"), "n", &i.to_string()]))
        .chain([args(&["XADD", "x", "95-1", "n", "last"])])
        .collect();
    run(&mut conn, commands);
    let mut live = backend(&server, false);
    let first = page(&mut live, b"x", "stream", PageCursor::Start, 10).unwrap();
    assert_eq!(first.next, Some(PageCursor::After(b"10-0".to_vec())));
    let (rows, pages) = all_pages(&mut live, "x", "stream", 10);
    assert_eq!(pages, 10);
    assert_eq!(rows.len(), 96);
    for (i, row) in rows.iter().take(95).enumerate() {
        let n = i + 1;
        assert_eq!(
            row,
            &Row::Entry {
                id: format!("{n}-0").into_bytes(),
                fields: vec![(b"n".to_vec(), n.to_string().into_bytes())]
            }
        );
    }
    assert_eq!(
        rows[95],
        Row::Entry {
            id: b"95-1".to_vec(),
            fields: vec![(b"n".to_vec(), b"last".to_vec())]
        }
    );
}

#[test]
fn a_5mb_string_gives_only_the_first_bytes_and_the_total() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let mut conn = server.connect();
    let value: Vec<u8> = (0..5 * 1024 * 1024)
        .map(|i| b'a' + (i % 26) as u8)
        .collect();
    assert_eq!(
        conn.cmd_bytes(&[b"SET", b"big", &value]),
        Reply::Status("OK".into())
    );
    let mut live = backend(&server, false);
    let first = page(&mut live, b"big", "string", PageCursor::Start, 4096).unwrap();
    assert_eq!(first.total, Some(5 * 1024 * 1024));
    assert_eq!(
        first.rows,
        vec![Row::Bytes {
            offset: 0,
            data: value[..4096].to_vec()
        }]
    );
    assert_eq!(first.next, Some(PageCursor::Index(4096)));
    // The last slice is short and ends the paging.
    let tail_start = 5 * 1024 * 1024 - 100;
    let tail = page(
        &mut live,
        b"big",
        "string",
        PageCursor::Index(tail_start),
        4096,
    )
    .unwrap();
    assert_eq!(
        tail.rows,
        vec![Row::Bytes {
            offset: tail_start,
            data: value[tail_start as usize..].to_vec()
        }]
    );
    assert_eq!(tail.next, None);
    let summary = summarize(&mut live, b"big").unwrap().unwrap();
    assert_eq!(summary.size, Some(5 * 1024 * 1024));
    assert!(summary.memory_bytes.is_some_and(|m| m >= 5 * 1024 * 1024));
}

#[test]
fn paging_with_the_wrong_type_is_a_server_error() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let mut conn = server.connect();
    conn.cmd(&["SET", "k", "v"]);
    let mut live = backend(&server, false);
    let err = page(&mut live, b"k", "list", PageCursor::Start, 10).unwrap_err();
    assert!(
        matches!(&err, LiveError::Server(e) if e.starts_with("WRONGTYPE")),
        "{err:?}"
    );
    let err = page(&mut live, b"k", "module-type", PageCursor::Start, 10).unwrap_err();
    assert!(matches!(err, LiveError::Server(_)));
}

#[test]
fn a_dropped_connection_is_reopened_and_reads_are_sent_again_but_scripts_never() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let mut conn = server.connect();
    conn.cmd(&["SET", "k", "v"]);
    let mut live = backend(&server, false);
    // CLIENT KILL drops every other client's connection, as a server restart or an idle proxy does.
    let drop_others = |conn: &mut Conn| {
        assert!(matches!(
            conn.cmd(&["CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"]),
            Reply::Int(n) if n >= 1
        ));
    };
    drop_others(&mut conn);
    assert_eq!(
        live.command(&[b"GET", b"k"]).unwrap(),
        Reply::Bulk(b"v".to_vec())
    );
    // A script is not sent again: the run fails, and the next one goes on a new connection.
    drop_others(&mut conn);
    let request = evalbench::engine::RunRequest {
        script: b"return redis.call('INCR', KEYS[1])".to_vec(),
        keys: vec![b"n".to_vec()],
        ..Default::default()
    };
    let allowed = evalbench::engine::live::WriteMode::Allowed;
    // Found dead after the script was written to it: the run says it may have run (here it did
    // not: the server had closed the connection before).
    assert!(matches!(
        live.run(&request, allowed),
        Err(LiveError::Sent(_))
    ));
    assert_eq!(conn.cmd(&["GET", "n"]), Reply::Nil);
    assert_eq!(live.run(&request, allowed).unwrap().reply, Reply::Int(1));
    assert_eq!(conn.cmd(&["GET", "n"]), Reply::Bulk(b"1".to_vec()));
}

/// A search inside a key is one HSCAN/SSCAN/ZSCAN call with MATCH per page, until the
/// cursor returns to 0; the pages together hold exactly the matching elements (RESP2 and RESP3).
#[test]
fn search_inside_a_key_pages_with_match() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let mut conn = server.connect();
    let mut sadd = args(&["SADD", "s"]);
    sadd.extend((0..3000).map(|i| format!("m{i}").into_bytes()));
    run(&mut conn, vec![sadd, args(&["RPUSH", "l", "a"])]);
    for resp3 in [false, true] {
        let mut live = backend(&server, resp3);
        let (mut found, mut cursor, mut calls) = (BTreeSet::new(), PageCursor::Start, 0);
        loop {
            let page = page_matching(&mut live, b"s", "set", cursor, 500, b"m29*").unwrap();
            calls += 1;
            for row in page.rows {
                let Row::Member(m) = row else {
                    panic!("{row:?}")
                };
                found.insert(String::from_utf8(m).unwrap());
            }
            match page.next {
                Some(next) => cursor = next,
                None => break,
            }
        }
        let expected: BTreeSet<String> = (0..3000)
            .map(|i| format!("m{i}"))
            .filter(|m| m.starts_with("m29"))
            .collect();
        assert_eq!(found, expected);
        assert!(calls > 1, "{calls}");
        let err = page_matching(&mut live, b"l", "list", PageCursor::Start, 10, b"*").unwrap_err();
        assert_eq!(
            err.to_string(),
            "a search inside a key works on hashes, sets and sorted sets (HSCAN, SSCAN, ZSCAN MATCH); 'l' is a list"
        );
    }
}

/// The server's libraries as FUNCTION LIST shows them (no code), and one library's code by
/// its exact name (a name with glob characters matches only itself).
#[test]
fn function_libraries_are_listed_and_read_one_at_a_time() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let mut conn = server.connect();
    let counters = include_str!("../samples/counter_library.lua");
    let star = "#!lua name=lib_star\nredis.register_function('f_star', function() return 1 end)";
    let starred = "#!lua name=lib_\nredis.register_function('f_other', function() return 2 end)";
    for code in [counters, star, starred] {
        assert!(!conn.cmd(&["FUNCTION", "LOAD", code]).is_error());
    }
    for resp3 in [false, true] {
        let mut live = backend(&server, resp3);
        let (libraries, total) = evalbench::engine::live::functions::list(&mut live).unwrap();
        assert_eq!(total, 3);
        let names: Vec<&str> = libraries.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, vec!["counters", "lib_", "lib_star"]);
        let counters_lib = &libraries[0];
        assert_eq!(counters_lib.engine, "LUA");
        let functions: Vec<(&str, Vec<String>, Option<String>)> = counters_lib
            .functions
            .iter()
            .map(|f| (f.name.as_str(), f.flags.clone(), f.description.clone()))
            .collect();
        assert!(functions.contains(&("counter_incr", vec![], None)));
        assert!(functions.contains(&(
            "counter_get",
            vec!["no-writes".to_string()],
            Some("the counter, 0 when it does not exist".to_string())
        )));
        let code = evalbench::engine::live::functions::code(&mut live, "counters").unwrap();
        assert_eq!(code.as_deref(), Some(counters.as_bytes()));
        // "lib_" is a prefix of "lib_star": only the exact name's code comes back.
        let code = evalbench::engine::live::functions::code(&mut live, "lib_").unwrap();
        assert_eq!(code.as_deref(), Some(starred.as_bytes()));
        assert_eq!(
            evalbench::engine::live::functions::code(&mut live, "nope").unwrap(),
            None
        );
    }
}
