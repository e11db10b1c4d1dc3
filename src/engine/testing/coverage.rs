//! `evalbench test --coverage`: the lines of a script its cases ran, counted by the debugger's line
//! hook (the same counting as `run --coverage`) and summed over every run of every case.

use crate::engine::debug::DebugSession;
use serde_json::{json, Value as Json};
use std::collections::BTreeMap;

/// Executions per line of one script, over the cases run so far.
#[derive(Debug, Clone)]
pub struct ScriptCoverage {
    /// A debug session that never stops and counts lines (it knows which lines hold code).
    pub(super) session: DebugSession,
    counts: BTreeMap<u32, u64>,
}

/// One line that holds code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoveredLine {
    pub line: u32,
    /// Executions over every case (0: never run).
    pub count: u64,
    pub source: String,
}

impl ScriptCoverage {
    /// Counting for `script`; a script that does not compile has no lines to count (Lua's message).
    pub fn new(script: &[u8]) -> Result<ScriptCoverage, String> {
        let mut session = DebugSession::new(script).map_err(|(message, _)| message)?;
        session.coverage = true;
        session.stop_at_start = false;
        session.break_on_error = false;
        Ok(ScriptCoverage {
            session,
            counts: BTreeMap::new(),
        })
    }

    /// Executions per line that ran (lines never run are absent).
    pub fn counts(&self) -> &BTreeMap<u32, u64> {
        &self.counts
    }

    /// The debug session that counted: which lines hold code, the source.
    pub fn session(&self) -> &DebugSession {
        &self.session
    }

    /// Add one run's counts.
    pub(super) fn add(&mut self, run: &BTreeMap<u32, u64>) {
        for (line, n) in run {
            *self.counts.entry(*line).or_insert(0) += n;
        }
    }

    /// Every line with code, in order, with its executions.
    pub fn lines(&self) -> Vec<CoveredLine> {
        (1..=self.session.line_count())
            .filter(|&l| self.session.has_code(l))
            .map(|line| CoveredLine {
                line,
                count: self.counts.get(&line).copied().unwrap_or(0),
                source: self.session.source_line(line).unwrap_or("").to_string(),
            })
            .collect()
    }

    /// (lines run, lines with code).
    pub fn summary(&self) -> (usize, usize) {
        let lines = self.lines();
        (lines.iter().filter(|l| l.count > 0).count(), lines.len())
    }

    /// `{"lines": {"LINE": executions} for the lines run, "not_run": [LINE...], "lines_run",
    /// "lines_with_code"}`: the form of `run --json --coverage`, with the totals.
    pub fn to_json(&self) -> Json {
        let lines = self.lines();
        let ran: serde_json::Map<String, Json> = lines
            .iter()
            .filter(|l| l.count > 0)
            .map(|l| (l.line.to_string(), json!(l.count)))
            .collect();
        let not_run: Vec<u32> = lines
            .iter()
            .filter(|l| l.count == 0)
            .map(|l| l.line)
            .collect();
        let (run, total) = self.summary();
        json!({
            "lines": ran,
            "not_run": not_run,
            "lines_run": run,
            "lines_with_code": total,
        })
    }
}
