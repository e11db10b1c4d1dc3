//! The sandbox's script cache as a client sees it, against the real server of each profile:
//! SCRIPT LOAD's SHA1 and errors, SCRIPT EXISTS (any case), EVALSHA of a loaded or EVAL'd script,
//! and NOSCRIPT (each server's own text) for a script never loaded and after SCRIPT FLUSH, as
//! after a restart or a failover.

mod common;

use common::RedisServer;
use evalbench::engine::profile::PROFILES;
use evalbench::engine::{Protocol, Reply, RunRequest, Sandbox};

fn evalsha(sandbox: &mut Sandbox, sha: &str) -> Reply {
    sandbox
        .evalsha(
            sha,
            vec![b"k".to_vec()],
            vec![b"7".to_vec()],
            Protocol::Resp2,
            false,
        )
        .reply
}

#[test]
fn the_script_cache_answers_as_each_server() {
    const SCRIPT: &str = "return {KEYS[1], ARGV[1], 'cached'}";
    const OTHER: &str = "return redis.call('SET', KEYS[1], ARGV[1])";
    const BAD: &str = "return +";
    const UNKNOWN: &str = "0123456789abcdef0123456789abcdef01234567";
    for profile in &PROFILES {
        let Some(server) = RedisServer::start_profile(profile.id) else {
            return;
        };
        let mut conn = server.connect();
        let mut sandbox = Sandbox::new();
        sandbox.set_profile(profile);
        let on_server =
            |conn: &mut common::Conn, sha: &str| conn.cmd(&["EVALSHA", sha, "1", "k", "7"]);
        let id = profile.id;

        // Never loaded: NOSCRIPT in the server's words, for a well-formed SHA1 and any other text.
        for sha in [UNKNOWN, "abc"] {
            assert_eq!(
                evalsha(&mut sandbox, sha),
                on_server(&mut conn, sha),
                "{id}: EVALSHA {sha}"
            );
        }

        // SCRIPT LOAD: the same SHA1, then EVALSHA runs it (the SHA1 in upper case too).
        let Reply::Bulk(sha) = conn.cmd(&["SCRIPT", "LOAD", SCRIPT]) else {
            panic!("{id}: SCRIPT LOAD");
        };
        let sha = String::from_utf8(sha).unwrap();
        assert_eq!(
            sandbox.script_load(SCRIPT.as_bytes()),
            Ok(sha.clone()),
            "{id}"
        );
        for s in [sha.clone(), sha.to_uppercase()] {
            assert_eq!(
                evalsha(&mut sandbox, &s),
                on_server(&mut conn, &s),
                "{id}: EVALSHA {s}"
            );
        }
        let Reply::Error(compile) = conn.cmd(&["SCRIPT", "LOAD", BAD]) else {
            panic!("{id}: SCRIPT LOAD of a syntax error");
        };
        assert_eq!(sandbox.script_load(BAD.as_bytes()), Err(compile), "{id}");

        // An EVAL caches its script as well.
        let report = sandbox.run(&RunRequest {
            script: OTHER.as_bytes().to_vec(),
            keys: vec![b"k".to_vec()],
            argv: vec![b"7".to_vec()],
            ..RunRequest::default()
        });
        assert_eq!(
            report.reply,
            conn.cmd(&["EVAL", OTHER, "1", "k", "7"]),
            "{id}"
        );
        let other_sha = report.sha1.clone();
        assert_eq!(
            evalsha(&mut sandbox, &other_sha),
            on_server(&mut conn, &other_sha),
            "{id}"
        );

        // SCRIPT EXISTS, then SCRIPT FLUSH forgets both.
        let exists = |conn: &mut common::Conn| {
            conn.cmd(&["SCRIPT", "EXISTS", &sha, &other_sha.to_uppercase(), UNKNOWN])
        };
        let as_reply =
            |v: Vec<bool>| Reply::Array(v.into_iter().map(|b| Reply::Int(b.into())).collect());
        assert_eq!(
            as_reply(sandbox.script_exists(&[&sha, &other_sha.to_uppercase(), UNKNOWN])),
            exists(&mut conn),
            "{id}: SCRIPT EXISTS"
        );
        conn.cmd(&["SCRIPT", "FLUSH"]);
        sandbox.script_flush();
        assert_eq!(
            as_reply(sandbox.script_exists(&[&sha, &other_sha.to_uppercase(), UNKNOWN])),
            exists(&mut conn),
            "{id}: SCRIPT EXISTS after SCRIPT FLUSH"
        );
        for s in [&sha, &other_sha] {
            assert_eq!(
                evalsha(&mut sandbox, s),
                on_server(&mut conn, s),
                "{id}: after SCRIPT FLUSH"
            );
        }
    }
}
