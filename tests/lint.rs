//! `evalbench lint`: every rule on a script that breaks it (the exact place and message) and on a
//! script that does the same thing right (no finding); the samples lint clean; the CLI's exit statuses.

use evalbench::engine::analysis::{lint, rules::RULES};
use std::process::Command;

/// Findings as `line:column rule: message`.
fn findings(source: &str) -> Vec<String> {
    lint(source)
        .into_iter()
        .map(|d| format!("{}:{} {}: {}", d.line, d.column, d.rule, d.message))
        .collect()
}

/// (rule, a script that breaks it, the one finding, a script that does not)
const CASES: &[(&str, &str, &str, &str)] = &[
    (
        "command-not-in-profile",
        "if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end\nreturn redis.call('HEXPIRE', KEYS[1], 60, 'FIELDS', 1, ARGV[1])",
        "2:8 command-not-in-profile: HEXPIRE is not a command of redis-7.0: scripts can call it on redis-7.4, redis-8.0, valkey-9.1",
        "if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end\nreturn redis.call('EXPIRE', KEYS[1], 60)",
    ),
    (
        "syntax",
        "local x = = 2\nreturn x",
        "1:11 syntax: unexpected symbol near '='",
        "local x = 2\nreturn x",
    ),
    (
        "lua52-syntax",
        "local half = ARGV[1] // 2\nreturn half",
        "1:22 lua52-syntax: `//` (integer division) is Lua 5.3: write math.floor(a / b) (Lua says: unexpected symbol near '/')",
        "local half = math.floor(ARGV[1] / 2)\nreturn half",
    ),
    (
        "global-variable",
        "count = redis.call('INCR', KEYS[1])\nreturn count",
        "1:1 global-variable: `count` is a global: Redis refuses it (Script attempted to create global variable 'count')",
        "local count = redis.call('INCR', KEYS[1])\nreturn count",
    ),
    (
        "key-not-from-keys",
        "return redis.call('HGET', 'user:' .. ARGV[1], 'name')",
        "1:27 key-not-from-keys: HGET uses a key built in the script, not passed in KEYS",
        "local key = KEYS[1]\nreturn redis.call('HGET', key, 'name')",
    ),
    (
        "value-in-keys",
        "redis.call('SET', KEYS[1], KEYS[2])\nreturn 1",
        "1:28 value-in-keys: a KEYS entry is argument 2 of SET, which is not a key there",
        "redis.call('SET', KEYS[1], ARGV[1])\nreturn 1",
    ),
    (
        "literal-belongs-in-argv",
        "redis.call('SADD', KEYS[1], 'order-20261203-884213')\nreturn 1",
        "1:29 literal-belongs-in-argv: \"order-20261203-884213\" looks like data written into the script",
        "redis.call('SADD', KEYS[1], ARGV[1])\nreturn 1",
    ),
    (
        "write-before-validation",
        "redis.call('DECRBY', KEYS[1], ARGV[1])\nif tonumber(ARGV[1]) < 1 then\n  return redis.error_reply('ERR bad quantity')\nend\nreturn 1",
        "1:1 write-before-validation: DECRBY writes here, and line 3 returns an error after it: the write stays (no rollback)",
        "if tonumber(ARGV[1]) < 1 then\n  return redis.error_reply('ERR bad quantity')\nend\nredis.call('DECRBY', KEYS[1], ARGV[1])\nreturn 1",
    ),
    (
        "unbounded-read",
        "local all = redis.call('LRANGE', KEYS[1], 0, -1)\nreturn #all",
        "1:13 unbounded-read: LRANGE 0 -1 reads the whole key whatever its size",
        "local page = redis.call('LRANGE', KEYS[1], 0, 99)\nreturn #page",
    ),
    (
        "setnx-then-expire",
        "local ok = redis.call('SETNX', KEYS[1], ARGV[1])\nredis.call('PEXPIRE', KEYS[1], ARGV[2])\nreturn ok",
        "1:12 setnx-then-expire: SETNX here and PEXPIRE on line 2 on the same key",
        "return redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) and 1 or 0",
    ),
    (
        "reply-without-tonumber",
        "local stock = redis.call('GET', KEYS[1])\nif stock < 5 then return 0 end\nreturn 1",
        "2:4 reply-without-tonumber: the reply of GET is a string (or false when missing), used here with `<`",
        "local stock = tonumber(redis.call('GET', KEYS[1]) or '0')\nif stock < 5 then return 0 end\nreturn 1",
    ),
    (
        "dropped-pcall-error",
        "redis.pcall('INCR', KEYS[1])\nreturn 1",
        "1:1 dropped-pcall-error: the result of redis.pcall is not looked at: an error it catches is dropped",
        "local r = redis.pcall('INCR', KEYS[1])\nif type(r) == 'table' and r.err then return 0 end\nreturn 1",
    ),
    (
        "nondeterministic",
        "local t = redis.call('TIME')\nreturn t[1]",
        "1:11 nondeterministic: TIME gives another result on every run",
        "return ARGV[1]",
    ),
    (
        "unkillable",
        "local ok, e = xpcall(function() return redis.call('GET', KEYS[1]) end, function(e)\n  while true do end\nend)\nreturn ok",
        "2:3 unkillable: a `while` loop in the error handler of xpcall at line 1: it runs with Lua's hooks off once the script is killed, so SCRIPT KILL cannot stop it and the server may need a restart",
        "local ok, e = xpcall(function() return redis.call('GET', KEYS[1]) end, function(e)\n  return e\nend)\nreturn ok",
    ),
    (
        "wrong-arity",
        "local n = redis.call('HSET', KEYS[1], ARGV[1])\nreturn n",
        "1:11 wrong-arity: HSET takes at least 4 arguments counting its name, this call passes 3: the server answers ERR Wrong number of args calling Redis command from script",
        "local n = redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])\nreturn n",
    ),
    (
        "undeclared-key",
        "local v = redis.call('GET', KEYS[0])\nreturn v",
        "1:29 undeclared-key: KEYS[0] is always nil: Lua's tables start at 1 (KEYS[1] is the first key)",
        "local v = redis.call('GET', KEYS[1])\nreturn v",
    ),
    (
        "one-command",
        "return redis.call('INCRBY', KEYS[1], ARGV[1])",
        "1:8 one-command: the whole script is one INCRBY call",
        "local n = redis.call('INCRBY', KEYS[1], ARGV[1])\nif n > 10 then redis.call('DEL', KEYS[1]) end\nreturn n",
    ),    (
        "library-header",
        "local function hello() return 'hi' end\nredis.register_function('hello', hello)",
        "1:1 library-header: the file registers functions but has no `#!lua name=<library>` first line: FUNCTION LOAD answers 'Missing library metadata'",
        "#!lua name=greet\nlocal function hello() return 'hi' end\nredis.register_function('hello', hello)",
    ),
    (
        "bad-name",
        "#!lua name=my-lib\nredis.register_function('hello', function() return 'hi' end)",
        "1:1 bad-name: library name `my-lib`: Library names can only contain letters, numbers, or underscores(_) and must be at least one character long",
        "#!lua name=my_lib\nredis.register_function('hello', function() return 'hi' end)",
    ),
    (
        "duplicate-function",
        "#!lua name=greet\nredis.register_function('hello', function() return 'hi' end)\nredis.register_function('hello', function() return 'hey' end)",
        "3:25 duplicate-function: `hello` is registered again (first on line 2): FUNCTION LOAD answers 'Function already exists in the library'",
        "#!lua name=greet\nredis.register_function('hello', function() return 'hi' end)\nredis.register_function('hey', function() return 'hey' end)",
    ),
    (
        "unknown-flag",
        "#!lua name=stock\nredis.register_function{function_name='peek', callback=function(keys) return redis.call('GET', keys[1]) end, flags={'no-write'}}",
        "2:117 unknown-flag: `no-write` is not a function flag: FUNCTION LOAD answers 'unknown flag given' (flags: no-writes, allow-oom, allow-stale, no-cluster, allow-cross-slot-keys)",
        "#!lua name=stock\nredis.register_function{function_name='peek', callback=function(keys) return redis.call('GET', keys[1]) end, flags={'no-writes'}}",
    ),
    (
        "write-in-no-writes",
        "#!lua name=stock\nlocal function take(keys, args)\n  return redis.call('DECRBY', keys[1], args[1])\nend\nredis.register_function{function_name='take', callback=take, flags={'no-writes'}}",
        "3:10 write-in-no-writes: DECRBY writes, in `take` flagged no-writes: FCALL answers 'Write commands are not allowed from read-only scripts'",
        "#!lua name=stock\nlocal function take(keys, args)\n  return redis.call('DECRBY', keys[1], args[1])\nend\nredis.register_function{function_name='take', callback=take}",
    ),
    (
        "load-time",
        "#!lua name=stock\nredis.call('PING')\nredis.register_function('take', function(keys, args) return redis.call('DECRBY', keys[1], args[1]) end)",
        "2:1 load-time: redis.call at load time: FUNCTION LOAD fails with 'Script attempted to access nonexistent global variable 'call''; call commands inside a registered function",
        "#!lua name=stock\nredis.register_function('take', function(keys, args) return redis.call('DECRBY', keys[1], args[1]) end)",
    ),
];

