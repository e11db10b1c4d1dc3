//! `evalbench test`: a script's expected behaviour pinned as cases (a test file beside the
//! script), run in the sandbox with a fixed clock, each difference reported by what and where.
//! The CLI (and later the workbench) are front ends over `run_case`.

pub(crate) mod check;
pub mod coverage;
pub mod live;
pub mod new_case;
pub mod update;

use crate::engine::clock::ManualClock;
use crate::engine::keyspace::{keyspace_from_json_value, keyspace_to_json};
use crate::engine::reply::Protocol;
use crate::engine::{RunReport, RunRequest, Sandbox};
use serde_json::{json, Value as Json};
use std::path::PathBuf;

pub use crate::engine::formats::test_file::{parse_test_file, TestFileError, DEFAULT_CLOCK_MS};
pub use coverage::{CoveredLine, ScriptCoverage};

/// A parsed test file.
#[derive(Debug, Clone)]
pub struct TestFile {
    pub path: PathBuf,
    /// The script under test (`script = ...`, or the file's name with `.lua`).
    pub script_path: PathBuf,
    /// The script is a function library (`#!lua name=`): runs FCALL this function (FCALL_RO
    /// for a step with `read_only`).
    pub function: Option<String>,
    pub cases: Vec<TestCase>,
}

/// A case: a seed keyspace, a start time and one or more runs sharing the keyspace.
#[derive(Debug, Clone)]
pub struct TestCase {
    pub name: String,
    /// Line of its `[[case]]` header.
    pub line: usize,
    /// The seed keyspace in the keyspace JSON format (TTLs relative to the start time).
    pub seed: Json,
    /// Unix ms of the clock when the first run starts.
    pub clock_ms: i64,
    pub steps: Vec<TestStep>,
}

/// One run (or `repeat` runs) of the script and what it must give.
#[derive(Debug, Clone)]
pub struct TestStep {
    pub line: usize,
    pub keys: Vec<String>,
    pub argv: Vec<String>,
    pub protocol: Protocol,
    pub read_only: bool,
    /// Milliseconds the clock moves before this step.
    pub advance_ms: i64,
    /// Runs of this step; the expectations apply to the last.
    pub repeat: u32,
    pub expect: Expect,
}

impl TestStep {
    /// The step as an EVAL of `script`.
    pub fn request(&self, script: &[u8]) -> RunRequest {
        RunRequest {
            script: script.to_vec(),
            keys: self.keys.iter().map(|k| k.as_bytes().to_vec()).collect(),
            argv: self.argv.iter().map(|a| a.as_bytes().to_vec()).collect(),
            protocol: self.protocol,
            read_only: self.read_only,
        }
    }

