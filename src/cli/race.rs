//! `evalbench race`: the race lab (engine/race) headless, as text or JSON.

use crate::cli::common::{CliError, EXIT_OK};
use crate::engine::display::display_text;
use crate::engine::race::{self, lab, Lab, RaceOptions, RaceReport, Runner, Strategy};
use clap::Args;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

pub const RACE_HELP: &str = "LAB is a built-in lab (stock_decrement, counter, lock_release, capped_counter) or a lab file\n(TOML: logic, keys, argv, clients, seed, invariants; see samples/labs/).\n\nEvery client runs the same logic on one keyspace, under each strategy:\n  plain   each redis.call is its own command; other clients may run between any two\n  script  the whole logic as one EVAL (atomic)\n  multi   commands queued in MULTI, applied by EXEC (atomic, but reads answer QUEUED)\n  watch   WATCH the KEYS, reads outside, writes in MULTI/EXEC; EXEC nil on a change, then retry\nEvery interleaving is run when there are at most 100,000; otherwise 10,000 are sampled with --seed.\nEach strategy stops at --step-limit steps (1,000,000 server interactions over its schedules) and says so;\nthe lab's memory (keyspaces, outcomes, Lua) is bounded by --max-memory MIB.\nAn outcome is the final keyspace and what happened to each client (success, retried, error, gave up):\nan error when a client got one (never a lost update), a lost update when no serial order ends so and\nwrites were applied, a stale read when none were; --strategy S --schedule \"1 2 1 2\" replays a schedule.\n\nExit status: 0 the lab ran, 2 bad usage or a bad lab file (FILE:LINE:COLUMN: what).\n\nExamples:\n  evalbench race stock_decrement\n  evalbench race counter --clients 3 --strategy plain\n  evalbench race lock_release --json\n  evalbench race samples/labs/capped_counter.toml --clients 8 --seed 7\n  evalbench race counter --export counter-race.html   (a page to share: .md or .html)";

#[derive(Args, Debug)]
pub struct RaceArgs {
    /// A built-in lab's name or a lab file.
    #[arg(value_name = "LAB|FILE")]
    pub lab: String,
    /// How many clients run the logic (2 to 8); the lab's own count otherwise.
    #[arg(long, value_name = "N")]
    pub clients: Option<i64>,
    /// Run only this strategy: plain, script, multi, watch (repeatable); all four otherwise.
    #[arg(long, value_name = "S")]
    pub strategy: Vec<String>,
    /// The seed of the sampled schedules (when there are too many to run them all).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub seed: u64,
    /// Replay one schedule (the clients in order, as an outcome lists them: "1 2 1 2") under the
    /// one --strategy given, step by step.
    #[arg(long, value_name = "ORDER")]
    pub schedule: Option<String>,
    /// One JSON document: per strategy its outcomes, schedules and steps.
    #[arg(long)]
    pub json: bool,
    /// Steps (server interactions) each strategy may make over all its schedules; exploring
    /// stops there and says so.
    #[arg(long, value_name = "N", default_value_t = race::DEFAULT_STEP_LIMIT as u64,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub step_limit: u64,
    /// The memory budget in MiB of the lab: keyspaces, outcomes and Lua together.
    #[arg(long, value_name = "MIB",
          default_value_t = (crate::engine::budget::DEFAULT_MEMORY_BUDGET >> 20) as u64,
          value_parser = clap::value_parser!(u64).range(1..=1 << 30))]
    pub max_memory: u64,
    /// Also write the lab to FILE as a document to share: Markdown (.md) or a standalone HTML
    /// page (.html): the logic, seed and invariants, per strategy its outcomes, every listed
    /// schedule and one step by step. An existing FILE is kept (exit 2) unless --overwrite.
    #[arg(long, value_name = "FILE", conflicts_with = "schedule")]
    pub export: Option<PathBuf>,
    /// The format of --export when FILE's extension does not say it: md or html.
    #[arg(long, value_name = "md|html", requires = "export")]
    pub export_format: Option<String>,
    /// With --export: replace FILE if it exists.
    #[arg(long, requires = "export")]
    pub overwrite: bool,
    /// Print help.
    #[arg(long, action = clap::ArgAction::Help)]
    pub help: Option<bool>,
}

