//! Every script of `samples/` runs in the sandbox with the keys, ARGV and seed keyspace of its
//! sidecar (`samples/<name>.json`), and must reply exactly the sidecar's `expected` (the reply a
//! real Redis 7.0 gives, in the typed JSON of `evalbench run --json`).

use evalbench::engine::keyspace::keyspace_from_json;
use evalbench::engine::{RunReport, RunRequest, Sandbox};
use serde_json::Value as Json;
use std::path::{Path, PathBuf};

/// The fewest samples the directory must hold.
const MIN_SAMPLES: usize = 10;

struct Sample {
    name: String,
    script: String,
    sidecar: Json,
}

fn samples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("samples")
}

/// Every `samples/*.lua` with its parsed sidecar, in file-name order. Panics on a sample without
/// a sidecar or with one that is not JSON.
fn load_samples() -> Vec<Sample> {
    let dir = samples_dir();
    let mut scripts: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "lua"))
        .collect();
    scripts.sort();
    scripts
        .iter()
        .map(|path| {
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            let script =
                std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let sidecar_path = path.with_extension("json");
            let text = std::fs::read_to_string(&sidecar_path).unwrap_or_else(|e| {
                panic!(
                    "sample {name} has no sidecar {}: {e}",
                    sidecar_path.display()
                )
            });
            let sidecar: Json = serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("{}: not JSON: {e}", sidecar_path.display()));
            Sample {
                name,
                script,
                sidecar,
            }
        })
        .collect()
}

/// A sidecar list of strings (`keys`, `argv`); missing means empty.
fn strings(sample: &Sample, field: &str) -> Vec<Vec<u8>> {
    match sample.sidecar.get(field) {
        None => Vec::new(),
        Some(Json::Array(items)) => items
            .iter()
            .map(|v| {
                v.as_str()
                    .unwrap_or_else(|| {
                        panic!("{}.json: {field} must hold strings: {v}", sample.name)
                    })
                    .as_bytes()
                    .to_vec()
            })
            .collect(),
        Some(other) => panic!("{}.json: {field} must be a list: {other}", sample.name),
    }
}

/// Run one sample in a fresh sandbox seeded from its sidecar.
fn run_sample(sample: &Sample) -> (RunRequest, RunReport) {
    let mut sandbox = Sandbox::new();
    if let Some(keyspace) = sample.sidecar.get("keyspace") {
        let db = keyspace_from_json(&keyspace.to_string(), sandbox.now_ms())
            .unwrap_or_else(|e| panic!("{}.json: bad keyspace: {e}", sample.name));
        sandbox.set_db0(db);
    }
    let request = RunRequest {
        script: sample.script.as_bytes().to_vec(),
        keys: strings(sample, "keys"),
        argv: strings(sample, "argv"),
        ..RunRequest::default()
    };
    // A function library's sidecar names the function to FCALL.
    let report = match sample.sidecar.get("function").and_then(Json::as_str) {
        Some(name) => {
            sandbox
                .function_load(&request.script, false)
                .unwrap_or_else(|e| panic!("{}: FUNCTION LOAD: {e}", sample.name));
            sandbox.fcall(&evalbench::engine::FunctionCall {
                name: name.into(),
                keys: request.keys.clone(),
                argv: request.argv.clone(),
                ..Default::default()
            })
        }
        None => sandbox.run(&request),
    };
    (request, report)
}

#[test]
fn there_are_enough_samples() {
    let samples = load_samples();
    let names: Vec<&str> = samples.iter().map(|s| s.name.as_str()).collect();
    assert!(
        samples.len() >= MIN_SAMPLES,
        "expected at least {MIN_SAMPLES} samples, found {}: {names:?}",
        samples.len()
    );
}

#[test]
fn every_sample_has_a_complete_sidecar() {
    for sample in load_samples() {
        let name = &sample.name;
        let description = sample.sidecar.get("description").and_then(Json::as_str);
        assert!(
            description.is_some_and(|d| !d.trim().is_empty()),
            "{name}.json: description must be a non-empty string"
        );
        assert!(
            sample.sidecar.get("expected").is_some(),
            "{name}.json: no expected reply"
        );
        assert!(
            sample.sidecar.get("keyspace").is_none_or(|k| k.is_object()),
            "{name}.json: keyspace must be an object"
        );
        strings(&sample, "keys");
        strings(&sample, "argv");
    }
}

#[test]
fn no_sidecar_without_a_sample() {
    let dir = samples_dir();
    for entry in std::fs::read_dir(&dir).unwrap().filter_map(|e| e.ok()) {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "json") {
            assert!(
                path.with_extension("lua").exists(),
                "{} has no script next to it",
                path.display()
            );
        }
    }
}

#[test]
fn every_sample_replies_as_its_sidecar_expects() {
    let samples = load_samples();
    let mut failures = Vec::new();
    for sample in &samples {
        let expected = &sample.sidecar["expected"];
        let (request, report) = run_sample(sample);
        let actual = report.reply_for(request.protocol).to_json();
        if &actual != expected {
            failures.push(format!(
                "{}: expected {expected}\n{}  actual {actual}",
                sample.name,
                " ".repeat(sample.name.len())
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} samples reply differently:\n{}",
        failures.len(),
        samples.len(),
        failures.join("\n")
    );
}

/// Samples teach good habits: running one must not draw any of the workbench's warnings
/// (undeclared keys, keys in several cluster slots, a write followed by an error, ...).
#[test]
fn samples_draw_no_warnings() {
    let mut failures = Vec::new();
    for sample in &load_samples() {
        let (_, report) = run_sample(sample);
        for w in &report.warnings {
            failures.push(format!(
                "{}: line {}: {}: {}",
                sample.name,
                w.line,
                w.kind.name(),
                w.message
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
