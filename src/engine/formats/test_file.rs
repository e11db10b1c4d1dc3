//! Test files (`NAME.test.toml` beside `NAME.lua`): cases of runs with their expected results, read
//! with every mistake placed at its file:line:column.

use crate::engine::reply::Protocol;
use crate::engine::testing::{
    Expect, KeyspaceExpect, KeyspaceMatch, TestCase, TestFile, TestStep, TtlExpect,
};
use serde::Deserialize;
use serde_json::Value as Json;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// The clock every case starts at unless it sets `clock_ms`: 2026-01-01T00:00:00Z, so a test
/// gives the same result whenever it runs.
pub const DEFAULT_CLOCK_MS: i64 = 1_767_225_600_000;

/// A mistake in a test file, where it is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}:{line}:{column}: {message}", path.display())]
pub struct TestFileError {
    pub path: PathBuf,
    pub line: usize,
    pub column: usize,
    pub message: String,
}

/// One table of the file: a case, or a step of one (`[[case.step]]`). One shape for both so that
/// a step can say everything a single-run case says; `check` refuses what belongs to the case.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRun {
    name: Option<Spanned<String>>,
    keys: Option<Vec<String>>,
    argv: Option<Vec<String>>,
    seed: Option<Spanned<toml::Value>>,
    clock_ms: Option<Spanned<i64>>,
    advance_ms: Option<Spanned<i64>>,
    repeat: Option<Spanned<i64>>,
    resp: Option<Spanned<i64>>,
    read_only: Option<bool>,
    reply: Option<Spanned<toml::Value>>,
    reply_match: Option<String>,
    error: Option<String>,
    error_match: Option<String>,
    keyspace: Option<Spanned<toml::Value>>,
    keyspace_match: Option<Spanned<String>>,
    absent: Option<Vec<String>>,
    warnings: Option<Vec<String>>,
    step: Option<Vec<Spanned<RawRun>>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    script: Option<Spanned<String>>,
    /// The script is a function library: each run FCALLs this function of it.
    function: Option<String>,
    resp: Option<Spanned<i64>>,
    clock_ms: Option<Spanned<i64>>,
    #[serde(default, rename = "case")]
    cases: Vec<Spanned<RawRun>>,
}

/// The script a test file tests when it does not name one: `x.test.toml` → `x.lua`.
pub fn default_script_path(test_path: &Path) -> PathBuf {
    test_path.with_file_name(swap_suffix(test_path, ".test.toml", ".lua"))
}

/// The file name of `path` with `suffix` replaced by `with` (appended when it does not end so).
/// On Unix it works on the name's bytes: a name that is not UTF-8 keeps its bytes.
fn swap_suffix(path: &Path, suffix: &str, with: &str) -> std::ffi::OsString {
    let name = path.file_name().unwrap_or_default();
    #[cfg(unix)]
    {
        use std::os::unix::ffi::{OsStrExt, OsStringExt};
        let bytes = name.as_bytes();
        let mut out = bytes
            .strip_suffix(suffix.as_bytes())
            .unwrap_or(bytes)
            .to_vec();
        out.extend_from_slice(with.as_bytes());
        std::ffi::OsString::from_vec(out)
    }
    #[cfg(not(unix))]
    {
        let name = name.to_string_lossy();
        let stem = name.strip_suffix(suffix).unwrap_or(&name);
        format!("{stem}{with}").into()
    }
}

/// The test file of a script: `x.lua` → `x.test.toml` (the workbench's "save as case").
pub fn test_file_for(script: &Path) -> PathBuf {
    script.with_file_name(swap_suffix(script, ".lua", ".test.toml"))
}

/// Parse a test file's text.
pub fn parse_test_file(path: &Path, text: &str) -> Result<TestFile, TestFileError> {
    let at = |span: std::ops::Range<usize>, message: String| {
        let (line, column) = line_column(text, span.start);
        TestFileError {
            path: path.to_path_buf(),
            line,
            column,
            message,
        }
    };
    let raw: RawFile = toml::from_str(text).map_err(|e| {
        at(
            e.span().unwrap_or(0..0),
            e.message().trim_end().replace('\n', ": "),
        )
    })?;
    let script_path = match &raw.script {
        Some(s) => path
            .parent()
            .unwrap_or(Path::new(""))
            .join(s.get_ref().as_str()),
        None => default_script_path(path),
    };
    let file_resp = match &raw.resp {
        Some(r) => protocol(r).map_err(|m| at(r.span(), m))?,
        None => Protocol::Resp2,
    };
    let file_clock = raw
        .clock_ms
        .as_ref()
        .map(|c| *c.get_ref())
        .unwrap_or(DEFAULT_CLOCK_MS);
    if raw.cases.is_empty() {
        return Err(at(
            0..0,
            "no [[case]] in this file: add one, e.g.\n[[case]]\nname = \"first\"\nkeys = [\"k\"]\nargv = [\"1\"]\nreply = { int = 1 }".into(),
        ));
    }
    let mut cases: Vec<TestCase> = Vec::new();
    for spanned in &raw.cases {
        let case = case(text, spanned, file_resp, file_clock, &cases, &at)?;
        cases.push(case);
    }
    Ok(TestFile {
        path: path.to_path_buf(),
        script_path,
        function: raw.function.clone(),
        cases,
    })
}

