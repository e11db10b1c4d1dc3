//! Stopping live runs from the command line against real servers: Ctrl-C (SIGINT to the evalbench
//! process) before the script is sent, while it runs and after it ended; kill reports that say what
//! the server did (stopped and answering PING, UNKILLABLE, frozen); read timeouts.

mod common;

use common::{server_with, Conn};
use evalbench::engine::reply::Reply;
use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn tempdir(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("evalbench-interrupt-{name}-"))
        .tempdir()
        .unwrap()
}

fn script(dir: &std::path::Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

fn spawn(dir: &std::path::Path, args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_evalbench"))
        .args(args)
        .current_dir(dir)
        .env_remove("REDIS_URL")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start evalbench")
}

fn sigint(child: &Child) {
    // SAFETY: kill(2) on the pid of a child this test started and has not reaped.
    let sent = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    assert_eq!(sent, 0, "SIGINT sent");
}

/// Wait (bounded) until `ready` holds; a failure names what was awaited.
fn wait_for(what: &str, mut ready: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !ready() {
        assert!(Instant::now() < deadline, "gave up waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Until the server answers BUSY: a script runs on it past the busy threshold.
fn wait_busy(conn: &mut Conn) {
    wait_for(
        "the server to answer BUSY",
        || matches!(conn.cmd(&["PING"]), Reply::Error(e) if e.starts_with("BUSY")),
    );
}

/// The exit status and stderr of a child whose stdout was read (or is not needed).
fn finish(mut child: Child) -> (i32, String, String) {
    let mut stdout = String::new();
    let mut stderr = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let status = child.wait().unwrap();
    (status.code().unwrap_or(-1), stdout, stderr)
}

/// The server's script calls (INFO commandstats, whose order varies), sorted.
fn eval_calls(conn: &mut Conn) -> String {
    let Reply::Bulk(info) = conn.cmd(&["INFO", "commandstats"]) else {
        panic!("INFO commandstats");
    };
    let mut calls: Vec<String> = String::from_utf8_lossy(&info)
        .lines()
        .filter(|l| l.starts_with("cmdstat_eval") || l.starts_with("cmdstat_fcall"))
        .map(|l| l.split(",usec=").next().unwrap_or(l).to_string())
        .collect();
    calls.sort();
    calls.join("\n")
}

const STOPPING: &str =
    "evalbench: interrupted (Ctrl-C): stopping the script on the server (Ctrl-C again exits at once)\n";

#[test]
fn ctrl_c_while_the_script_runs_sends_script_kill_and_the_server_answers() {
    let Some((server, mut conn)) = server_with(&[("busy-reply-threshold", "100")]) else {
        return;
    };
    let dir_tmp = tempdir("during");
    let dir = dir_tmp.path().to_path_buf();
    let spin = script(&dir, "spin.lua", "while true do end");
    let port = server.port.to_string();
    let child = spawn(&dir, &["run", "-p", &port, "--yes", &spin]);
    wait_busy(&mut conn);
    sigint(&child);
    let (code, stdout, stderr) = finish(child);
    assert_eq!(code, 130, "{stdout}{stderr}");
    assert_eq!(
        stderr,
        format!("{STOPPING}evalbench: interrupted (Ctrl-C): sent SCRIPT KILL: OK; the script was stopped (the server answers PING)\n")
    );
    assert_eq!(stdout, "");
    assert_eq!(conn.cmd(&["PING"]), Reply::Status("PONG".into()));
}

#[test]
fn ctrl_c_before_the_send_sends_nothing() {
    let Some((server, mut conn)) = server_with(&[]) else {
        return;
    };
    let dir_tmp = tempdir("before");
    let dir = dir_tmp.path().to_path_buf();
    // Its dry run in the sandbox spins up to the busy threshold (5 s): Ctrl-C lands in it.
    let spin = script(&dir, "spin.lua", "while true do end");
    let port = server.port.to_string();
    let child = spawn(&dir, &["run", "-p", &port, &spin, "k"]);
    // The copy of KEYS (TYPE k) comes after the Ctrl-C handler is set, before the dry run.
    wait_for("the copy of KEYS", || {
        matches!(conn.cmd(&["CLIENT", "LIST"]), Reply::Bulk(list)
            if String::from_utf8_lossy(&list).contains("cmd=type"))
    });
    sigint(&child);
    let (code, stdout, stderr) = finish(child);
    assert_eq!(code, 130, "{stdout}{stderr}");
    assert_eq!(
        stderr,
        "evalbench: interrupted (Ctrl-C) before the script was sent: nothing was sent to the server\n"
    );
    assert_eq!(eval_calls(&mut conn), "");
    assert_eq!(conn.cmd(&["PING"]), Reply::Status("PONG".into()));
}

#[test]
fn ctrl_c_after_the_script_ended_exits_and_says_nothing_runs() {
    let Some((server, mut conn)) = server_with(&[]) else {
        return;
    };
    let dir_tmp = tempdir("after");
    let dir = dir_tmp.path().to_path_buf();
    // A reply larger than a pipe holds: evalbench blocks writing the report, the run over.
    let big = script(&dir, "big.lua", "return string.rep('x', 1000000)");
    let port = server.port.to_string();
    let mut child = spawn(&dir, &["run", "-p", &port, &big]);
    let mut first = [0u8; 16];
    child
        .stdout
        .as_mut()
        .unwrap()
        .read_exact(&mut first)
        .unwrap();
    assert_eq!(&first, b"backend: live\nse");
    sigint(&child);
    // Its stdout is not read further: evalbench stays blocked on it until the Ctrl-C ends it.
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let code = child.wait().unwrap().code();
    assert_eq!(code, Some(130));
    assert_eq!(
        stderr,
        "evalbench: interrupted (Ctrl-C) after the script ended on the server: nothing runs there now\n"
    );
    assert_eq!(
        eval_calls(&mut conn),
        "cmdstat_eval_ro:calls=1\ncmdstat_evalsha_ro:calls=1"
    );
    assert_eq!(conn.cmd(&["PING"]), Reply::Status("PONG".into()));
}

#[test]
fn ctrl_c_on_a_script_that_wrote_says_unkillable_and_a_second_ctrl_c_exits() {
    let Some((server, mut conn)) = server_with(&[("busy-reply-threshold", "100")]) else {
        return;
    };
    let dir_tmp = tempdir("unkillable");
    let dir = dir_tmp.path().to_path_buf();
    let spin = script(
        &dir,
        "spinw.lua",
        "redis.call('SET', KEYS[1], 'x')\nwhile true do end",
    );
    let port = server.port.to_string();
    let mut child = spawn(&dir, &["run", "-p", &port, "--yes", &spin, "k"]);
    wait_busy(&mut conn);
    sigint(&child);
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut lines = String::new();
    while !lines.contains("waiting for the script") {
        assert!(stderr.read_line(&mut lines).unwrap() > 0, "{lines}");
    }
    assert_eq!(
        lines,
        format!("{STOPPING}evalbench: interrupted (Ctrl-C): sent SCRIPT KILL: UNKILLABLE: the script has written, so only SHUTDOWN NOSAVE stops it (which loses the writes since the last save; evalbench never sends it); otherwise the server stays busy until the script ends; waiting for the script to end (Ctrl-C again exits at once; the server may still be busy)\n")
    );
    sigint(&child);
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(130));
    assert_eq!(
        rest,
        "evalbench: interrupted again: exiting without waiting for the script; the server may still be busy running it\n"
    );
    // True: the server is still busy (it is killed with the test).
    assert!(matches!(conn.cmd(&["PING"]), Reply::Error(e) if e.starts_with("BUSY")));
}

/// On Redis 7.0 a loop in an xpcall error handler survives SCRIPT KILL, which answers OK: the server
/// then answers nothing. Never reported as stopped. (A dedicated server, killed with the test.)
#[test]
fn a_frozen_server_is_reported_as_not_answering_after_ctrl_c_and_after_a_read_timeout() {
    let frozen = "return xpcall(function() error('x') end, function() while true do end end)";
    for by_ctrl_c in [true, false] {
        let Some((server, mut conn)) = server_with(&[("busy-reply-threshold", "100")]) else {
            return;
        };
        let dir_tmp = tempdir(if by_ctrl_c { "frozen-c" } else { "frozen-t" });
        let dir = dir_tmp.path().to_path_buf();
        let path = script(&dir, "frozen.lua", frozen);
        let port = server.port.to_string();
        let (code, stderr) = if by_ctrl_c {
            let child = spawn(&dir, &["run", "-p", &port, "--yes", &path]);
            wait_busy(&mut conn);
            sigint(&child);
            let (code, _, stderr) = finish(child);
            (code, stderr)
        } else {
            let child = spawn(
                &dir,
                &["run", "-p", &port, "--yes", "--read-timeout", "1", &path],
            );
            let (code, _, stderr) = finish(child);
            (code, stderr)
        };
        let verdict = "sent SCRIPT KILL: OK, but the server does not answer PING within 5s: the script did not stop and the server is frozen (a loop the server cannot interrupt, such as one in an error handler); it may need a restart\n";
        // The server queues SCRIPT KILL's OK from inside the script's hook and writes it while it
        // still serves clients there; the kill turns the script into the error handler's loop, with
        // hooks off, and the OK may never be written. Both words are true; neither says stopped.
        let unanswered = format!("SCRIPT KILL could not be sent: 127.0.0.1:{port}: timed out waiting for the server (check the address, firewalls, or a script blocking the server) (a server that does not answer may need a restart)\n");
        if by_ctrl_c {
            assert_eq!(code, 130, "{stderr}");
            let interrupted = format!("{STOPPING}evalbench: interrupted (Ctrl-C): ");
            assert!(
                stderr == format!("{interrupted}{verdict}")
                    || stderr == format!("{interrupted}{unanswered}"),
                "{stderr}"
            );
        } else {
            assert_eq!(code, 3, "{stderr}");
            let gave_up =
                format!("evalbench: 127.0.0.1:{port}: gave up waiting for the script after 1s (--read-timeout); ");
            assert!(
                stderr == format!("{gave_up}{verdict}")
                    || stderr == format!("{gave_up}{unanswered}"),
                "{stderr}"
            );
        }
        // Nothing answers: a PING of our own times out.
        let mut probe = std::net::TcpStream::connect(("127.0.0.1", server.port)).unwrap();
        probe
            .set_read_timeout(Some(Duration::from_millis(500)))
            .unwrap();
        std::io::Write::write_all(&mut probe, b"PING\r\n").unwrap();
        let mut byte = [0u8; 1];
        let read = probe.read(&mut byte);
        assert!(
            matches!(&read, Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut)),
            "{read:?}"
        );
        drop(server);
    }
}

#[test]
fn ctrl_c_during_a_function_call_sends_function_kill() {
    let Some((server, mut conn)) = server_with(&[("busy-reply-threshold", "100")]) else {
        return;
    };
    conn.cmd(&[
        "FUNCTION",
        "LOAD",
        "#!lua name=spinner\nredis.register_function{function_name='spin', callback=function() while true do end end, flags={'no-writes'}}",
    ]);
    let dir_tmp = tempdir("function");
    let dir = dir_tmp.path().to_path_buf();
    let port = server.port.to_string();
    let child = spawn(&dir, &["function", "call", "-p", &port, "--yes", "spin"]);
    wait_busy(&mut conn);
    sigint(&child);
    let (code, stdout, stderr) = finish(child);
    assert_eq!(code, 130, "{stdout}{stderr}");
    assert_eq!(
        stderr,
        format!("{STOPPING}evalbench: interrupted (Ctrl-C): sent FUNCTION KILL: OK; the function was stopped (the server answers PING)\n")
    );
    assert_eq!(conn.cmd(&["PING"]), Reply::Status("PONG".into()));
}

#[test]
fn ctrl_c_during_a_test_case_on_the_server_kills_it_and_clears_the_scratch_db() {
    let Some((server, mut conn)) = server_with(&[("busy-reply-threshold", "100")]) else {
        return;
    };
    let dir_tmp = tempdir("test");
    let dir = dir_tmp.path().to_path_buf();
    // The sandbox run stops at its own threshold; the server's run spins until killed.
    script(&dir, "spin.lua", "while true do end");
    script(
        &dir,
        "spin.test.toml",
        "[[case]]\nname = \"spins\"\nkeys = [\"k\"]\nreply = { int = 1 }\n",
    );
    let url = format!("redis://127.0.0.1:{}", server.port);
    let child = spawn(&dir, &["test", "--server", &url, "--db", "15"]);
    wait_busy(&mut conn);
    sigint(&child);
    let (code, stdout, stderr) = finish(child);
    assert_eq!(code, 130, "{stdout}{stderr}");
    assert_eq!(
        stderr,
        format!("{STOPPING}evalbench: interrupted (Ctrl-C): sent SCRIPT KILL: OK; the script was stopped (the server answers PING)\n")
    );
    assert_eq!(conn.cmd(&["PING"]), Reply::Status("PONG".into()));
    conn.cmd(&["SELECT", "15"]);
    assert_eq!(conn.cmd(&["DBSIZE"]), Reply::Int(0));
}

/// A peer on loopback that answers as a Redis 7.0 would, except that what `drips` selects (by the
/// command's name) is sent one byte every 250 ms (at most 240 bytes: a minute), then the connection
/// is closed. Serves at most 8 connections. Returns its port.
fn drip_server(drips: fn(&str) -> bool) -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(8) {
            let Ok(stream) = stream else { continue };
            std::thread::spawn(move || serve(stream, drips));
        }
    });
    port
}

