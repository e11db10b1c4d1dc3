//! A race lab as a document: the lab (its logic, seed and invariants), then per strategy its
//! outcomes with what each client got, every schedule listed and one replayed step by step.

use super::blocks::{Block, Cell};
use super::Format;
use crate::engine::display::display_safe;
use crate::engine::keyspace_diff::{delta_lines, keyspace_delta};
use crate::engine::race::RaceReport;

/// The lab's report (and its logic, which the report does not hold) in `format`.
pub fn render(format: Format, report: &RaceReport, logic: &str) -> String {
    super::blocks::render(format, &blocks(report, logic))
}

fn blocks(report: &RaceReport, logic: &str) -> Vec<Block> {
    let safe = |t: &str| display_safe(t).into_owned();
    let mut out = vec![Block::Heading(
        1,
        format!("evalbench race lab: {}", safe(&report.lab)),
    )];
    if !report.about.is_empty() {
        out.push(Block::Paragraph(safe(&report.about)));
    }
    out.push(Block::Paragraph(format!(
        "{} clients run the same logic on one keyspace, under {} strateg{}.",
        report.clients,
        report.strategies.len(),
        if report.strategies.len() == 1 {
            "y"
        } else {
            "ies"
        }
    )));
    out.push(Block::Heading(2, "Logic".into()));
    out.push(Block::code("lua", logic));
    out.push(Block::Heading(2, "Seed keyspace".into()));
    out.push(Block::code(
        "json",
        &serde_json::to_string_pretty(&report.seed_keyspace).unwrap_or_default(),
    ));
    if !report.invariants.is_empty() {
        out.push(Block::Heading(2, "Invariants".into()));
        out.push(Block::List(
            report.invariants.iter().map(|i| safe(i)).collect(),
        ));
    }
    if let Some(why) = &report.serial_stopped {
        out.push(Block::Paragraph(format!(
            "The serial orders were not all run ({}): an outcome called a lost update may be a serial order not run.",
            safe(why)
        )));
    }
    for s in &report.strategies {
        out.push(Block::Heading(2, format!("Strategy {}", s.strategy.id())));
        out.push(Block::Paragraph(s.explanation.to_string()));
        let how = if s.exhaustive {
            "every interleaving".to_string()
        } else if s.sampled {
            format!("sampled with seed {}", report.sampling_seed)
        } else {
            "enumerated, not all".to_string()
        };
        out.push(Block::Paragraph(format!(
            "{} schedules ({how}), {} outcomes; lost updates in {}, invariants broken in {}, a client got an error in {}, WATCH retries {}.",
            s.schedules, s.outcome_count, s.lost_updates, s.broken, s.errors, s.retries
        )));
        if let Some(why) = &s.stopped {
            out.push(Block::Paragraph(safe(why)));
        }
        let rows = s
            .outcomes
            .iter()
            .enumerate()
            .map(|(n, o)| {
                let verdict = if o.broken_invariants.is_empty() {
                    o.verdict.explanation().to_string()
                } else {
                    format!("{}; invariant broken", o.verdict.explanation())
                };
                let clients: Vec<String> = o
                    .clients
                    .iter()
                    .map(|c| {
                        let retries = match c.retries {
                            0 => String::new(),
                            1 => " (1 WATCH retry)".into(),
                            r => format!(" ({r} WATCH retries)"),
                        };
                        format!(
                            "client {} {}{retries}: {}",
                            c.client,
                            c.outcome.word(),
                            c.result
                        )
                    })
                    .collect();
                vec![
                    Cell::Text((n + 1).to_string()),
                    Cell::Text(o.schedules.to_string()),
                    Cell::Text(verdict),
                    Cell::Code(safe(&changes(report, &o.keyspace))),
                    Cell::Code(safe(&clients.join("; "))),
                ]
            })
            .collect();
        out.push(Block::Table(
            vec!["outcome", "schedules", "what it is", "changes", "clients"],
            rows,
        ));
        for (n, o) in s.outcomes.iter().enumerate() {
            out.push(Block::Heading(
                3,
                format!("{} outcome {}", s.strategy.id(), n + 1),
            ));
            for b in &o.broken_invariants {
                out.push(Block::Paragraph(format!(
                    "Broken: {} ({})",
                    safe(&b.invariant),
                    safe(&b.why)
                )));
            }
            let listed: Vec<String> = o.schedule_list.iter().map(|s| order(s)).collect();
            let more = if o.schedules > listed.len() {
                format!(" (the first {} of {})", listed.len(), o.schedules)
            } else {
                String::new()
            };
            out.push(Block::Paragraph(format!(
                "Schedules{more}, each replayable with: evalbench race LAB --strategy {} --schedule \"ORDER\"",
                s.strategy.id()
            )));
            out.push(Block::code("", &listed.join("\n")));
            out.push(Block::Paragraph(format!(
                "Clients in order {}, step by step:",
                order(&o.schedule)
            )));
            let steps = o
                .steps
                .iter()
                .enumerate()
                .map(|(i, step)| {
                    vec![
                        Cell::Text((i + 1).to_string()),
                        Cell::Text(format!("client {}", step.client)),
                        Cell::Code(safe(&step.command)),
                        Cell::Code(safe(&step.reply)),
                        Cell::Code(
                            step.keyspace
                                .as_ref()
                                .map(|k| safe(&changes(report, k)))
                                .unwrap_or_default(),
                        ),
                    ]
                })
                .collect();
            out.push(Block::Table(
                vec!["step", "client", "command", "reply", "keyspace after"],
                steps,
            ));
            if o.steps_not_shown > 0 {
                out.push(Block::Paragraph(format!(
                    "... and {} more steps.",
                    o.steps_not_shown
                )));
            }
        }
        if s.outcome_count > s.outcomes.len() {
            out.push(Block::Paragraph(format!(
                "... and {} more outcomes, reached by {} schedules.",
                s.outcome_count - s.outcomes.len(),
                s.more_schedules
            )));
        }
    }
    out
}

/// A keyspace by its differences from the lab's seed.
fn changes(report: &RaceReport, keyspace: &serde_json::Value) -> String {
    let deltas = keyspace_delta(&report.seed_keyspace, keyspace);
    if deltas.is_empty() {
        "keyspace as seeded".into()
    } else {
        delta_lines(&deltas, usize::MAX).join("; ")
    }
}

fn order(schedule: &[usize]) -> String {
    schedule
        .iter()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(" ")
}
