//! The differential fuzzer: seeded random scripts of `redis.pcall`/`redis.call` commands
//! over a small mixed-type keyspace with TTLs, RESP2 and RESP3, run on the sandbox and on a real
//! redis-server started by the test; the typed reply and the resulting keyspace must be identical.
//! A mismatch is minimized (statements and seed keys dropped while it still differs) and written in
//! the `.cases` format to `target/fuzz-mismatches/`, ready to paste into `tests/cases/`.
//!
//! CI runs it for `EVALBENCH_DIFF_FUZZ_SECONDS` (default 15) on a fixed seed. On demand:
//! `EVALBENCH_DIFF_FUZZ_CASES=50000 EVALBENCH_FUZZ_SEED=7 cargo test --release --test diff_fuzz -- --nocapture`
//! (a random seed when none is given; `EVALBENCH_DIFF_FUZZ_KNOWN=0` leaves out the inputs of every
//! known group). Any mismatch fails the run; it is named after the known group it regresses when
//! it needs that group's inputs.

mod common;
#[path = "fuzz/gen.rs"]
mod gen;

use common::{normalize_keyspace, plain_eval, sandbox_eval, Case, Conn, RedisServer};
use evalbench::engine::Sandbox;
use gen::{Known, Options, Program};
use rand::SeedableRng;
use serde_json::{json, Value as Json};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Mismatch groups a later profile's server is known to show, reported, not failed:
/// (profiles, the group's name, why). The same causes as in tests/cases/known_differences.txt.
const PROFILE_KNOWN: &[(&str, &str, &str)] = &[
    (
        "redis-7.2,redis-7.4",
        "server crash",
        "the installable 7.2.4 and 7.4.1 builds predate crash fixes of their lines' current patch releases",
    ),
];

/// Why `group` is a known difference of `profile`, if it is.
fn known_for(profile: &str, group: &str) -> Option<&'static str> {
    PROFILE_KNOWN
        .iter()
        .find(|(ids, name, _)| ids.split(',').any(|id| id == profile) && group.contains(name))
        .map(|(_, _, why)| *why)
}

/// The CI run's seed: the same cases every run (a prefix, as far as the time allows).
const CI_SEED: u64 = 15;
const MAX_STATEMENTS: usize = 12;

fn env_u64(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    Some(
        v.trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v:?}: expected a number")),
    )
}

/// TTLs compared in 10 s buckets: the two sides run at different moments (see gen.rs).
fn coarse_keyspace(ks: &Json) -> Json {
    let mut ks = normalize_keyspace(ks);
    for spec in ks.as_object_mut().into_iter().flat_map(|m| m.values_mut()) {
        if let Some(s) = spec.get("ttl_ms").and_then(Json::as_str) {
            let secs: i64 = s
                .trim_matches(|c| c == '~' || c == 's')
                .parse()
                .unwrap_or(-1);
            spec["ttl_ms"] = json!(format!("~{}0s", (secs + 5).div_euclid(10)));
        }
    }
    ks
}

fn case_of(p: &Program) -> Case {
    Case {
        file: "diff_fuzz".into(),
        name: "generated".into(),
        keys: Vec::new(),
        argv: Vec::new(),
        seed: p.seed.clone(),
        resp: p.client_resp,
        script: p.script(),
        // No functions.
        ..Default::default()
    }
}

struct Sides<'a> {
    profile: &'static str,
    server: RedisServer,
    conn: Conn,
    sandbox: &'a mut Sandbox,
}

/// Both sides' (reply, keyspace), or `None` when they agree.
type Outcomes = ((Json, Json), (Json, Json));

/// The server's reply when a script made it exit (the 7.2.4 and 7.4.1 builds predate crash fixes).
const CRASH: &str = "the server closed the connection";

impl Sides<'_> {
    fn differ(&mut self, p: &Program) -> Option<Outcomes> {
        let case = case_of(p);
        let conn = &mut self.conn;
        let (redis_reply, redis_ks) = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(
            || plain_eval(conn, &case),
        )) {
            Ok(outcome) => outcome,
            Err(_) => {
                // Another server for the cases that follow.
                self.server = RedisServer::start_profile(self.profile).expect("restart the server");
                self.conn = self.server.connect();
                (json!({ "crash": CRASH }), json!({}))
            }
        };
        let (sb_reply, sb_ks) = sandbox_eval(self.sandbox, &case);
        let redis = (redis_reply, coarse_keyspace(&redis_ks));
        let sandbox = (sb_reply, coarse_keyspace(&sb_ks));
        (redis != sandbox).then_some((redis, sandbox))
    }

    /// Drop statements, then seed keys, then RESP3, while the case still differs.
    fn minimize(&mut self, mut p: Program) -> Program {
        let mut i = p.stmts.len();
        while i > 0 {
            i -= 1;
            if p.stmts.len() == 1 {
                break;
            }
            let mut q = p.clone();
            q.stmts.remove(i);
            if self.differ(&q).is_some() {
                p = q;
            }
        }
        let keys: Vec<String> = p.seed.as_object().unwrap().keys().cloned().collect();
        for key in keys {
            let mut q = p.clone();
            q.seed.as_object_mut().unwrap().remove(&key);
            if self.differ(&q).is_some() {
                p = q;
            }
        }
        for flip in 0..2 {
            let mut q = p.clone();
            if flip == 0 {
                q.script_resp3 = false;
            } else {
                q.client_resp = 2;
            }
            if (q.script_resp3 != p.script_resp3 || q.client_resp != p.client_resp)
                && self.differ(&q).is_some()
            {
                p = q;
            }
        }
        // The tags of what is left.
        let tags = p.tags();
        p.seed_tags.retain(|t| tags.contains(t));
        p
    }
}