/// Read one RESP command (an array of bulk strings); None at the end of the connection.
fn read_command(reader: &mut BufReader<std::net::TcpStream>) -> Option<Vec<String>> {
    let mut line = String::new();
    reader.read_line(&mut line).ok().filter(|&n| n > 0)?;
    let count: usize = line.trim().strip_prefix('*')?.parse().ok()?;
    let mut args = Vec::new();
    for _ in 0..count {
        line.clear();
        reader.read_line(&mut line).ok()?;
        let len: usize = line.trim().strip_prefix('$')?.parse().ok()?;
        let mut arg = vec![0u8; len + 2];
        reader.read_exact(&mut arg).ok()?;
        arg.truncate(len);
        args.push(String::from_utf8_lossy(&arg).into_owned());
    }
    Some(args)
}

fn serve(stream: std::net::TcpStream, drips: fn(&str) -> bool) {
    use std::io::Write;
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    while let Some(args) = read_command(&mut reader) {
        let name = args
            .first()
            .map_or(String::new(), |n| n.to_ascii_uppercase());
        if drips(&name) {
            let reply = format!("$1000\r\n{}", "x".repeat(1000));
            for byte in reply.bytes().take(240) {
                if writer.write_all(&[byte]).is_err() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(250));
            }
            return;
        }
        let reply = match name.as_str() {
            "INFO" => {
                let text = "# Server\r\nredis_version:7.0.15\r\n";
                format!("${}\r\n{text}\r\n", text.len())
            }
            "ROLE" => "*1\r\n$6\r\nmaster\r\n".to_string(),
            "CONFIG" => "*0\r\n".to_string(),
            "SCRIPT" => "-NOTBUSY No scripts in execution right now.\r\n".to_string(),
            "PING" => "+PONG\r\n".to_string(),
            _ => "-ERR unknown command\r\n".to_string(),
        };
        if writer.write_all(reply.as_bytes()).is_err() {
            return;
        }
    }
}

