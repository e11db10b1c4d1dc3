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