/// Find a lab by built-in name or path.
pub fn load_lab(name: &str) -> Result<Lab, CliError> {
    if let Some(lab) = race::builtin_lab(name) {
        return Ok(lab);
    }
    let path = Path::new(name);
    if !path.exists() {
        let names: Vec<&str> = race::BUILTIN_LABS.iter().map(|(n, _)| *n).collect();
        return Err(CliError::input(format!(
            "{name}: no such lab file, and no built-in lab of that name (they are: {})",
            names.join(", ")
        )));
    }
    // Bounded, regular files only (a device or FIFO would never end).
    let text = crate::engine::input::read_bounded_text(path, &crate::engine::input::LAB)
        .map_err(|e| CliError::input(e.to_string()))?;
    race::parse_lab(path, &text).map_err(|e| CliError::input(e.to_string()))
}

pub fn race_main(args: &RaceArgs) -> Result<(i32, String), CliError> {
    let mut lab = load_lab(&args.lab)?;
    if let Some(n) = args.clients {
        lab.clients =
            lab::client_count(n).map_err(|m| CliError::input(format!("--clients {m}")))?;
    }
    let mut strategies = Vec::new();
    for id in &args.strategy {
        if id == "all" {
            strategies.extend(Strategy::ALL);
            continue;
        }
        let strategy = Strategy::from_id(id).ok_or_else(|| {
            CliError::input(format!(
                "--strategy {id}: no such strategy; give plain, script, multi, watch or all"
            ))
        })?;
        strategies.push(strategy);
    }
    if strategies.is_empty() {
        strategies = Strategy::ALL.to_vec();
    }
    // The export's name and target are checked before the lab runs (it may run long).
    let export = match &args.export {
        Some(file) => {
            let format =
                crate::cli::common::export::export_format(file, args.export_format.as_deref())?;
            crate::cli::common::export::check_target(file, args.overwrite)?;
            Some((file, format))
        }
        None => None,
    };
    crate::engine::budget::set_limit((args.max_memory as usize).saturating_mul(1 << 20));
    let runner = Runner::new(&lab).map_err(|e| CliError::input(e.to_string()))?;
    let options = RaceOptions {
        strategies,
        seed: args.seed,
        step_limit: usize::try_from(args.step_limit).unwrap_or(usize::MAX),
        ..RaceOptions::default()
    };
    if let Some(order) = &args.schedule {
        let [strategy] = options.strategies[..] else {
            return Err(CliError::input(
                "--schedule replays under one strategy: give exactly one --strategy (plain, script, multi or watch)",
            ));
        };
        let schedule = parse_schedule(order, lab.clients)?;
        let run = race::replay_schedule(&runner, strategy, &schedule)
            .map_err(|e| CliError::input(format!("--schedule \"{order}\": {e}")))?;
        let report = race::race(&runner, &options);
        return Ok((EXIT_OK, render_replay(&report, &runner, strategy, &run)));
    }
    // Progress on a terminal only: a pipe or a file gets the report alone.
    let terminal = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let report = race::race_with(&runner, &options, &mut |p| {
        if terminal {
            eprint!("\r{}\x1b[K", p.text());
        }
    })
    .map_err(|_| CliError::input("the race lab was cancelled".to_string()))?;
    if terminal {
        eprint!("\r\x1b[K");
    }
    if let Some((file, format)) = export {
        let text = crate::engine::export::race::render(format, &report, &lab.logic);
        crate::cli::common::export::write_text(file, &text, args.overwrite)?;
    }
    if args.json {
        let mut out = serde_json::to_string(&report).unwrap_or_default();
        out.push('\n');
        return Ok((EXIT_OK, out));
    }
    Ok((EXIT_OK, render_text(&report)))
}