#[test]
fn libraries_are_read_without_running_them() {
    // Every load-time refusal at once, each at its place; the callbacks' bodies are not load time.
    let source = "#!lua name=stock flags=no-writes\nlocal limit = tonumber(ARGV[1])\nlocal first = KEYS[1]\nlocal function peek(keys)\n  redis.call('SET', keys[1], 'seen')\n  return redis.pcall('GET', keys[1])\nend\nredis.register_function{function_name='peek', callback=peek, flags={'no-writes', 'allow-stale'}}\nredis.register_function('bad-name', function(keys) return redis.call('GET', keys[1]) end)";
    assert_eq!(
        findings(source),
        vec![
            "1:1 library-header: FUNCTION LOAD answers 'Invalid metadata value given: flags=no-writes': a library's first line takes only name=<library>",
            "2:24 load-time: ARGV at load time: FUNCTION LOAD fails with 'Script attempted to access nonexistent global variable 'ARGV''; a function gets its keys and arguments as its parameters (function(keys, args))",
            "3:15 load-time: KEYS at load time: FUNCTION LOAD fails with 'Script attempted to access nonexistent global variable 'KEYS''; a function gets its keys and arguments as its parameters (function(keys, args))",
            "5:3 write-in-no-writes: SET writes, in `peek` flagged no-writes: FCALL answers 'Write commands are not allowed from read-only scripts'",
            "9:25 bad-name: function name `bad-name`: function names can only contain letters, numbers, or underscores(_) and must be at least one character long",
        ]
    );
    // The library as the workbench and the language server see it: names, flags, places.
    let library = evalbench::engine::analysis::library::library(source).expect("a library");
    assert_eq!(library.name.as_deref(), Some("stock"));
    let functions: Vec<String> = library
        .functions
        .iter()
        .map(|f| format!("{}:{} {} {:?}", f.line, f.column, f.name, f.flags))
        .collect();
    assert_eq!(
        functions,
        vec![
            "8:39 peek [\"no-writes\", \"allow-stale\"]",
            "9:25 bad-name []",
        ]
    );
    // A plain script (an EVAL shebang is no library) has none.
    assert_eq!(
        evalbench::engine::analysis::library::library("#!lua flags=no-writes\nreturn 1"),
        None
    );
    // A library with no function: the server loads nothing.
    assert_eq!(
        findings("#!lua name=empty\nlocal x = 1\nreturn x"),
        vec!["1:1 library-header: the library registers no function (redis.register_function): FUNCTION LOAD answers 'No functions registered'"]
    );
    // An unknown engine.
    assert_eq!(
        findings("#!js name=stock\nredis.register_function('f', function() return 1 end)"),
        vec!["1:1 library-header: the engine is `js`: FUNCTION LOAD answers 'Engine 'js' not found' (write `#!lua name=<library>`)"]
    );
}

