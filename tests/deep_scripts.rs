//! Scripts nested deeper, or far larger, than any parser's stack: lint, run, debug and coverage
//! each finish with Lua's own message (what Redis says) or their result, never a crash. Engine
//! calls run on a thread with the 2 MiB stack of a test thread, which is what an unbounded
//! recursion overflows; the CLI is the built binary on a generated file.

mod common;

use evalbench::engine::analysis::lint;
use evalbench::engine::debug::DebugSession;
use evalbench::engine::{Reply, RunRequest, Sandbox};
use std::process::Command;

/// One of the shapes, `n` levels (or terms) deep.
fn shape(name: &str, n: usize) -> String {
    match name {
        "sum" => format!("local a=1 return a{}", "+a".repeat(n)),
        "or" => format!("local x=0 return x==1{}", " or x==1".repeat(n)),
        "parens" => format!("return {}1{}", "(".repeat(n), ")".repeat(n)),
        "tables" => format!("return {}1{}", "{".repeat(n), "}".repeat(n)),
        "calls" => format!(
            "local function f(x) return x end return {}1{}",
            "f(".repeat(n),
            ")".repeat(n)
        ),
        "minus" => format!("local a=1 return {}a", "- ".repeat(n)),
        "not" => format!("return {}true", "not ".repeat(n)),
        "concat" => format!("local a='x' return a{}", "..a".repeat(n)),
        "functions" => format!(
            "return {}1{}",
            "(function() return ".repeat(n),
            " end)()".repeat(n)
        ),
        "blocks" => format!("{}{}return 1", "do ".repeat(n), "end ".repeat(n)),
        "ifs" => format!("{}{}return 1", "if true then ".repeat(n), "end ".repeat(n)),
        "elseifs" => {
            let mut s = String::from("local a=0 if a==1 then return 1 ");
            for i in 2..n {
                s.push_str(&format!("elseif a=={i} then return {i} "));
            }
            s + "end return 0"
        }
        "methods" => format!(
            "local t={{}} function t:m() return self end return type(t{})",
            ":m()".repeat(n)
        ),
        _ => unreachable!("no shape {name}"),
    }
}

/// Run `f` on a thread with a test thread's default stack (2 MiB).
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap()
}

fn findings(source: String) -> Vec<String> {
    on_small_stack(move || {
        lint(&source)
            .into_iter()
            .map(|d| format!("{}:{} {}: {}", d.line, d.column, d.rule, d.message))
            .collect()
    })
}

/// Nesting Lua refuses (brackets, blocks, unary and right-associative operators past its 200
/// levels): the lint says what Lua says, at any depth, as Redis does.
#[test]
fn nesting_lua_refuses_is_its_syntax_error_at_any_depth() {
    for name in [
        "parens",
        "tables",
        "calls",
        "minus",
        "not",
        "concat",
        "functions",
        "blocks",
        "ifs",
    ] {
        for n in [250, 200_000] {
            assert_eq!(
                findings(shape(name, n)),
                ["1:1 syntax: chunk has too many syntax levels"],
                "{name} at {n}"
            );
        }
    }
}

/// The same shapes as deep as Lua takes them are parsed and walked on a small stack: no finding.
#[test]
fn nesting_lua_takes_is_analysed_on_a_small_stack() {
    for (name, n) in [
        ("parens", 150),
        ("tables", 150),
        ("calls", 150),
        ("minus", 150),
        ("not", 150),
        ("concat", 150),
        ("functions", 30),
        ("blocks", 150),
        ("ifs", 150),
        ("elseifs", 2_000),
        ("methods", 200_000),
        ("sum", 1_999),
    ] {
        assert_eq!(
            findings(shape(name, n)),
            Vec::<String>::new(),
            "{name} at {n}"
        );
    }
}

/// Chains Lua compiles flat at any length nest a level per operator in the tree: past the bound
/// the lint says where, after Lua's compile check found nothing.
#[test]
fn chains_past_the_bound_are_said_with_their_place() {
    assert_eq!(
        findings(shape("sum", 2_000)),
        ["1:4017 not-analysed: expression nested deeper than 2000 at line 1, column 4017: only Lua's compile check ran"]
    );
    assert_eq!(
        findings(shape("sum", 200_000)),
        ["1:4017 not-analysed: expression nested deeper than 2000 at line 1, column 4017: only Lua's compile check ran"]
    );
    // "local x=0 return x==1" is 21 characters; each " or x==1" is 8 and adds two levels.
    assert_eq!(
        findings(shape("or", 5_000)),
        ["1:8015 not-analysed: expression nested deeper than 2000 at line 1, column 8015: only Lua's compile check ran"]
    );
    // A script too deep is still checked by Lua first: its syntax error comes instead.
    let broken = format!("{}\nlocal = 1", shape("sum", 200_000));
    assert_eq!(
        findings(broken),
        ["2:1 syntax: '<eof>' expected near 'local'"]
    );
    // Larger than the parser is given: said at the top.
    let large = "redis.call('SET', KEYS[1], ARGV[1])\n".repeat(40_000) + "return 1";
    assert_eq!(
        findings(large),
        ["1:1 not-analysed: script of 1440008 bytes is larger than the 1 MiB the analysis reads: only Lua's compile check ran"]
    );
}

