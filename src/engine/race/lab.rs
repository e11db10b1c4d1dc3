//! Race lab files (TOML): the logic written once, the seed keyspace, the clients' KEYS/ARGV and the
//! invariants; read with every mistake placed at its file:line:column. The built-in labs are data
//! files under samples/labs/, compiled in so `evalbench race stock_decrement` works from anywhere.

use crate::engine::formats::test_file::{line_column, to_json};
use serde::Deserialize;
use serde_json::Value as Json;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// The built-in labs: (name, file text).
pub const BUILTIN_LABS: [(&str, &str); 4] = [
    (
        "stock_decrement",
        include_str!("../../../samples/labs/stock_decrement.toml"),
    ),
    (
        "counter",
        include_str!("../../../samples/labs/counter.toml"),
    ),
    (
        "lock_release",
        include_str!("../../../samples/labs/lock_release.toml"),
    ),
    (
        "capped_counter",
        include_str!("../../../samples/labs/capped_counter.toml"),
    ),
];

/// The fewest and most simulated clients.
pub const MIN_CLIENTS: usize = 2;
pub const MAX_CLIENTS: usize = 8;
/// WATCH retries per client before it gives up, unless the lab says otherwise.
pub const DEFAULT_MAX_RETRIES: usize = 3;
/// The frozen clock of a lab (2026-01-01T00:00:00Z), so TTLs give the same result every time.
pub const DEFAULT_CLOCK_MS: i64 = crate::engine::testing::DEFAULT_CLOCK_MS;

/// A mistake in a lab file, where it is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}:{line}:{column}: {message}", path.display())]
pub struct LabError {
    pub path: PathBuf,
    pub line: usize,
    pub column: usize,
    pub message: String,
}

/// One invariant over the final keyspace: a Lua expression (`tonumber(redis.call('GET','stock')) >= 0`)
/// or a chunk that returns true when it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invariant {
    pub source: String,
    /// Where it is written (for error messages).
    pub line: usize,
    pub column: usize,
}

/// One client's own KEYS/ARGV (`[[client]]`), replacing the lab's templates.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClientSpec {
    pub keys: Option<Vec<String>>,
    pub argv: Option<Vec<String>>,
}

/// A race lab: the same logic run by N clients on one keyspace.
#[derive(Debug, Clone, PartialEq)]
pub struct Lab {
    pub name: String,
    pub about: String,
    pub path: PathBuf,
    /// The Lua logic, using `redis.call`, `KEYS` and `ARGV`.
    pub logic: String,
    /// The file line of the logic's first line (Lua line 1).
    pub logic_line: usize,
    pub clients: usize,
    /// KEYS and ARGV of every client; `{client}` becomes the client's number (1-based).
    pub keys: Vec<String>,
    pub argv: Vec<String>,
    /// Per-client overrides, client 1 first.
    pub client_specs: Vec<ClientSpec>,
    /// The keyspace every schedule starts from (keyspace JSON, as `--keyspace`).
    pub seed: Json,
    pub invariants: Vec<Invariant>,
    pub max_retries: usize,
    pub clock_ms: i64,
}

impl Lab {
    /// KEYS of client `index` (0-based).
    pub fn client_keys(&self, index: usize) -> Vec<Vec<u8>> {
        let spec = self.client_specs.get(index).and_then(|s| s.keys.as_ref());
        expand(spec.unwrap_or(&self.keys), index)
    }
    /// ARGV of client `index` (0-based).
    pub fn client_argv(&self, index: usize) -> Vec<Vec<u8>> {
        let spec = self.client_specs.get(index).and_then(|s| s.argv.as_ref());
        expand(spec.unwrap_or(&self.argv), index)
    }
}

