//! The live backend against real redis-servers started on loopback ports: a traced live run gives
//! exactly the reply, error text and data of a plain EVAL (over the whole differential corpus), the
//! trace lists the calls, NOSCRIPT falls back to EVAL, read-only runs refuse writes, and connection
//! failures give one clear line.

mod common;

use common::{all_cases, dump, normalize_keyspace, plain_eval, seed, Case, Conn, RedisServer};
use evalbench::engine::live::{LiveBackend, LiveError, TargetSpec, WriteMode};
use evalbench::engine::reply::Reply;
use evalbench::engine::report::Outcome;
use evalbench::engine::RunRequest;
use serde_json::Value as Json;

/// The traced copy shadows `redis` with a proxy table: `table.foreach` over it misses `call`/`pcall`
/// (they are made per access, to know the calling line; `pairs` and `next` walk the real table) and
/// `rawset` on it is not refused (README).
const PROXY_DIFFERENCES: &[&str] = &[
    "scripting_sandbox.cases: table.foreach over redis",
    "scripting_sandbox.cases: rawset on redis",
];

/// TTLs are shown in seconds, rounded from a clock that moves between the seed and the read: a
/// key seeded (or set by the script) with `T` ms shows `round((T - x) / 1000)` where `x` is the time
/// since, anywhere between 0 and the run's seed-to-dump time `e`. Two runs' values may then differ
/// by up to `ceil(e / 1000)` seconds (1 for a run under a second), never more. Equal otherwise.
fn equal_but_ttls(plain: &Json, traced: &Json, seconds: i64, reply_ttls: bool) -> bool {
    let ttl = |v: &Json| {
        v.as_str()
            .and_then(|t| t.strip_prefix('~')?.strip_suffix('s')?.parse::<i64>().ok())
    };
    match (plain, traced) {
        (Json::Object(a), Json::Object(b)) => {
            a.len() == b.len()
                && a.iter().all(|(k, v)| {
                    b.get(k)
                        .is_some_and(|w| equal_but_ttls(v, w, seconds, reply_ttls))
                })
        }
        (Json::Array(a), Json::Array(b)) => {
            a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .all(|(v, w)| equal_but_ttls(v, w, seconds, reply_ttls))
        }
        // A reply's integers, when the script asks for a TTL in seconds.
        (Json::Number(a), Json::Number(b)) if reply_ttls => {
            a == b
                || matches!((a.as_i64(), b.as_i64()), (Some(x), Some(y)) if x > 0 && y > 0 && (x - y).abs() <= seconds)
        }
        _ => match (ttl(plain), ttl(traced)) {
            (Some(x), Some(y)) => (x - y).abs() <= seconds,
            _ => plain == traced,
        },
    }
}

/// Does the script read a TTL in seconds (whose value may round otherwise in the other run)?
fn reads_ttl_seconds(script: &str) -> bool {
    let code = evalbench::engine::live::instrument::masked(script.as_bytes(), true);
    ["TTL", "HTTL"]
        .iter()
        .any(|name| evalbench::engine::live::instrument::has_word(&code, name.as_bytes(), false))
}

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

fn request(script: &str, keys: &[&str], argv: &[&str]) -> RunRequest {
    RunRequest {
        script: script.as_bytes().to_vec(),
        keys: keys.iter().map(|k| k.as_bytes().to_vec()).collect(),
        argv: argv.iter().map(|a| a.as_bytes().to_vec()).collect(),
        ..RunRequest::default()
    }
}

fn traced(conn: &mut Conn, live: &mut LiveBackend, case: &Case) -> (Json, Json) {
    conn.cmd(&["FLUSHALL"]);
    conn.cmd(&["SCRIPT", "FLUSH"]);
    seed(conn, &case.seed);
    let keys: Vec<&str> = case.keys.iter().map(String::as_str).collect();
    let argv: Vec<&str> = case.argv.iter().map(String::as_str).collect();
    let report = live
        .run(&request(&case.script, &keys, &argv), WriteMode::Allowed)
        .expect("live run");
    (report.reply.to_json(), normalize_keyspace(&dump(conn)))
}