/// The report as text: per strategy its outcomes, each with a schedule that reaches it, step by step.
pub fn render_text(report: &RaceReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "race lab: {}", display_text(&report.lab));
    if !report.about.is_empty() {
        let _ = writeln!(out, "{}", display_text(&report.about));
    }
    let _ = writeln!(
        out,
        "{} clients; seed keyspace {}",
        report.clients, report.seed_keyspace
    );
    for invariant in &report.invariants {
        let _ = writeln!(out, "invariant: {}", display_text(invariant));
    }
    if let Some(why) = &report.serial_stopped {
        let _ = writeln!(
            out,
            "serial orders not all run: {why}; an outcome called a lost update may be a serial order not run"
        );
    }
    for s in &report.strategies {
        let _ = writeln!(out, "\n{}: {}", s.strategy.id(), s.explanation);
        let how = if s.exhaustive {
            "every interleaving".to_string()
        } else if s.sampled {
            format!("sampled with seed {}", report.sampling_seed)
        } else {
            "enumerated, not all".to_string()
        };
        if let Some(why) = &s.stopped {
            let _ = writeln!(out, "  {why}");
        }
        let _ = writeln!(
            out,
            "  {} schedule{} ({how}), {} outcome{}; lost updates in {}, invariants broken in {}, a client got an error in {}, WATCH retries {} (at most {} in one schedule)",
            s.schedules,
            plural(s.schedules),
            s.outcome_count,
            plural(s.outcome_count),
            s.lost_updates,
            s.broken,
            s.errors,
            s.retries,
            s.max_retries_in_a_schedule
        );
        for (n, o) in s.outcomes.iter().enumerate() {
            let _ = writeln!(
                out,
                "  outcome {}: {} schedule{}: {}; {}",
                n + 1,
                o.schedules,
                plural(o.schedules),
                // What the outcome changed from the seed, key by key and typed.
                crate::engine::keyspace_diff::changes_text(&report.seed_keyspace, &o.keyspace, 8),
                o.verdict.explanation()
            );
            for c in &o.clients {
                let _ = writeln!(out, "    {}", client_line(c));
            }
            for b in &o.broken_invariants {
                let _ = writeln!(
                    out,
                    "    BROKEN: {} ({})",
                    display_text(&b.invariant),
                    display_text(&b.why)
                );
            }
            // As many as the replay shows: a schedule of 16,000 steps is told by its start.
            let shown = o.schedule.len().min(race::driver::TRACED_STEPS);
            let order = order_text(&o.schedule[..shown]);
            if order.is_empty() {
                let _ = writeln!(out, "    no client reached the server:");
            } else if shown < o.schedule.len() {
                let _ = writeln!(
                    out,
                    "    e.g. clients in order {} ... ({} steps):",
                    order,
                    o.schedule.len()
                );
            } else {
                // Every schedule that reaches it (as many as were kept), each replayable.
                let listed: Vec<String> = o.schedule_list.iter().map(|s| order_text(s)).collect();
                let more = if o.schedules > listed.len() {
                    format!(" (the first {} of {})", listed.len(), o.schedules)
                } else {
                    String::new()
                };
                let _ = writeln!(out, "    schedules{more}: {}", listed.join(" | "));
                let _ = writeln!(
                    out,
                    "    clients in order {order} (replay any: --strategy {} --schedule \"{order}\"):",
                    s.strategy.id()
                );
            }
            write_steps(&mut out, &o.steps, "      ");
            if o.steps_not_shown > 0 {
                let _ = writeln!(
                    out,
                    "      ... and {} more steps (a replay shows the first {})",
                    o.steps_not_shown,
                    o.steps.len()
                );
            }
        }
        if s.outcome_count > s.outcomes.len() {
            let _ = writeln!(
                out,
                "  ... and {} more outcomes, reached by {} schedules (--json lists the first {})",
                s.outcome_count - s.outcomes.len(),
                s.more_schedules,
                s.outcomes.len()
            );
        }
    }
    out
}