#[test]
fn every_rule_finds_its_case_and_spares_the_right_way() {
    for rule in RULES {
        // not-analysed needs a script of 2000 operators or 1 MiB: its cases are generated in
        // tests/deep_scripts.rs.
        assert!(
            CASES.iter().any(|(id, ..)| *id == rule.id)
                || ["not-analysed", "cross-slot"].contains(&rule.id),
            "rule {} has no test case",
            rule.id
        );
    }
    for (rule, bad, expected, good) in CASES {
        assert_eq!(
            findings(bad),
            vec![expected.to_string()],
            "rule {rule} on:\n{bad}"
        );
        assert_eq!(
            findings(good),
            Vec::<String>::new(),
            "rule {rule} on the right way:\n{good}"
        );
    }
}

/// Findings with the KEYS a sidecar declares.
fn findings_with(source: &str, keys: &[&str]) -> Vec<String> {
    let keys: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
    evalbench::engine::analysis::lint_with(source, evalbench::engine::profile::DEFAULT, Some(&keys))
        .into_iter()
        .map(|d| format!("{}:{} {}: {}", d.line, d.column, d.rule, d.message))
        .collect()
}

#[test]
fn the_sidecars_keys_declare_and_place_keys() {
    let script =
        "local a = redis.call('GET', KEYS[1])\nlocal b = redis.call('GET', KEYS[2])\nreturn {a, b}";
    assert_eq!(
        findings_with(script, &["user:1"]),
        vec!["2:29 undeclared-key: KEYS[2] is not declared: the sidecar passes 1 key (\"user:1\"), so KEYS[2] is nil"]
    );
    // Keys of two slots: the first read of the second key is the place.
    assert_eq!(
        findings_with(script, &["foo", "bar"]),
        vec!["2:29 cross-slot: \"bar\" hashes to slot 5061 and \"foo\" to slot 12182: a Redis Cluster answers CROSSSLOT; give them one {hash tag}"]
    );
    assert_eq!(
        findings_with(script, &["{u1}.a", "{u1}.b"]),
        Vec::<String>::new()
    );
    // Keys written into the script count too.
    assert_eq!(
        findings("redis.call('SET', 'foo', 1)\nredis.call('SET', 'bar', 2)\nreturn 1"),
        vec![
            "1:19 key-not-from-keys: SET uses the key \"foo\" written in the script, not passed in KEYS",
            "2:19 key-not-from-keys: SET uses the key \"bar\" written in the script, not passed in KEYS",
            "2:19 cross-slot: \"bar\" hashes to slot 5061 and \"foo\" to slot 12182: a Redis Cluster answers CROSSSLOT; give them one {hash tag}",
        ]
    );
}