/// The corpus comparison allows a TTL to move by what the runs' time justifies, and nothing else.
#[test]
fn ttls_may_differ_by_the_time_between_runs_only() {
    use serde_json::json;
    let ks =
        |ttl: &str, value: &str| json!({"k": {"type": "string", "value": value, "ttl_ms": ttl}});
    assert!(equal_but_ttls(
        &ks("~100s", "v"),
        &ks("~99s", "v"),
        1,
        false
    ));
    assert!(!equal_but_ttls(
        &ks("~100s", "v"),
        &ks("~98s", "v"),
        1,
        false
    ));
    assert!(equal_but_ttls(
        &ks("~100s", "v"),
        &ks("~98s", "v"),
        2,
        false
    ));
    assert!(!equal_but_ttls(
        &ks("~100s", "v"),
        &ks("~100s", "w"),
        1,
        false
    ));
    assert!(!equal_but_ttls(
        &json!({"int": 100}),
        &json!({"int": 99}),
        1,
        false
    ));
    assert!(equal_but_ttls(
        &json!({"int": 100}),
        &json!({"int": 99}),
        1,
        true
    ));
    // -1 (no TTL) and -2 (no key) are no moving clock.
    assert!(!equal_but_ttls(
        &json!({"int": -1}),
        &json!({"int": -2}),
        1,
        true
    ));
    assert!(!equal_but_ttls(
        &json!({"int": 1}),
        &json!({"int": -1}),
        2,
        true
    ));
    assert!(reads_ttl_seconds("return redis.call('ttl', KEYS[1])"));
    assert!(!reads_ttl_seconds(
        "return redis.call('PTTL', KEYS[1]) -- TTL"
    ));
}

