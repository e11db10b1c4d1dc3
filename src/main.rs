//! The `evalbench` binary: parse the command line, run, map failures to exit statuses.

use clap::Parser;
use evalbench::cli::{self, Cli, Command};

fn main() {
    let parsed = Cli::parse();
    let result = match &parsed.command {
        Some(Command::Run(args)) => cli::run_command(args),
        None => cli::run_demo(),
    };
    match result {
        Ok((code, out)) => {
            print!("{out}");
            std::process::exit(code);
        }
        Err(e) => {
            eprintln!("evalbench: {}", e.message);
            std::process::exit(e.code);
        }
    }
}
