//! Lessons (issue 14): a guided path through the scripting articles' classic cases. A lesson is a
//! folder of `samples/lessons/`: `lesson.toml` (title, task, hints), `start.lua` (the script the
//! learner starts from), `solution.lua` (a reference) and `solution.test.toml`, whose cases are
//! the lesson's checks (`evalbench test samples/` runs them on the solution; a check runs them on
//! the learner's script).

mod bundled;

use super::testing::{parse_test_file, run_case, CaseResult, TestFile};
use std::path::PathBuf;

#[derive(Debug, Clone)]
pub struct Lesson {
    /// 1-based, in path order.
    pub number: usize,
    /// The folder's name (`01-atomic-counter`).
    pub slug: &'static str,
    pub title: String,
    pub task: String,
    /// Revealed one at a time.
    pub hints: Vec<String>,
    pub start: &'static str,
    pub solution: &'static str,
    pub checks: TestFile,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct LessonText {
    title: String,
    task: String,
    #[serde(default)]
    hints: Vec<String>,
}

/// What a check gave: each case passed or with its differences.
#[derive(Debug, Clone)]
pub struct CheckResult {
    pub cases: Vec<CaseResult>,
}

impl CheckResult {
    pub fn passed(&self) -> usize {
        self.cases.iter().filter(|c| c.passed()).count()
    }
    pub fn all_passed(&self) -> bool {
        self.cases.iter().all(CaseResult::passed)
    }
}

/// Every lesson, in order. The bundled files are checked by tests/lessons.rs: a mistake in one
/// is a build-time bug, reported with its file and place.
pub fn all() -> Result<Vec<Lesson>, String> {
    bundled::LESSONS
        .iter()
        .enumerate()
        .map(|(i, (slug, text, start, solution, checks))| {
            let dir = PathBuf::from("samples/lessons").join(slug);
            let meta: LessonText = toml::from_str(text)
                .map_err(|e| format!("{}: {e}", dir.join("lesson.toml").display()))?;
            let checks = parse_test_file(&dir.join("solution.test.toml"), checks)
                .map_err(|e| e.to_string())?;
            Ok(Lesson {
                number: i + 1,
                slug,
                title: meta.title,
                task: meta.task.trim().to_string(),
                hints: meta.hints,
                start,
                solution,
                checks,
            })
        })
        .collect()
}

/// The lesson a user names: its number (`2`) or its folder (`02-rate-limiter`, `rate-limiter`).
pub fn find(lessons: &[Lesson], name: &str) -> Option<usize> {
    let name = name.trim();
    if let Ok(n) = name.parse::<usize>() {
        return lessons.iter().position(|l| l.number == n);
    }
    lessons.iter().position(|l| {
        l.slug == name || l.slug.split_once('-').is_some_and(|(_, rest)| rest == name)
    })
}

impl Lesson {
    /// Run the lesson's checks on `script`.
    pub fn check(&self, script: &[u8]) -> CheckResult {
        CheckResult {
            cases: self
                .checks
                .cases
                .iter()
                .map(|case| run_case(script, None, case, None))
                .collect(),
        }
    }
}

impl CheckResult {
    /// One line per case (`ok` or `FAIL` and its name), each difference indented under a failing
    /// case; text from the run is escaped for display.
    pub fn lines(&self) -> Vec<(bool, String)> {
        use crate::engine::display::display_safe;
        let mut out = Vec::new();
        for case in &self.cases {
            let mark = if case.passed() { "ok  " } else { "FAIL" };
            out.push((
                case.passed(),
                format!("{mark} {}", display_safe(&case.name)),
            ));
            for f in &case.failures {
                let step = if f.step > 0 {
                    format!("step {}: ", f.step)
                } else {
                    String::new()
                };
                out.push((false, format!("       {step}{}", display_safe(&f.message))));
            }
        }
        out
    }

    /// The check's summary line.
    pub fn summary(&self) -> String {
        let (passed, total) = (self.passed(), self.cases.len());
        if self.all_passed() {
            format!("all {total} checks pass: lesson done")
        } else {
            format!("{passed} of {total} checks pass")
        }
    }
}
