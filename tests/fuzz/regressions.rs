//! Inputs the fuzz targets found, kept as regression tests.

use evalbench::engine::reply::parse_resp;

#[test]
fn parse_resp_empty_type_line() {
    assert!(parse_resp(b"\r\nERR x\r\n").is_err());
    assert!(parse_resp(b"*2\r\n:1\r\n\r\n").is_err());
}

#[test]
fn parse_resp_negative_map_length() {
    assert!(parse_resp(b"%-1\r\n").is_err());
    assert!(parse_resp(b"|-2\r\n+OK\r\n").is_err());
}

#[test]
fn parse_resp_deep_nesting() {
    let mut input = b"*1\r\n".repeat(100_000);
    input.extend_from_slice(b":1\r\n");
    // A thread of the default test stack size, as the client's reader has.
    let handle = std::thread::spawn(move || parse_resp(&input).map(|r| r.map(|(_, used)| used)));
    assert_eq!(
        handle.join().unwrap(),
        Err("reply nested deeper than 1000 levels".to_string())
    );
}

#[test]
fn keyspace_json_scores_round_trip_exactly() {
    use evalbench::engine::keyspace::{keyspace_from_json, keyspace_to_json};
    let text = r#"{"z": {"type": "zset", "value": [["a", -91.26398983444395]]}}"#;
    let db = keyspace_from_json(text, 0).unwrap();
    let score = &keyspace_to_json(&db, 0)["z"]["value"][0][1];
    assert_eq!(score.as_f64(), Some(-91.26398983444395));
}

/// The parser's token walk (patched in vendor/full_moon) yields every token once, the same from
/// either end and mixed, on a chain nested in functions (the shape that made the walk quadratic).
#[test]
fn parser_tokens_in_order_from_both_ends() {
    use full_moon::node::Node;
    let source = format!(
        "local a = 1\nreturn {}(a{}) - a{}",
        "(function() return ".repeat(3),
        "<a".repeat(50),
        " end)()".repeat(3)
    );
    let ast = full_moon::parse(&source).unwrap();
    let forward: Vec<String> = ast.nodes().tokens().map(|t| t.to_string()).collect();
    let mut backward: Vec<String> = ast.nodes().tokens().rev().map(|t| t.to_string()).collect();
    backward.reverse();
    assert_eq!(forward, backward);
    // Every token once (a parenthesis pair comes before what it holds: upstream's order, kept).
    let sorted = |text: &str| {
        let mut bytes = text.as_bytes().to_vec();
        bytes.sort_unstable();
        bytes
    };
    assert_eq!(sorted(&forward.concat()), sorted(&source));
    assert_eq!(forward.first().map(|t| t.trim()), Some("local"));
    assert_eq!(forward.last().map(|t| t.trim()), Some(")"));
    // Alternating ends meet in the middle, each token once.
    let mut tokens = ast.nodes().tokens();
    let (mut front, mut back) = (Vec::new(), Vec::new());
    while let Some(t) = tokens.next() {
        front.push(t.to_string());
        match tokens.next_back() {
            Some(t) => back.push(t.to_string()),
            None => break,
        }
    }
    back.reverse();
    front.extend(back);
    assert_eq!(front, forward);
}

/// Found by the expression-depth target: a 1,500-operator chain in 50 nested functions took 0.5 s of
/// CPU to lint (seconds on a busy machine) because the parser's token walk was quadratic.
#[test]
fn a_long_chain_in_nested_functions_lints_and_debugs() {
    let source = format!(
        "local a = 1 local m = {{}} m.__index = m a = setmetatable({{}}, m)\nreturn {}((a{}) - a) {}",
        "(function() return ".repeat(50),
        "<a".repeat(1500),
        "end)() ".repeat(50)
    );
    super::targets::expression_depth(source.as_bytes());
    let findings = evalbench::engine::analysis::lint(&source);
    assert!(findings.iter().all(|d| d.rule != "syntax"), "{findings:?}");
}

/// A reused sandbox (as the fuzz targets and the workbench keep one) caches every script it
/// compiled; once the cache fills Lua's memory, a script past Lua's 200 syntax levels must still
/// get Redis's compile error (redis-server 7.0.15: 198 parentheses compile, 199 do not), not
/// "not enough memory" (which the expression_depth target read as "the run compiled").
#[test]
fn full_script_cache_still_gets_redis_compile_errors() {
    use evalbench::engine::{Reply, RunRequest, Sandbox};
    let mut sandbox = Sandbox::new();
    sandbox.config.memory_limit = 8 << 20;
    let limit = 8 << 20;
    let room = 600_000;
    let mut cached = 0;
    // Distinct constants, as Lua interns equal strings.
    while sandbox.lua_memory_used() + room < limit {
        let script = format!("return '{cached}{}'", "x".repeat(20_000));
        let report = sandbox.run(&RunRequest::new(script));
        assert!(matches!(report.reply, Reply::Bulk(_)), "{:?}", report.reply);
        cached += 1;
    }
    assert!(cached > 100, "only {cached} scripts filled the cache");
    // A long literal first: compiling needs more than the room the cache leaves.
    let deep = |levels: usize| {
        format!(
            "local s = '{}' return {}1{}",
            "y".repeat(room),
            "(".repeat(levels),
            ")".repeat(levels)
        )
    };
    let report = sandbox.run(&RunRequest::new(deep(199)));
    assert_eq!(
        report.reply,
        Reply::Error(
            "ERR Error compiling script (new function): user_script:1: chunk has too many syntax levels"
                .into()
        )
    );
    let report = sandbox.run(&RunRequest::new(deep(198)));
    assert_eq!(report.reply, Reply::Int(1));
}

/// Found by the expression-depth target: a script starting with ESC (the first byte of Lua's bytecode
/// signature) is Lua text to Redis and fails as text; the lint said Lua refused a binary chunk.
#[test]
fn a_script_starting_with_esc_is_text_to_the_lint_too() {
    let source = "\x1bocal a = 1\nreturn a";
    super::targets::expression_depth(source.as_bytes());
    let findings = evalbench::engine::analysis::lint(source);
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert_eq!(findings[0].message, "unexpected symbol near 'char(27)'");
}

/// Found by the expression-depth target: a syntax error near a long string that spans lines is one
/// line in the server's error reply (line breaks become spaces), and in the lint too.
#[test]
fn a_syntax_error_near_a_multi_line_long_string_is_one_line() {
    let source = "local [==[a\nb]==]";
    super::targets::expression_depth(source.as_bytes());
    let findings = evalbench::engine::analysis::lint(source);
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert_eq!(findings[0].message, "'<name>' expected near '[==[a b]==]'");
}