/// A peer sending a byte at a time cannot stretch the timeouts: the connect timeout bounds the
/// whole discovery, the read timeout a script's whole reply (each byte used to restart the wait).
#[test]
fn a_slow_drip_peer_is_bounded_by_the_timeouts() {
    let dir_tmp = tempdir("drip");
    let dir = dir_tmp.path().to_path_buf();
    let one = script(&dir, "one.lua", "return 1");
    // One run against the peer on `port`, with one-second timeouts.
    let run = |port: &str| {
        finish(spawn(
            &dir,
            &[
                "run",
                "-p",
                port,
                "--connect-timeout",
                "1",
                "--read-timeout",
                "1",
                "--yes",
                &one,
            ],
        ))
    };

    // Everything drips: the discovery gives up at the connect timeout.
    let port = drip_server(|_| true).to_string();
    let (code, stdout, stderr) = run(&port);
    assert_eq!(code, 3, "{stdout}{stderr}");
    assert_eq!(
        stderr,
        format!("evalbench: 127.0.0.1:{port}: timed out waiting for the server (check the address, firewalls, or a script blocking the server)\n")
    );

    // Only the script's reply drips: the read timeout ends the wait, SCRIPT KILL is sent.
    let port = drip_server(|name| name.starts_with("EVAL")).to_string();
    let (code, stdout, stderr) = run(&port);
    assert_eq!(code, 3, "{stdout}{stderr}");
    assert_eq!(
        stderr,
        format!("evalbench: 127.0.0.1:{port}: gave up waiting for the script after 1s (--read-timeout); sent SCRIPT KILL: NOTBUSY (the script had ended by then; its reply was not read)\n")
    );
}