/// `s` without its NULs inside string literals (a NUL and the rest of the literal dropped).
fn strip_nuls(s: &str) -> String {
    let mut out = s.to_string();
    while let Some(at) = out.find("\\000") {
        let end = out[at..].find('\'').map_or(out.len(), |e| at + e);
        out.replace_range(at..end, "");
    }
    out
}

/// The program without the inputs of one known group.
fn without(p: &Program, tag: Known) -> Program {
    let mut q = p.clone();
    match tag {
        Known::SeedFloat => {
            for spec in q.seed.as_object_mut().unwrap().values_mut() {
                if spec["type"] == "zset" {
                    for pair in spec["value"].as_array_mut().into_iter().flatten() {
                        if let Some(x) = pair[1].as_f64().filter(|_| pair[1].is_f64()) {
                            pair[1] = json!((x * 1e6).round() / 1e6);
                        }
                    }
                }
            }
        }
        Known::NulArgument | Known::ErrorReplyNul => {
            for st in q.stmts.iter_mut().filter(|s| s.tags.contains(&tag)) {
                st.expr = strip_nuls(&st.expr);
            }
        }
        Known::SameKeyMove => {
            for st in q.stmts.iter_mut().filter(|s| s.tags.contains(&tag)) {
                for k in [
                    "list1", "list2", "str1", "str2", "hash1", "hash2", "set1", "set2", "zset1",
                    "zset2", "strm1", "nokey",
                ] {
                    let other = if k == "list2" { "list1" } else { "list2" };
                    st.expr =
                        st.expr
                            .replacen(&format!("'{k}', '{k}'"), &format!("'{k}', '{other}'"), 1);
                }
            }
        }
    }
    q
}

/// The group of a minimized mismatch: the known groups whose inputs it needs (it matches without
/// them), or else the command whose reply differs.
fn group_of(sides: &mut Sides, p: &Program, outcomes: &Outcomes) -> String {
    let causes: Vec<&str> = p
        .tags()
        .into_iter()
        .filter(|&t| sides.differ(&without(p, t)).is_none())
        .map(|t| t.name())
        .collect();
    if !causes.is_empty() {
        return causes.join("+");
    }
    let ((redis_reply, _), (sandbox_reply, _)) = outcomes;
    if redis_reply.get("crash").is_some() {
        let last = p.stmts.last().map_or("", |s| s.command.as_str());
        return format!("server crash ({last})");
    }
    let (ra, sa) = (redis_reply.get("array"), sandbox_reply.get("array"));
    if let (Some(Json::Array(ra)), Some(Json::Array(sa))) = (ra, sa) {
        if let Some(at) = (0..ra.len().min(sa.len())).find(|&i| ra[i] != sa[i]) {
            if let Some(s) = p.stmts.get(at) {
                return format!(
                    "new: reply of {}: {}",
                    s.command,
                    what_differs(&ra[at], &sa[at])
                );
            }
        }
        if redis_reply == sandbox_reply {
            let last = p.stmts.last().map_or("", |s| s.command.as_str());
            return format!("new: keyspace after {last}");
        }
    }
    let last = p.stmts.last().map_or("", |s| s.command.as_str());
    format!(
        "new: script reply ({last}): {}",
        what_differs(redis_reply, sandbox_reply)
    )
}

/// What differs between two typed replies, in a few words: the second half of a group's name.
fn what_differs(redis: &Json, sandbox: &Json) -> &'static str {
    let kind = |j: &Json| match j {
        Json::Object(m) => m.keys().next().cloned().unwrap_or_default(),
        Json::Null => "null".to_string(),
        _ => "other".to_string(),
    };
    match (kind(redis).as_str(), kind(sandbox).as_str()) {
        ("error", "error") => "error text",
        ("error", _) => "server errors, sandbox replies",
        (_, "error") => "sandbox errors, server replies",
        (r, s) if r != s => "reply type",
        _ => "value",
    }
}

fn slug(group: &str) -> String {
    group
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect::<String>()
        .split('-')
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join("-")
}

