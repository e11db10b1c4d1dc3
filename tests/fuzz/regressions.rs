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