#[test]
fn subcommands_are_checked_when_written_and_left_alone_when_not() {
    assert_eq!(
        findings("local v = redis.call('OBJECT', 'NOSUCH', KEYS[1])\nreturn v"),
        vec!["1:11 command-not-in-profile: OBJECT has no subcommand NOSUCH on redis-7.0: the server answers ERR Unknown Redis command called from script"]
    );
    assert_eq!(
        findings("local v = redis.call('OBJECT', ARGV[1], KEYS[1])\nreturn v"),
        Vec::<String>::new()
    );
    // A trailing unpack may pass any number of arguments: no arity finding.
    assert_eq!(
        findings("local v = redis.call('HSET', KEYS[1], unpack(ARGV))\nreturn v"),
        Vec::<String>::new()
    );
}

#[test]
fn lua52_constructs_and_libraries_are_named() {
    let cases = [
        ("for i = 1, 3 do\n  goto skip\n  ::skip::\nend", "2:3 lua52-syntax: `goto` is Lua 5.2: use a loop with break, or a flag (Lua says: '=' expected near 'skip')"),
        ("return 1 & 2", "1:10 lua52-syntax: `&` is Lua 5.3: write bit.band(a, b) (Lua says: '<eof>' expected near '&')"),
        ("return 1 << 2", "1:10 lua52-syntax: `<<` is Lua 5.3: write bit.lshift(a, n) (Lua says: unexpected symbol near '<')"),
        ("return '\\x41'", "1:8 lua52-syntax: `\\x` is a Lua 5.2+ escape: Lua 5.1 reads it as the letter x (write bytes as decimal escapes, \\65)"),
        ("return table.unpack({1})", "1:8 lua52-syntax: `table.unpack` is Lua 5.2+: Lua 5.1 has no such function (use unpack)"),
        ("return utf8.char(65)", "1:8 lua52-syntax: `utf8` is Lua 5.2+: Redis's Lua 5.1 has no utf8 (bit operations: the `bit` library)"),
        ("return os.time()", "1:8 global-variable: `os` is not available to scripts: Redis removes it from the sandbox"),
    ];
    for (source, expected) in cases {
        assert_eq!(
            findings(source),
            vec![expected.to_string()],
            "on:\n{source}"
        );
    }
}

