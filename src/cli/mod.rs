//! The headless command line: the clap definitions of every subcommand and the dispatch to them.
//! Each subcommand is a module of its own; what they share is `common`, and no subcommand module
//! uses another (tests/architecture.rs holds that).

use clap::{CommandFactory, Parser, Subcommand};
use common::{CliError, ServerArgs};
use std::path::PathBuf;

/// What every subcommand shares: exit statuses, errors, the live target, Ctrl-C.
pub mod common;
/// `evalbench completions SHELL` and `evalbench man`.
pub mod completions;
/// `evalbench copy`: keys of a live server as keyspace JSON.
pub mod copy;
/// `evalbench debug`, and with --server the REPL over Redis's own LDB.
pub mod debug;
/// `evalbench function`: a live server's libraries.
pub mod function;
/// `evalbench lesson`.
pub mod lesson;
/// `evalbench lint`.
pub mod lint;
/// `evalbench lsp`: the language server.
pub mod lsp;
/// `evalbench race`: the race lab headless.
pub mod race;
/// `evalbench run`.
pub mod run;
/// `evalbench test`.
pub mod test;

#[derive(Parser, Debug)]
#[command(
    name = "evalbench",
    version = version_text(),
    long_version = long_version_text(),
    about = "A workbench for writing and debugging Redis Lua scripts (EVAL), with a Redis-faithful embedded sandbox",
    after_help = "Examples:\n  evalbench run samples/rate_limiter.lua ratelimit:alice , 10 60\n  evalbench run --json --dump-keyspace samples/unlock.lua lock:order , token-1\n  evalbench run --keyspace seed.json --resp 3 script.lua k1 k2 , a1\n  evalbench test samples/                                    (the cases of samples/*.test.toml)\n  evalbench lint samples/*.lua                               (check scripts without running them)\n  evalbench lesson list                                      (a guided path: tasks with checks and hints)\n  evalbench --server redis://127.0.0.1:6379 script.lua      (the workbench on a live server)\n  evalbench -h 10.0.0.5 -p 6380 --user ops --askpass         (the same, redis-cli style)\n  evalbench --present samples/stock_decrement.lua            (presenter mode, for a class)\n\nWithout a command, evalbench opens the workbench (terminal UI) on FILE or on a bundled sample;\nwhen stdout is not a terminal it runs the sample headless and prints the report.\n-h is the live server's host, as in redis-cli; --help prints this help."
)]
#[command(args_conflicts_with_subcommands = true, disable_help_flag = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Scripts to open in the workbench, one buffer each, the last shown (default: a bundled
    /// sample).
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// The theme of the workbench (dark, light).
    #[arg(long, value_name = "NAME")]
    pub theme: Option<String>,
    /// The server the workbench's sandbox imitates (as `run --profile`; default: config.toml's
    /// `profile`, else redis-7.0; a live server picks its own).
    #[arg(long, value_name = "ID", value_parser = common::parse_profile)]
    pub profile: Option<&'static crate::engine::profile::Profile>,
    /// Open the workbench on a live server: runs go there, guarded (a sandbox dry run first, writes
    /// only after a y/n confirmation), and the Server tab browses its keyspace.
    #[command(flatten)]
    pub server: ServerArgs,
    /// Start the workbench in presenter mode: one large pane, readable from the back of a room
    /// (Alt-P switches it).
    #[arg(long)]
    pub present: bool,
    /// Print help.
    #[arg(long, action = clap::ArgAction::Help)]
    pub help: Option<bool>,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run a script once (or --repeat N times) in the sandbox, or on a live server, and print the report.
    #[command(after_help = run::RUN_HELP, disable_help_flag = true)]
    Run(run::RunArgs),
    /// Copy keys from a live server into a keyspace JSON file for the sandbox (bounded, type-aware reads).
    #[command(after_help = copy::COPY_HELP, disable_help_flag = true)]
    Copy(copy::CopyArgs),
    /// Debug a script in the sandbox with LDB's words (step, breakpoints, print, eval) and more.
    #[command(after_help = debug::DEBUG_HELP, disable_help_flag = true)]
    Debug(debug::DebugArgs),
    /// Run the cases of test files (NAME.test.toml beside NAME.lua): expected replies, errors, keyspaces.
    #[command(after_help = test::TEST_HELP, disable_help_flag = true)]
    Test(test::TestArgs),
    /// Check scripts without running them: keys not in KEYS, writes before checks, unbounded reads, Lua 5.2+ syntax.
    #[command(after_help = lint::LINT_HELP, disable_help_flag = true)]
    Lint(lint::LintArgs),
    /// A language server (LSP, stdio) for editors: lint diagnostics as you type, hover, completion, code actions.
    #[command(after_help = lsp::LSP_HELP, disable_help_flag = true)]
    Lsp(lsp::LspArgs),
    /// Lessons: a task, a starting script, checks and hints (list, show N, check N FILE).
    #[command(after_help = lesson::LESSON_HELP)]
    Lesson(lesson::LessonArgs),
    /// Run one logic as N clients: plain commands, one script, MULTI/EXEC, WATCH; every interleaving's outcome.
    #[command(after_help = race::RACE_HELP, disable_help_flag = true)]
    Race(race::RaceArgs),
    /// A live server's function libraries: list, show, load (guarded), call (FCALL, guarded).
    #[command(after_help = function::FUNCTION_HELP)]
    Function(function::FunctionArgs),
    /// Print a shell completion script: bash, zsh, fish or powershell.
    #[command(after_help = completions::COMPLETIONS_HELP)]
    Completions(completions::CompletionsArgs),
    /// Print the manual page (roff), of evalbench or of one subcommand.
    #[command(after_help = completions::MAN_HELP)]
    Man(completions::ManArgs),
}

