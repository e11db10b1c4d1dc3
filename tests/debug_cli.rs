//! `evalbench debug`: scripted REPL sessions, asserted exactly (LDB's words and output).

use std::process::Command;

const SCRIPT: &str = "local key = KEYS[1]
local limit = tonumber(ARGV[1])
local count = redis.call('INCR', key)
if count > limit then
  return redis.error_reply('rate limited')
end
local info = {count = count, left = limit - count}
return info.left
";

fn run(script: &str, args: &[&str]) -> (i32, String, String) {
    let dir_tmp = tempfile::tempdir().unwrap();
    let dir = dir_tmp.path().to_path_buf();
    // One file per call: tests run in parallel.
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = dir.join(format!("s{n}.lua"));
    std::fs::write(&path, script).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_evalbench"));
    cmd.arg("debug");
    let (opts, rest) = args.split_at(args.iter().position(|a| *a == "SCRIPT").unwrap());
    cmd.args(opts).arg(&path).args(&rest[1..]);
    let out = cmd.stdin(std::process::Stdio::null()).output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn a_scripted_session_reads_like_ldb() {
    let (code, out, _) = run(
        SCRIPT,
        &[
            "--commands",
            "b 7; c; p; e count * 10; watch count + 1; back; back; r GET rl; r SET rl 9; n; t; b; c",
            "SCRIPT",
            "rl",
            ",",
            "5",
        ],
    );
    let expected = "Lua debugging session started (evalbench sandbox). Type h for help.

* Stopped at 1, stop reason = step over
-> 1   local key = KEYS[1]
lua debugger> b 7
  #7   local info = {count = count, left = limit - count}
lua debugger> c
* Stopped at 7, stop reason = break point
->#7   local info = {count = count, left = limit - count}
lua debugger> p
<value> key = \"rl\"
<value> limit = 5
<value> count = 1
lua debugger> e count * 10
<retval> 10
lua debugger> watch count + 1
<watch> 1 count + 1 = 2
lua debugger> back
* Stopped at 4, stop reason = step over
-> 4   if count > limit then
<watch> 1 count + 1 = 2
lua debugger> back
* Stopped at 3, stop reason = step over
-> 3   local count = redis.call('INCR', key)
<watch> 1 count + 1 = <error> Script attempted to access nonexistent global variable 'count'
lua debugger> r GET rl
<redis> GET rl
<reply> NULL
lua debugger> r SET rl 9
<redis> SET rl 9
<error> -ERR evalbench: the debugger refuses write commands in eval, watches, conditions and 'redis' (they would change the run); read commands see the current keyspace
<reply> \"-ERR evalbench: the debugger refuses write commands in eval, watches, conditions and 'redis' (they would change the run); read commands see the current keyspace\"
lua debugger> n
<redis> INCR rl
<reply> 1
* Stopped at 4, stop reason = step over
-> 4   if count > limit then
<watch> 1 count + 1 = 2
lua debugger> t
In top level:
-> 4   if count > limit then
(line event 4)
lua debugger> b
1 breakpoints set:
  #7   local info = {count = count, left = limit - count}
      (hit 0 times)
lua debugger> c
* Stopped at 7, stop reason = break point
->#7   local info = {count = count, left = limit - count}
<watch> 1 count + 1 = 2
(no more commands: the script runs to the end)

(integer) 4

trace (1 calls):
";
    assert!(out.starts_with(expected), "{out}");
    assert_eq!(code, 0);
}

#[test]
fn break_on_error_abort_and_moved_breakpoints() {
    let script = "local x = 5\n\nlocal y = x .. nil\nreturn y\n";
    let (code, out, _) = run(script, &["--commands", "b 2; c; p; a", "SCRIPT"]);
    let expected = "Lua debugging session started (evalbench sandbox). Type h for help.

* Stopped at 1, stop reason = step over
-> 1   local x = 5
lua debugger> b 2
Line 2 has no code: breakpoint set at line 3.
  #3   local y = x .. nil
lua debugger> c
* Stopped at 3, stop reason = break point
->#3   local y = x .. nil
lua debugger> p
<value> x = 5
lua debugger> a

(error) ERR script aborted for user request script: ";
    assert!(out.starts_with(expected), "{out}");
    assert!(out.contains(", on @user_script:3.\n"), "{out}");
    assert_eq!(code, 1);
    let (code, out, _) = run(script, &["--commands", "c; p; c", "SCRIPT"]);
    assert!(
        out.contains("lua debugger> c\n* Stopped at 3, stop reason = error: user_script:3: attempt to concatenate a nil value\n-> 3   local y = x .. nil\n"),
        "{out}"
    );
    assert!(out.contains("lua debugger> p\n<value> x = 5\n"), "{out}");
    assert_eq!(code, 1);
}

#[test]
fn a_script_that_does_not_compile_exits_2_with_its_line() {
    let (code, out, err) = run("local a = 1\nlocal b = +\n", &["SCRIPT"]);
    assert_eq!(code, 2);
    assert_eq!(out, "");
    assert!(
        err.ends_with(
            ".lua:2: the script does not compile: unexpected symbol near '+'\n-> 2   local b = +\n"
        ),
        "{err}"
    );
}

#[test]
fn json_mode_is_one_event_per_line() {
    let (code, out, _) = run(
        SCRIPT,
        &[
            "--json",
            "--coverage",
            "--commands",
            "n; p key",
            "SCRIPT",
            "rl",
            ",",
            "5",
        ],
    );
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[..5],
        [
            r#"{"event":"stop","text":"* Stopped at 1, stop reason = step over","line":1,"reason":"step over","event_no":1}"#,
            r#"{"event":"source","text":"-> 1   local key = KEYS[1]","line":1,"current":true}"#,
            r#"{"event":"stop","text":"* Stopped at 2, stop reason = step over","line":2,"reason":"step over","event_no":2}"#,
            r#"{"event":"source","text":"-> 2   local limit = tonumber(ARGV[1])","line":2,"current":true}"#,
            r#"{"event":"value","text":"<value> \"rl\""}"#,
        ]
    );
    let end: serde_json::Value = serde_json::from_str(lines.last().unwrap()).unwrap();
    assert_eq!(end["event"], "end");
    assert_eq!(end["report"]["reply"], serde_json::json!({"int": 4}));
    assert_eq!(
        end["report"]["coverage"],
        serde_json::json!({"1": 1, "2": 1, "3": 1, "4": 1, "7": 1, "8": 1})
    );
    assert_eq!(end["report"]["coverage_not_run"], serde_json::json!([5]));
    assert_eq!(code, 0);
}