/// The sandbox runs what the server runs, and the debugger with coverage and a breakpoint takes
/// the same scripts on a small stack (breakpoints use the line hook where probes cannot go).
#[test]
fn run_debug_and_coverage_take_a_million_terms() {
    let script = shape("sum", 1_000_000);
    let (ran, reply, coverage, stopped) = on_small_stack(move || {
        let mut sandbox = Sandbox::new();
        let ran = sandbox.run(&RunRequest::new(script.clone())).reply;
        let mut session = DebugSession::new(script.as_bytes()).unwrap();
        session.coverage = true;
        session.stop_at_start = false;
        session.add_breakpoint(1, None, None).unwrap();
        struct Count(usize);
        impl evalbench::engine::debug::DebugFrontend for Count {
            fn stopped(
                &mut self,
                _stop: &mut evalbench::engine::debug::Stop<'_>,
            ) -> evalbench::engine::debug::Resume {
                self.0 += 1;
                evalbench::engine::debug::Resume::Continue
            }
        }
        let mut count = Count(0);
        let report = sandbox.debug(&RunRequest::new(script.clone()), &mut session, &mut count);
        (ran, report.run.reply, report.coverage, count.0)
    });
    assert_eq!(ran, Reply::Int(1_000_001));
    assert_eq!(reply, Reply::Int(1_000_001));
    assert_eq!(coverage, Some([(1u32, 1u64)].into_iter().collect()));
    assert_eq!(stopped, 1);
}

fn script_file(name: &str, body: &str) -> common::ScratchFile {
    common::scratch_file(name, body)
}

fn evalbench(args: &[&str], file: &std::path::Path) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_evalbench"))
        .args(args)
        .arg(file)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

/// The built binary on the files that crashed it: lint of 200,000 terms, debug and coverage of a
/// million, and a deep nesting of each refused shape.
#[test]
fn the_cli_on_deep_files() {
    let sum = script_file("sum.lua", &shape("sum", 200_000));
    let (code, out) = evalbench(&["lint"], &sum);
    assert_eq!(code, 0);
    assert_eq!(
        out,
        format!(
            "{}:1:4017: warning[not-analysed]: expression nested deeper than 2000 at line 1, column 4017: only Lua's compile check ran\n  fix: split the script, or the long chain of operators (a loop over a table), to have it linted\n",
            sum.display()
        )
    );
    let million = script_file("million.lua", &shape("sum", 1_000_000));
    let (code, out) = evalbench(&["run", "--json", "--coverage"], &million);
    assert_eq!(code, 0);
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["reply"], serde_json::json!({"int": 1_000_001}));
    assert_eq!(report["coverage"], serde_json::json!({"1": 1}));
    let (code, out) = evalbench(&["debug", "--coverage", "--commands", "c"], &million);
    assert_eq!(code, 0, "{}", &out[..out.len().min(2000)]);
    assert!(
        out.contains("\n(integer) 1000001\n"),
        "{}",
        &out[..out.len().min(2000)]
    );
    for name in ["parens", "calls", "functions", "ifs"] {
        let file = script_file(&format!("{name}.lua"), &shape(name, 200_000));
        let (code, out) = evalbench(&["lint"], &file);
        assert_eq!(
            (code, out.lines().next().unwrap()),
            (
                1,
                &*format!(
                    "{}:1:1: error[syntax]: chunk has too many syntax levels",
                    file.display()
                )
            )
        );
        let (code, out) = evalbench(&["run"], &file);
        assert_eq!(code, 1);
        assert!(out.contains("(error) ERR Error compiling script (new function): user_script:1: chunk has too many syntax levels\n"), "{out}");
    }
}

/// The real server refuses and accepts the same scripts, with the same words.
#[test]
fn the_server_agrees() {
    let Some(server) = common::RedisServer::start() else {
        return;
    };
    let mut conn = server.connect();
    for (name, n) in [
        ("parens", 250),
        ("calls", 250),
        ("concat", 250),
        ("minus", 250),
        ("parens", 150),
        ("sum", 200_000),
        ("or", 5_000),
        ("methods", 20_000),
    ] {
        let script = shape(name, n);
        let theirs = conn.cmd(&["EVAL", &script, "0"]);
        let ours = on_small_stack(move || Sandbox::new().run(&RunRequest::new(script)).reply);
        assert_eq!(ours, theirs, "{name} at {n}");
    }
}