/// `evalbench -V`: the version and the ids of the servers the sandbox imitates (from the profile
/// table, so a new profile shows without touching this).
pub fn version_text() -> String {
    let ids: Vec<&str> = crate::engine::profile::PROFILES
        .iter()
        .map(|p| p.id)
        .collect();
    format!(
        "{} (profiles: {})",
        env!("CARGO_PKG_VERSION"),
        ids.join(", ")
    )
}

/// `evalbench --version`: the version, then each profile with the server release it was checked
/// against.
pub fn long_version_text() -> String {
    let mut text = format!(
        "{}\nprofiles (the servers the sandbox imitates, as `--profile ID`):",
        env!("CARGO_PKG_VERSION")
    );
    for p in crate::engine::profile::PROFILES.iter() {
        text.push_str(&format!(
            "\n  {:<10} {} {}",
            p.id,
            p.product.name(),
            p.version_tested
        ));
    }
    text
}

/// Run a subcommand; returns the exit status and what is left to print on stdout (`run` and
/// `debug` write theirs as they go).
pub fn dispatch(command: &Command) -> Result<(i32, String), CliError> {
    match command {
        // Written as it is made: the JSON of a huge reply is never held whole.
        Command::Run(args) => {
            let mut out = std::io::BufWriter::new(std::io::stdout().lock());
            run::run_command_to(args, &mut out).map(|code| (code, String::new()))
        }
        Command::Copy(args) => copy::copy_command(args),
        Command::Debug(args) => debug::debug_main(args),
        Command::Test(args) => test::test_main(args),
        Command::Lint(args) => lint::lint_main(args),
        Command::Lsp(args) => lsp::lsp_main(args),
        Command::Lesson(args) => lesson::lesson_main(args),
        Command::Race(args) => race::race_main(args),
        Command::Function(args) => function::function_main(args),
        Command::Completions(args) => completions::completions_main(args, Cli::command()),
        Command::Man(args) => completions::man_main(args, Cli::command()),
    }
}