/// Where a problem is: a span of the file and what is wrong there.
type At<'a> = &'a dyn Fn(std::ops::Range<usize>, String) -> TestFileError;

/// One `[[case]]`: its name (new among `earlier`), seed, clock and steps; the protocol and the
/// clock fall back to the file's.
fn case(
    text: &str,
    spanned: &Spanned<RawRun>,
    file_resp: Protocol,
    file_clock: i64,
    earlier: &[TestCase],
    at: At,
) -> Result<TestCase, TestFileError> {
    let span = spanned.span();
    let run = spanned.get_ref();
    let name = match &run.name {
        Some(n) if !n.get_ref().trim().is_empty() => n.get_ref().clone(),
        _ => return Err(at(span, "this case has no name: add name = \"...\"".into())),
    };
    if earlier.iter().any(|c| c.name == name) {
        return Err(at(
            run.name.as_ref().map(Spanned::span).unwrap_or(span),
            format!("a second case named {name:?}: case names must differ (they name failures)"),
        ));
    }
    let seed = match &run.seed {
        Some(s) => {
            let json = to_json(s.get_ref());
            if !json.is_object() {
                return Err(at(
                    s.span(),
                    "seed must be a table of key = value (the keyspace JSON format of --keyspace)"
                        .into(),
                ));
            }
            json
        }
        None => Json::Object(Default::default()),
    };
    let clock_ms = run
        .clock_ms
        .as_ref()
        .map(|c| *c.get_ref())
        .unwrap_or(file_clock);
    let defaults = StepDefaults {
        keys: run.keys.clone().unwrap_or_default(),
        argv: run.argv.clone().unwrap_or_default(),
        protocol: match &run.resp {
            Some(r) => protocol(r).map_err(|m| at(r.span(), m))?,
            None => file_resp,
        },
        read_only: run.read_only.unwrap_or(false),
    };
    Ok(TestCase {
        name,
        line: line_column(text, span.start).0,
        seed,
        clock_ms,
        steps: case_steps(text, run, span, &defaults, at)?,
    })
}

/// A case's runs: the case itself when it has no `[[case.step]]`, else each step (which may not
/// set what belongs to the whole case).
fn case_steps(
    text: &str,
    run: &RawRun,
    span: std::ops::Range<usize>,
    defaults: &StepDefaults,
    at: At,
) -> Result<Vec<TestStep>, TestFileError> {
    let Some(steps) = &run.step else {
        let mut only = step(run, defaults, span.clone(), at)?;
        only.line = line_column(text, span.start).0;
        return Ok(vec![only]);
    };
    if let Some(what) = expectation_names(run).first() {
        return Err(at(span, format!("this case has steps, so `{what}` belongs in a [[case.step]]: a case checks either one run or its steps")));
    }
    if steps.is_empty() {
        return Err(at(
            span,
            "step = [] has no steps: add [[case.step]] tables or remove it".into(),
        ));
    }
    let mut out = Vec::new();
    for s in steps {
        let inner = s.get_ref();
        for (present, what) in [
            (inner.name.is_some(), "name"),
            (inner.seed.is_some(), "seed"),
            (inner.clock_ms.is_some(), "clock_ms"),
            (inner.step.is_some(), "step"),
        ] {
            if present {
                return Err(at(
                    s.span(),
                    format!("`{what}` is set per case, not per step: move it to the [[case]]"),
                ));
            }
        }
        let mut one = step(inner, defaults, s.span(), at)?;
        one.line = line_column(text, s.span().start).0;
        out.push(one);
    }
    Ok(out)
}

struct StepDefaults {
    keys: Vec<String>,
    argv: Vec<String>,
    protocol: Protocol,
    read_only: bool,
}

