//! The live server's function libraries: `FUNCTION LIST` (names, functions, flags, no
//! code) for the Server overview, and one library's code by its exact name (`FUNCTION LIST WITHCODE
//! LIBRARYNAME`) when it is opened, so a server with many large libraries is never read whole.
//! Nothing here writes: FUNCTION LOAD/DELETE/FLUSH/RESTORE are not offered.

use super::overview::{field, text};
use super::{ClusterNode, LiveBackend, LiveError};
use crate::engine::reply::Reply;

/// Libraries listed at most (the list says how many more there are).
pub const MAX_LIBRARIES: usize = 200;

/// A function of a library on the server.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveFunction {
    pub name: String,
    pub description: Option<String>,
    pub flags: Vec<String>,
}

/// A library on the server.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveLibrary {
    pub name: String,
    pub engine: String,
    pub functions: Vec<LiveFunction>,
}

fn items(reply: &Reply) -> &[Reply] {
    match reply {
        Reply::Array(items) | Reply::Set(items) => items,
        _ => &[],
    }
}

fn library(reply: &Reply) -> Option<LiveLibrary> {
    let functions = items(field(reply, "functions")?)
        .iter()
        .filter_map(|f| {
            Some(LiveFunction {
                name: text(field(f, "name")?)?,
                description: field(f, "description").and_then(text),
                flags: field(f, "flags")
                    .map(|flags| items(flags).iter().filter_map(text).collect())
                    .unwrap_or_default(),
            })
        })
        .collect();
    Some(LiveLibrary {
        name: text(field(reply, "library_name")?)?,
        engine: field(reply, "engine").and_then(text).unwrap_or_default(),
        functions,
    })
}

fn checked(reply: Reply) -> Result<Reply, LiveError> {
    match reply {
        Reply::Error(e) => Err(LiveError::Server(e)),
        other => Ok(other),
    }
}

/// The server's libraries by name (at most `MAX_LIBRARIES`), and how many there are in all.
pub fn list(live: &mut LiveBackend) -> Result<(Vec<LiveLibrary>, usize), LiveError> {
    list_on(live, None)
}

/// `list` as one master of a cluster has them (each master has its own libraries).
pub fn list_on(
    live: &mut LiveBackend,
    node: Option<&ClusterNode>,
) -> Result<(Vec<LiveLibrary>, usize), LiveError> {
    let reply = checked(ask(live, node, &[b"FUNCTION", b"LIST"])?)?;
    let all = items(&reply);
    let mut libraries: Vec<LiveLibrary> = all.iter().filter_map(library).collect();
    libraries.sort_by(|a, b| a.name.cmp(&b.name));
    libraries.truncate(MAX_LIBRARIES);
    Ok((libraries, all.len()))
}

/// The library holding function `name` (Redis looks function names up ignoring case; an exact
/// spelling wins) and that function as the server lists it. All libraries are searched, not only
/// the first `MAX_LIBRARIES`.
pub fn find_function(
    live: &mut LiveBackend,
    name: &str,
) -> Result<Option<(LiveLibrary, LiveFunction)>, LiveError> {
    find_function_on(live, None, name)
}

/// A command to `node` of a cluster (its libraries are its own), else as routed.
fn ask(
    live: &mut LiveBackend,
    node: Option<&ClusterNode>,
    args: &[&[u8]],
) -> Result<Reply, LiveError> {
    match node {
        Some(node) => live.command_on(node, args),
        None => live.command(args),
    }
}

/// `find_function` on one master of a cluster (each master has its own libraries).
pub fn find_function_on(
    live: &mut LiveBackend,
    node: Option<&ClusterNode>,
    name: &str,
) -> Result<Option<(LiveLibrary, LiveFunction)>, LiveError> {
    let reply = checked(ask(live, node, &[b"FUNCTION", b"LIST"])?)?;
    let libraries: Vec<LiveLibrary> = items(&reply).iter().filter_map(library).collect();
    let pick = |exact: bool| {
        libraries.iter().find_map(|lib| {
            lib.functions
                .iter()
                .find(|f| {
                    if exact {
                        f.name == name
                    } else {
                        f.name.eq_ignore_ascii_case(name)
                    }
                })
                .map(|f| (lib.clone(), f.clone()))
        })
    };
    Ok(pick(true).or_else(|| pick(false)))
}

/// A glob that matches `name` only (LIBRARYNAME is a pattern: its special characters escaped).
fn exact_pattern(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// One library's code (shebang included, as FUNCTION LOAD took it); None when there is no such
/// library.
pub fn code(live: &mut LiveBackend, name: &str) -> Result<Option<Vec<u8>>, LiveError> {
    Ok(library_with_code(live, name)?.map(|(_, code)| code))
}

/// One library (exact name) with its functions and code; None when there is no such library.
pub fn library_with_code(
    live: &mut LiveBackend,
    name: &str,
) -> Result<Option<(LiveLibrary, Vec<u8>)>, LiveError> {
    library_with_code_on(live, None, name)
}

/// `library_with_code` on one master of a cluster.
pub fn library_with_code_on(
    live: &mut LiveBackend,
    node: Option<&ClusterNode>,
    name: &str,
) -> Result<Option<(LiveLibrary, Vec<u8>)>, LiveError> {
    let pattern = exact_pattern(name);
    let reply = checked(ask(
        live,
        node,
        &[
            b"FUNCTION",
            b"LIST",
            b"WITHCODE",
            b"LIBRARYNAME",
            pattern.as_bytes(),
        ],
    )?)?;
    Ok(items(&reply)
        .iter()
        .find(|lib| field(lib, "library_name").and_then(text).as_deref() == Some(name))
        .and_then(|lib| {
            let code = match field(lib, "library_code")? {
                Reply::Bulk(b) => b.clone(),
                Reply::Verbatim { text, .. } => text.clone(),
                other => text(other)?.into_bytes(),
            };
            Some((library(lib)?, code))
        }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn library_names_are_matched_exactly() {
        assert_eq!(exact_pattern("my*lib?[x]"), "my\\*lib\\?\\[x\\]");
    }
}