#[test]
fn locals_functions_and_shebangs_are_understood() {
    // Locals shadow, upvalues are locals, methods and fields of locals are fine; a shebang line
    // keeps the line numbers.
    let source = "#!lua flags=no-writes\nlocal M = {}\nfunction M.get(k) return redis.call('GET', k) end\nlocal function twice(x) return x * 2 end\nlocal KEYS = {'shadowed'}\nreturn {M.get(ARGV[1]), twice(3), redis.call('GET', KEYS[1])}";
    assert_eq!(findings(source), Vec::<String>::new());
}

#[test]
fn the_samples_lint_clean() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "lua") {
            let source = std::fs::read_to_string(&path).unwrap();
            assert_eq!(
                findings(&source),
                Vec::<String>::new(),
                "{}",
                path.display()
            );
        }
    }
}

fn evalbench(args: &[&str], dir: &std::path::Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_evalbench"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run evalbench")
}

#[test]
fn the_cli_reads_the_sidecars_keys() {
    let dir = tempfile::TempDir::new().unwrap();
    let script = "local a = redis.call('GET', KEYS[1])\nlocal b = redis.call('GET', KEYS[2])\nreturn {a, b}\n";
    std::fs::write(dir.path().join("pair.lua"), script).unwrap();
    std::fs::write(
        dir.path().join("pair.json"),
        r#"{ "keys": ["foo", "bar"] }"#,
    )
    .unwrap();
    let out = evalbench(&["lint", "pair.lua"], dir.path());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "pair.lua:2:29: warning[cross-slot]: \"bar\" hashes to slot 5061 and \"foo\" to slot 12182: a Redis Cluster answers CROSSSLOT; give them one {hash tag}\n  fix: give the keys one {hash tag}, such as {user:42}:cart and {user:42}:stock\n"
    );
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn the_cli_reports_like_a_compiler_and_exits_by_severity_and_deny() {
    let dir_tmp = tempfile::tempdir().unwrap();
    let dir = dir_tmp.path().to_path_buf();
    std::fs::write(
        dir.join("warn.lua"),
        "return redis.call('INCRBY', KEYS[1], ARGV[1])\n",
    )
    .unwrap();
    std::fs::write(dir.join("err.lua"), "total = 1\nreturn total\n").unwrap();
    let out = evalbench(&["lint", "warn.lua"], &dir);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "warn.lua:1:8: warning[one-command]: the whole script is one INCRBY call\n  fix: send the command itself\n"
    );
    let out = evalbench(&["lint", "--deny", "one-command", "warn.lua"], &dir);
    assert_eq!(out.status.code(), Some(1));
    let out = evalbench(&["lint", "--deny", "all", "warn.lua"], &dir);
    assert_eq!(out.status.code(), Some(1));
    let out = evalbench(&["lint", "err.lua"], &dir);
    assert_eq!(out.status.code(), Some(1), "an error fails without --deny");
    let out = evalbench(&["lint", "--json", "err.lua"], &dir);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["files"][0]["findings"][0]["rule"], "global-variable");
    assert_eq!(json["files"][0]["findings"][0]["line"], 1);
    assert_eq!(
        json["files"][0]["findings"][0]["fix"],
        "declare it `local` (functions too: `local function f() ... end`)"
    );
    let out = evalbench(&["lint", "--deny", "no-such-rule", "warn.lua"], &dir);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).starts_with(
        "evalbench: --deny no-such-rule: no such rule; the rules are: all, syntax, lua52-syntax,"
    ));
    let out = evalbench(&["lint", "missing.lua"], &dir);
    assert_eq!(out.status.code(), Some(2));
}