/// Every differential case, once as a plain EVAL on one fresh server and once as a traced live run on
/// another (two servers, so Lua's random state advances the same way on each).
#[test]
fn traced_runs_match_plain_eval_over_the_corpus() {
    let (Some(a), Some(b)) = (RedisServer::start(), RedisServer::start()) else {
        return;
    };
    let mut plain_conn = a.connect();
    let mut traced_conn = b.connect();
    let mut live2 = backend(&b, false);
    let mut live3 = backend(&b, true);
    let filter = std::env::var("EVALBENCH_CASE").ok();
    let mut failures = Vec::new();
    let mut ran = 0;
    for case in &all_cases() {
        let id = format!("{}: {}", case.file, case.name);
        if filter.as_ref().is_some_and(|f| !id.contains(f.as_str())) {
            continue;
        }
        // The live backend traces EVAL: function libraries (FUNCTION LOAD, FCALL) are not traced
        // runs, and a case for other profiles is not this server's.
        let for_7_0 = case
            .profiles
            .as_ref()
            .is_none_or(|p| p.iter().any(|id| id == "redis-7.0"));
        if case.function_load || !case.libraries.is_empty() || !for_7_0 {
            continue;
        }
        ran += 1;
        let live = if case.resp == 3 {
            &mut live3
        } else {
            &mut live2
        };
        // Each run's seed-to-dump time bounds how far its TTLs (in seconds) moved.
        let started = std::time::Instant::now();
        let expected = plain_eval(&mut plain_conn, case);
        let plain_ms = started.elapsed().as_millis() as i64;
        let started = std::time::Instant::now();
        let actual = traced(&mut traced_conn, live, case);
        let traced_ms = started.elapsed().as_millis() as i64;
        let seconds = (plain_ms.max(traced_ms) + 999) / 1000;
        let reply_ttls = reads_ttl_seconds(&case.script);
        let same = equal_but_ttls(&expected.0, &actual.0, seconds, reply_ttls)
            && equal_but_ttls(&expected.1, &actual.1, seconds, false);
        if !same && !PROXY_DIFFERENCES.contains(&id.as_str()) {
            failures.push(format!(
                "--- {id}\nscript:\n{}\nplain  reply: {}\ntraced reply: {}\nplain  keyspace: {}\ntraced keyspace: {}\n",
                case.script, expected.0, actual.0, expected.1, actual.1
            ));
        }
    }
    eprintln!(
        "{ran} cases, {} differ between plain EVAL and a traced live run",
        failures.len()
    );
    assert!(ran > 0);
    assert!(
        failures.is_empty(),
        "{} of {ran} cases differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Scripts that probe how the proxy raises and reports errors, on both of its `redis.call` paths (one
/// coroutine per run for scripts that cannot catch an error, one per access for those that can):
/// replies and keyspaces of a plain EVAL and of a traced run are identical.
#[test]
fn proxy_edge_cases_match_plain_eval() {
    let (Some(a), Some(b)) = (RedisServer::start(), RedisServer::start()) else {
        return;
    };
    let mut plain_conn = a.connect();
    let mut traced_conn = b.connect();
    let mut live2 = backend(&b, false);
    let mut live3 = backend(&b, true);
    let scripts: &[(&str, u8)] = &[
        // The line of a call that raises, from its site (direct calls) or the stack (tail calls
        // included: the coroutine's function is a C function).
        ("return redis.call('NOSUCHCMD')", 2),
        ("#!lua\n\nreturn redis.call('NOSUCHCMD')", 2),
        ("local function f()\n  return redis.call('GET', KEYS[1], 'x')\nend\nreturn f()", 2),
        ("local function f()\n  redis.call('INCR', KEYS[1])\nend\nredis.call('SET', KEYS[1], 'a')\nf()", 2),
        ("local t = {}\nfor i = 1, 3 do t[i] = redis.call('INCR', KEYS[1]) end\nreturn redis.call('HGET', KEYS[1], 'f')", 2),
        ("if redis.call('EXISTS', KEYS[1]) == 0 then\n  return redis.call 'NOSUCHCMD'\nend", 2),
        // Lines as Lua counts them: comments and strings skipped, CR, CRLF, escaped newlines.
        ("local s = \"redis.call('GET')\" -- redis.call('GET')\nreturn redis.call('GET', KEYS[1], 'x')", 2),
        ("--[[ redis.call('NOSUCHCMD')\n\n]] local s = [==[\n]]\n]==]\nreturn redis.call('NOSUCHCMD')", 2),
        ("local a = 1\r\nlocal b = 2\rreturn redis.call('NOSUCHCMD')", 2),
        ("local s = 'a\\\nb'\nreturn redis.call('NOSUCHCMD')", 2),
        ("redis.log(redis.LOG_NOTICE, 'x')\nlocal v = redis.REDIS_VERSION\nreturn redis.call('NOSUCHCMD', v)", 2),
        ("redis.call('SET', KEYS[1], 'v')\nreturn redis.pcall('INCR', KEYS[1])", 2),
        ("local x = 1\nreturn redis.call('SET',\n  KEYS[1])", 2),
        ("local c = redis.call\nlocal a = 1\nreturn c('NOSUCHCMD')", 2),
        ("local c = redis.call\nc('SET', KEYS[1], 'v')\nreturn c('GET', KEYS[1])", 2),
        ("return redis.call()", 2),
        // `pairs` and `next` over `redis` see the real table: its keys in its order, `call`
        // and `pcall` included, and the iterated `call` is a working one.
        ("local t = {}\nfor k, v in pairs(redis) do t[#t + 1] = k .. '=' .. type(v) end\nreturn t", 2),
        ("local t = {}\nlocal k, v = next(redis)\nwhile k do t[#t + 1] = k k, v = next(redis, k) end\nreturn t", 2),
        ("for k, v in pairs(redis) do if k == 'call' then v('SET', KEYS[1], 'x') end end\nreturn redis.call('GET', KEYS[1])", 2),
        ("local f = pairs(redis)\nreturn {f == next, pcall(pairs), pcall(next), pcall(next, {}, 'nokey')}", 2),
        ("local t = {}\nfor k in pairs({a = 1}) do t[#t + 1] = k end\nreturn {t[1], next({}), #KEYS}", 2),
        ("return redis.call('GET', {})", 2),
        ("redis.call('SET', KEYS[1], 'v')\nreturn redis.call('GET', nil)", 2),
        ("return redis.call('SET', KEYS[1], 1.5)", 2),
        ("local r = redis.pcall('NOSUCHCMD')\nreturn r", 2),
        ("return redis.pcall()", 2),
        ("error({err = 'MYERR raised'})", 2),
        ("return redis.error_reply('MYERR returned')", 2),
        ("return redis.status_reply('FINE')", 2),
        ("local t = nil\nreturn t.x", 2),
        ("error('boom')", 2),
        ("local function f() error('boom', 2) end\nf()", 2),
        ("error('boom', 0)", 2),
        ("redis.call('SET', KEYS[1], 'v')\nredis.call('LPUSH', KEYS[1], 'x')", 2),
        ("redis.setresp(3)\nlocal a = redis.call('GET', KEYS[1])\nlocal b = redis.call('GET', KEYS[1])\nreturn {a == nil, b == nil, redis.call('NOSUCHCMD')}", 3),
        ("for i = 1, 150 do redis.call('RPUSH', KEYS[1], i) end\nreturn redis.call('LRANGE', KEYS[1], 0, -1)", 2),
        ("local r = redis.call('TIME')\nredis.call('SET', KEYS[1], 'v')\nreturn #r", 2),
        ("table.foreach({'NOSUCHCMD'}, redis.call)", 2),
        ("local a = 1\nredis.x = 1", 2),
        ("local a = 1\nreturn redis.nosuchfield", 2),
        // Scripts that can catch an error: a reference kept in a local still works after an error
        // raised through another access (not after one raised through itself: README).
        ("local c = redis.call\nlocal ok, e = pcall(redis.call, 'NOSUCHCMD')\nc('SET', KEYS[1], 'v')\nreturn {ok and 1 or 0, e, c('GET', KEYS[1])}", 2),
        ("pcall(function() redis.call('NOSUCHCMD') end)\nreturn redis.call('NOSUCHCMD2')", 2),
        ("local ok, e = pcall(redis.call, 'GET')\nreturn {ok and 1 or 0, e}", 2),
        ("local ok, e = xpcall(function() return redis.call('NOSUCHCMD') end, function(e) return e end)\nreturn {ok and 1 or 0, e}", 2),
        ("local co = coroutine.wrap(function() return redis.call('INCR', KEYS[1]) end)\nreturn co()", 2),
        ("local co = coroutine.create(function() redis.call('NOSUCHCMD') end)\nlocal ok, e = coroutine.resume(co)\nreturn {ok and 1 or 0, e}", 2),
        ("local co = coroutine.wrap(function() redis.call('NOSUCHCMD') end)\nco()", 2),
        ("local r = redis.call('INCR', KEYS[1])\nlocal ok = pcall(error, 'x')\nreturn redis.call('NOSUCHCMD')", 2),
    ];
    let mut failures = Vec::new();
    for (i, (script, resp)) in scripts.iter().enumerate() {
        let case = Case {
            file: "proxy".into(),
            name: i.to_string(),
            keys: vec!["k".into()],
            argv: Vec::new(),
            seed: serde_json::json!({}),
            resp: *resp,
            script: script.to_string(),
            // No functions.
            ..Default::default()
        };
        let expected = plain_eval(&mut plain_conn, &case);
        let live = if *resp == 3 { &mut live3 } else { &mut live2 };
        let actual = traced(&mut traced_conn, live, &case);
        if expected != actual {
            failures.push(format!(
                "--- {script}\nplain  {}\ntraced {}\n",
                expected.0, actual.0
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_trace_lists_each_call_with_line_reply_keys_and_write() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let mut live = backend(&server, false);
    let script = "local n = redis.call('INCR', KEYS[1])\nredis.pcall('GET', KEYS[1], 'extra')\nreturn redis.call('GET', KEYS[1])";
    let report = live
        .run(&request(script, &["c"], &[]), WriteMode::Allowed)
        .unwrap();
    assert_eq!(report.reply, Reply::bulk("1"));
    assert_eq!(report.outcome, Outcome::Returned);
    let calls: Vec<(u32, String, Json, bool)> = report
        .trace
        .iter()
        .map(|t| {
            (
                t.line,
                t.command
                    .iter()
                    .map(|a| String::from_utf8_lossy(a).into_owned())
                    .collect::<Vec<_>>()
                    .join(" "),
                t.reply.to_json(),
                t.write,
            )
        })
        .collect();
    assert_eq!(calls.len(), 3);
    assert_eq!(calls[0].0, 1);
    assert_eq!(calls[0].1, "INCR c");
    assert_eq!(calls[0].2, serde_json::json!({"int": 1}));
    assert!(calls[0].3);
    assert_eq!(calls[1].0, 2);
    assert_eq!(
        calls[1].2,
        Reply::err("ERR Wrong number of args calling Redis command from script").to_json()
    );
    assert_eq!(calls[2].0, 3);
    assert!(!calls[2].3);
    assert_eq!(report.trace[0].keys, vec![b"c".to_vec()]);
}

#[test]
fn the_trace_keeps_long_returned_and_null_replies() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let mut live = backend(&server, false);
    let script = "for i = 1, 150 do redis.call('RPUSH', KEYS[1], i) end\nlocal all = redis.call('LRANGE', KEYS[1], 0, -1)\nlocal h = redis.call('LRANGE', KEYS[1], 0, 2)\nredis.call('DEL', 'other')\nreturn h";
    let report = live
        .run(&request(script, &["l"], &[]), WriteMode::Allowed)
        .unwrap();
    assert_eq!(report.reply, Reply::bulks(["1", "2", "3"]));
    assert_eq!(report.trace.len(), 153);
    assert_eq!(
        report.trace[149].command,
        vec![b"RPUSH".to_vec(), b"l".to_vec(), b"150".to_vec()]
    );
    assert_eq!(report.trace[149].line, 1);
    let Reply::Array(all) = &report.trace[150].reply else {
        panic!("{:?}", report.trace[150].reply);
    };
    assert_eq!(all.len(), 101);
    assert_eq!(all[99], Reply::bulk("100"));
    assert_eq!(
        all[100],
        Reply::Status("... 50 more elements (evalbench records the first 100)".into())
    );
    // The returned value is sent once and is also the reply of the call that made it.
    assert_eq!(report.trace[151].reply, report.reply);
    assert_eq!(report.trace[151].line, 3);
    assert_eq!((report.trace[152].line, report.trace[152].write), (4, true));
    // A RESP3 null (Lua nil), an argument the call refuses, a call from a reference kept in a local.
    let script = "redis.setresp(3)\nlocal c = redis.call\nlocal a = c('GET', KEYS[1])\nlocal e = redis.pcall('GET', {})\nreturn {a == nil, e}";
    let report = live
        .run(&request(script, &["missing"], &[]), WriteMode::Allowed)
        .unwrap();
    assert_eq!(report.trace.len(), 2);
    assert_eq!(report.trace[0].reply, Reply::Nil);
    assert_eq!(report.trace[0].line, 2, "the line of the access");
    assert_eq!(report.trace[1].command.len(), 2);
    assert!(report.trace[1].reply.is_error());
    // A long returned value: whole in the reply, truncated like any other in the trace.
    let report = live
        .run(
            &request("return redis.call('LRANGE', KEYS[1], 0, -1)", &["l"], &[]),
            WriteMode::Allowed,
        )
        .unwrap();
    let (Reply::Array(all), Reply::Array(traced)) = (&report.reply, &report.trace[0].reply) else {
        panic!("{:?}", report.reply);
    };
    assert_eq!((all.len(), traced.len()), (150, 101));
    assert_eq!(traced[..100], all[..100]);
    // Calls beyond the traced ones are counted.
    let report = live
        .run(
            &request(
                "for i = 1, 10003 do redis.call('PING') end\nreturn redis.call('NOSUCHCMD')",
                &[],
                &[],
            ),
            WriteMode::Allowed,
        )
        .unwrap();
    assert_eq!(report.trace.len(), 10_000);
    assert!(
        report
            .warnings
            .iter()
            .any(|w| w.message.starts_with("4 more calls were made")),
        "{:?}",
        report.warnings
    );
    assert_eq!(report.error_line, Some(2));
}

#[test]
fn errors_keep_the_users_sha_and_line() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let mut conn = server.connect();
    conn.cmd(&["RPUSH", "l", "x"]);
    let mut live = backend(&server, false);
    let script = "\nlocal function f()\n  redis.call('GET', 'l')\nend\nf()";
    let report = live
        .run(&request(script, &[], &[]), WriteMode::Allowed)
        .unwrap();
    let sha = evalbench::engine::script::sha1_hex(script.as_bytes());
    assert_eq!(
        report.reply,
        Reply::err(format!("WRONGTYPE Operation against a key holding the wrong kind of value script: {sha}, on @user_script:3."))
    );
    assert_eq!(report.error_line, Some(3));
    assert_eq!(report.trace.len(), 1);
    // A compile error is the plain script's own.
    let report = live
        .run(&request("return +", &[], &[]), WriteMode::Allowed)
        .unwrap();
    assert_eq!(
        report.reply,
        Reply::err(
            "ERR Error compiling script (new function): user_script:1: unexpected symbol near '+'"
        )
    );
}

#[test]
fn noscript_falls_back_to_eval_then_evalsha_hits_the_cache() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let mut conn = server.connect();
    let mut live = backend(&server, false);
    let script = "return ARGV[1]";
    assert!(!live.is_cached(script.as_bytes()).unwrap());
    let r = live
        .run(&request(script, &[], &["a"]), WriteMode::Allowed)
        .unwrap();
    assert_eq!(r.reply, Reply::bulk("a"));
    assert!(live.is_cached(script.as_bytes()).unwrap());
    conn.cmd(&["CONFIG", "RESETSTAT"]);
    let r = live
        .run(&request(script, &[], &["b"]), WriteMode::Allowed)
        .unwrap();
    assert_eq!(r.reply, Reply::bulk("b"));
    let stats = match conn.cmd(&["INFO", "commandstats"]) {
        Reply::Bulk(b) => String::from_utf8_lossy(&b).into_owned(),
        other => panic!("{other:?}"),
    };
    assert!(stats.contains("cmdstat_evalsha:calls=1"), "{stats}");
    assert!(!stats.contains("cmdstat_eval:"), "{stats}");
    // SCRIPT FLUSH on the server: the next run gets NOSCRIPT and sends the script again.
    conn.cmd(&["SCRIPT", "FLUSH"]);
    let r = live
        .run(&request(script, &[], &["c"]), WriteMode::Allowed)
        .unwrap();
    assert_eq!(r.reply, Reply::bulk("c"));
}

#[test]
fn read_only_runs_refuse_writes_on_the_server() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let mut conn = server.connect();
    let mut live = backend(&server, false);
    let r = live
        .run(
            &request("return redis.call('SET', KEYS[1], 'v')", &["k"], &[]),
            WriteMode::ReadOnly,
        )
        .unwrap();
    assert!(
        matches!(&r.reply, Reply::Error(e) if e.starts_with("ERR Write commands are not allowed from read-only scripts.")),
        "{:?}",
        r.reply
    );
    assert_eq!(conn.cmd(&["EXISTS", "k"]), Reply::Int(0));
    // `#!lua flags=no-writes` runs with EVAL_RO even when writes are allowed.
    let r = live
        .run(
            &request(
                "#!lua flags=no-writes\nreturn redis.call('SET', KEYS[1], 'v')",
                &["k"],
                &[],
            ),
            WriteMode::Allowed,
        )
        .unwrap();
    assert!(r.reply.is_error(), "{:?}", r.reply);
    assert_eq!(conn.cmd(&["EXISTS", "k"]), Reply::Int(0));
}

#[test]
fn connection_failures_are_one_clear_line() {
    // Port 1 on loopback: nothing listens there, and no other test's server can take it meanwhile.
    let port = 1;
    let target = TargetSpec {
        url: Some(format!("redis://127.0.0.1:{port}")),
        ..TargetSpec::default()
    }
    .resolve()
    .unwrap();
    let Err(LiveError::Connect(message)) = LiveBackend::connect(target) else {
        panic!("connected to a closed port");
    };
    assert_eq!(
        message,
        format!(
            "127.0.0.1:{port}: connection refused (is the server running? check --server or -h/-p)"
        )
    );

    let Some(server) = RedisServer::start() else {
        return;
    };
    let mut conn = server.connect();
    conn.cmd(&["CONFIG", "SET", "requirepass", "s3cret"]);
    let target = TargetSpec {
        url: Some(format!("redis://:wrong@127.0.0.1:{}", server.port)),
        ..TargetSpec::default()
    }
    .resolve()
    .unwrap();
    let Err(LiveError::Connect(message)) = LiveBackend::connect(target) else {
        panic!("a wrong password connected");
    };
    assert!(message.contains("authentication failed"), "{message}");
    assert!(
        !message.contains("wrong@"),
        "the password must not be printed: {message}"
    );
    let target = TargetSpec {
        url: Some(format!("redis://127.0.0.1:{}", server.port)),
        password: Some("s3cret".into()),
        ..TargetSpec::default()
    }
    .resolve()
    .unwrap();
    let live = LiveBackend::connect(target).expect("right password");
    assert_eq!(live.server.product, "redis");
    assert_eq!(live.server.role, "master");
    assert_eq!(live.server.busy_threshold_ms, 5000);
    assert!(!live.server.cluster);
}

#[test]
fn a_read_timeout_and_a_killed_server_are_reported_not_hung() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let mut conn = server.connect();
    conn.cmd(&["CONFIG", "SET", "busy-reply-threshold", "100"]);
    let target = TargetSpec {
        url: Some(format!("redis://127.0.0.1:{}", server.port)),
        read_timeout_ms: Some(300),
        ..TargetSpec::default()
    }
    .resolve()
    .unwrap();
    let mut live = LiveBackend::connect(target).unwrap();
    assert_eq!(live.server.busy_threshold_ms, 100);
    let started = std::time::Instant::now();
    let err = live
        .run(&request("while true do end", &[], &[]), WriteMode::ReadOnly)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("127.0.0.1:{}: gave up waiting for the script after 0.3s (--read-timeout); sent SCRIPT KILL: OK; the script was stopped (the server answers PING)", server.port)
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    // evalbench stopped the script: the server is not left busy, and the backend works again.
    assert_eq!(conn.cmd(&["PING"]), Reply::Status("PONG".into()));
    let report = live
        .run(&request("return 2", &[], &[]), WriteMode::ReadOnly)
        .unwrap();
    assert_eq!(report.reply, Reply::Int(2));
    let port = server.port;
    drop(server);
    let err = live
        .run(&request("return 1", &[], &[]), WriteMode::ReadOnly)
        .unwrap_err();
    // The connection was found dead only after the script was written to it: it may have run.
    assert!(matches!(err, LiveError::Sent(_)), "{err}");
    assert!(
        err.to_string().ends_with(&format!(
            "; the script was sent and may have run there before the connection dropped (evalbench never sends it twice): once the node answers, check SCRIPT EXISTS {} on 127.0.0.1:{}",
            evalbench::engine::live::instrument::instrument(b"return 1").map_or_else(
                || evalbench::engine::script::sha1_hex(b"return 1"),
                |c| c.sha
            ),
            port
        )),
        "{err}"
    );
}

#[test]
fn acl_denials_and_replicas_are_explained() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let mut conn = server.connect();
    assert_eq!(
        conn.cmd(&[
            "ACL",
            "SETUSER",
            "viewer",
            "on",
            ">pw",
            "~*",
            "+@read",
            "+info",
            "+role",
            "-eval",
            "-evalsha",
            "-eval_ro",
            "-evalsha_ro"
        ]),
        Reply::ok()
    );
    let target = TargetSpec {
        url: Some(format!("redis://viewer:pw@127.0.0.1:{}", server.port)),
        ..TargetSpec::default()
    }
    .resolve()
    .unwrap();
    let mut live = LiveBackend::connect(target).expect("viewer connects");
    // CONFIG is denied to this user: the threshold falls back to the default, with a note.
    assert_eq!(live.server.busy_threshold_ms, 5000);
    assert!(
        live.server
            .notes
            .iter()
            .any(|n| n.contains("CONFIG GET busy-reply-threshold was refused")),
        "{:?}",
        live.server.notes
    );
    let report = live
        .run(&request("return 1", &[], &[]), WriteMode::ReadOnly)
        .unwrap();
    assert!(
        matches!(&report.reply, Reply::Error(e) if e.starts_with("NOPERM")),
        "{:?}",
        report.reply
    );

    let Some(replica) = RedisServer::start() else {
        return;
    };
    let mut rconn = replica.connect();
    assert_eq!(
        rconn.cmd(&["REPLICAOF", "127.0.0.1", &server.port.to_string()]),
        Reply::ok()
    );
    let live = backend(&replica, false);
    assert_eq!(live.server.role, "slave");
    assert!(live.server.is_replica());
    assert!(
        live.server.summary().contains("replica"),
        "{}",
        live.server.summary()
    );
}

