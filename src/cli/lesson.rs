//! `evalbench lesson list|show|check`: the lessons of samples/lessons headless (for CI and for
//! tests); the workbench opens them too (tui/lessons.rs). The engine holds them (engine/lessons).

use crate::cli::common::{read_script, CliError, EXIT_ERROR_REPLY, EXIT_OK};
use crate::engine::display::display_text;
use crate::engine::lessons::{self, Lesson};
use clap::{Args, Subcommand};
use std::fmt::Write as _;
use std::path::PathBuf;

pub const LESSON_HELP: &str = "A guided path through the classic cases of Redis scripting: each lesson has a task, a\nstarting script, checks (a test file) and hints revealed one at a time.\n\nExit status of check: 0 every check passes, 1 a check fails, 2 bad input.\n\nExamples:\n  evalbench lesson list\n  evalbench lesson show 1                 (the task and the starting script)\n  evalbench lesson show 1 --hints 2       (and the first two hints)\n  evalbench lesson check 1 counter.lua    (run lesson 1's checks on your script)\n  evalbench lesson new 05-highest-score --dir class/   (a new lesson to edit, in class/05-highest-score/)\n  evalbench lesson --lessons class/ check 05-highest-score mine.lua";

#[derive(Args, Debug)]
pub struct LessonArgs {
    /// Print help (the top level turns clap's own off, as `-h` is the host).
    #[arg(long, action = clap::ArgAction::Help)]
    pub help: Option<bool>,
    /// Read the lessons from this folder (one sub-folder per lesson, as samples/lessons/) instead
    /// of the bundled ones.
    #[arg(long, value_name = "DIR", global = true)]
    pub lessons: Option<PathBuf>,
    #[command(subcommand)]
    pub command: LessonCommand,
}

#[derive(Subcommand, Debug)]
pub enum LessonCommand {
    /// List the lessons, in order.
    List {
        /// Print help.
        #[arg(long, action = clap::ArgAction::Help)]
        help: Option<bool>,
    },
    /// Print a lesson's task and starting script (with --hints N, its first N hints).
    Show {
        /// Print help.
        #[arg(long, action = clap::ArgAction::Help)]
        help: Option<bool>,
        /// The lesson's number (1, 2, ...) or folder name.
        #[arg(value_name = "N")]
        lesson: String,
        /// Reveal the first N hints.
        #[arg(long, value_name = "N", default_value_t = 0)]
        hints: usize,
    },
    /// Run a lesson's checks on a script and say which pass.
    Check {
        /// Print help.
        #[arg(long, action = clap::ArgAction::Help)]
        help: Option<bool>,
        /// The lesson's number (1, 2, ...) or folder name.
        #[arg(value_name = "N")]
        lesson: String,
        /// The script to check.
        #[arg(value_name = "FILE")]
        file: PathBuf,
    },
    /// Write a new lesson to edit (DIR/NAME/: lesson.toml, start.lua, solution.lua,
    /// solution.test.toml), whose solution passes its checks.
    New {
        /// Print help.
        #[arg(long, action = clap::ArgAction::Help)]
        help: Option<bool>,
        /// The lesson's folder name (05-highest-score: folders are taken in name order).
        #[arg(value_name = "NAME")]
        name: String,
        /// The folder of lessons to write it in (default: the --lessons folder, else the current one).
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
}

pub fn lesson_main(args: &LessonArgs) -> Result<(i32, String), CliError> {
    // Read when a command needs them: `new` writes a lesson into a folder that may hold none yet.
    let load = || {
        match &args.lessons {
            Some(dir) => lessons::from_dir(dir),
            None => lessons::all(),
        }
        .map_err(CliError::input)
    };
    let mut out = String::new();
    match &args.command {
        LessonCommand::List { .. } => {
            for l in &load()? {
                let _ = writeln!(
                    out,
                    "{:>2}  {:<22}  {}  ({} checks, {} hints)",
                    l.number,
                    l.slug,
                    l.title,
                    l.checks.cases.len() + l.properties.len(),
                    l.hints.len()
                );
            }
            Ok((EXIT_OK, out))
        }
        LessonCommand::Show { lesson, hints, .. } => {
            let all = load()?;
            let l = named(&all, lesson)?;
            let task = l.task_with_key("Alt-C in the workbench");
            let _ = writeln!(out, "Lesson {}: {}\n\n{}\n", l.number, l.title, task);
            let _ = writeln!(out, "Starting script (start.lua):\n\n{}", l.start);
            for (i, hint) in l.hints.iter().take(*hints).enumerate() {
                let _ = writeln!(out, "Hint {}: {hint}", i + 1);
            }
            let left = l.hints.len().saturating_sub(*hints);
            if left > 0 {
                let _ = writeln!(
                    out,
                    "({left} hint{} left: --hints {})",
                    if left == 1 { "" } else { "s" },
                    (*hints + 1).min(l.hints.len())
                );
            }
            Ok((EXIT_OK, out))
        }
        LessonCommand::New { name, dir, .. } => {
            new_lesson(name, dir.as_ref().or(args.lessons.as_ref()))
        }
        LessonCommand::Check { lesson, file, .. } => {
            let all = load()?;
            let l = named(&all, lesson)?;
            let script = read_script(file)?;
            let result = l.check(&script);
            let _ = writeln!(
                out,
                "Lesson {}: {} — {}",
                l.number,
                l.title,
                display_text(&file.display().to_string())
            );
            for (_, line) in result.lines() {
                let _ = writeln!(out, "  {line}");
            }
            let _ = writeln!(out, "{}", result.summary());
            let code = if result.all_passed() {
                EXIT_OK
            } else {
                EXIT_ERROR_REPLY
            };
            Ok((code, out))
        }
    }
}

/// `lesson new NAME`: the folder written, and how to check it.
fn new_lesson(name: &str, dir: Option<&PathBuf>) -> Result<(i32, String), CliError> {
    let dir = dir.cloned().unwrap_or_else(|| PathBuf::from("."));
    let folder = lessons::skeleton::write(&dir, name).map_err(CliError::input)?;
    let shown = |p: &std::path::Path| display_text(&p.display().to_string()).into_owned();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "wrote {}: lesson.toml (title, task, hints, properties), start.lua, solution.lua, solution.test.toml",
        shown(&folder)
    );
    let _ = writeln!(
        out,
        "edit them (docs/tools.md, \"Lessons\"), then check that the solution passes and the start does not:"
    );
    for file in ["solution.lua", "start.lua"] {
        let _ = writeln!(
            out,
            "  evalbench lesson --lessons {} check {name} {}",
            shown(&dir),
            shown(&folder.join(file))
        );
    }
    // config.toml is read from elsewhere: the folder in full.
    let full = std::fs::canonicalize(&dir).unwrap_or_else(|_| dir.clone());
    let _ = writeln!(
        out,
        "in the workbench: lessons_dir = \"{}\" in config.toml, then Alt-L",
        shown(&full)
    );
    Ok((EXIT_OK, out))
}

fn named<'a>(all: &'a [Lesson], name: &str) -> Result<&'a Lesson, CliError> {
    lessons::find(all, name).map(|i| &all[i]).ok_or_else(|| {
        CliError::input(format!(
            "no lesson {}: there are lessons 1 to {} (evalbench lesson list)",
            display_text(name),
            all.len()
        ))
    })
}