fn expectation_names(run: &RawRun) -> Vec<&'static str> {
    [
        (run.reply.is_some(), "reply"),
        (run.reply_match.is_some(), "reply_match"),
        (run.error.is_some(), "error"),
        (run.error_match.is_some(), "error_match"),
        (run.keyspace.is_some(), "keyspace"),
        (run.keyspace_match.is_some(), "keyspace_match"),
        (run.absent.is_some(), "absent"),
        (run.warnings.is_some(), "warnings"),
        (run.repeat.is_some(), "repeat"),
        (run.advance_ms.is_some(), "advance_ms"),
    ]
    .into_iter()
    .filter(|(present, _)| *present)
    .map(|(_, name)| name)
    .collect()
}

fn step(
    run: &RawRun,
    defaults: &StepDefaults,
    span: std::ops::Range<usize>,
    at: &dyn Fn(std::ops::Range<usize>, String) -> TestFileError,
) -> Result<TestStep, TestFileError> {
    let repeat = match &run.repeat {
        Some(r) if (1..=1_000_000).contains(r.get_ref()) => *r.get_ref() as u32,
        Some(r) => {
            return Err(at(
                r.span(),
                format!(
                    "repeat = {} is out of range: give 1 to 1000000 runs",
                    r.get_ref()
                ),
            ))
        }
        None => 1,
    };
    let advance_ms = match &run.advance_ms {
        Some(a) if *a.get_ref() >= 0 => *a.get_ref(),
        Some(a) => {
            return Err(at(
                a.span(),
                "advance_ms must be 0 or more: the clock only moves forward".into(),
            ))
        }
        None => 0,
    };
    if run.reply.is_some() && run.error.is_some() {
        return Err(at(
            span,
            "both `reply` and `error`: a run gives one of them; keep the one you expect".into(),
        ));
    }
    let reply = match &run.reply {
        Some(r) => {
            let json = reply_from_toml(r.get_ref());
            check_reply_form(&json).map_err(|m| at(r.span(), m))?;
            Some(json)
        }
        None => None,
    };
    let keyspace = match &run.keyspace {
        Some(k) => Some(keyspace_expect(k, run.keyspace_match.as_ref(), at)?),
        None => {
            if let Some(m) = &run.keyspace_match {
                return Err(at(
                    m.span(),
                    "keyspace_match without keyspace: add keyspace = { ... }".into(),
                ));
            }
            None
        }
    };
    Ok(TestStep {
        line: 0,
        keys: run.keys.clone().unwrap_or_else(|| defaults.keys.clone()),
        argv: run.argv.clone().unwrap_or_else(|| defaults.argv.clone()),
        protocol: match &run.resp {
            Some(r) => protocol(r).map_err(|m| at(r.span(), m))?,
            None => defaults.protocol,
        },
        read_only: run.read_only.unwrap_or(defaults.read_only),
        advance_ms,
        repeat,
        expect: Expect {
            reply,
            reply_match: run.reply_match.clone(),
            error: run.error.clone(),
            error_match: run.error_match.clone(),
            keyspace,
            absent: run.absent.clone().unwrap_or_default(),
            warnings: run.warnings.clone(),
        },
    })
}

fn protocol(r: &Spanned<i64>) -> Result<Protocol, String> {
    u8::try_from(*r.get_ref())
        .ok()
        .and_then(Protocol::from_number)
        .ok_or_else(|| format!("resp = {} is not a protocol: give 2 or 3", r.get_ref()))
}

