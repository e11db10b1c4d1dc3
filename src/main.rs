//! The `evalbench` binary: parse the command line, run, map failures to exit statuses.

use clap::Parser;

/// The same allocator as the engine's Lua (see engine/lua/vm.rs): small allocations dominate a run.
/// Counted, so that everything a run allocates counts against its memory budget (engine/budget.rs).
#[global_allocator]
static GLOBAL: evalbench::engine::budget::CountingAlloc<mimalloc::MiMalloc> =
    evalbench::engine::budget::CountingAlloc(mimalloc::MiMalloc);
use evalbench::cli::common::{self as cli, CliError};
use evalbench::cli::Cli;
use evalbench::engine::display::display_text;

fn main() {
    let parsed = Cli::parse();
    if parsed.command.is_none() {
        if let Some(code) = open_workbench(&parsed) {
            std::process::exit(code);
        }
        // Without a terminal the demo runs in the sandbox: connection options would be ignored.
        if parsed.server != cli::ServerArgs::default() {
            eprintln!("evalbench: the workbench on a live server needs a terminal; for a headless run use `evalbench run --server URL SCRIPT KEY... , ARG...`");
            std::process::exit(cli::EXIT_BAD_INPUT);
        }
    }
    // Replies can nest thousands of levels deep (as on a real server): give the work a deep stack.
    let worker = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || match &parsed.command {
            Some(command) => evalbench::cli::dispatch(command),
            None => evalbench::cli::run::run_demo(parsed.files.first().map(|f| f.as_path())),
        });
    let result = worker
        .expect("start the worker thread")
        .join()
        .unwrap_or_else(|_| {
            Err(CliError {
                code: cli::EXIT_BACKEND,
                message: "internal error (panic); please report it".into(),
            })
        });
    match result {
        Ok((code, out)) => {
            print!("{out}");
            std::process::exit(code);
        }
        Err(e) => {
            // Messages quote user input and server replies: never print their control characters.
            eprintln!("evalbench: {}", display_text(&e.message));
            std::process::exit(e.code);
        }
    }
}

/// The terminal UI, when stdout is a terminal (returns the exit status); None otherwise.
fn open_workbench(parsed: &Cli) -> Option<i32> {
    use std::io::IsTerminal;
    if !cfg!(feature = "tui") || !std::io::stdout().is_terminal() {
        return None;
    }
    #[cfg(feature = "tui")]
    {
        let options = evalbench::tui::TuiOptions {
            files: parsed.files.clone(),
            theme: parsed.theme.clone(),
            profile: parsed.profile,
            present: parsed.present,
            server: match evalbench::cli::common::target::server_spec(&parsed.server, false) {
                Ok(spec) => spec,
                Err(e) => {
                    eprintln!("evalbench: {}", display_text(&e.message));
                    return Some(e.code);
                }
            },
        };
        if let Err(e) = evalbench::tui::run(options) {
            // Refused on connect (before the terminal is taken over): the CLI's line and status.
            if let Some(live) = e.downcast_ref::<evalbench::engine::live::LiveError>() {
                eprintln!("evalbench: {}", display_text(&live.to_string()));
                return Some(cli::EXIT_BACKEND);
            }
            eprintln!("evalbench: terminal UI: {}", display_text(&e.to_string()));
            return Some(cli::EXIT_BACKEND);
        }
    }
    let _ = parsed;
    Some(cli::EXIT_OK)
}
