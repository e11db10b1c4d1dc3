//! A debug session as a document: the script, its KEYS and ARGV, then every stop in order (its
//! line, why it stopped, the stack and the variables then) and how the run ended.

use super::blocks::{Block, Cell};
use super::Format;
use crate::engine::debug::StopReason;
use crate::engine::debug::{StopSnapshot, VarKind};
use crate::engine::display::display_safe;
use crate::engine::reply::quote_bytes;

pub struct SessionExport<'a> {
    /// What the document is named after (the script's file name).
    pub title: &'a str,
    pub script: &'a [u8],
    pub keys: &'a [Vec<u8>],
    pub argv: &'a [Vec<u8>],
    /// The stops, in the order they were made.
    pub stops: &'a [StopSnapshot],
    /// How the run ended (its reply or error, as redis-cli prints it); None: still paused.
    pub end: Option<String>,
}

pub fn render(format: Format, session: &SessionExport) -> String {
    super::blocks::render(format, &blocks(session))
}

/// Why the script stopped, in a few words.
pub fn reason_text(reason: &StopReason) -> String {
    match reason {
        StopReason::Start => "the first line".into(),
        StopReason::Step => "a step".into(),
        StopReason::Breakpoint { id } => format!("breakpoint {id}"),
        StopReason::RedisBreakpoint => "redis.breakpoint()".into(),
        StopReason::Error { message } => format!("error: {}", display_safe(message)),
        StopReason::Command { name } => format!("before {}", display_safe(name)),
        StopReason::KeyWrite { key } => format!("a write to {}", quote_bytes(key)),
    }
}

fn blocks(s: &SessionExport) -> Vec<Block> {
    let safe = |t: &str| display_safe(t).into_owned();
    let mut out = vec![
        Block::Heading(1, format!("evalbench debug session: {}", safe(s.title))),
        Block::Paragraph(format!(
            "{} stop{}; {}.",
            s.stops.len(),
            if s.stops.len() == 1 { "" } else { "s" },
            match &s.end {
                Some(_) => "the run ended",
                None => "the run was still paused at the last one",
            }
        )),
        Block::Heading(2, "Script".into()),
        Block::code_bytes("lua", s.script),
        Block::Heading(2, "KEYS and ARGV".into()),
    ];
    let list = |name: &str, items: &[Vec<u8>]| {
        if items.is_empty() {
            format!("{name}: none")
        } else {
            let quoted: Vec<String> = items.iter().map(|i| quote_bytes(i)).collect();
            format!("{name}: {}", quoted.join(", "))
        }
    };
    out.push(Block::List(vec![
        list("KEYS", s.keys),
        list("ARGV", s.argv),
    ]));
    out.push(Block::Heading(2, "Stops".into()));
    for (n, stop) in s.stops.iter().enumerate() {
        out.push(Block::Heading(
            3,
            format!(
                "Stop {}: line {} ({})",
                n + 1,
                stop.line,
                reason_text(&stop.reason)
            ),
        ));
        if let Some(frame) = stop.frames.first() {
            out.push(Block::code("lua", frame.source_line.trim_end()));
        }
        if stop.frames.len() > 1 {
            out.push(Block::Paragraph("The stack, innermost first:".into()));
            out.push(Block::List(
                stop.frames
                    .iter()
                    .map(|f| format!("{} at line {}", safe(&f.function), f.line))
                    .collect(),
            ));
        }
        if stop.variables.is_empty() {
            out.push(Block::Paragraph("No variables here.".into()));
            continue;
        }
        let rows = stop
            .variables
            .iter()
            .map(|v| {
                let kind = match v.kind {
                    VarKind::Local => "local",
                    VarKind::Upvalue => "upvalue",
                    VarKind::Global => "global",
                    VarKind::Field => "field",
                };
                vec![
                    Cell::Code(safe(&v.name)),
                    Cell::Text(kind.into()),
                    Cell::Text(safe(&v.type_name)),
                    Cell::Code(safe(&v.value)),
                ]
            })
            .collect();
        out.push(Block::Table(
            vec!["variable", "kind", "type", "value"],
            rows,
        ));
    }
    if let Some(end) = &s.end {
        out.push(Block::Heading(2, "Result".into()));
        out.push(Block::code("", end));
    }
    out
}
