//! Differential tests: every case of `tests/cases/*.cases` runs on the sandbox and on a real
//! redis-server started on a free loopback port; the typed reply and the resulting keyspace must
//! be identical. Cases listed in `tests/cases/known_differences.txt` are reported, not failed.

mod common;

use common::{all_cases, plain_eval, sandbox_eval, RedisServer};
use evalbench::engine::reply::Reply;
use evalbench::engine::Sandbox;
use std::collections::BTreeMap;

fn known_differences() -> BTreeMap<String, String> {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases/known_differences.txt");
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .filter_map(|l| {
            l.split_once(" -- ")
                .map(|(id, why)| (id.trim().to_string(), why.trim().to_string()))
        })
        .collect()
}

#[test]
fn sandbox_matches_redis_server() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let mut conn = server.connect();
    let version = match conn.cmd(&["INFO", "server"]) {
        Reply::Bulk(b) => String::from_utf8_lossy(&b)
            .lines()
            .find(|l| l.starts_with("redis_version:"))
            .unwrap_or("")
            .to_string(),
        _ => String::new(),
    };
    eprintln!("differential tests against {version}");
    let known = known_differences();
    let mut sandbox = Sandbox::new();
    let cases = all_cases();
    let filter = std::env::var("EVALBENCH_CASE").ok();
    let mut failures = Vec::new();
    let mut known_hits = Vec::new();
    let mut ran = 0;
    for case in &cases {
        if filter
            .as_ref()
            .is_some_and(|f| !format!("{}: {}", case.file, case.name).contains(f.as_str()))
        {
            continue;
        }
        ran += 1;
        let expected = plain_eval(&mut conn, case);
        let actual = sandbox_eval(&mut sandbox, case);
        if expected != actual {
            let id = format!("{}: {}", case.file, case.name);
            let detail = format!(
                "--- {id}\nscript:\n{}\nkeys {:?} argv {:?} resp {}\nredis   reply: {}\nsandbox reply: {}\nredis   keyspace: {}\nsandbox keyspace: {}\n",
                case.script, case.keys, case.argv, case.resp, expected.0, actual.0, expected.1, actual.1
            );
            if let Some(why) = known.get(&id) {
                known_hits.push(format!("{id} ({why})"));
            } else {
                failures.push(detail);
            }
        }
    }
    eprintln!(
        "{ran} cases, {} mismatches, {} known differences",
        failures.len(),
        known_hits.len()
    );
    for k in &known_hits {
        eprintln!("known difference: {k}");
    }
    assert!(ran > 0, "no differential case ran");
    assert!(
        failures.is_empty(),
        "{} of {ran} cases differ from redis-server:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