#[test]
fn sandbox_matches_redis_on_random_scripts() {
    // EVALBENCH_PROFILE=valkey-9.1: the sandbox in that profile against that profile's server.
    let profile_id = std::env::var("EVALBENCH_PROFILE").unwrap_or_else(|_| "redis-7.0".into());
    let profile = evalbench::engine::profile::Profile::by_id(&profile_id).unwrap();
    let Some(server) = RedisServer::start_profile(profile.id) else {
        return;
    };
    let conn = server.connect();
    let cases_wanted = env_u64("EVALBENCH_DIFF_FUZZ_CASES");
    let on_demand = cases_wanted.is_some();
    let seed = env_u64("EVALBENCH_FUZZ_SEED").unwrap_or_else(|| {
        if on_demand {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
        } else {
            CI_SEED
        }
    });
    let budget = Duration::from_secs(env_u64("EVALBENCH_DIFF_FUZZ_SECONDS").unwrap_or(15));
    let with_known = std::env::var("EVALBENCH_DIFF_FUZZ_KNOWN").map_or(true, |v| v != "0");
    let enabled: Vec<Known> = Known::ALL.into_iter().filter(|_| with_known).collect();
    let opts = Options {
        enabled,
        small: false,
    };
    eprintln!(
        "diff_fuzz: EVALBENCH_FUZZ_SEED={seed} {} inputs of known groups: {:?} ({} commands)",
        match cases_wanted {
            Some(n) => format!("{n} cases,"),
            None => format!("{} s,", budget.as_secs()),
        },
        opts.enabled.iter().map(|k| k.name()).collect::<Vec<_>>(),
        gen::command_names().len(),
    );
    let out_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/fuzz-mismatches");
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut sandbox = Sandbox::new();
    sandbox.set_profile(profile);
    let mut sides = Sides {
        profile: profile.id,
        server,
        conn,
        sandbox: &mut sandbox,
    };
    let started = Instant::now();
    let (mut ran, mut matched) = (0u64, 0u64);
    // group -> (count, first minimized case)
    let mut groups: BTreeMap<String, (u64, String)> = BTreeMap::new();
    loop {
        match cases_wanted {
            Some(n) if ran >= n => break,
            None if started.elapsed() >= budget => break,
            _ => {}
        }
        let p = gen::program(&mut rng, &opts, MAX_STATEMENTS);
        ran += 1;
        let Some(first) = sides.differ(&p) else {
            matched += 1;
            continue;
        };
        let minimized = sides.minimize(p.clone());
        let (group, text) = match sides.differ(&minimized) {
            Some(outcomes) => {
                let group = group_of(&mut sides, &minimized, &outcomes);
                let ((rr, rk), (sr, sk)) = &outcomes;
                let text = format!(
                    "# diff_fuzz EVALBENCH_FUZZ_SEED={seed} case {ran}: {group}\n# redis   reply: {rr}\n# sandbox reply: {sr}\n# redis   keyspace: {rk}\n# sandbox keyspace: {sk}\n{}",
                    minimized.to_case(&format!("diff_fuzz seed {seed} case {ran}: {group}"))
                );
                (group, text)
            }
            // Gone on a rerun: a timing-dependent case, or a crash of an old server build that
            // needs more than this script (its heap's history).
            None => (
                if (first.0).0.get("crash").is_some() {
                    "server crash, not reproducible".to_string()
                } else {
                    "not reproducible".to_string()
                },
                format!(
                    "# seed {seed} case {ran}\n{}",
                    p.to_case("not reproducible")
                ),
            ),
        };
        let entry = groups.entry(group.clone()).or_insert((0, String::new()));
        entry.0 += 1;
        if entry.0 == 1 {
            entry.1 = text.clone();
            let _ = std::fs::create_dir_all(&out_dir);
            let file = out_dir.join(format!("{seed}-{ran}-{}.cases", slug(&group)));
            let _ = std::fs::write(&file, &text);
            eprintln!("mismatch ({group}), written to {}:\n{text}", file.display());
        }
    }
    let rate = if ran == 0 {
        0.0
    } else {
        100.0 * matched as f64 / ran as f64
    };
    eprintln!(
        "{ran} cases, {matched} match ({rate:.1}%) in {:.1} s, EVALBENCH_FUZZ_SEED={seed}",
        started.elapsed().as_secs_f64()
    );
    for (group, (count, _)) in &groups {
        match known_for(profile.id, group) {
            Some(why) => eprintln!("  {count:6}  {group} (known difference: {why})"),
            None => eprintln!("  {count:6}  {group}"),
        }
    }
    groups.retain(|group, _| known_for(profile.id, group).is_none());
    assert!(ran > 0, "no case ran");
    assert!(
        groups.is_empty(),
        "{} mismatch groups (seed {seed}):\n{}",
        groups.len(),
        groups
            .values()
            .map(|(_, text)| text.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
}