#[test]
fn devices_and_oversized_seeds_are_refused_as_run_refuses_them() {
    let out = Command::new(env!("CARGO_BIN_EXE_evalbench"))
        .args(["debug", "/dev/zero"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "evalbench: cannot read /dev/zero: it is a character device, not a regular file (evalbench reads a script from a regular file only; give the path of one)\n"
    );
    let dir_tmp = tempfile::tempdir().unwrap();
    let dir = dir_tmp.path().to_path_buf();
    let script = dir.join("one.lua");
    std::fs::write(&script, "return 1").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_evalbench"))
        .args(["debug", "--keyspace", "/dev/zero", script.to_str().unwrap()])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "evalbench: --keyspace: cannot read /dev/zero: it is a character device, not a regular file (evalbench reads keyspace JSON from a regular file only; give the path of one)\n"
    );
}

#[test]
fn what_the_script_prints_cannot_steer_the_terminal() {
    let script =
        "local evil = '\\27]0;pwned\\7' .. '\\226\\128\\174'\nredis.debug(evil)\nreturn evil\n";
    let (code, out, _) = run(script, &["--commands", "n; p evil; c", "SCRIPT"]);
    assert_eq!(code, 0, "{out}");
    for c in out.chars() {
        assert!(
            c == '\n' || !evalbench::engine::display::is_unsafe(c),
            "{c:?} in:\n{out}"
        );
    }
    assert!(
        out.contains("<debug> line 2: \"\\x1b]0;pwned\\a\\xe2\\x80\\xae\""),
        "{out}"
    );
    let (_, out, _) = run(script, &["--json", "--commands", "n; p evil; c", "SCRIPT"]);
    for line in out.lines() {
        assert!(
            !line.chars().any(evalbench::engine::display::is_unsafe),
            "{line}"
        );
        serde_json::from_str::<serde_json::Value>(line).unwrap();
    }
    assert!(out.contains("\\u001b]0;pwned\\u0007\\u202e"), "{out}");
}

