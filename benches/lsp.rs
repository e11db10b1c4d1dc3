//! `evalbench lsp` on a 5,000-line script (`cargo bench --bench lsp`):
//! - the lint alone (the engine's analysis with the sidecar's keys), median of 15;
//! - a keystroke: `didChange` of the whole text sent to the built binary over stdio until its
//!   `publishDiagnostics` for that version is read, median of 15 (target < 50 ms).
//!
//! Wall time on a loaded machine is mostly time spent waiting for a core, so the CPU time is
//! printed beside it: the lint's own (its thread's clock) and the server process's per keystroke
//! (/proc/PID/stat over the 15 keystrokes).

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

/// The CPU time of the calling thread.
fn thread_cpu() -> Duration {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// User + system CPU time of a process (clock ticks of 10 ms).
fn process_cpu(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or(Vec::new(), |(_, rest)| rest.split_whitespace().collect());
    let ticks: u64 = [11, 12]
        .iter()
        .filter_map(|&i| fields.get(i).and_then(|f| f.parse::<u64>().ok()))
        .sum();
    Duration::from_millis(ticks * 10)
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
    let mut lint_cpu = Vec::new();
    let lint: Vec<Duration> = (0..15)
        .map(|_| {
            let (t, cpu) = (Instant::now(), thread_cpu());
            let findings = evalbench::engine::analysis::lint_with(&text, profile, Some(&keys));
            let elapsed = t.elapsed();
            lint_cpu.push(thread_cpu() - cpu);
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
    let mut server_cpu = Duration::ZERO;
    for version in 1..=16 {
        // Each version a character longer, as one types a comment at the end.
        let changed = format!("{text}--{}", "x".repeat(version));
        let message = if version == 1 {
            json!({ "jsonrpc": "2.0", "method": "textDocument/didOpen", "params": { "textDocument": { "uri": uri, "languageId": "lua", "version": version, "text": changed } } })
        } else {
            json!({ "jsonrpc": "2.0", "method": "textDocument/didChange", "params": { "textDocument": { "uri": uri, "version": version }, "contentChanges": [{ "text": changed }] } })
        };
        if version == 2 {
            server_cpu = process_cpu(child.id());
        }
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
    let server_cpu = (process_cpu(child.id()) - server_cpu) / 15;
    drop(stdin);
    let _ = child.wait();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "lsp, 5,000-line script: lint {:.1} ms wall, {:.1} ms CPU; keystroke to diagnostics over stdio {:.1} ms wall, {:.1} ms of the server's CPU (medians of 15, CPU per keystroke the mean; target < 50 ms)",
        ms(median(lint)),
        ms(median(lint_cpu)),
        ms(median(keystroke)),
        ms(server_cpu)
    );
}