/// How one client ended: `client 2 retried (1 WATCH retry): (integer) 0`.
fn client_line(c: &race::ClientEnd) -> String {
    let retries = if c.retries > 0 {
        format!(
            " ({} WATCH retr{})",
            c.retries,
            if c.retries == 1 { "y" } else { "ies" }
        )
    } else {
        String::new()
    };
    format!(
        "client {} {}{retries}: {}",
        c.client,
        c.outcome.word(),
        display_text(&c.result)
    )
}

/// One line per step of a schedule: which client sent what, and the reply.
fn write_steps(out: &mut String, steps: &[race::Step], indent: &str) {
    for (i, step) in steps.iter().enumerate() {
        let _ = writeln!(
            out,
            "{indent}{:>2}. client {}: {} -> {}",
            i + 1,
            step.client,
            display_text(&step.command),
            display_text(&step.reply)
        );
    }
}

fn order_text(schedule: &[usize]) -> String {
    schedule
        .iter()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

/// `--schedule "1 2 1 2"` (or `1,2,1,2`): the clients in order, 1-based.
fn parse_schedule(text: &str, clients: usize) -> Result<Vec<usize>, CliError> {
    let mut schedule = Vec::new();
    for word in text
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|w| !w.is_empty())
    {
        match word.parse::<usize>() {
            Ok(n) if (1..=clients).contains(&n) => schedule.push(n),
            _ => {
                return Err(CliError::input(format!(
                    "--schedule \"{text}\": {word} is not a client; give client numbers 1 to {clients}, as an outcome's schedules list them (\"1 2 1 2\")"
                )))
            }
        }
    }
    if schedule.is_empty() {
        return Err(CliError::input(format!(
            "--schedule \"{text}\": no clients; give the clients in order, as an outcome's schedules list them (\"1 2 1 2\")"
        )));
    }
    Ok(schedule)
}

/// One schedule replayed: its steps, how each client ended, the keyspace and what it is.
fn render_replay(
    report: &RaceReport,
    runner: &Runner,
    strategy: Strategy,
    run: &race::Run,
) -> String {
    let mut out = String::new();
    let order: Vec<usize> = run.schedule.iter().map(|c| c + 1).collect();
    let _ = writeln!(
        out,
        "race lab: {}; {}: clients in order {}",
        display_text(&report.lab),
        strategy.id(),
        order_text(&order)
    );
    write_steps(&mut out, &run.steps, "  ");
    let keyspace = race::driver::keyspace_json(&run.final_db, runner.lab().clock_ms);
    // What the schedule changed from the seed, key by key and typed, as an outcome says it.
    let deltas = crate::engine::keyspace_diff::keyspace_delta(&report.seed_keyspace, &keyspace);
    if deltas.is_empty() {
        let _ = writeln!(out, "keyspace as seeded");
    } else {
        let _ = writeln!(out, "keyspace changes:");
        for line in crate::engine::keyspace_diff::delta_lines(&deltas, usize::MAX) {
            let _ = writeln!(out, "  {}", display_text(&line));
        }
    }
    for c in &run.clients {
        let _ = writeln!(out, "{}", client_line(c));
    }
    let results: Vec<&str> = run.clients.iter().map(|c| c.result.as_str()).collect();
    let outcome = report.strategy(strategy).and_then(|s| {
        s.outcomes.iter().find(|o| {
            o.keyspace == keyspace
                && o.clients
                    .iter()
                    .map(|c| c.result.as_str())
                    .eq(results.iter().copied())
        })
    });
    if let Some(o) = outcome {
        let _ = writeln!(out, "{}", o.verdict.explanation());
        for b in &o.broken_invariants {
            let _ = writeln!(
                out,
                "BROKEN: {} ({})",
                display_text(&b.invariant),
                display_text(&b.why)
            );
        }
    }
    out
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}
