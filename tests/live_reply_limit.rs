//! Replies announced past the memory budget: refused before they are allocated, with an error
//! naming the announced size, and the connection dropped (its stream is out of sync).

use evalbench::engine::live::{LiveBackend, TargetSpec};
use redis::ConnectionLike;
use std::io::{BufRead, BufReader, Write};
use std::sync::mpsc;

/// A peer on loopback that answers the commands `announces` selects (by name) with `announce`,
/// and never sends what it announced; other commands get OK. Reports on the channel when a client closed its connection. Returns its port.
fn announcing_server(
    announce: &'static [u8],
    announces: fn(&str) -> bool,
) -> (u16, mpsc::Receiver<()>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (closed, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(4) {
            let Ok(mut stream) = stream else { continue };
            let closed = closed.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                // (in a command, line 1 is `*N`, line 2 `$len`, line 3 its name)
                let mut at = 0;
                while reader.read_line(&mut line).is_ok_and(|n| n > 0) {
                    at = if line.starts_with('*') { 1 } else { at + 1 };
                    if at == 3 {
                        let reply = if announces(line.trim()) {
                            announce
                        } else {
                            b"+OK\r\n"
                        };
                        if stream.write_all(reply).is_err() {
                            break;
                        }
                    }
                    line.clear();
                }
                let _ = closed.send(());
            });
        }
    });
    (port, rx)
}

fn connect_error(port: u16) -> String {
    let spec = TargetSpec {
        host: Some("127.0.0.1".into()),
        port: Some(port),
        connect_timeout_ms: Some(30_000),
        ..TargetSpec::default()
    };
    match LiveBackend::connect(spec.resolve().unwrap()) {
        Ok(_) => panic!("connected to a peer whose replies are past the budget"),
        Err(e) => e.to_string(),
    }
}

/// The peak resident size of this process, in bytes.
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    let kib: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kib * 1024
}

#[test]
fn announced_bulk_string_and_array_past_the_budget_are_refused_unread() {
    evalbench::engine::budget::set_limit(64 << 20);
    let (port, _closed) = announcing_server(b"$2147483648\r\n", |_| true);
    assert_eq!(
        connect_error(port),
        format!("127.0.0.1:{port}: the server announced a 2,147,483,648-byte reply, past the memory budget (64 MiB): not read")
    );
    let (port, _closed) = announcing_server(b"*50000000\r\n", |_| true);
    assert_eq!(
        connect_error(port),
        format!("127.0.0.1:{port}: the server announced a 50,000,000-element reply, past the memory budget (64 MiB): not read")
    );
    // Nothing of the announced 2 GiB or 50 million values was allocated.
    assert!(peak_rss() < 256 << 20, "peak RSS {} bytes", peak_rss());
}

#[test]
fn a_refused_reply_drops_the_connection() {
    let (port, closed) = announcing_server(b"$2147483648\r\n", |name| name == "PING");
    let client = redis::Client::open(format!("redis://127.0.0.1:{port}/")).unwrap();
    let mut con = client
        .get_connection_with_timeout(std::time::Duration::from_secs(30))
        .unwrap();
    con.set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .unwrap();
    con.set_reply_limit(Some(1 << 20));
    let err = redis::cmd("PING").query::<String>(&mut con).unwrap_err();
    assert_eq!(
        err.reply_too_large(),
        Some(&redis::ReplyTooLarge {
            announced: 2_147_483_648,
            elements: false,
            limit: 1 << 20
        })
    );
    assert!(!con.is_open());
    // The peer sees the connection closed while the client still holds it.
    closed.recv().unwrap();
    drop(con);
}