/// `finish` shows what the function it steps out of returned: several values, a tail call's (the
/// function it tail-called returns for it), and none; in --json as a `return` event.
#[test]
fn finish_shows_the_return_values() {
    let script = "local function pair(n)
  local a = n * 2
  return a, 'x' .. n
end
local function tail(n)
  return pair(n + 1)
end
local function nothing()
  local z = 1
end
local a, b = pair(3)
local c = tail(1)
nothing()
return {a, b, c}
";
    let (code, out, _) = run(
        script,
        &[
            "--commands",
            "b 2; c; finish; s; s; s; finish; s; s; finish; c",
            "SCRIPT",
        ],
    );
    let expected = "Lua debugging session started (evalbench sandbox). Type h for help.

* Stopped at 4, stop reason = step over
-> 4   end
lua debugger> b 2
  #2     local a = n * 2
lua debugger> c
* Stopped at 2, stop reason = break point
->#2     local a = n * 2
lua debugger> finish
<return> 6, \"x3\"
* Stopped at 12, stop reason = step over
-> 12  local c = tail(1)
lua debugger> s
* Stopped at 6, stop reason = step over
-> 6     return pair(n + 1)
lua debugger> s
* Stopped at 2, stop reason = break point
->#2     local a = n * 2
lua debugger> s
* Stopped at 3, stop reason = step over
-> 3     return a, 'x' .. n
lua debugger> finish
<return> 4, \"x2\"
* Stopped at 13, stop reason = step over
-> 13  nothing()
lua debugger> s
* Stopped at 9, stop reason = step over
-> 9     local z = 1
lua debugger> s
* Stopped at 10, stop reason = step over
-> 10  end
lua debugger> finish
<return> (no value)
* Stopped at 14, stop reason = step over
-> 14  return {a, b, c}
lua debugger> c

1) (integer) 6
2) \"x3\"
3) (integer) 4
";
    assert!(out.starts_with(expected), "{out}");
    assert_eq!(code, 0);
    let (_, out, _) = run(
        script,
        &["--json", "--commands", "b 2; c; finish", "SCRIPT"],
    );
    assert!(
        out.lines()
            .any(|l| l
                == r#"{"event":"return","text":"<return> 6, \"x3\"","values":["6","\"x3\""]}"#),
        "{out}"
    );
}

/// `--function NAME LIBRARY.lua`: the library is loaded as FUNCTION LOAD would and the FCALL runs
/// under the debugger: a breakpoint in a helper, its arguments, `finish` with its return value,
/// the reply of the FCALL.
#[test]
fn a_function_of_a_library_is_debugged_as_a_script() {
    let library = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/counter_library.lua"),
    )
    .unwrap();
    let (code, out, _) = run(
        &library,
        &[
            "--function",
            "counter_incr",
            "--commands",
            "b 5; c; p; finish; n; p n; c",
            "SCRIPT",
            "counter:page",
            ",",
            "5",
        ],
    );
    let expected = "Lua debugging session started (evalbench sandbox). Type h for help.

* Stopped at 20, stop reason = step over
-> 20    local n = amount(args)
lua debugger> b 5
Line 5 has no code: breakpoint set at line 12.
  #12    local n = tonumber(args[1] or '1')
lua debugger> c
* Stopped at 12, stop reason = break point
->#12    local n = tonumber(args[1] or '1')
lua debugger> p
<value> args = {\"5\"}
lua debugger> finish
<return> 5
* Stopped at 21, stop reason = step over
-> 21    if type(n) == 'table' then
lua debugger> n
* Stopped at 24, stop reason = step over
-> 24    return redis.call('INCRBY', keys[1], n)
lua debugger> p n
<value> 5
lua debugger> c

(integer) 5

trace (1 calls):
";
    assert!(out.starts_with(expected), "{out}");
    assert_eq!(code, 0);
    // --library without --function, and a function the libraries do not register.
    let (code, _, err) = run(&library, &["--library", "x.lua", "SCRIPT"]);
    assert_eq!(code, 2);
    assert_eq!(
        err,
        "evalbench: --library loads a function library for --function NAME; add --function\n"
    );
    let (code, out, _) = run(
        &library,
        &["--function", "nope", "--commands", "", "SCRIPT"],
    );
    assert_eq!(code, 1);
    assert!(out.contains("(error) ERR Function not found"), "{out}");
}
