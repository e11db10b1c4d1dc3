//! The command docs evalbench shows (the language server's hover: since, group, summary, syntax)
//! are the servers' own `COMMAND DOCS`: this test reads them from each installed server and
//! compares them with src/engine/commands/docs.txt. It is also the file's generator:
//! `EVALBENCH_WRITE_DOCS=1 cargo test --test command_docs` rewrites it (install the servers with
//! .ci/install-servers first). A command takes its docs from the newest Redis that has it, then
//! from Valkey for the commands only Valkey has.

mod common;

use common::RedisServer;
use evalbench::engine::commands::docs::{self, CommandDoc};
use evalbench::engine::reply::Reply;
use std::collections::BTreeMap;

/// Redis newest first, then Valkey: the first server with a command gives its docs.
const ORDER: [&str; 6] = [
    "redis-8.0",
    "redis-7.4",
    "redis-7.2",
    "redis-7.0",
    "valkey-9.1",
    "valkey-8.1",
];

fn text(r: &Reply) -> String {
    match r {
        Reply::Bulk(b) => String::from_utf8_lossy(b).into_owned(),
        Reply::Status(s) => s.clone(),
        Reply::Int(n) => n.to_string(),
        other => panic!("expected a string in COMMAND DOCS: {other:?}"),
    }
}

fn items(r: &Reply) -> &[Reply] {
    match r {
        Reply::Array(a) | Reply::Set(a) => a,
        other => panic!("expected an array in COMMAND DOCS: {other:?}"),
    }
}

/// A RESP2 map (a flat array of names and values) by name.
fn map(r: &Reply) -> BTreeMap<String, &Reply> {
    items(r)
        .chunks(2)
        .map(|pair| (text(&pair[0]), &pair[1]))
        .collect()
}

/// One argument as Redis's docs write it: `[EX seconds | PX milliseconds]`, `key [key ...]`.
fn render(argument: &Reply) -> String {
    let a = map(argument);
    let kind = a.get("type").map(|t| text(t)).unwrap_or_default();
    let flags: Vec<String> = a
        .get("flags")
        .map(|f| items(f).iter().map(text).collect())
        .unwrap_or_default();
    let children = || -> Vec<String> {
        a.get("arguments")
            .map(|list| items(list).iter().map(render).collect())
            .unwrap_or_default()
    };
    let token = a.get("token").map(|t| text(t));
    let mut base = match kind.as_str() {
        // MIGRATE's `""` (no key: the KEYS option names them).
        "pure-token" => match token.clone().unwrap_or_default() {
            t if t.is_empty() => "\"\"".to_string(),
            t => t,
        },
        "oneof" => children().join(" | "),
        "block" => children().join(" "),
        // The name the docs show (`pattern` for SORT's `by-pattern`), when the server gives one.
        _ => a
            .get("display_text")
            .or_else(|| a.get("name"))
            .map(|n| text(n))
            .unwrap_or_default(),
    };
    if kind != "pure-token" {
        if let Some(token) = &token {
            base = format!("{token} {base}");
        }
    }
    let optional = flags.iter().any(|f| f == "optional");
    if flags.iter().any(|f| f == "multiple") {
        let one = if kind == "oneof" && !optional {
            format!("<{base}>")
        } else {
            base.clone()
        };
        let repeated = if flags.iter().any(|f| f == "multiple_token") {
            one.clone()
        } else {
            match (&token, kind.as_str()) {
                (Some(t), k) if k != "pure-token" => {
                    one.trim_start_matches(t.as_str()).trim().to_string()
                }
                _ => one.clone(),
            }
        };
        base = format!("{one} [{repeated} ...]");
        if optional {
            base = format!("[{base}]");
        }
    } else if optional {
        base = format!("[{base}]");
    } else if kind == "oneof" {
        base = format!("<{base}>");
    }
    base
}

/// One command's (and its subcommands') docs as lines of docs.txt, by name.
fn lines_of(name: &str, docs: &Reply, out: &mut BTreeMap<String, String>) {
    let d = map(docs);
    let field = |k: &str| d.get(k).map(|v| text(v)).unwrap_or_default();
    let mut syntax = name.replace('|', " ").to_uppercase();
    if let Some(arguments) = d.get("arguments") {
        for argument in items(arguments) {
            syntax.push(' ');
            syntax.push_str(&render(argument));
        }
    }
    let doc = CommandDoc {
        name: name.to_string(),
        since: field("since"),
        group: field("group"),
        summary: field("summary").replace(['\t', '\n'], " "),
        syntax,
    };
    out.entry(name.to_string()).or_insert_with(|| doc.line());
    if let Some(subs) = d.get("subcommands") {
        for pair in items(subs).chunks(2) {
            lines_of(&text(&pair[0]).to_ascii_lowercase(), &pair[1], out);
        }
    }
}

#[test]
fn command_docs_are_the_servers() {
    let write = std::env::var("EVALBENCH_WRITE_DOCS").is_ok_and(|v| v == "1");
    let mut lines = BTreeMap::new();
    let mut servers = 0;
    for profile in ORDER {
        let Some(server) = RedisServer::start_profile(profile) else {
            continue;
        };
        let mut conn = server.connect();
        for pair in items(&conn.cmd(&["COMMAND", "DOCS"])).chunks(2) {
            lines_of(&text(&pair[0]).to_ascii_lowercase(), &pair[1], &mut lines);
        }
        servers += 1;
    }
    if servers < ORDER.len() {
        // Docs from fewer servers would lack their commands: nothing to compare.
        eprintln!(
            "NOTICE: command docs not checked: {servers} of {} servers installed",
            ORDER.len()
        );
        return;
    }
    let mut file = String::from(docs::HEADER);
    for line in lines.values() {
        file.push_str(line);
        file.push('\n');
    }
    let path = format!(
        "{}/src/engine/commands/docs.txt",
        env!("CARGO_MANIFEST_DIR")
    );
    if write {
        std::fs::write(&path, &file).unwrap();
    } else {
        assert!(
            docs::DOCS_TEXT == file,
            "{path} is out of date: rerun with EVALBENCH_WRITE_DOCS=1"
        );
    }
}

#[test]
fn docs_read_back_as_written() {
    let set = docs::doc("set").expect("SET has docs");
    assert_eq!(set.since, "1.0.0");
    assert_eq!(set.group, "string");
    assert!(
        set.syntax.starts_with("SET key value [NX | XX]"),
        "{}",
        set.syntax
    );
    let encoding = docs::doc("object|encoding").expect("OBJECT ENCODING has docs");
    assert_eq!(encoding.syntax, "OBJECT ENCODING key");
    assert!(docs::doc("nosuchcommand").is_none());
}
