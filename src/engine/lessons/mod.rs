//! Lessons: a guided path through the scripting articles' classic cases. A lesson is a
//! folder of `samples/lessons/`: `lesson.toml` (title, task, hints), `start.lua` (the script the
//! learner starts from), `solution.lua` (a reference) and `solution.test.toml`, whose cases are
//! the lesson's checks (`evalbench test samples/` runs them on the solution; a check runs them on
//! the learner's script).

mod bundled;
pub mod property;
pub mod skeleton;

pub use property::{CheckControl, Property, PropertyResult};

use super::testing::{parse_test_file, run_case_in, CaseResult, TestFile};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone)]
pub struct Lesson {
    /// 1-based, in path order.
    pub number: usize,
    /// The folder's name (`01-atomic-counter`).
    pub slug: String,
    pub title: String,
    pub task: String,
    /// Revealed one at a time.
    pub hints: Vec<String>,
    pub start: String,
    pub solution: String,
    pub checks: TestFile,
    /// Checks over many inputs (`[[property]]` in lesson.toml).
    pub properties: Vec<Property>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct LessonText {
    title: String,
    task: String,
    #[serde(default)]
    hints: Vec<String>,
    #[serde(default, rename = "property")]
    properties: Vec<Property>,
}

/// What a check gave: each case passed or with its differences.
#[derive(Debug, Clone)]
pub struct CheckResult {
    pub cases: Vec<CaseResult>,
    pub properties: Vec<PropertyResult>,
    /// The check was cancelled or ran out of time before the end: why.
    pub stopped: Option<String>,
    /// The lesson's cases, for their KEYS, ARGV and seed in a failure.
    pub case_inputs: Vec<super::testing::TestCase>,
    /// Checks the lesson has (cases and properties), run or not.
    pub planned: usize,
}

impl CheckResult {
    pub fn passed(&self) -> usize {
        self.cases.iter().filter(|c| c.passed()).count()
            + self.properties.iter().filter(|p| p.passed()).count()
    }
    pub fn total(&self) -> usize {
        self.planned.max(self.cases.len() + self.properties.len())
    }
    pub fn all_passed(&self) -> bool {
        self.stopped.is_none()
            && self.cases.iter().all(CaseResult::passed)
            && self.properties.iter().all(PropertyResult::passed)
    }
}

/// Every lesson, in order. The bundled files are checked by tests/lessons.rs: a mistake in one
/// is a build-time bug, reported with its file and place.
pub fn all() -> Result<Vec<Lesson>, String> {
    bundled::LESSONS
        .iter()
        .enumerate()
        .map(|(i, (slug, text, start, solution, checks))| {
            let files = LessonFiles {
                text: text.to_string(),
                start: start.to_string(),
                solution: solution.to_string(),
                checks: checks.to_string(),
            };
            build(
                i + 1,
                slug,
                &PathBuf::from("samples/lessons").join(slug),
                files,
            )
        })
        .collect()
}

/// The four files of a lesson folder, read.
struct LessonFiles {
    text: String,
    start: String,
    solution: String,
    checks: String,
}

fn build(number: usize, slug: &str, dir: &Path, files: LessonFiles) -> Result<Lesson, String> {
    let meta: LessonText = toml::from_str(&files.text)
        .map_err(|e| format!("{}: {e}", dir.join("lesson.toml").display()))?;
    let checks = parse_test_file(&dir.join("solution.test.toml"), &files.checks)
        .map_err(|e| e.to_string())?;
    for property in &meta.properties {
        property::validate(property)
            .map_err(|e| format!("{}: {e}", dir.join("lesson.toml").display()))?;
    }
    Ok(Lesson {
        number,
        slug: slug.to_string(),
        title: meta.title,
        task: meta.task.trim().to_string(),
        hints: meta.hints,
        start: files.start,
        solution: files.solution,
        checks,
        properties: meta.properties,
    })
}

/// The lessons of a folder a trainer wrote (`--lessons DIR`): each sub-folder, in name order, with
/// the files of a bundled lesson (`lesson.toml`, `start.lua`, `solution.lua`, `solution.test.toml`).
pub fn from_dir(dir: &Path) -> Result<Vec<Lesson>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| {
        format!(
            "{}: {e} (give a folder holding one sub-folder per lesson)",
            dir.display()
        )
    })?;
    let mut folders: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    folders.sort();
    if folders.is_empty() {
        return Err(format!(
            "{}: no lesson folders (each lesson is a sub-folder with lesson.toml, start.lua, solution.lua and solution.test.toml)",
            dir.display()
        ));
    }
    folders
        .iter()
        .enumerate()
        .map(|(i, folder)| {
            let read = |name: &str| {
                let path = folder.join(name);
                if !path.exists() {
                    return Err(format!(
                        "{}: missing (a lesson folder holds lesson.toml, start.lua, solution.lua and solution.test.toml)",
                        path.display()
                    ));
                }
                crate::engine::input::read_bounded_text(&path, &crate::engine::input::LESSON)
                    .map_err(|e| e.to_string())
            };
            let files = LessonFiles {
                text: read("lesson.toml")?,
                start: read("start.lua")?,
                solution: read("solution.lua")?,
                checks: read("solution.test.toml")?,
            };
            let slug = folder
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            build(i + 1, &slug, folder, files)
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
    /// The task with `{check}` written as the key (or command) that checks the script.
    pub fn task_with_key(&self, check: &str) -> String {
        self.task.replace("{check}", check)
    }

    /// Run the lesson's checks on `script`, each run limited in time.
    pub fn check(&self, script: &[u8]) -> CheckResult {
        self.check_with(script, &CheckControl::default())
    }

    /// Run the lesson's checks under `control` (another thread may cancel them): the cases,
    /// then the properties over their inputs; a check stopped early says why.
    pub fn check_with(&self, script: &[u8], control: &CheckControl) -> CheckResult {
        let mut result = CheckResult {
            cases: Vec::new(),
            properties: Vec::new(),
            stopped: None,
            case_inputs: self.checks.cases.clone(),
            planned: self.checks.cases.len() + self.properties.len(),
        };
        for case in &self.checks.cases {
            if let Some(why) = control.stopped() {
                result.stopped = Some(why);
                return result;
            }
            let case_result = run_case_in(script, None, case, None, None, &|clock| {
                control.sandbox(clock)
            });
            if control.cancelled() {
                result.stopped = Some("cancelled".into());
                return result;
            }
            // A run stopped at its limit: the other checks would each wait as long.
            let limit_ns = control.run_limit_ms.saturating_mul(1_000_000);
            let too_long = case_result.elapsed_ns >= limit_ns;
            let name = case_result.name.clone();
            result.cases.push(case_result);
            if too_long {
                result.stopped = Some(format!(
                    "the script ran longer than {} ms on \"{name}\" and was stopped; the other checks were not run (a loop that never ends?)",
                    control.run_limit_ms
                ));
                return result;
            }
        }
        for p in &self.properties {
            let outcome = property::check_property(script, p, control);
            if control.cancelled() {
                result.stopped = Some("cancelled".into());
                return result;
            }
            result.properties.push(outcome);
        }
        result
    }
}

impl CheckResult {
    /// One line per check (`ok` or `FAIL` and its name); under a failing one what went wrong in
    /// redis-cli's words (`expected (integer) 1, got (integer) 5`) and the KEYS, ARGV and seed
    /// of the run; text from the run is escaped for display.
    pub fn lines(&self) -> Vec<(bool, String)> {
        use crate::engine::display::display_safe;
        let mut out = Vec::new();
        for (n, case) in self.cases.iter().enumerate() {
            let mark = if case.passed() { "ok  " } else { "FAIL" };
            out.push((
                case.passed(),
                format!("{mark} {}", display_safe(&case.name)),
            ));
            let input = self.case_inputs.get(n);
            let mut shown_inputs = None;
            for f in &case.failures {
                let step = if f.step > 0 {
                    format!("step {}: ", f.step)
                } else {
                    String::new()
                };
                let index = f.step.max(1) - 1;
                let message = match (f.what, input.and_then(|c| c.steps.get(index))) {
                    ("reply", Some(wanted)) => {
                        match (&wanted.expect.reply, case.observed.get(index)) {
                            (Some(expected), Some(observed)) => format!(
                                "expected {}, got {}",
                                json_words(expected),
                                json_words(&observed.reply)
                            ),
                            _ => f.message.clone(),
                        }
                    }
                    _ => f.message.clone(),
                };
                out.push((false, format!("       {step}{}", display_safe(&message))));
                if shown_inputs == Some(index) {
                    continue;
                }
                shown_inputs = Some(index);
                if let Some(step) = input.and_then(|c| c.steps.get(index)) {
                    out.push((
                        false,
                        format!(
                            "       with KEYS {} ARGV {} seed {}",
                            display_safe(&quoted(&step.keys)),
                            display_safe(&quoted(&step.argv)),
                            display_safe(&input.map_or(String::new(), |c| c.seed.to_string()))
                        ),
                    ));
                }
            }
        }
        for p in &self.properties {
            let mark = if p.passed() { "ok  " } else { "FAIL" };
            let tried = format!(
                " (over {} input{})",
                p.tried,
                if p.tried == 1 { "" } else { "s" }
            );
            out.push((
                p.passed(),
                format!("{mark} {}{tried}", display_safe(&p.name)),
            ));
            if let Some(c) = &p.counterexample {
                if !c.vars.is_empty() {
                    out.push((false, format!("       when {}:", display_safe(&c.vars))));
                }
                out.push((false, format!("       {}", display_safe(&c.message))));
                out.push((
                    false,
                    format!(
                        "       with KEYS [{}] ARGV [{}] seed {}",
                        display_safe(&c.keys.join(", ")),
                        display_safe(&c.argv.join(", ")),
                        display_safe(&c.seed)
                    ),
                ));
            }
        }
        if let Some(why) = &self.stopped {
            out.push((false, format!("stopped: {}", display_safe(why))));
        }
        out
    }

    /// The check's summary line.
    pub fn summary(&self) -> String {
        let (passed, total) = (self.passed(), self.total());
        if let Some(why) = &self.stopped {
            format!("{passed} of {total} checks pass; {why}")
        } else if self.all_passed() {
            format!("all {total} checks pass: lesson done")
        } else {
            format!("{passed} of {total} checks pass")
        }
    }
}

/// `["stock:sku-1"]`, as redis-cli quotes each.
fn quoted(items: &[String]) -> String {
    let items: Vec<String> = items
        .iter()
        .map(|i| crate::engine::reply::quote_bytes(i.as_bytes()))
        .collect();
    format!("[{}]", items.join(", "))
}

/// A reply written as a test file writes it (`{"int": 5}`), in redis-cli's words (`(integer) 5`).
pub fn json_words(reply: &serde_json::Value) -> String {
    use serde_json::Value as Json;
    match reply {
        Json::Null => "(nil)".into(),
        Json::String(s) => crate::engine::reply::quote_bytes(s.as_bytes()),
        Json::Object(o) if o.len() == 1 => {
            let (kind, value) = o.iter().next().expect("one entry");
            match (kind.as_str(), value) {
                ("nil", _) => "(nil)".into(),
                ("int", v) => format!("(integer) {v}"),
                ("bulk", Json::String(s)) => crate::engine::reply::quote_bytes(s.as_bytes()),
                ("status" | "ok", Json::String(s)) => s.clone(),
                ("error" | "err", Json::String(s)) => format!("(error) {s}"),
                ("array", Json::Array(items)) if items.is_empty() => "(empty array)".into(),
                ("array", Json::Array(items)) => items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| format!("{}) {}", i + 1, json_words(item)))
                    .collect::<Vec<_>>()
                    .join(" "),
                _ => reply.to_string(),
            }
        }
        Json::Array(items) => json_words(&serde_json::json!({ "array": items })),
        other => other.to_string(),
    }
}
