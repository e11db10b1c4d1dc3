//! "Save as case": a run (its KEYS, ARGV, seed and clock) and what it gave, appended to a test file
//! as a new `[[case]]` whose expectations are that result, written as `--update` writes them.

use super::update::{keyspace_value, update_table};
use super::Observed;
use crate::engine::reply::Protocol;
use serde_json::Value as Json;
use toml_edit::{value, Array, ArrayOfTables, DocumentMut, Item, Table};

/// A case to append.
#[derive(Debug, Clone)]
pub struct NewCase {
    pub name: String,
    pub keys: Vec<String>,
    pub argv: Vec<String>,
    pub protocol: Protocol,
    pub read_only: bool,
    /// Unix ms of the clock when the run started (its TTLs and TIME are relative to it).
    pub clock_ms: i64,
    /// The keyspace before the run, in the keyspace JSON format (TTLs relative to `clock_ms`).
    pub seed: Json,
    /// What the run gave: the case's expectations.
    pub observed: Observed,
}

/// `text` (a test file's, empty for a new file) with `case` appended. Refuses a name already
/// used, a file that is not TOML and a file that tests a function library (its cases FCALL).
pub fn append_case(text: &str, case: &NewCase) -> Result<String, String> {
    let name = case.name.trim();
    if name.is_empty() {
        return Err("a case needs a name: type one".into());
    }
    let mut doc: DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| {
        format!(
            "the test file is not valid TOML ({}): correct it first",
            e.message().trim_end()
        )
    })?;
    if doc.contains_key("function") {
        return Err("this test file FCALLs a function library: add the case by hand".into());
    }
    let cases = doc
        .entry("case")
        .or_insert(Item::ArrayOfTables(ArrayOfTables::new()));
    let Some(cases) = cases.as_array_of_tables_mut() else {
        return Err("`case` in the test file is not a list of [[case]] tables".into());
    };
    if cases
        .iter()
        .any(|c| c.get("name").and_then(Item::as_str) == Some(name))
    {
        return Err(format!(
            "a case named {name:?} exists already: case names must differ"
        ));
    }
    let mut table = Table::new();
    table.insert("name", value(name));
    table.insert("keys", value(string_array(&case.keys)));
    table.insert("argv", value(string_array(&case.argv)));
    if case.protocol == Protocol::Resp3 {
        table.insert("resp", value(3));
    }
    if case.read_only {
        table.insert("read_only", value(true));
    }
    table.insert("clock_ms", value(case.clock_ms));
    if case.seed.as_object().is_some_and(|o| !o.is_empty()) {
        table.insert("seed", value(keyspace_value(&case.seed, None, false)));
    }
    // The reply (or error) and the whole keyspace after the run.
    update_table(&mut table, &case.observed);
    if !case.observed.warnings.is_empty() {
        // The run's warnings are pinned too.
        table.insert("warnings", value(string_array(&case.observed.warnings)));
    }
    if !cases.is_empty() || !text.trim().is_empty() {
        // A blank line between cases, as one writes them.
        table.decor_mut().set_prefix("\n");
    }
    cases.push(table);
    let mut out = doc.to_string();
    if !out.ends_with('\n') {
        out.push('\n');
    }
    Ok(out)
}

/// The first name `case N` not used in `text` (the prompt's suggestion).
pub fn suggested_name(text: &str) -> String {
    let used: Vec<String> = text
        .parse::<DocumentMut>()
        .ok()
        .and_then(|doc| {
            doc.get("case")
                .and_then(Item::as_array_of_tables)
                .map(|cases| {
                    cases
                        .iter()
                        .filter_map(|c| c.get("name").and_then(Item::as_str).map(str::to_string))
                        .collect()
                })
        })
        .unwrap_or_default();
    (used.len() + 1..)
        .map(|n| format!("case {n}"))
        .find(|name| !used.contains(name))
        .unwrap_or_else(|| "new case".into())
}

fn string_array(items: &[String]) -> Array {
    let mut array = Array::new();
    for item in items {
        array.push(item.as_str());
    }
    array
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn counter_case(name: &str) -> NewCase {
        NewCase {
            name: name.into(),
            keys: vec!["c".into()],
            argv: vec!["2".into()],
            protocol: Protocol::Resp2,
            read_only: false,
            clock_ms: 1_700_000_000_000,
            seed: json!({"c": {"type": "string", "value": "1"}, "t": {"type": "string", "value": "x", "ttl_ms": 5000}}),
            observed: Observed {
                reply: json!({"int": 3}),
                error: None,
                keyspace: json!({"c": {"type": "string", "value": "3"}, "t": {"type": "string", "value": "x", "ttl_ms": 5000}}),
                warnings: vec![],
            },
        }
    }

    #[test]
    fn appends_a_case_that_parses_and_keeps_what_was_there() {
        let text = "# counter cases\n[[case]]\nname = \"first\"  # kept\nreply = { int = 1 }\n";
        let out = append_case(text, &counter_case("from the workbench")).unwrap();
        assert_eq!(
            out,
            "# counter cases\n[[case]]\nname = \"first\"  # kept\nreply = { int = 1 }\n\n[[case]]\nname = \"from the workbench\"\nkeys = [\"c\"]\nargv = [\"2\"]\nclock_ms = 1700000000000\nseed = { c = \"1\", t = { type = \"string\", value = \"x\", ttl_ms = 5000 } }\nreply = { int = 3 }\nkeyspace = { c = \"3\", t = { type = \"string\", value = \"x\", ttl_ms = 5000 } }\n"
        );
        let parsed =
            super::super::parse_test_file(std::path::Path::new("c.test.toml"), &out).unwrap();
        assert_eq!(parsed.cases.len(), 2);
        assert_eq!(
            append_case(&out, &counter_case("first")).unwrap_err(),
            "a case named \"first\" exists already: case names must differ"
        );
    }

    #[test]
    fn a_new_file_an_error_reply_and_warnings() {
        let mut case = counter_case("over");
        case.seed = json!({});
        case.observed.error = Some("ERR over the cap".into());
        case.observed.reply = json!({"error": "ERR over the cap"});
        case.observed.warnings = vec!["undeclared-key".into()];
        case.protocol = Protocol::Resp3;
        assert_eq!(
            append_case("", &case).unwrap(),
            "[[case]]\nname = \"over\"\nkeys = [\"c\"]\nargv = [\"2\"]\nresp = 3\nclock_ms = 1700000000000\nerror = \"ERR over the cap\"\nkeyspace = { c = \"3\", t = { type = \"string\", value = \"x\", ttl_ms = 5000 } }\nwarnings = [\"undeclared-key\"]\n"
        );
        assert_eq!(suggested_name(""), "case 1");
        assert_eq!(
            suggested_name("[[case]]\nname = \"case 2\"\n[[case]]\nname = \"b\"\n"),
            "case 3"
        );
        assert!(append_case("function = \"f\"\n", &case)
            .unwrap_err()
            .contains("function library"));
    }
}