mod common;

#[test]
fn hostile_and_odd_scripts_never_crash_it() {
    // Nesting Lua accepts (just under its 200 levels) and far past it, in a 2 MB test thread.
    let legal = format!("return {}1{}", "(".repeat(190), ")".repeat(190));
    assert_eq!(findings(&legal), Vec::<String>::new());
    let deep = format!("return {}1{}", "(".repeat(100_000), ")".repeat(100_000));
    assert_eq!(
        findings(&deep),
        vec!["1:1 syntax: chunk has too many syntax levels".to_string()]
    );
    let blocks = format!(
        "{}return 1{}",
        "do ".repeat(100_000),
        " end".repeat(100_000)
    );
    assert_eq!(lint(&blocks).len(), 1);
    // Bytecode is Lua text to Redis, and fails as text (redis-server 7.0.15's own answer).
    assert_eq!(
        findings("\x1bLua\x51\x00"),
        vec!["1:1 syntax: unexpected symbol near 'char(27)'".to_string()]
    );
    assert_eq!(findings(""), Vec::<String>::new());
    // Every script of the differential corpus: no panic, and every finding placed on a real line.
    for case in common::all_cases() {
        let lines = case.script.lines().count().max(1);
        for d in lint(&case.script) {
            assert!(
                d.line >= 1 && d.line <= lines + 1,
                "{}: {}: {d:?}",
                case.file,
                case.name
            );
        }
    }
}

#[test]
fn commands_follow_the_profile() {
    use evalbench::engine::analysis::lint_in;
    use evalbench::engine::profile::Profile;
    let script = "if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end\nreturn redis.call('BLPOP', KEYS[1], 0)";
    let on = |id: &str| -> Vec<String> {
        lint_in(script, Profile::by_id(id).unwrap())
            .into_iter()
            .map(|d| format!("{}:{} {}: {}", d.line, d.column, d.rule, d.message))
            .collect()
    };
    assert_eq!(
        on("redis-7.0"),
        ["2:8 command-not-in-profile: BLPOP is refused in scripts by redis-7.0: scripts can call it on redis-7.2, redis-7.4, redis-8.0, valkey-8.1, valkey-9.1"]
    );
    assert!(on("redis-7.2").is_empty(), "{:?}", on("redis-7.2"));
    // A name no server knows: a module's command or a typo.
    assert_eq!(
        findings("local v = redis.call('GTE', KEYS[1])\nreturn v"),
        ["1:11 command-not-in-profile: GTE is not a command of redis-7.0, nor of any profile (a module's command, or a typo?)"]
    );
    // The CLI's --profile.
    let dir_tmp = tempfile::tempdir().unwrap();
    let dir = dir_tmp.path().to_path_buf();
    let file = dir.join("blpop.lua");
    std::fs::write(&file, script).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_evalbench"))
        .args(["lint", "--profile", "redis-7.2"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
    assert_eq!(out.status.code(), Some(0));
    let out = Command::new(env!("CARGO_BIN_EXE_evalbench"))
        .args([
            "lint",
            "--profile",
            "redis-7.0",
            "--deny",
            "command-not-in-profile",
        ])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("BLPOP is refused in scripts by redis-7.0")
    );
}
