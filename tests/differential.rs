//! Differential tests: every case of `tests/cases/*.cases` runs on the sandbox in each server
//! profile and on that profile's real server, started on a free loopback port; the typed reply
//! and the resulting keyspace must be identical. A case may name the profiles it applies to
//! (`@profiles ["redis-7.0"]`). Cases listed in `tests/cases/known_differences.txt` (for every
//! profile, or for the profiles a line names) are reported, not failed. A server that is not
//! installed is skipped with a notice, and fails the test under CI=true (.ci/install-servers).

mod common;

use common::{all_cases, plain_eval, sandbox_eval, RedisServer};
use evalbench::engine::profile::Profile;
use evalbench::engine::reply::Reply;
use evalbench::engine::Sandbox;
use serde_json::json;
use std::collections::BTreeMap;

/// `file: case name` -> why, for `profile`. A line is `file: case -- why` (every profile) or
/// `@id,id file: case -- why` (those profiles).
fn known_differences(profile: &str) -> BTreeMap<String, String> {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases/known_differences.txt");
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .filter_map(|l| {
            let l = match l.strip_prefix('@') {
                Some(rest) => {
                    let (ids, rest) = rest.split_once(' ')?;
                    if !ids.split(',').any(|id| id == profile) {
                        return None;
                    }
                    rest
                }
                None => l,
            };
            l.split_once(" -- ")
                .map(|(id, why)| (id.trim().to_string(), why.trim().to_string()))
        })
        .collect()
}

/// A server run slower than this (seed to keyspace dump) may round TTLs differently.
const SLOW_RUN_MS: u128 = 250;

/// The two keyspaces are the same but for some key's (or field's) TTL bucket.
fn differs_only_in_ttls(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    fn without_ttls(ks: &serde_json::Value) -> serde_json::Value {
        let mut ks = ks.clone();
        if let Some(keys) = ks.as_object_mut() {
            for spec in keys.values_mut() {
                if let Some(spec) = spec.as_object_mut() {
                    spec.remove("ttl_ms");
                    spec.remove("field_ttl_ms");
                }
            }
        }
        ks
    }
    a != b && without_ttls(a) == without_ttls(b)
}

fn differential(profile_id: &str) {
    let profile = Profile::by_id(profile_id).unwrap();
    let Some(mut server) = RedisServer::start_profile(profile_id) else {
        return;
    };
    let mut conn = server.connect();
    let version = match conn.cmd(&["INFO", "server"]) {
        Reply::Bulk(b) => String::from_utf8_lossy(&b)
            .lines()
            .find(|l| l.starts_with("redis_version:") || l.starts_with("valkey_version:"))
            .unwrap_or("")
            .to_string(),
        _ => String::new(),
    };
    eprintln!("differential tests of profile {profile_id} against {version}");
    let known = known_differences(profile_id);
    let mut sandbox = Sandbox::new();
    sandbox.set_profile(profile);
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
        if case
            .profiles
            .as_ref()
            .is_some_and(|ids| !ids.iter().any(|id| id == profile_id))
        {
            continue;
        }
        ran += 1;
        // TTLs are compared in whole seconds: when the server's seed-to-dump took long (a loaded
        // machine), its rounding may fall on the other side of a second. Such a slow run is compared
        // again (up to 3 times); a difference after a prompt run is a finding.
        let mut attempts = 0;
        let (expected, actual) = loop {
            attempts += 1;
            let started = std::time::Instant::now();
            // A server build without the 2025 Lua fixes may crash on a case: note it, start another.
            let expected = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                plain_eval(&mut conn, case)
            })) {
                Ok(result) => result,
                Err(_) => {
                    server = RedisServer::start_profile(profile_id).expect("restart the server");
                    conn = server.connect();
                    (
                        json!({"crash": "the server closed the connection"}),
                        json!({}),
                    )
                }
            };
            let slow = started.elapsed().as_millis() > SLOW_RUN_MS;
            let actual = sandbox_eval(&mut sandbox, case);
            // A TTL set from the wall clock's whole seconds (`EXAT` of `TIME`'s seconds) rounds
            // by the run's fraction of a second: the two runs may fall on either side of a half.
            let ttl_rounding =
                differs_only_in_ttls(&expected.1, &actual.1) && expected.0 == actual.0;
            if expected == actual || !(slow || ttl_rounding) || attempts == 3 {
                break (expected, actual);
            }
            eprintln!(
                "{}: {}: differs after a slow server run or in a TTL's rounding: compared again",
                case.file, case.name
            );
        };
        if expected != actual {
            let id = format!("{}: {}", case.file, case.name);
            let detail = format!(
                "--- {id}\nscript:\n{}\nkeys {:?} argv {:?} resp {}\nserver  reply: {}\nsandbox reply: {}\nserver  keyspace: {}\nsandbox keyspace: {}\n",
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
        "{profile_id}: {ran} cases, {} mismatches, {} known differences",
        failures.len(),
        known_hits.len()
    );
    for k in &known_hits {
        eprintln!("known difference ({profile_id}): {k}");
    }
    assert!(ran > 0, "no differential case ran");
    assert!(
        failures.is_empty(),
        "{} of {ran} cases differ from {version} in profile {profile_id}:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn sandbox_matches_redis_7_0() {
    differential("redis-7.0");
}

#[test]
fn sandbox_matches_redis_7_2() {
    differential("redis-7.2");
}

#[test]
fn sandbox_matches_redis_7_4() {
    differential("redis-7.4");
}

#[test]
fn sandbox_matches_redis_8_0() {
    differential("redis-8.0");
}

#[test]
fn sandbox_matches_valkey_8_1() {
    differential("valkey-8.1");
}

#[test]
fn sandbox_matches_valkey_9_1() {
    differential("valkey-9.1");
}