fn keyspace_expect(
    k: &Spanned<toml::Value>,
    mode: Option<&Spanned<String>>,
    at: &dyn Fn(std::ops::Range<usize>, String) -> TestFileError,
) -> Result<KeyspaceExpect, TestFileError> {
    let matching = match mode.map(|m| (m.get_ref().as_str(), m.span())) {
        None | Some(("exact", _)) => KeyspaceMatch::Exact,
        Some(("partial", _)) => KeyspaceMatch::Partial,
        Some((other, span)) => {
            return Err(at(span, format!("keyspace_match = {other:?}: give \"exact\" (the keyspace is exactly these keys) or \"partial\" (these keys, others allowed)")))
        }
    };
    let toml::Value::Table(table) = k.get_ref() else {
        return Err(at(
            k.span(),
            "keyspace must be a table of key = value (the keyspace JSON format)".into(),
        ));
    };
    let mut keys = Vec::new();
    for (key, spec) in table {
        let mut json = to_json(spec);
        let ttl = match json.as_object_mut().and_then(|o| o.remove("ttl_ms")) {
            None => TtlExpect::None,
            Some(Json::Number(n)) if n.as_i64().is_some_and(|v| v >= 0) => {
                let v = n.as_i64().unwrap_or(0);
                TtlExpect::Range(v, v)
            }
            Some(Json::Array(pair))
                if pair.len() == 2 && pair.iter().all(|v| v.as_i64().is_some_and(|v| v >= 0)) =>
            {
                let (lo, hi) = (pair[0].as_i64().unwrap_or(0), pair[1].as_i64().unwrap_or(0));
                if lo > hi {
                    return Err(at(k.span(), format!("key {key:?}: ttl_ms = [{lo}, {hi}]: the low end is above the high end")));
                }
                TtlExpect::Range(lo, hi)
            }
            Some(Json::String(s)) if s == "any" => TtlExpect::Any,
            Some(other) => {
                return Err(at(k.span(), format!("key {key:?}: ttl_ms = {other}: give milliseconds (60000), a range [59000, 60000] or \"any\"")))
            }
        };
        crate::engine::testing::check::canonical_entry(key, &json).map_err(|m| at(k.span(), m))?;
        keys.push((key.clone(), json, ttl));
    }
    Ok(KeyspaceExpect { matching, keys })
}

/// A reply in the `--json` form, written in TOML: TOML has no null, so `{ nil = true }` stands for it.
pub fn reply_from_toml(v: &toml::Value) -> Json {
    match v {
        toml::Value::Table(t)
            if t.len() == 1 && t.get("nil") == Some(&toml::Value::Boolean(true)) =>
        {
            Json::Null
        }
        toml::Value::Table(t) => Json::Object(
            t.iter()
                .map(|(k, v)| (k.clone(), reply_from_toml(v)))
                .collect(),
        ),
        toml::Value::Array(items) => Json::Array(items.iter().map(reply_from_toml).collect()),
        other => to_json(other),
    }
}

/// Refuse a `reply` that no run can give, saying what the form is.
fn check_reply_form(json: &Json) -> Result<(), String> {
    const KINDS: &str = "{ int = 1 }, { bulk = \"text\" }, { status = \"OK\" }, { error = \"ERR ...\" }, { nil = true }, { array = [...] }, { double = 1.5 }, { bool = true }, { map = [[k, v], ...] }, { set = [...] }";
    match json {
        Json::Null => Ok(()),
        Json::Object(o) if o.len() == 1 => {
            let (kind, inner) = o.iter().next().expect("one entry");
            match kind.as_str() {
                "array" | "set" => match inner {
                    Json::Array(items) => items.iter().try_for_each(check_reply_form),
                    _ => Err(format!("{kind} must hold a list: {kind} = [...]")),
                },
                "map" => match inner {
                    Json::Array(pairs) => pairs.iter().try_for_each(|p| match p.as_array().map(Vec::as_slice) {
                        Some([k, v]) => check_reply_form(k).and_then(|_| check_reply_form(v)),
                        _ => Err("map must hold [key, value] pairs: map = [[{ bulk = \"k\" }, { int = 1 }]]".into()),
                    }),
                    _ => Err("map must hold [key, value] pairs".into()),
                },
                "int" | "bulk" | "bulk_b64" | "status" | "error" | "double" | "bool" | "big_number" | "verbatim" => Ok(()),
                other => Err(format!("{other:?} is not a reply kind: write one of {KINDS}")),
            }
        }
        _ => Err(format!(
            "a reply is one kind with its value: one of {KINDS}"
        )),
    }
}

/// TOML → JSON (TOML's dates become their text).
pub fn to_json(v: &toml::Value) -> Json {
    match v {
        toml::Value::String(s) => Json::String(s.clone()),
        toml::Value::Integer(i) => Json::from(*i),
        toml::Value::Float(f) => serde_json::Number::from_f64(*f)
            .map(Json::Number)
            .unwrap_or_else(|| {
                Json::String(if f.is_sign_negative() { "-inf" } else { "inf" }.into())
            }),
        toml::Value::Boolean(b) => Json::Bool(*b),
        toml::Value::Datetime(d) => Json::String(d.to_string()),
        toml::Value::Array(items) => Json::Array(items.iter().map(to_json).collect()),
        toml::Value::Table(t) => {
            Json::Object(t.iter().map(|(k, v)| (k.clone(), to_json(v))).collect())
        }
    }
}

/// 1-based line and column (in characters) of a byte offset.
pub fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..text.floor_char_boundary(offset)];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}
