//! `evalbench test`: test files beside scripts, their cases run in the sandbox, every difference
//! and every mistake in a file reported with its place; exit statuses, --json, --junit, --update.

mod common;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn evalbench_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_evalbench"))
        .args(args)
        .current_dir(dir)
        .env_remove("REDIS_URL")
        .output()
        .expect("run evalbench")
}

fn stdout_of(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A fresh folder per test (tests run in parallel).
fn scratch(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("evalbench-testcmd-{name}-"))
        .tempdir()
        .unwrap()
}

const COUNTER: &str = "local n = redis.call('INCRBY', KEYS[1], ARGV[1])\nif n > 3 then\n  return redis.error_reply('ERR over the cap')\nend\nreturn n\n";

fn project() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Lines without the run count and time at their end, which vary.
fn without_times(text: &str) -> String {
    text.lines()
        .map(|l| match l.rfind("  ") {
            Some(i) if l.ends_with(" ms") => l[..i].trim_end().to_string(),
            _ => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_sample_has_a_test_file_and_they_all_pass() {
    let samples = project().join("samples");
    for entry in std::fs::read_dir(&samples).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "lua") {
            let test = path.with_extension("test.toml");
            assert!(
                test.exists(),
                "{} has no test file {}",
                path.display(),
                test.display()
            );
        }
    }
    let out = evalbench_in(&project(), &["test", "samples"]);
    let text = stdout_of(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(!text.contains("FAIL"), "{text}");
    assert!(
        text.lines().last().unwrap().ends_with("passed, 0 failed"),
        "{text}"
    );
}

#[test]
fn a_failing_case_says_what_differs_at_which_line_and_exits_1() {
    let dir_tmp = scratch("failing");
    let dir = dir_tmp.path().to_path_buf();
    std::fs::write(dir.join("counter.lua"), COUNTER).unwrap();
    std::fs::write(
        dir.join("counter.test.toml"),
        r#"[[case]]
name = "counts from the seed"
keys = ["c"]
argv = ["2"]
seed = { c = "1" }
reply = { int = 4 }
keyspace = { c = "3", other = "x" }

[[case]]
name = "stops at the cap"
keys = ["c"]
argv = ["2"]

[[case.step]]
reply = { int = 2 }

[[case.step]]
advance_ms = 10
error = "ERR over the cap"
keyspace = { c = { type = "string", value = "4", ttl_ms = [1, 10] } }
"#,
    )
    .unwrap();
    let out = evalbench_in(&dir, &["test"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        without_times(&stdout_of(&out)),
        r#"counter.test.toml
  FAIL    counts from the seed
          counter.test.toml:1: expected reply {"int":4}, got reply {"int":3}
          counter.test.toml:1: key "other": expected "x", but it does not exist
  FAIL    stops at the cap
          counter.test.toml:17: step 2: key "c": expected ttl_ms in [1, 10], has no TTL
2 cases: 0 passed, 2 failed"#
    );
}

#[test]
fn mistakes_in_a_test_file_are_placed_at_their_line_and_column_and_exit_2() {
    let dir_tmp = scratch("mistakes");
    let dir = dir_tmp.path().to_path_buf();
    std::fs::write(dir.join("counter.lua"), COUNTER).unwrap();
    let cases = [
        (
            "[[case]]\nname = \"a\"\nrepy = { int = 1 }\n",
            "counter.test.toml:3:1: unknown field `repy`, expected one of",
        ),
        (
            "[[case]]\nname = \"a\"\nreply = { integer = 1 }\n",
            "counter.test.toml:3:9: \"integer\" is not a reply kind: write one of { int = 1 }",
        ),
        (
            "[[case]]\nname = \"a\"\nkeyspace = { k = { type = \"hash\", value = {} } }\n",
            "counter.test.toml:3:12: key \"k\": an empty hash cannot exist in Redis",
        ),
        (
            "[[case]]\nname = \"a\"\nreply = { int = 1\n",
            "counter.test.toml:3:18: invalid inline table: expected `}`",
        ),
        (
            "[[case]]\nname = \"a\"\nreply = { int = 1 }\n[[case.step]]\nreply = { int = 1 }\n",
            "counter.test.toml:1:1: this case has steps, so `reply` belongs in a [[case.step]]",
        ),
        (
            "[[case]]\nname = \"a\"\n[[case.step]]\nseed = { k = \"v\" }\n",
            "counter.test.toml:3:1: `seed` is set per case, not per step: move it to the [[case]]",
        ),
        (
            "[[case]]\nname = \"a\"\nreply = { int = 1 }\n[[case]]\nname = \"a\"\nreply = { int = 1 }\n",
            "counter.test.toml:5:8: a second case named \"a\": case names must differ",
        ),
        (
            "[[case]]\nname = \"a\"\nkeyspace = { k = { value = \"1\", ttl_ms = [5, 1] } }\n",
            "counter.test.toml:3:12: key \"k\": ttl_ms = [5, 1]: the low end is above the high end",
        ),
        (
            "script = \"missing.lua\"\n[[case]]\nname = \"a\"\nreply = { int = 1 }\n",
            "counter.test.toml: the script under test: cannot read missing.lua",
        ),
    ];
    for (text, expected) in cases {
        std::fs::write(dir.join("counter.test.toml"), text).unwrap();
        let out = evalbench_in(&dir, &["test", "counter.test.toml"]);
        let stdout = stdout_of(&out);
        assert_eq!(out.status.code(), Some(2), "{text}\n{stdout}");
        let error_line = stdout.lines().nth(1).unwrap_or_default();
        assert!(
            error_line.starts_with(&format!("  error   {expected}")),
            "for\n{text}\nexpected an error starting with {expected:?}, got:\n{stdout}"
        );
        assert!(
            stdout.ends_with("0 cases: 0 passed, 0 failed, 1 file could not run\n"),
            "{stdout}"
        );
    }
}

#[test]
fn a_folder_without_test_files_is_bad_input() {
    let dir_tmp = scratch("empty");
    let dir = dir_tmp.path().to_path_buf();
    let out = evalbench_in(&dir, &["test"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "evalbench: no *.test.toml under .: write NAME.test.toml beside NAME.lua (see evalbench test --help)\n"
    );
}

#[test]
fn steps_share_the_keyspace_and_the_clock_moves_between_them() {
    let dir_tmp = scratch("steps");
    let dir = dir_tmp.path().to_path_buf();
    std::fs::write(
        dir.join("ttl.lua"),
        "if ARGV[1] == 'set' then redis.call('SET', KEYS[1], 'v', 'PX', 1000) end\nreturn {redis.call('PTTL', KEYS[1]), redis.call('EXISTS', KEYS[1])}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("ttl.test.toml"),
        r#"[[case]]
name = "a key expires once the clock passes its TTL"
keys = ["k"]

[[case.step]]
argv = ["set"]
reply = { array = [{ int = 1000 }, { int = 1 }] }

[[case.step]]
advance_ms = 999
reply = { array = [{ int = 1 }, { int = 1 }] }
keyspace = { k = { type = "string", value = "v", ttl_ms = [1, 1] } }

[[case.step]]
advance_ms = 1
reply = { array = [{ int = -2 }, { int = 0 }] }
absent = ["k"]
"#,
    )
    .unwrap();
    let out = evalbench_in(&dir, &["test"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout_of(&out));
}

#[test]
fn patterns_partial_keyspaces_and_warnings() {
    let dir_tmp = scratch("patterns");
    let dir = dir_tmp.path().to_path_buf();
    std::fs::write(
        dir.join("w.lua"),
        "redis.call('SET', 'undeclared', 'x')\nredis.call('SET', KEYS[1], ARGV[1])\nreturn redis.call('GET', KEYS[1])\n",
    )
    .unwrap();
    let test = r#"[[case]]
name = "loose checks"
keys = ["k"]
argv = ["hello world"]
seed = { other = "kept" }
reply_match = '"hello*'  # redis-cli prints a bulk string quoted
keyspace = { k = "hello world" }
keyspace_match = "partial"
warnings = ["undeclared-key"]

[[case]]
name = "a warning that is not given"
keys = ["k"]
argv = ["v"]
reply = { bulk = "v" }
warnings = []
"#;
    std::fs::write(dir.join("w.test.toml"), test).unwrap();
    let out = evalbench_in(&dir, &["test"]);
    assert_eq!(
        without_times(&stdout_of(&out)),
        "w.test.toml\n  ok      loose checks\n  FAIL    a warning that is not given\n          w.test.toml:11: expected warnings [], got [undeclared-key]\n2 cases: 1 passed, 1 failed"
    );
    let out = evalbench_in(&dir, &["test", "--filter", "loose"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout_of(&out).ends_with("1 case: 1 passed, 0 failed\n"));
}

#[test]
fn update_writes_what_failing_cases_gave_and_keeps_comments() {
    let dir_tmp = scratch("update");
    let dir = dir_tmp.path().to_path_buf();
    std::fs::write(dir.join("counter.lua"), COUNTER).unwrap();
    let before = "# my comment\n[[case]]\nname = \"new\"  # a trailing comment\nkeys = [\"c\"]\nargv = [\"2\"]\n\n[[case]]\nname = \"over\"\nkeys = [\"c\"]\nargv = [\"9\"]\nreply = { int = 9 }\n\n[[case]]\nname = \"right\"\nkeys = [\"c\"]\nargv = [\"1\"]\nreply = { int = 1 }\n";
    std::fs::write(dir.join("counter.test.toml"), before).unwrap();
    let out = evalbench_in(&dir, &["test", "--update"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout_of(&out));
    assert!(stdout_of(&out).ends_with("3 cases: 3 passed, 0 failed, 2 updated (review the diff)\n"));
    let after = std::fs::read_to_string(dir.join("counter.test.toml")).unwrap();
    assert_eq!(
        after,
        "# my comment\n[[case]]\nname = \"new\"  # a trailing comment\nkeys = [\"c\"]\nargv = [\"2\"]\nreply = { int = 2 }\nkeyspace = { c = \"2\" }\n\n[[case]]\nname = \"over\"\nkeys = [\"c\"]\nargv = [\"9\"]\nerror = \"ERR over the cap\"\n\n[[case]]\nname = \"right\"\nkeys = [\"c\"]\nargv = [\"1\"]\nreply = { int = 1 }\n"
    );
    let out = evalbench_in(&dir, &["test"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout_of(&out));
}

#[test]
fn json_and_junit_reports() {
    let dir_tmp = scratch("reports");
    let dir = dir_tmp.path().to_path_buf();
    std::fs::write(dir.join("counter.lua"), COUNTER).unwrap();
    std::fs::write(
        dir.join("counter.test.toml"),
        "[[case]]\nname = \"ok <1>\"\nkeys = [\"c\"]\nargv = [\"1\"]\nreply = { int = 1 }\n\n[[case]]\nname = \"bad & wrong\"\nkeys = [\"c\"]\nargv = [\"1\"]\nreply = { int = 5 }\n",
    )
    .unwrap();
    std::fs::write(dir.join("broken.test.toml"), "[[case]\n").unwrap();
    let out = evalbench_in(&dir, &["test", "--json", "--junit", "junit.xml"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "a file that cannot run wins over a failure"
    );
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["passed"], 1);
    assert_eq!(json["failed"], 1);
    assert_eq!(json["file_errors"], 1);
    assert_eq!(json["files"][0]["path"], "broken.test.toml");
    assert!(json["files"][0]["error"]
        .as_str()
        .unwrap()
        .starts_with("broken.test.toml:1:"));
    let failure = &json["files"][1]["cases"][1]["failures"][0];
    assert_eq!(failure["what"], "reply");
    assert_eq!(failure["line"], 7);
    assert_eq!(
        failure["message"],
        "expected reply {\"int\":5}, got reply {\"int\":1}"
    );
    let xml = std::fs::read_to_string(dir.join("junit.xml")).unwrap();
    assert!(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"evalbench test\" tests=\"3\" failures=\"1\" errors=\"1\">\n"), "{xml}");
    assert!(
        xml.contains("<testcase classname=\"counter.test.toml\" name=\"ok &lt;1&gt;\""),
        "{xml}"
    );
    assert!(xml.contains("name=\"bad &amp; wrong\""), "{xml}");
    assert!(xml.contains("<failure message=\"expected reply {&quot;int&quot;:5}, got reply {&quot;int&quot;:1}\">line 7: expected reply"), "{xml}");
    assert!(xml.contains("<testcase classname=\"broken.test.toml\" name=\"(test file)\"><error message=\"broken.test.toml:1:"), "{xml}");
}

#[test]
fn control_characters_from_scripts_never_reach_the_terminal() {
    let dir_tmp = scratch("escapes");
    let dir = dir_tmp.path().to_path_buf();
    std::fs::write(
        dir.join("e.lua"),
        "return redis.error_reply('ERR \\27]0;pwned\\7 x')\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("e.test.toml"),
        "[[case]]\nname = \"title \\u001b[2J\"\nreply = { int = 1 }\n",
    )
    .unwrap();
    let out = evalbench_in(&dir, &["test"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        !out.stdout.contains(&0x1b) && !out.stdout.contains(&0x07),
        "{:?}",
        stdout_of(&out)
    );
}

#[test]
fn coverage_counts_lines_over_every_case_and_marks_lines_never_run() {
    let dir_tmp = scratch("coverage");
    let dir = dir_tmp.path().to_path_buf();
    std::fs::write(dir.join("counter.lua"), COUNTER).unwrap();
    std::fs::write(
        dir.join("counter.test.toml"),
        "[[case]]\nname = \"one\"\nkeys = [\"c\"]\nargv = [\"1\"]\nreply = { int = 1 }\n\n[[case]]\nname = \"twice\"\nkeys = [\"c\"]\nargv = [\"2\"]\nrepeat = 2\nreply = { int = 4 }\n",
    )
    .unwrap();
    let out = evalbench_in(&dir, &["test", "--coverage"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout_of(&out));
    assert_eq!(
        without_times(&stdout_of(&out)),
        r#"counter.test.toml
  ok      one
  FAIL    twice
          counter.test.toml:7: expected reply {"int":4}, got error "ERR over the cap"
  coverage of counter.lua: 4 of 4 lines run (100%), ! never run
      1        3  local n = redis.call('INCRBY', KEYS[1], ARGV[1])
      2        3  if n > 3 then
      3        1    return redis.error_reply('ERR over the cap')
      5        2  return n
2 cases: 1 passed, 1 failed"#
    );
    // Without the case that reaches the cap, its line is never run.
    let out = evalbench_in(&dir, &["test", "--coverage", "--filter", "one", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        json["files"][0]["coverage"],
        serde_json::json!({"lines": {"1": 1, "2": 1, "5": 1}, "not_run": [3], "lines_run": 3, "lines_with_code": 4})
    );
    let out = evalbench_in(&dir, &["test", "--coverage", "--filter", "one"]);
    assert!(
        stdout_of(&out).contains(
            "  coverage of counter.lua: 3 of 4 lines run (75%), ! never run\n      1        1  local n"
        ) && stdout_of(&out).contains("\n  !   3        0    return redis.error_reply"),
        "{}",
        stdout_of(&out)
    );
    // Without --coverage nothing is counted or shown.
    let out = evalbench_in(&dir, &["test", "--json"]);
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["files"][0]["coverage"], Value::Null);
}

#[test]
fn coverage_says_why_a_function_library_is_not_counted() {
    let out = evalbench_in(
        &project(),
        &["test", "--coverage", "samples/counter_library.test.toml"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stdout_of(&out));
    assert!(stdout_of(&out).contains("  coverage of samples/counter_library.lua: not counted: the cases FCALL a function library, which the line counter does not follow yet\n"), "{}", stdout_of(&out));
}

/// `--server`: the cases on a real redis-server, on an empty scratch db; writing cases only with
/// --yes; the server's differences reported; the scratch db left empty and the other dbs untouched.
#[test]
fn server_runs_cases_on_a_scratch_db_guarded_and_reports_its_differences() {
    let Some(server) = common::RedisServer::start() else {
        return;
    };
    let url = format!("redis://127.0.0.1:{}", server.port);
    let mut conn = server.connect();
    conn.cmd(&["SET", "keep", "mine"]);
    let dir_tmp = scratch("server");
    let dir = dir_tmp.path().to_path_buf();
    std::fs::write(dir.join("counter.lua"), COUNTER).unwrap();
    std::fs::write(
        dir.join("counter.test.toml"),
        "[[case]]\nname = \"counts from the seed\"\nkeys = [\"c\"]\nargv = [\"2\"]\nseed = { c = \"1\" }\nreply = { int = 3 }\nkeyspace = { c = \"3\" }\n\n[[case]]\nname = \"wrong on purpose\"\nkeys = [\"c\"]\nargv = [\"1\"]\nreply = { int = 5 }\n\n[[case]]\nname = \"later\"\nkeys = [\"c\"]\nargv = [\"1\"]\n[[case.step]]\nadvance_ms = 10\nreply = { int = 1 }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("reader.lua"),
        "return redis.call('GET', KEYS[1])\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("reader.test.toml"),
        "[[case]]\nname = \"nothing there\"\nkeys = [\"r\"]\nreply = { nil = true }\nkeyspace = {}\n",
    )
    .unwrap();

    // No scratch db: refused before anything is sent.
    let out = evalbench_in(&dir, &["test", "--server", &url]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "evalbench: a live server runs the cases on a scratch database: give --db N, an empty database no one else uses (every key in it is removed after each case)\n"
    );

    // Without --yes the writing cases are not sent; the reader runs (as EVAL_RO).
    let out = evalbench_in(&dir, &["test", "--server", &url, "--db", "9"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout_of(&out));
    assert_eq!(
        without_times(&stdout_of(&out)),
        format!(
            "server: redis 7.0.15 127.0.0.1:{}, scratch db 9\ncounter.test.toml\n  skip    counts from the seed\n          not run on the server: it writes (its seed, or its script in the sandbox): give --yes to run it on the scratch db\n  skip    wrong on purpose\n          not run on the server: it writes (its seed, or its script in the sandbox): give --yes to run it on the scratch db\n  skip    later\n          not run on the server: it moves the clock (advance_ms), which a live server's clock cannot do\nreader.test.toml\n  ok      nothing there\n1 case: 1 passed, 0 failed, 3 not run on the server",
            server.port
        )
    );

    // With --yes: the server's results, its differences.
    let out = evalbench_in(
        &dir,
        &[
            "test",
            "--server",
            &url,
            "--db",
            "9",
            "--yes",
            "counter.test.toml",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stdout_of(&out));
    assert_eq!(
        without_times(&stdout_of(&out)),
        format!(
            "server: redis 7.0.15 127.0.0.1:{}, scratch db 9, writes allowed (--yes)\ncounter.test.toml\n  ok      counts from the seed\n  FAIL    wrong on purpose\n          counter.test.toml:9: expected reply {{\"int\":5}}, got reply {{\"int\":1}}\n  skip    later\n          not run on the server: it moves the clock (advance_ms), which a live server's clock cannot do\n2 cases: 1 passed, 1 failed, 1 not run on the server",
            server.port
        )
    );
    // The scratch db is empty again; db 0 kept its key.
    conn.cmd(&["SELECT", "9"]);
    assert_eq!(format!("{:?}", conn.cmd(&["DBSIZE"])), "Int(0)");
    conn.cmd(&["SELECT", "0"]);
    assert_eq!(format!("{:?}", conn.cmd(&["DBSIZE"])), "Int(1)");

    // A scratch db that holds a key is refused, and the key is left alone.
    conn.cmd(&["SELECT", "9"]);
    conn.cmd(&["SET", "someone-elses", "x"]);
    let out = evalbench_in(
        &dir,
        &[
            "test",
            "--server",
            &url,
            "--db",
            "9",
            "--yes",
            "reader.test.toml",
        ],
    );
    assert_eq!(out.status.code(), Some(3), "{}", stdout_of(&out));
    assert!(stdout_of(&out).contains("  error   on the server, case \"nothing there\": the scratch db is not empty before case \"nothing there\" (1 keys): give --db a database no one else uses\n"), "{}", stdout_of(&out));
    assert_eq!(
        format!("{:?}", conn.cmd(&["GET", "someone-elses"])),
        "Bulk([120])"
    );
}

/// `--server` on a replica: writing cases are never sent, even with --yes; reads run.
#[test]
fn server_never_sends_writing_cases_to_a_replica() {
    let (Some(primary), Some(replica)) =
        (common::RedisServer::start(), common::RedisServer::start())
    else {
        return;
    };
    let mut rconn = replica.connect();
    rconn.cmd(&["REPLICAOF", "127.0.0.1", &primary.port.to_string()]);
    let dir_tmp = scratch("replica");
    let dir = dir_tmp.path().to_path_buf();
    std::fs::write(dir.join("counter.lua"), COUNTER).unwrap();
    std::fs::write(
        dir.join("counter.test.toml"),
        "[[case]]\nname = \"counts\"\nkeys = [\"c\"]\nargv = [\"2\"]\nreply = { int = 2 }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("reader.lua"),
        "return redis.call('GET', KEYS[1])\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("reader.test.toml"),
        "[[case]]\nname = \"nothing there\"\nkeys = [\"r\"]\nreply = { nil = true }\n",
    )
    .unwrap();
    let url = format!("redis://127.0.0.1:{}", replica.port);
    let out = evalbench_in(
        &dir,
        &[
            "test", "--server", &url, "--db", "3", "--yes", "--junit", "j.xml",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stdout_of(&out));
    assert_eq!(
        without_times(&stdout_of(&out)),
        format!(
            "server: redis 7.0.15 127.0.0.1:{}, scratch db 3, writes allowed (--yes)\ncounter.test.toml\n  skip    counts\n          not run on the server: it writes, and the server is a replica\nreader.test.toml\n  ok      nothing there\n1 case: 1 passed, 0 failed, 1 not run on the server",
            replica.port
        )
    );
    let xml = std::fs::read_to_string(dir.join("j.xml")).unwrap();
    assert!(
        xml.contains("<skipped message=\"not run on the server: it writes, and the server is a replica\"/></testcase>\n")
            && xml.contains("<testcase classname=\"counter.test.toml\" name=\"counts\" time="),
        "{xml}"
    );
}

/// `--server` on a function library: its cases FCALL the server's own library when it holds the
/// file's code (nothing is loaded by the test run); a writing function only with --yes.
#[test]
fn server_runs_a_library_s_cases_with_fcall_of_the_server_s_library() {
    let Some(server) = common::RedisServer::start() else {
        return;
    };
    let url = format!("redis://127.0.0.1:{}", server.port);
    let mut conn = server.connect();
    let dir_tmp = scratch("server-library");
    let dir = dir_tmp.path().to_path_buf();
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
    let code = std::fs::read_to_string(samples.join("counter_library.lua")).unwrap();
    std::fs::write(dir.join("counter_library.lua"), &code).unwrap();
    std::fs::copy(
        samples.join("counter_library.test.toml"),
        dir.join("counter_library.test.toml"),
    )
    .unwrap();
    let run = |yes: bool| {
        let mut args = vec!["test", "--server", &url, "--db", "9"];
        if yes {
            args.push("--yes");
        }
        let out = evalbench_in(&dir, &args);
        (out.status.code(), without_times(&stdout_of(&out)))
    };
    let header = |yes: bool| {
        format!(
            "server: redis 7.0.15 127.0.0.1:{}, scratch db 9{}\ncounter_library.test.toml\n",
            server.port,
            if yes { ", writes allowed (--yes)" } else { "" }
        )
    };
    let skipped = |why: &str| {
        format!(
            "  skip    the sidecar run: counter_incr adds to the counter\n          not run on the server: {why}\n  skip    counter_incr is refused by FCALL_RO (it writes)\n          not run on the server: {why}\n0 cases: 0 passed, 0 failed, 2 not run on the server"
        )
    };

    // Not loaded on the server: nothing is sent, and nothing is loaded.
    let (status, text) = run(true);
    assert_eq!(
        text,
        header(true) + &skipped("the server has no function counter_incr: load the library first with `evalbench function load` (a write to the whole server)")
    );
    // Nothing was tested: not a pass.
    assert_eq!(status, Some(2));
    assert_eq!(
        format!("{:?}", conn.cmd(&["FUNCTION", "LIST"])),
        "Array([])"
    );

    // Loaded with other code: not sent either.
    let other = code.replace("-- A function library", "-- An older function library");
    conn.cmd(&["FUNCTION", "LOAD", &other]);
    let (_, text) = run(true);
    assert_eq!(
        text,
        header(true) + &skipped("the server's library 'counters' holding counter_incr has other code than the file: load the file first with `evalbench function load --replace` (a write to the whole server)")
    );

    // The file's code: without --yes a function that may write is not sent; with it, FCALL and
    // FCALL_RO on the scratch db, the server's own replies.
    conn.cmd(&["FUNCTION", "LOAD", "REPLACE", &code]);
    let (_, text) = run(false);
    assert_eq!(
        text,
        header(false)
            + &skipped(
                "the function counter_incr is not flagged no-writes: give --yes to run it on the scratch db"
            )
    );
    let (status, text) = run(true);
    assert_eq!(
        text,
        header(true)
            + "  ok      the sidecar run: counter_incr adds to the counter\n  ok      counter_incr is refused by FCALL_RO (it writes)\n2 cases: 2 passed, 0 failed"
    );
    assert_eq!(status, Some(0));
    conn.cmd(&["SELECT", "9"]);
    assert_eq!(format!("{:?}", conn.cmd(&["DBSIZE"])), "Int(0)");
}

#[test]
fn update_writes_through_a_symlinked_test_file_keeping_its_mode_and_no_planted_link() {
    use std::os::unix::fs::PermissionsExt;
    let dir_tmp = scratch("update-link");
    let dir = dir_tmp.path().to_path_buf();
    std::fs::write(dir.join("counter.lua"), COUNTER).unwrap();
    std::fs::create_dir_all(dir.join("store")).unwrap();
    let real = dir.join("store").join("counter-cases.toml");
    std::fs::write(
        &real,
        "[[case]]\nname = \"new\"\nkeys = [\"c\"]\nargv = [\"2\"]\n",
    )
    .unwrap();
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o600)).unwrap();
    let link = dir.join("counter.test.toml");
    std::os::unix::fs::symlink("store/counter-cases.toml", &link).unwrap();
    // The old temporary's name, planted as a link to a file it must not touch.
    let victim = dir.join("victim.txt");
    std::fs::write(&victim, "keep me").unwrap();
    std::os::unix::fs::symlink(&victim, dir.join("counter.test.toml.evalbench-tmp")).unwrap();
    let out = evalbench_in(&dir, &["test", "--update", "counter.test.toml"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout_of(&out));
    assert!(
        stdout_of(&out).ends_with("1 case: 1 passed, 0 failed, 1 updated (review the diff)\n"),
        "{}",
        stdout_of(&out)
    );
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(
        std::fs::read_to_string(&real).unwrap(),
        "[[case]]\nname = \"new\"\nkeys = [\"c\"]\nargv = [\"2\"]\nreply = { int = 2 }\nkeyspace = { c = \"2\" }\n"
    );
    let mode = std::fs::metadata(&real).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "not widened");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
}

/// `--server --db N`: a case cannot reach another database. The traced copy refuses SELECT of
/// another db, MOVE, SWAPDB, COPY ... DB and FLUSHALL without sending them, and the case fails even
/// when the script caught the refusal; code that names a way past the copy is not sent.
#[test]
fn server_cases_stay_in_the_scratch_db() {
    let Some(server) = common::RedisServer::start() else {
        return;
    };
    let url = format!("redis://127.0.0.1:{}", server.port);
    let mut conn = server.connect();
    conn.cmd(&["SET", "keep", "mine"]);
    let dir_tmp = scratch("confined");
    let dir = dir_tmp.path().to_path_buf();
    let case = |name: &str, script: &str, reply: &str| {
        std::fs::write(dir.join(format!("{name}.lua")), script).unwrap();
        std::fs::write(
            dir.join(format!("{name}.test.toml")),
            format!("[[case]]\nname = \"{name}\"\nkeys = [\"k\"]\nreply = {reply}\n"),
        )
        .unwrap();
    };
    case(
        "a_select",
        "redis.call('SELECT', 0)\nredis.call('SET', 'pwned', 'yes')\nreturn 'ok'\n",
        "{ bulk = \"ok\" }",
    );
    case(
        "b_caught",
        "pcall(redis.call, 'select', '0')\nredis.call('SET', KEYS[1], 'v')\nreturn 'ok'\n",
        "{ bulk = \"ok\" }",
    );
    case(
        "c_others",
        "redis.call('SET', KEYS[1], 'v')\nredis.pcall('MOVE', KEYS[1], 0)\nredis.pcall('SWAPDB', 0, 15)\nredis.pcall('COPY', KEYS[1], 'k2', 'db', 0)\nredis.pcall('FLUSHALL')\nreturn redis.call('COPY', KEYS[1], 'k3')\n",
        "{ int = 1 }",
    );
    case(
        "d_global",
        "return _G.redis.call('SELECT', 0)\n",
        "{ status = \"OK\" }",
    );
    case(
        "e_own_db",
        "-- SELECT of the scratch db itself stays in it; a _G in a comment is no way out\nredis.call('SELECT', 15)\nreturn redis.call('SET', KEYS[1], '_G')\n",
        "{ status = \"OK\" }",
    );
    let out = evalbench_in(&dir, &["test", "--server", &url, "--db", "15", "--yes"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout_of(&out));
    let refused = |line: usize, call: &str, command: &str| {
        format!("          {command_file}:1: the script called {call} (line {line}), which reaches beyond the scratch db 15: evalbench did not send it; a case must stay in its scratch db", command_file = command)
    };
    assert_eq!(
        without_times(&stdout_of(&out)),
        [
            format!("server: redis 7.0.15 127.0.0.1:{}, scratch db 15, writes allowed (--yes)", server.port),
            "a_select.test.toml".into(),
            "  FAIL    a_select".into(),
            refused(1, "SELECT 0", "a_select.test.toml"),
            format!("          a_select.test.toml:1: expected reply {{\"bulk\":\"ok\"}}, got error \"ERR evalbench: SELECT reaches beyond the scratch db 15: not sent (test --server keeps each case in --db 15) script: {}, on @user_script:1.\"", evalbench::engine::script::sha1_hex(b"redis.call('SELECT', 0)\nredis.call('SET', 'pwned', 'yes')\nreturn 'ok'\n")),
            "b_caught.test.toml".into(),
            "  FAIL    b_caught".into(),
            refused(1, "select 0", "b_caught.test.toml"),
            "c_others.test.toml".into(),
            "  FAIL    c_others".into(),
            refused(2, "MOVE k 0", "c_others.test.toml"),
            refused(3, "SWAPDB 0 15", "c_others.test.toml"),
            refused(4, "COPY k k2 db 0", "c_others.test.toml"),
            refused(5, "FLUSHALL", "c_others.test.toml"),
            "d_global.test.toml".into(),
            "  skip    d_global".into(),
            "          not run on the server: its code names _G, a way past the calls evalbench keeps in the scratch db 15: it is not sent".into(),
            "e_own_db.test.toml".into(),
            "  ok      e_own_db".into(),
            "4 cases: 1 passed, 3 failed, 1 not run on the server".into(),
        ]
        .join("\n")
    );
    // Nothing reached db 0; the scratch db was emptied.
    assert_eq!(
        format!("{:?}", conn.cmd(&["KEYS", "*"])),
        "Array([Bulk([107, 101, 101, 112])])"
    );
    assert_eq!(
        format!("{:?}", conn.cmd(&["GET", "keep"])),
        "Bulk([109, 105, 110, 101])"
    );
    conn.cmd(&["SELECT", "15"]);
    assert_eq!(format!("{:?}", conn.cmd(&["DBSIZE"])), "Int(0)");
}

/// On Valkey, `server` is the real `redis` table under another name: the traced copy shadows it
/// with its proxy, so its calls are confined as `redis.call`'s are, and a local named `server` is
/// just a local. A function library runs as it is on the server: one whose command is built at run
/// time is not run.
#[test]
fn server_cases_on_valkey_cannot_leave_the_scratch_db_by_other_names() {
    let Some(server) = common::RedisServer::start_profile("valkey-8.1") else {
        return;
    };
    let url = format!("redis://127.0.0.1:{}", server.port);
    let mut conn = server.connect();
    let dir_tmp = scratch("confined-valkey");
    let dir = dir_tmp.path().to_path_buf();
    std::fs::write(
        dir.join("alias.lua"),
        "server.call('SELECT', 0)\nserver.call('SET', 'pwned', 'yes')\nreturn 1\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("alias.test.toml"),
        "[[case]]\nname = \"alias\"\nkeys = []\nreply = { int = 1 }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("local.lua"),
        "local server = 'mine'\nreturn server.call == nil and redis.call('SET', KEYS[1], server)\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("local.test.toml"),
        "[[case]]\nname = \"a local named server\"\nkeys = [\"k\"]\nreply = { status = \"OK\" }\n",
    )
    .unwrap();
    let library = "#!lua name=built\nredis.register_function('built', function(keys, args) redis.call('SEL' .. 'ECT', 0) return redis.call('SET', 'pwned', 'yes') end)\n";
    std::fs::write(dir.join("built.lua"), library).unwrap();
    std::fs::write(
        dir.join("built.test.toml"),
        "function = \"built\"\n\n[[case]]\nname = \"built\"\nkeys = []\nreply = { status = \"OK\" }\n",
    )
    .unwrap();
    conn.cmd(&["FUNCTION", "LOAD", library]);
    let out = evalbench_in(&dir, &["test", "--server", &url, "--db", "15", "--yes"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout_of(&out));
    assert_eq!(
        without_times(&stdout_of(&out)),
        [
            format!("server: valkey 8.1.1 127.0.0.1:{}, scratch db 15, writes allowed (--yes)", server.port),
            "alias.test.toml".into(),
            "  FAIL    alias".into(),
            "          alias.test.toml:1: the script called SELECT 0 (line 1), which reaches beyond the scratch db 15: evalbench did not send it; a case must stay in its scratch db".into(),
            format!("          alias.test.toml:1: expected reply {{\"int\":1}}, got error \"ERR evalbench: SELECT reaches beyond the scratch db 15: not sent (test --server keeps each case in --db 15) script: {}, on @user_script:1.\"", evalbench::engine::script::sha1_hex(b"server.call('SELECT', 0)\nserver.call('SET', 'pwned', 'yes')\nreturn 1\n")),
            "built.test.toml".into(),
            "  skip    built".into(),
            "          not run on the server: the function library names a command built at run time, which can reach beyond the scratch db 15, and the server runs its code as it is: it is not sent".into(),
            "local.test.toml".into(),
            "  ok      a local named server".into(),
            "2 cases: 1 passed, 1 failed, 1 not run on the server".into(),
        ]
        .join("\n")
    );
    // Nothing reached db 0.
    assert_eq!(format!("{:?}", conn.cmd(&["EXISTS", "pwned"])), "Int(0)");
}

/// A server run where every case was skipped tested nothing: exit 2 and why, as an empty run.
#[test]
fn server_run_with_every_case_skipped_does_not_pass() {
    let Some(server) = common::RedisServer::start() else {
        return;
    };
    let url = format!("redis://127.0.0.1:{}", server.port);
    let dir_tmp = scratch("all-skipped");
    let dir = dir_tmp.path().to_path_buf();
    std::fs::write(dir.join("counter.lua"), COUNTER).unwrap();
    std::fs::write(
        dir.join("counter.test.toml"),
        "[[case]]\nname = \"counts\"\nkeys = [\"c\"]\nargv = [\"2\"]\nreply = { int = 2 }\n",
    )
    .unwrap();
    let out = evalbench_in(&dir, &["test", "--server", &url, "--db", "4"]);
    assert_eq!(out.status.code(), Some(2), "{}", stdout_of(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "evalbench: no case ran on the server: 1 was not run there (why is listed above); nothing was tested\n"
    );
    assert!(stdout_of(&out).ends_with("0 cases: 0 passed, 0 failed, 1 not run on the server\n"));
    // In the sandbox, a filter that matches nothing is the same empty run.
    let out = evalbench_in(&dir, &["test", "--filter", "nothing like it"]);
    assert_eq!(out.status.code(), Some(2), "{}", stdout_of(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "evalbench: no case matched --filter \"nothing like it\"; nothing was tested\n"
    );
}

/// A test file whose name is not UTF-8 finds its script by the name's bytes.
#[cfg(unix)]
#[test]
fn a_test_file_named_in_bytes_that_are_not_utf8_finds_its_script() {
    use std::os::unix::ffi::OsStrExt;
    let dir_tmp = scratch("non-utf8");
    let dir = dir_tmp.path().to_path_buf();
    let name = |suffix: &str| {
        let mut bytes = b"caf\xe9".to_vec();
        bytes.extend_from_slice(suffix.as_bytes());
        dir.join(std::ffi::OsStr::from_bytes(&bytes))
    };
    std::fs::write(name(".lua"), "return 1\n").unwrap();
    std::fs::write(
        name(".test.toml"),
        "[[case]]\nname = \"one\"\nreply = { int = 1 }\n",
    )
    .unwrap();
    let out = evalbench_in(&dir, &["test"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout_of(&out));
    assert_eq!(
        without_times(&stdout_of(&out)),
        "caf\u{fffd}.test.toml\n  ok      one\n1 case: 1 passed, 0 failed"
    );
}

/// `test --server` never sends a case the server could not stop: a loop in an error handler (seen
/// in the code) or a pattern search whose sandbox run was stopped inside one C call. Each is
/// skipped with why, nothing reaches the server, and it answers PING.
#[test]
fn server_cases_the_server_could_not_stop_are_never_sent() {
    let Some(server) = common::RedisServer::start() else {
        return;
    };
    let url = format!("redis://127.0.0.1:{}", server.port);
    let mut conn = server.connect();
    let dir_tmp = scratch("unkillable");
    let dir = dir_tmp.path().to_path_buf();
    let case = |name: &str, script: &str| {
        std::fs::write(dir.join(format!("{name}.lua")), script).unwrap();
        std::fs::write(
            dir.join(format!("{name}.test.toml")),
            format!("[[case]]\nname = \"{name}\"\nkeys = []\nreply = {{ int = 1 }}\n"),
        )
        .unwrap();
    };
    case(
        "handler",
        "return xpcall(function() error('x') end, function() while true do end end)\n",
    );
    case(
        "pattern",
        "local s, p = string.rep('a', 3000), string.rep('a*', 12) .. 'b'\nreturn string.find(s, p)\n",
    );
    let out = evalbench_in(&dir, &["test", "--server", &url, "--db", "15", "--yes"]);
    assert_eq!(out.status.code(), Some(2), "{}", stdout_of(&out));
    assert_eq!(
        without_times(&stdout_of(&out)),
        [
            format!("server: redis 7.0.15 127.0.0.1:{}, scratch db 15, writes allowed (--yes)", server.port),
            "handler.test.toml".into(),
            "  skip    handler".into(),
            "          not run on the server: SCRIPT KILL cannot stop it (line 1: a `while` loop in the error handler of xpcall at line 1: it runs with Lua's hooks off once the script is killed, so SCRIPT KILL cannot stop it and the server may need a restart): it could freeze the server, so it is not sent".into(),
            "pattern.test.toml".into(),
            "  skip    pattern".into(),
            "          not run on the server: SCRIPT KILL cannot stop it (line 2: stopped at the busy threshold inside string.find, one C call: Redis's hook never fires there, so on a server no client is answered, SCRIPT KILL included, until the call returns (a kill sent meanwhile acts then): a call that runs for long leaves a restart as the only way out): it could freeze the server, so it is not sent".into(),
            "0 cases: 0 passed, 0 failed, 2 not run on the server".into(),
        ]
        .join("\n")
    );
    assert_eq!(
        conn.cmd(&["PING"]),
        evalbench::engine::reply::Reply::Status("PONG".into())
    );
    let evals = match conn.cmd(&["INFO", "commandstats"]) {
        evalbench::engine::reply::Reply::Bulk(b) => String::from_utf8_lossy(&b)
            .lines()
            .filter(|l| l.starts_with("cmdstat_eval"))
            .count(),
        other => panic!("{other:?}"),
    };
    assert_eq!(evals, 0);
}