/// The limit holds from the handshake's first reply: a peer answering HELLO (RESP3) or AUTH (a
/// password) with a huge bulk header is refused unread.
#[test]
fn a_huge_reply_to_the_handshake_is_refused_unread() {
    evalbench::engine::budget::set_limit(64 << 20);
    for (resp3, password) in [
        (true, None),
        (false, Some("secret")),
        (true, Some("secret")),
    ] {
        let (port, _closed) =
            announcing_server(b"$2147483648\r\n", |name| matches!(name, "HELLO" | "AUTH"));
        let spec = TargetSpec {
            host: Some("127.0.0.1".into()),
            port: Some(port),
            resp3,
            password: password.map(str::to_string),
            connect_timeout_ms: Some(30_000),
            ..TargetSpec::default()
        };
        let error = match LiveBackend::connect(spec.resolve().unwrap()) {
            Ok(_) => panic!("connected to a peer whose handshake reply is past the budget"),
            Err(e) => e.to_string(),
        };
        assert_eq!(
            error,
            format!("127.0.0.1:{port}: the server announced a 2,147,483,648-byte reply, past the memory budget (64 MiB): not read"),
            "resp3 {resp3}, password {password:?}"
        );
    }
    assert!(peak_rss() < 256 << 20, "peak RSS {} bytes", peak_rss());
}

mod common;

/// A script whose reply is past the budget, on a real server and on a (one-node) cluster: the
/// reply is refused unread with its announced size, the connection is made again for the next
/// run, and the server answers PING and keeps its keyspace.
#[test]
fn a_huge_reply_mid_run_is_refused_on_a_server_and_on_a_cluster() {
    use evalbench::engine::live::WriteMode;
    use evalbench::engine::reply::Reply;
    use evalbench::engine::RunRequest;
    evalbench::engine::budget::set_limit(64 << 20);
    let huge = RunRequest {
        script: b"redis.call('GET', KEYS[1]) return string.rep('x', 65 * 1024 * 1024)".to_vec(),
        keys: vec![b"k".to_vec()],
        ..RunRequest::default()
    };
    let small = RunRequest {
        script: b"return redis.call('GET', KEYS[1])".to_vec(),
        ..huge.clone()
    };
    // The cluster node's config file in a directory of this test's own.
    let dir_tmp = tempfile::tempdir().unwrap();
    let dir = dir_tmp.path().to_path_buf();
    let dir_arg = dir.display().to_string();
    for cluster in [false, true] {
        let extra: &[&str] = if cluster {
            &[
                "--cluster-enabled",
                "yes",
                "--cluster-config-file",
                "nodes-PORT.conf",
                "--dir",
                &dir_arg,
            ]
        } else {
            &[]
        };
        let Some(server) = common::RedisServer::start_with(extra) else {
            return;
        };
        let mut conn = server.connect();
        if cluster {
            assert_eq!(
                conn.cmd(&["CLUSTER", "ADDSLOTSRANGE", "0", "16383"]),
                Reply::ok()
            );
            while !matches!(conn.cmd(&["CLUSTER", "INFO"]), Reply::Bulk(b) if String::from_utf8_lossy(&b).contains("cluster_state:ok"))
            {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        }
        conn.cmd(&["SET", "k", "v"]);
        let spec = TargetSpec {
            url: Some(format!("redis://127.0.0.1:{}", server.port)),
            ..TargetSpec::default()
        };
        let mut live = LiveBackend::connect(spec.resolve().unwrap()).expect("connect");
        assert_eq!(live.server.cluster, cluster);
        let error = live
            .run(&huge, WriteMode::ReadOnly)
            .map(|r| r.reply)
            .unwrap_err()
            .to_string();
        let port = server.port;
        let refused = "the server announced a 68,157,440-byte reply, past the memory budget (64 MiB): not read";
        if cluster {
            // The node replied: the script ran there, and the report names the node.
            assert_eq!(error, format!("127.0.0.1:{port} (master, slot 7629): {refused}; the script ran on 127.0.0.1:{port} (the refused reply is its own)"));
        } else {
            assert_eq!(error, format!("127.0.0.1:{port}: {refused}; the script ran on 127.0.0.1:{port} (the refused reply is its own)"));
        }
        let report = live.run(&small, WriteMode::ReadOnly).expect("the next run");
        assert_eq!(
            report.reply,
            Reply::Bulk(b"v".to_vec()),
            "cluster {cluster}"
        );
        assert_eq!(conn.cmd(&["PING"]), Reply::Status("PONG".into()));
        assert_eq!(conn.cmd(&["DBSIZE"]), Reply::Int(1));
    }
    assert!(peak_rss() < 512 << 20, "peak RSS {} bytes", peak_rss());
}
