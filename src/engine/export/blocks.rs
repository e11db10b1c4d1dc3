//! Documents other than a run (a race lab, a debug session) as a list of blocks, written as
//! Markdown or as one standalone HTML page by the same rules as a run's export: text from the
//! script, the keyspace or the server escaped, code in blocks that copy cleanly (no line numbers
//! inside them).

use super::Format;
use std::fmt::Write;

pub enum Block {
    /// A heading: level 1 is the title.
    Heading(u8, String),
    Paragraph(String),
    /// A code block (its language for highlighting: `lua`, `json` or none).
    Code(&'static str, String),
    /// A table: its header, then its rows (cells of code are `Cell::Code`).
    Table(Vec<&'static str>, Vec<Vec<Cell>>),
    List(Vec<String>),
}

impl Block {
    /// A code block of `text`, each line escaped for display on its own (line breaks and tabs
    /// kept, every other control character made visible).
    pub fn code(lang: &'static str, text: &str) -> Block {
        Block::code_bytes(lang, text.as_bytes())
    }

    /// A code block of bytes (a script as given: invalid UTF-8 is shown escaped, line by line).
    pub fn code_bytes(lang: &'static str, bytes: &[u8]) -> Block {
        use crate::engine::display::{display_bytes, display_text};
        let mut lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
        while lines.len() > 1 && lines.last().is_some_and(|l| l.is_empty()) {
            lines.pop();
        }
        let shown: Vec<String> = lines
            .into_iter()
            .map(|line| {
                let line = line.strip_suffix(b"\r").unwrap_or(line);
                match std::str::from_utf8(line) {
                    Ok(text) => display_text(text).into_owned(),
                    Err(_) => display_bytes(line).into_owned(),
                }
            })
            .collect();
        Block::Code(lang, shown.join("\n"))
    }
}

pub enum Cell {
    Text(String),
    Code(String),
}

/// The document in `format`.
pub fn render(format: Format, blocks: &[Block]) -> String {
    match format {
        Format::Markdown => markdown(blocks),
        Format::Html => html(blocks),
    }
}

fn markdown(blocks: &[Block]) -> String {
    use super::markdown::{block, code, text};
    let mut out = String::new();
    for b in blocks {
        if !out.is_empty() {
            out.push('\n');
        }
        match b {
            Block::Heading(level, t) => {
                let _ = writeln!(out, "{} {}", "#".repeat(*level as usize), text(t));
            }
            Block::Paragraph(t) => {
                let _ = writeln!(out, "{}", text(t));
            }
            Block::Code(lang, body) => block(&mut out, lang, body),
            Block::Table(header, rows) => {
                let _ = writeln!(out, "| {} |", header.join(" | "));
                let _ = writeln!(out, "|{}", "---|".repeat(header.len()));
                for row in rows {
                    let cells: Vec<String> = row
                        .iter()
                        .map(|c| match c {
                            Cell::Text(t) => text(t),
                            Cell::Code(t) => code(t),
                        })
                        .collect();
                    let _ = writeln!(out, "| {} |", cells.join(" | "));
                }
            }
            Block::List(items) => {
                for item in items {
                    let _ = writeln!(out, "- {}", text(item));
                }
            }
        }
    }
    out
}

fn html(blocks: &[Block]) -> String {
    use super::html::{esc, STYLE};
    let title = blocks
        .iter()
        .find_map(|b| match b {
            Block::Heading(1, t) => Some(t.as_str()),
            _ => None,
        })
        .unwrap_or("evalbench");
    let mut out = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n<style>\n{STYLE}\n</style>\n</head>\n<body>\n",
        esc(title)
    );
    for b in blocks {
        match b {
            Block::Heading(level, t) => {
                let _ = writeln!(out, "<h{level}>{}</h{level}>", esc(t));
            }
            Block::Paragraph(t) => {
                let _ = writeln!(out, "<p>{}</p>", esc(t));
            }
            Block::Code(_, body) => {
                let _ = writeln!(out, "<pre><code>{}</code></pre>", esc(body));
            }
            Block::Table(header, rows) => {
                out.push_str("<table>\n<tr>");
                for h in header {
                    let _ = write!(out, "<th>{}</th>", esc(h));
                }
                out.push_str("</tr>\n");
                for row in rows {
                    out.push_str("<tr>");
                    for c in row {
                        match c {
                            Cell::Text(t) => {
                                let _ = write!(out, "<td>{}</td>", esc(t));
                            }
                            Cell::Code(t) => {
                                let _ = write!(out, "<td><code>{}</code></td>", esc(t));
                            }
                        }
                    }
                    out.push_str("</tr>\n");
                }
                out.push_str("</table>\n");
            }
            Block::List(items) => {
                out.push_str("<ul>\n");
                for item in items {
                    let _ = writeln!(out, "<li>{}</li>", esc(item));
                }
                out.push_str("</ul>\n");
            }
        }
    }
    out.push_str("</body>\n</html>\n");
    out
}
