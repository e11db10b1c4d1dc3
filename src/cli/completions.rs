//! `evalbench completions SHELL` and `evalbench man`: the shell completion script and the manual
//! page, both generated from the clap definitions the command line parses with (the caller hands
//! them in), so they never drift from the options.

use crate::cli::common::{CliError, EXIT_OK};
use clap::{Args, ValueEnum};

pub const COMPLETIONS_HELP: &str = "Prints the completion script for SHELL on stdout.\n\nExamples:\n  evalbench completions bash > ~/.local/share/bash-completion/completions/evalbench\n  evalbench completions zsh > \"${fpath[1]}/_evalbench\"\n  evalbench completions fish > ~/.config/fish/completions/evalbench.fish\n  evalbench completions powershell >> $PROFILE";

pub const MAN_HELP: &str = "Prints the manual page (roff) on stdout: evalbench(1), or with a subcommand's name its own page.\n\nExamples:\n  evalbench man > evalbench.1 && man -l evalbench.1\n  evalbench man run | man -l -";

/// The shells a completion script is made for.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
    Powershell,
}

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to complete in.
    #[arg(value_enum, value_name = "SHELL")]
    pub shell: Shell,
    /// Print help.
    #[arg(long, action = clap::ArgAction::Help)]
    pub help: Option<bool>,
}

#[derive(Args, Debug)]
pub struct ManArgs {
    /// A subcommand whose page to print (default: evalbench's own, which lists them).
    #[arg(value_name = "SUBCOMMAND")]
    pub subcommand: Option<String>,
    /// Print help.
    #[arg(long, action = clap::ArgAction::Help)]
    pub help: Option<bool>,
}

/// The completion script of `command` (the whole command line) for `args.shell`.
pub fn completions_main(
    args: &CompletionsArgs,
    mut command: clap::Command,
) -> Result<(i32, String), CliError> {
    use clap_complete::shells;
    let name = command.get_name().to_string();
    let mut out = Vec::new();
    match args.shell {
        Shell::Bash => clap_complete::generate(shells::Bash, &mut command, name, &mut out),
        Shell::Zsh => clap_complete::generate(shells::Zsh, &mut command, name, &mut out),
        Shell::Fish => clap_complete::generate(shells::Fish, &mut command, name, &mut out),
        Shell::Powershell => {
            clap_complete::generate(shells::PowerShell, &mut command, name, &mut out)
        }
    }
    Ok((EXIT_OK, String::from_utf8_lossy(&out).into_owned()))
}

/// The manual page of `command`, or of its subcommand `args.subcommand`, as roff.
pub fn man_main(args: &ManArgs, command: clap::Command) -> Result<(i32, String), CliError> {
    let mut command = command;
    command.build();
    let page = match &args.subcommand {
        None => command,
        Some(name) => {
            let Some(sub) = command.find_subcommand(name) else {
                let names: Vec<&str> = command
                    .get_subcommands()
                    .map(|s| s.get_name())
                    .filter(|n| *n != "help")
                    .collect();
                return Err(CliError::input(format!(
                    "man: no subcommand {name:?}; give one of {} (or none for evalbench's own page)",
                    names.join(", ")
                )));
            };
            // The page's title names the whole command line: evalbench-run(1).
            let title = format!("{}-{}", command.get_name(), sub.get_name());
            sub.clone().name(title)
        }
    };
    // The page's footer: the release alone (the version line also lists the profiles).
    let page = page.version(env!("CARGO_PKG_VERSION"));
    let mut out = Vec::new();
    clap_mangen::Man::new(page)
        .render(&mut out)
        .map_err(|e| CliError::input(format!("man: cannot render the page: {e}")))?;
    Ok((EXIT_OK, String::from_utf8_lossy(&out).into_owned()))
}