/// A CA and a server certificate for 127.0.0.1, made with openssl in `dir`.
fn make_certificates(dir: &std::path::Path) -> bool {
    let run = |args: &[&str]| {
        std::process::Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    std::fs::write(
        dir.join("ext.cnf"),
        "subjectAltName=DNS:localhost,IP:127.0.0.1",
    )
    .unwrap();
    run(&[
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.crt",
        "-days",
        "2",
        "-subj",
        "/CN=evalbench test CA",
    ]) && run(&[
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
        "-subj",
        "/CN=localhost",
    ]) && run(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.crt",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "server.crt",
        "-days",
        "2",
        "-extfile",
        "ext.cnf",
    ])
}

#[test]
fn tls_with_a_ca_file_works_and_an_unknown_ca_is_one_clear_line() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let dir_tmp = tempfile::tempdir().unwrap();
    let dir = dir_tmp.path().to_path_buf();
    if !make_certificates(&dir) {
        assert!(
            std::env::var("CI").is_err(),
            "openssl is needed for the TLS test"
        );
        eprintln!("NOTICE: skipping the TLS test: openssl failed");
        return;
    }
    let tls_port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let path = |f: &str| dir.join(f).display().to_string();
    let mut conn = server.connect();
    let reply = conn.cmd(&[
        "CONFIG",
        "SET",
        "tls-cert-file",
        &path("server.crt"),
        "tls-key-file",
        &path("server.key"),
        "tls-ca-cert-file",
        &path("ca.crt"),
        "tls-auth-clients",
        "no",
        "tls-port",
        &tls_port.to_string(),
    ]);
    assert_eq!(reply, Reply::ok());
    // The connect timeout covers the TLS handshake: the default 3 s ran out twice while 8 builds
    // shared the 2 cores (the test is of trust, not of timing).
    let spec = |cacert: Option<std::path::PathBuf>| TargetSpec {
        host: Some("127.0.0.1".into()),
        port: Some(tls_port),
        tls: true,
        cacert,
        connect_timeout_ms: Some(30_000),
        ..TargetSpec::default()
    };
    let mut live = LiveBackend::connect(spec(Some(dir.join("ca.crt"))).resolve().unwrap())
        .expect("TLS connect");
    assert!(
        live.target.display.ends_with("(TLS)"),
        "{}",
        live.target.display
    );
    let report = live
        .run(
            &request("return redis.call('PING')", &[], &[]),
            WriteMode::ReadOnly,
        )
        .unwrap();
    assert_eq!(report.reply, Reply::Status("PONG".into()));
    // Without the CA the server's certificate is not trusted.
    let Err(LiveError::Connect(message)) = LiveBackend::connect(spec(None).resolve().unwrap())
    else {
        panic!("an untrusted certificate was accepted");
    };
    assert!(message.contains("TLS failed"), "{message}");
    // --insecure skips verification.
    let insecure = TargetSpec {
        insecure: true,
        ..spec(None)
    };
    LiveBackend::connect(insecure.resolve().unwrap()).expect("insecure TLS connect");
}