/// `debug --server` with its stdin kept open (no line typed): its stdout read line by line.
fn spawn_debug(dir: &std::path::Path, args: &[&str]) -> (Child, std::sync::mpsc::Receiver<String>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_evalbench"))
        .args(args)
        .current_dir(dir)
        .env_remove("REDIS_URL")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start evalbench");
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    (child, rx)
}

/// The exit status, the rest of stdout and stderr of a `spawn_debug` child.
fn finish_debug(
    mut child: Child,
    lines: std::sync::mpsc::Receiver<String>,
) -> (i32, String, String) {
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let status = child.wait().unwrap();
    let stdout: Vec<String> = lines.iter().collect();
    (status.code().unwrap_or(-1), stdout.join("\n"), stderr)
}

/// Read `lines` until one starts with `start`: the lines read.
fn read_until(lines: &std::sync::mpsc::Receiver<String>, start: &str) -> Vec<String> {
    let mut seen = Vec::new();
    loop {
        let line = lines
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("no line starting with {start:?} in {seen:?}"));
        let done = line.starts_with(start);
        seen.push(line);
        if done {
            return seen;
        }
    }
}

/// Ctrl-C in a `debug --server --sync` session ends the session on the server with LDB's abort:
/// the script does not go on there without its debugger (left alone, LDB runs it to its end), so
/// its later write never happens, and the server's answers are reported. At the prompt, and while
/// the server runs the script (acted on at LDB's stop at the busy threshold).
#[test]
fn ctrl_c_in_a_live_debugging_session_aborts_the_script_on_the_server() {
    let Some((server, mut conn)) = server_with(&[("busy-reply-threshold", "1500")]) else {
        return;
    };
    let dir_tmp = tempdir("debug");
    let dir = dir_tmp.path().to_path_buf();
    let port = server.port.to_string();
    let aborted = |stderr: &str, line: u32, sha: &str| {
        assert_eq!(
            stderr,
            format!("evalbench: interrupted (Ctrl-C): aborting the script at its next stop in the LDB session (Ctrl-C again exits at once)\nevalbench: interrupted (Ctrl-C): sent abort to the LDB session, which ended with (error) ERR script aborted for user request script: {sha}, on @user_script:{line}. (changes made before the stop are kept); PING answered PONG: 127.0.0.1:{port} is free\n")
        );
    };

    // At the prompt: stopped at line 1, before the write.
    let text = "local a = 1\nredis.call('SET', 'pwned', 'yes')\nreturn a\n";
    let pwn = script(&dir, "pwn.lua", text);
    let (child, lines) = spawn_debug(&dir, &["debug", "-p", &port, "--sync", "--yes", &pwn]);
    read_until(&lines, "* Stopped at 1");
    sigint(&child);
    let (code, stdout, stderr) = finish_debug(child, lines);
    assert_eq!(code, 130, "{stdout}{stderr}");
    aborted(
        &stderr,
        1,
        &evalbench::engine::script::sha1_hex(text.as_bytes()),
    );
    assert_eq!(conn.cmd(&["PING"]), Reply::Status("PONG".into()));
    assert_eq!(conn.cmd(&["EXISTS", "pwned"]), Reply::Int(0));
    assert_eq!(conn.cmd(&["DBSIZE"]), Reply::Int(0));

    // While the server runs the script (after `c`): LDB stops it at the busy threshold, and the
    // abort ends it there; the write after the loop never happens.
    let text = "local a = 1\nwhile a > 0 do a = a + 1 end\nredis.call('SET', 'pwned', 'yes')\n";
    let spin = script(&dir, "spin.lua", text);
    let (child, lines) = spawn_debug(
        &dir,
        &[
            "debug",
            "-p",
            &port,
            "--sync",
            "--yes",
            "--commands",
            "c",
            &spin,
        ],
    );
    read_until(&lines, "lua debugger> c");
    sigint(&child);
    let seen = read_until(&lines, "* Stopped at 2, stop reason = timeout reached");
    assert_eq!(seen.len(), 1, "{seen:?}");
    let (code, stdout, stderr) = finish_debug(child, lines);
    assert_eq!(code, 130, "{stdout}{stderr}");
    aborted(
        &stderr,
        2,
        &evalbench::engine::script::sha1_hex(text.as_bytes()),
    );
    assert_eq!(conn.cmd(&["PING"]), Reply::Status("PONG".into()));
    assert_eq!(conn.cmd(&["EXISTS", "pwned"]), Reply::Int(0));
}
