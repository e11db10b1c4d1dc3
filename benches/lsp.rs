//! `evalbench lsp` on a 5,000-line script (`cargo bench --bench lsp`):
//! - the lint alone (the engine's analysis with the sidecar's keys), median of 15;
//! - a keystroke: `didChange` of the whole text sent to the built binary over stdio until its
//!   `publishDiagnostics` for that version is read, median of 15 (target < 50 ms).

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Blocks of a rate limiter, each in its own scope (a function has at most 200 locals).
fn script(lines: usize) -> String {
    let mut out = String::new();
    let mut i = 0;
    while out.lines().count() + 6 < lines {
        i += 1;
        out.push_str(&format!(
            "do\n  local n{i} = tonumber(redis.call('GET', KEYS[1]) or '0')\n  if n{i} > {i} then redis.call('INCRBY', KEYS[2], ARGV[1]) end\n  redis.call('EXPIRE', KEYS[1], 60)\nend\n"
        ));
    }
    while out.lines().count() + 1 < lines {
        out.push_str("-- end\n");
    }
    out.push_str("return 1\n");
    out
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn frame(body: &Value) -> Vec<u8> {
    let body = body.to_string();
    format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
}

fn read_frame(out: &mut impl BufRead) -> Value {
    let mut length = 0;
    loop {
        let mut line = String::new();
        assert!(out.read_line(&mut line).unwrap() > 0, "the server ended");
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(n) = line.strip_prefix("Content-Length: ") {
            length = n.parse().unwrap();
        }
    }
    let mut body = vec![0; length];
    out.read_exact(&mut body).unwrap();
    serde_json::from_slice(&body).unwrap()
}

fn main() {
    let text = script(5000);
    assert_eq!(text.lines().count(), 5000);
    let keys = vec!["rate:{u1}".to_string(), "hits:{u1}".to_string()];
    let profile = evalbench::engine::profile::DEFAULT;
    let lint: Vec<Duration> = (0..15)
        .map(|_| {
            let t = Instant::now();
            let findings = evalbench::engine::analysis::lint_with(&text, profile, Some(&keys));
            let elapsed = t.elapsed();
            assert!(findings.is_empty(), "{findings:?}");
            elapsed
        })
        .collect();

    let config = tempfile::TempDir::new().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_evalbench"))
        .args(["lsp", "--profile", "redis-7.0"])
        .env("EVALBENCH_CONFIG_DIR", config.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let uri = "file:///bench/limiter.lua";
    stdin
        .write_all(&frame(&json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": { "capabilities": {} } })))
        .unwrap();
    read_frame(&mut stdout);
    let mut keystroke = Vec::new();
    for version in 1..=16 {
        // Each version a character longer, as one types a comment at the end.
        let changed = format!("{text}--{}", "x".repeat(version));
        let message = if version == 1 {
            json!({ "jsonrpc": "2.0", "method": "textDocument/didOpen", "params": { "textDocument": { "uri": uri, "languageId": "lua", "version": version, "text": changed } } })
        } else {
            json!({ "jsonrpc": "2.0", "method": "textDocument/didChange", "params": { "textDocument": { "uri": uri, "version": version }, "contentChanges": [{ "text": changed }] } })
        };
        let t = Instant::now();
        stdin.write_all(&frame(&message)).unwrap();
        loop {
            let m = read_frame(&mut stdout);
            if m["method"] == "textDocument/publishDiagnostics" && m["params"]["version"] == version
            {
                break;
            }
        }
        if version > 1 {
            keystroke.push(t.elapsed());
        }
    }
    drop(stdin);
    let _ = child.wait();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "lsp, 5,000-line script: lint {:.1} ms; keystroke to diagnostics over stdio {:.1} ms (median of 15; target < 50 ms)",
        ms(median(lint)),
        ms(median(keystroke))
    );
}