    /// The step as an FCALL of the function `name`.
    pub fn call(&self, name: &str) -> crate::engine::FunctionCall {
        crate::engine::FunctionCall {
            name: name.to_string(),
            keys: self.keys.iter().map(|k| k.as_bytes().to_vec()).collect(),
            argv: self.argv.iter().map(|a| a.as_bytes().to_vec()).collect(),
            protocol: self.protocol,
            read_only: self.read_only,
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct Expect {
    /// The reply in the `--json` form (null for nil).
    pub reply: Option<Json>,
    /// A Redis glob on the reply as redis-cli prints it.
    pub reply_match: Option<String>,
    /// The exact error text.
    pub error: Option<String>,
    pub error_match: Option<String>,
    pub keyspace: Option<KeyspaceExpect>,
    /// Keys that must not exist after the run.
    pub absent: Vec<String>,
    /// The warning kinds the run gives (all of them, any order).
    pub warnings: Option<Vec<String>>,
}

impl Expect {
    pub fn checks_something(&self) -> bool {
        self.reply.is_some()
            || self.reply_match.is_some()
            || self.error.is_some()
            || self.error_match.is_some()
            || self.keyspace.is_some()
            || !self.absent.is_empty()
            || self.warnings.is_some()
    }
}

#[derive(Debug, Clone)]
pub struct KeyspaceExpect {
    pub matching: KeyspaceMatch,
    /// Key, its value as written (without `ttl_ms`), its TTL expectation.
    pub keys: Vec<(String, Json, TtlExpect)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyspaceMatch {
    /// The keyspace is exactly the listed keys.
    Exact,
    /// The listed keys are as given; others may exist.
    Partial,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TtlExpect {
    /// No `ttl_ms`: the key must not expire.
    None,
    /// Remaining milliseconds within [low, high].
    Range(i64, i64),
    Any,
}

/// One difference between a case's expectation and its run.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// 1-based step number.
    pub step: usize,
    /// Line of the step (or of the case when it has one run).
    pub line: usize,
    /// `reply`, `error`, `keyspace`, `warnings`, `seed`, `checks`.
    pub what: &'static str,
    pub message: String,
}

/// What the last run of a step gave, for the report and `--update`.
#[derive(Debug, Clone, PartialEq)]
pub struct Observed {
    pub reply: Json,
    pub error: Option<String>,
    pub keyspace: Json,
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct CaseResult {
    pub name: String,
    pub line: usize,
    pub failures: Vec<Failure>,
    pub observed: Vec<Observed>,
    pub runs: u64,
    pub elapsed_ns: u64,
    /// A run of the case wrote (the live guard asks for consent before sending such a case).
    pub wrote: bool,
    /// Where a run was stopped inside one C call SCRIPT KILL cannot interrupt, as `line N: what`
    /// (such a case is never sent to a live server).
    pub stopped_in_c: Vec<String>,
}

impl CaseResult {
    /// A case before its first run.
    pub fn new(case: &TestCase) -> CaseResult {
        CaseResult {
            name: case.name.clone(),
            line: case.line,
            failures: Vec::new(),
            observed: Vec::new(),
            runs: 0,
            elapsed_ns: 0,
            wrote: false,
            stopped_in_c: Vec::new(),
        }
    }

    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }

    pub fn to_json(&self) -> Json {
        json!({
            "name": self.name,
            "line": self.line,
            "passed": self.passed(),
            "runs": self.runs,
            "elapsed_us": self.elapsed_ns / 1000,
            "failures": self.failures.iter().map(|f| json!({
                "step": f.step, "line": f.line, "what": f.what, "message": f.message,
            })).collect::<Vec<_>>(),
        })
    }
}

/// What a run gave, in the terms of a test file: the reply under `protocol`, its error text, the
/// keyspace `db` after it (TTLs from `now_ms`) and the kinds of its warnings.
pub fn observe(
    report: &crate::engine::RunReport,
    protocol: Protocol,
    db: &crate::engine::keyspace::Db,
    now_ms: i64,
) -> Observed {
    let reply = report.reply_for(protocol);
    let mut warnings: Vec<String> = report
        .warnings
        .iter()
        .map(|w| w.kind.name().to_string())
        .collect();
    warnings.sort();
    warnings.dedup();
    Observed {
        reply: reply.to_json(),
        error: match &reply {
            crate::engine::Reply::Error(text) => Some(text.clone()),
            _ => None,
        },
        keyspace: keyspace_to_json(db, now_ms),
        warnings,
    }
}

/// Run one case in a fresh sandbox whose clock starts at the case's time and moves only by
/// `advance_ms`, so the result is the same whenever and wherever it runs.
pub fn run_case(
    script: &[u8],
    function: Option<&str>,
    case: &TestCase,
    memory_limit: Option<usize>,
) -> CaseResult {
    run_case_counting(script, function, case, memory_limit, None)
}

/// `run_case`, counting the lines each run executes into `coverage` (`--coverage`). The runs of a
/// function library are not counted: the debugger does not follow an FCALL.
pub fn run_case_counting(
    script: &[u8],
    function: Option<&str>,
    case: &TestCase,
    memory_limit: Option<usize>,
    coverage: Option<&mut ScriptCoverage>,
) -> CaseResult {
    run_case_in(script, function, case, memory_limit, coverage, &|clock| {
        Sandbox::with_clock(Box::new(clock))
    })
}

/// `run_case_counting` in a sandbox `make` builds on the case's clock (a lesson's check limits
/// each run's time and can stop it).
pub fn run_case_in(
    script: &[u8],
    function: Option<&str>,
    case: &TestCase,
    memory_limit: Option<usize>,
    mut coverage: Option<&mut ScriptCoverage>,
    make: &dyn Fn(ManualClock) -> Sandbox,
) -> CaseResult {
    let clock = ManualClock::new(case.clock_ms.saturating_mul(1000));
    let mut sandbox = make(clock.clone());
    if let Some(limit) = memory_limit {
        sandbox.config.memory_limit = limit;
    }
    let mut result = CaseResult::new(case);
    if let Err(failure) = set_up(&mut sandbox, script, function, case) {
        result.failures.push(failure);
        return result;
    }
    // A case of one run written without [[case.step]] has no step numbers to speak of.
    let numbered = !(case.steps.len() == 1 && case.steps[0].line == case.line);
    for (index, step) in case.steps.iter().enumerate() {
        clock.advance_ms(step.advance_ms);
        let report = run_step(
            &mut sandbox,
            script,
            function,
            step,
            coverage.as_deref_mut(),
            &mut result,
        );
        let reply = report.reply_for(step.protocol);
        let observed = observe(
            &report,
            step.protocol,
            sandbox.keyspace().db(0),
            sandbox.now_ms(),
        );
        for (what, message) in check::differences(&step.expect, &observed, &reply) {
            result.failures.push(Failure {
                step: if numbered { index + 1 } else { 0 },
                line: step.line,
                what,
                message,
            });
        }
        result.observed.push(observed);
    }
    if case.steps.iter().all(|s| !s.expect.checks_something()) {
        result.failures.push(Failure {
            step: 0,
            line: case.line,
            what: "checks",
            message: "this case checks nothing: add reply, error or keyspace (or run `evalbench test --update` to write what the script gives now)".into(),
        });
    }
    result
}

/// The case's seed in database 0 and, for a library, the library loaded; a failure of the case
/// (at its line) when either is wrong.
fn set_up(
    sandbox: &mut Sandbox,
    script: &[u8],
    function: Option<&str>,
    case: &TestCase,
) -> Result<(), Failure> {
    let failure = |message| Failure {
        step: 0,
        line: case.line,
        what: "seed",
        message,
    };
    let db = keyspace_from_json_value(&case.seed, case.clock_ms)
        .map_err(|e| failure(format!("the seed keyspace is not valid: {e}")))?;
    sandbox.set_db0(db);
    if function.is_some() {
        sandbox
            .function_load(script, false)
            .map_err(|e| failure(format!("the library does not load: {e}")))?;
    }
    Ok(())
}

/// One step, run `repeat` times (EVAL, or FCALL of `function`; under the coverage debugger
/// when counting lines); the runs are added to `result`; the last run's report.
fn run_step(
    sandbox: &mut Sandbox,
    script: &[u8],
    function: Option<&str>,
    step: &TestStep,
    mut coverage: Option<&mut ScriptCoverage>,
    result: &mut CaseResult,
) -> RunReport {
    let request = step.request(script);
    let call = function.map(|name| step.call(name));
    let mut report = None;
    for _ in 0..step.repeat {
        let r = match (&call, coverage.as_deref_mut()) {
            (Some(call), _) => sandbox.fcall(call),
            (None, Some(coverage)) => {
                let debugged = sandbox.debug(
                    &request,
                    &mut coverage.session,
                    &mut crate::engine::debug::NoStops,
                );
                if let Some(counts) = &debugged.coverage {
                    coverage.add(counts);
                }
                debugged.run
            }
            (None, None) => sandbox.run(&request),
        };
        result.runs += 1;
        result.elapsed_ns += r.elapsed_ns;
        result.wrote |= r.first_write_ns.is_some();
        for place in crate::engine::live::guarded::stopped_in_c(&r) {
            if !result.stopped_in_c.contains(&place) {
                result.stopped_in_c.push(place);
            }
        }
        report = Some(r);
    }
    report.expect("repeat is at least 1")
}