/// The workbench's engine thread on a live server: reads run traced as EVAL_RO; a write is held back
/// after a sandbox dry run whose trace and keyspace diff are shown (the server's data untouched) until
/// the user confirms, then sent with writes allowed.
#[test]
fn the_workbench_worker_guards_live_writes() {
    use evalbench::engine::keyspace::Db;
    use evalbench::tui::worker::{EngineCommand, Worker};
    let Some(server) = RedisServer::start() else {
        return;
    };
    let mut conn = server.connect();
    conn.cmd(&["SET", "counter", "7"]);
    let worker = Worker::start_with(Some(backend(&server, false)));
    let run = |id: u64, script: &str| {
        worker.send(EngineCommand::Run {
            id,
            request: request(script, &["counter"], &[]),
            seed: Db::new(),
            busy_threshold_ms: 5000,
            consent: evalbench::engine::live::guarded::Consent {
                writes: id == 3,
                ..Default::default()
            },
            live: true,
            clock_ms: 0,
        });
        worker
            .next_result(std::time::Duration::from_secs(20))
            .expect("a report")
    };
    let read = run(1, "return redis.call('GET', KEYS[1])");
    assert_eq!(read.report.reply, Reply::bulk("7"));
    assert_eq!(read.report.trace.len(), 1);
    assert!(read.before.contains(b"counter", 0));

    let write = run(2, "return redis.call('INCR', KEYS[1])");
    assert_eq!(write.report.outcome, Outcome::Refused);
    assert!(
        matches!(&write.report.reply, Reply::Error(e) if e.starts_with("evalbench: not sent to the live server yet: The dry run WRITES (line 1: INCR counter)")),
        "{:?}",
        write.report.reply
    );
    assert_eq!(write.report.trace.len(), 1, "the dry run's trace is shown");
    assert_ne!(
        write.before, write.after,
        "the dry run's keyspace diff is shown"
    );
    assert!(write.question.is_some_and(|q| q.consent.writes));
    assert_eq!(conn.cmd(&["GET", "counter"]), Reply::bulk("7"));

    // Confirmed (run 3): sent with writes allowed, traced.
    let confirmed = run(3, "return redis.call('INCR', KEYS[1])");
    assert_eq!(confirmed.report.reply, Reply::Int(8));
    assert_eq!(confirmed.report.trace.len(), 1);
    assert!(confirmed.question.is_none());
    assert_eq!(conn.cmd(&["GET", "counter"]), Reply::bulk("8"));
}

