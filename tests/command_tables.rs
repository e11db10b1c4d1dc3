//! The command table of every profile is the real server's own `COMMAND` output: this test reads
//! it from each installed server and compares it with Redis 7.0.15's built-in table plus the
//! profile's delta file (src/engine/commands/profiles/<profile>.table). It is also the generator
//! of those files: `EVALBENCH_WRITE_TABLES=1 cargo test --test command_tables` rewrites them from
//! the servers (install them with .ci/install-servers first).

mod common;

use common::RedisServer;
use evalbench::engine::commands::table::{flag_bits, RedisCommandInfo};
use evalbench::engine::commands::{base_table, table_of};
use evalbench::engine::profile::PROFILES;
use evalbench::engine::reply::Reply;
use std::collections::BTreeMap;

fn text(r: &Reply) -> String {
    match r {
        Reply::Bulk(b) => String::from_utf8_lossy(b).into_owned(),
        Reply::Status(s) => s.clone(),
        other => panic!("expected a string in COMMAND: {other:?}"),
    }
}

fn int(r: &Reply) -> i32 {
    match r {
        Reply::Int(n) => *n as i32,
        other => panic!("expected an integer in COMMAND: {other:?}"),
    }
}

fn items(r: &Reply) -> &[Reply] {
    match r {
        Reply::Array(a) | Reply::Set(a) => a,
        other => panic!("expected an array in COMMAND: {other:?}"),
    }
}

/// One `COMMAND` entry (and its subcommands, `parent|sub`) as rows: name -> delta row text.
fn rows_of(entry: &Reply, out: &mut BTreeMap<String, String>) {
    let e = items(entry);
    let name = text(&e[0]).to_ascii_lowercase();
    let flags: Vec<String> = items(&e[2]).iter().map(text).collect();
    let row = RedisCommandInfo {
        name: "",
        arity: int(&e[1]),
        flags: flag_bits(flags.iter().map(String::as_str)),
        first_key: int(&e[3]),
        last_key: int(&e[4]),
        step: int(&e[5]),
    };
    let row = row.delta_row();
    out.insert(name.clone(), format!("{name}{row}"));
    if let Some(subs) = e.get(9) {
        for sub in items(subs) {
            rows_of(sub, out);
        }
    }
}

/// The delta file text of a server's COMMAND against the built-in 7.0.15 table.
fn delta_text(profile: &str, version: &str, server: &BTreeMap<String, String>) -> String {
    let base: BTreeMap<String, String> = base_table()
        .iter()
        .map(|c| (c.name.to_string(), c.delta_row()))
        .collect();
    let mut out = format!(
        "# The command table of {profile} ({version}) as a delta to Redis 7.0.15's: `+ name arity first\n\
         # last step flags` for a command it has that 7.0 has not or describes otherwise, `- name`\n\
         # for one it lacks. Generated from the server's COMMAND by tests/command_tables.rs\n\
         # (EVALBENCH_WRITE_TABLES=1 cargo test --test command_tables); do not edit by hand.\n"
    );
    for (name, row) in server {
        if base.get(name) != Some(row) {
            out.push_str(&format!("+ {row}\n"));
        }
    }
    for name in base.keys() {
        if !server.contains_key(name) {
            out.push_str(&format!("- {name}\n"));
        }
    }
    out
}

#[test]
fn command_tables_match_each_server() {
    let write = std::env::var("EVALBENCH_WRITE_TABLES").is_ok_and(|v| v == "1");
    let mut checked = 0;
    for profile in &PROFILES {
        let Some(server) = RedisServer::start_profile(profile.id) else {
            continue;
        };
        let mut conn = server.connect();
        let mut rows = BTreeMap::new();
        for entry in items(&conn.cmd(&["COMMAND"])) {
            rows_of(entry, &mut rows);
        }
        let delta = delta_text(profile.id, profile.version_tested, &rows);
        if profile.command_delta.is_empty() {
            // The built-in table is 7.0.15's own.
            assert_eq!(
                delta.lines().filter(|l| !l.starts_with('#')).count(),
                0,
                "{delta}"
            );
        } else {
            let path = format!(
                "{}/src/engine/commands/profiles/{}.table",
                env!("CARGO_MANIFEST_DIR"),
                profile.id
            );
            if write {
                std::fs::write(&path, &delta).unwrap();
            } else {
                assert_eq!(
                    profile.command_delta, delta,
                    "{path} is out of date: rerun with EVALBENCH_WRITE_TABLES=1"
                );
            }
            // And the sandbox's table of the profile is exactly the server's.
            if !write {
                let sandbox: BTreeMap<String, String> = table_of(profile)
                    .iter()
                    .map(|c| (c.name.to_string(), c.delta_row()))
                    .collect();
                assert_eq!(sandbox, rows, "{}", profile.id);
            }
        }
        checked += 1;
    }
    assert!(checked > 0, "no server was installed");
}