fn expand(templates: &[String], index: usize) -> Vec<Vec<u8>> {
    let number = (index + 1).to_string();
    templates
        .iter()
        .map(|t| t.replace("{client}", &number).into_bytes())
        .collect()
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLab {
    name: Option<String>,
    about: Option<String>,
    logic: Option<Spanned<String>>,
    clients: Option<Spanned<i64>>,
    #[serde(default)]
    keys: Vec<String>,
    #[serde(default)]
    argv: Vec<String>,
    #[serde(default, rename = "client")]
    client_specs: Vec<RawClient>,
    seed: Option<Spanned<toml::Value>>,
    #[serde(default)]
    invariants: Vec<Spanned<String>>,
    max_retries: Option<Spanned<i64>>,
    clock_ms: Option<i64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawClient {
    keys: Option<Vec<String>>,
    argv: Option<Vec<String>>,
}

/// A built-in lab by name.
pub fn builtin_lab(name: &str) -> Option<Lab> {
    BUILTIN_LABS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(n, text)| {
            parse_lab(Path::new(&format!("samples/labs/{n}.toml")), text)
                .unwrap_or_else(|e| panic!("built-in lab: {e}"))
        })
}

/// Parse a lab file's text.
pub fn parse_lab(path: &Path, text: &str) -> Result<Lab, LabError> {
    let at = |span: std::ops::Range<usize>, message: String| {
        let (line, column) = line_column(text, span.start);
        LabError {
            path: path.to_path_buf(),
            line,
            column,
            message,
        }
    };
    let raw: RawLab = toml::from_str(text).map_err(|e| {
        at(
            e.span().unwrap_or(0..0),
            e.message().trim_end().replace('\n', ": "),
        )
    })?;
    let Some(logic) = raw.logic else {
        return Err(at(
            0..0,
            "no logic: add logic = '''...''' (Lua using redis.call, KEYS and ARGV)".into(),
        ));
    };
    // A multi-line string's first newline is not part of its value.
    let literal = &text[logic.span().start..];
    let skipped = usize::from(
        literal.starts_with("'''\n")
            || literal.starts_with("\"\"\"\n")
            || literal.starts_with("'''\r\n")
            || literal.starts_with("\"\"\"\r\n"),
    );
    let logic_line = line_column(text, logic.span().start).0 + skipped;
    let clients = match &raw.clients {
        Some(c) => client_count(*c.get_ref()).map_err(|m| at(c.span(), m))?,
        None => MIN_CLIENTS,
    };
    let seed = match &raw.seed {
        Some(s) => {
            let json = to_json(s.get_ref());
            if !json.is_object() {
                return Err(at(
                    s.span(),
                    "seed must be a table of key = value (the keyspace JSON format of --keyspace)"
                        .into(),
                ));
            }
            if let Err(e) =
                crate::engine::keyspace::json::keyspace_from_json_value(&json, DEFAULT_CLOCK_MS)
            {
                return Err(at(s.span(), format!("seed: {e}")));
            }
            json
        }
        None => Json::Object(Default::default()),
    };
    let max_retries = match &raw.max_retries {
        Some(r) if (0..=100).contains(r.get_ref()) => *r.get_ref() as usize,
        Some(r) => {
            return Err(at(
                r.span(),
                format!("max_retries = {}: give 0 to 100", r.get_ref()),
            ))
        }
        None => DEFAULT_MAX_RETRIES,
    };
    let invariants = raw
        .invariants
        .iter()
        .map(|i| {
            let (line, column) = line_column(text, i.span().start);
            Invariant {
                source: i.get_ref().clone(),
                line,
                column,
            }
        })
        .collect();
    Ok(Lab {
        name: raw.name.unwrap_or_else(|| {
            path.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
        }),
        about: raw.about.unwrap_or_default(),
        path: path.to_path_buf(),
        logic: logic.into_inner(),
        logic_line,
        clients,
        keys: raw.keys,
        argv: raw.argv,
        client_specs: raw
            .client_specs
            .into_iter()
            .map(|c| ClientSpec {
                keys: c.keys,
                argv: c.argv,
            })
            .collect(),
        seed,
        invariants,
        max_retries,
        clock_ms: raw.clock_ms.unwrap_or(DEFAULT_CLOCK_MS),
    })
}

/// Check a client count (the file's `clients` or `--clients`).
pub fn client_count(n: i64) -> Result<usize, String> {
    if (MIN_CLIENTS as i64..=MAX_CLIENTS as i64).contains(&n) {
        Ok(n as usize)
    } else {
        Err(format!(
            "{n} clients: a lab runs {MIN_CLIENTS} to {MAX_CLIENTS} clients"
        ))
    }
}