/// Esc on a live run sends SCRIPT KILL from a second connection.
#[test]
fn cancelling_a_live_run_sends_script_kill() {
    use evalbench::engine::keyspace::Db;
    use evalbench::tui::worker::{EngineCommand, Worker};
    let Some(server) = RedisServer::start() else {
        return;
    };
    let mut conn = server.connect();
    conn.cmd(&["CONFIG", "SET", "busy-reply-threshold", "100"]);
    let worker = Worker::start_with(Some(backend(&server, false)));
    let run = |consent| {
        worker.send(EngineCommand::Run {
            id: 1,
            request: request("local i = 0 while true do i = i + 1 end", &[], &[]),
            seed: Db::new(),
            busy_threshold_ms: 100,
            consent,
            live: true,
            clock_ms: 0,
        })
    };
    // The dry run stops at the 100 ms threshold: nothing is sent without consent.
    run(Default::default());
    let held = worker
        .next_result(std::time::Duration::from_secs(20))
        .expect("a report");
    let question = held.question.expect("the guard asks");
    assert!(!held.live);
    // Consent given: the live run spins on the server until Esc.
    run(question.consent);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while worker.live_phase() != evalbench::engine::live::guarded::Phase::OnServer {
        assert!(
            std::time::Instant::now() < deadline,
            "the run reaches the server"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    worker.cancel();
    let result = worker
        .next_result(std::time::Duration::from_secs(20))
        .expect("a report");
    assert_eq!(
        result.kill.as_deref(),
        Some("sent SCRIPT KILL: OK; the script was stopped (the server answers PING)")
    );
    assert!(
        matches!(&result.report.reply, Reply::Error(e) if e.contains("Script killed by user with SCRIPT KILL")),
        "{:?}",
        result.report.reply
    );
    assert_eq!(conn.cmd(&["PING"]), Reply::Status("PONG".into()));
}
