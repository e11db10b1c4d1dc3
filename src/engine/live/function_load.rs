//! FUNCTION LOAD [REPLACE] to a live server: a write to production, so it is planned
//! first and sent only with consent. The plan says what changes against the server's library of the
//! same name (added or replaced; functions added, removed, flags changed; a line diff of the code),
//! checked by loading the library into a sandbox that imitates the server. A replica is refused
//! (INFO replication, read again before sending); on a cluster the load goes to one master, named.
//! FUNCTION DUMP/RESTORE/FLUSH/DELETE are never offered.

use super::functions::{library_with_code_on, LiveLibrary};
use super::{ClusterNode, LiveBackend, LiveError};
use crate::engine::reply::Reply;
use crate::engine::script::ScriptFlags;
use crate::engine::Sandbox;

/// A function of the library being loaded, or of the server's library it replaces.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedFunction {
    pub name: String,
    /// As FUNCTION LIST names them, in its order.
    pub flags: Vec<String>,
}

/// What a FUNCTION LOAD would change on the server.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadPlan {
    /// The library's name (from the shebang; empty when it has none: the server refuses it).
    pub library: String,
    /// The server holds a library of that name: only FUNCTION LOAD REPLACE loads it.
    pub exists: bool,
    /// The server's library has exactly this code (loading changes nothing).
    pub same_code: bool,
    /// The library's functions as the sandbox loaded them (empty when it refused).
    pub functions: Vec<PlannedFunction>,
    pub added: Vec<String>,
    pub removed: Vec<String>,
    /// (function, flags on the server, flags after the load).
    pub flags_changed: Vec<(String, Vec<String>, Vec<String>)>,
    /// A unified line diff from the server's code to the new code (empty: a new library, or the same).
    pub diff: String,
    /// The sandbox refuses to load the library: the error it gave (the server will most likely give
    /// the same; sending shows the server's own text).
    pub sandbox_error: Option<String>,
    /// On a cluster: the master the load goes to.
    pub cluster_node: Option<String>,
    /// On a cluster, when the load goes to every master (`masters_with`): each master's state.
    pub masters: Vec<MasterLibrary>,
}

/// Why a load is refused before anything is planned or sent.
#[derive(Debug)]
pub enum LoadRefusal {
    /// The server is a replica (its role).
    Replica(String),
    Live(LiveError),
}

impl std::fmt::Display for LoadRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadRefusal::Replica(server) => write!(
                f,
                "{server} is a replica (INFO replication): FUNCTION LOAD is refused there; load the library on its primary (replicas receive it from there)"
            ),
            LoadRefusal::Live(e) => write!(f, "{e}"),
        }
    }
}

impl From<LiveError> for LoadRefusal {
    fn from(e: LiveError) -> Self {
        LoadRefusal::Live(e)
    }
}

/// The flags in the order FUNCTION LIST gives them.
fn flag_names(flags: &ScriptFlags) -> Vec<String> {
    [
        (flags.no_writes, "no-writes"),
        (flags.allow_oom, "allow-oom"),
        (flags.allow_stale, "allow-stale"),
        (flags.no_cluster, "no-cluster"),
        (flags.allow_cross_slot_keys, "allow-cross-slot-keys"),
    ]
    .iter()
    .filter(|(on, _)| *on)
    .map(|(_, name)| name.to_string())
    .collect()
}

/// The `name=` of the library's shebang (`#!lua name=mylib`), as the server reads it.
pub fn library_name(code: &[u8]) -> Option<String> {
    let first = code.split(|&b| b == b'\n').next()?;
    let line = String::from_utf8_lossy(first.strip_prefix(b"#!")?);
    line.split_whitespace()
        .find_map(|part| part.strip_prefix("name="))
        .map(str::to_string)
}

/// Is the server a replica now? (INFO replication, read again: the role may have changed since
/// the connection was made.)
fn role(live: &mut LiveBackend) -> Result<String, LiveError> {
    let info = match live.command(&[b"INFO", b"replication"])? {
        Reply::Bulk(b) => String::from_utf8_lossy(&b).into_owned(),
        Reply::Verbatim { text, .. } => String::from_utf8_lossy(&text).into_owned(),
        Reply::Error(e) => return Err(LiveError::Server(e)),
        other => other.to_cli(),
    };
    Ok(super::info_field(&info, "role")
        .unwrap_or("master")
        .to_string())
}

/// Plan loading `code` (a library file, `label` names it in the diff) to the server.
pub fn plan_load(
    live: &mut LiveBackend,
    code: &[u8],
    label: &str,
) -> Result<LoadPlan, LoadRefusal> {
    // On a cluster the load goes to masters from the slot map, whatever the node connected to is.
    if !live.server.cluster && role(live)? != "master" {
        return Err(LoadRefusal::Replica(live.target.display.clone()));
    }
    let mut sandbox = Sandbox::new();
    sandbox.set_profile(live.server.profile);
    let (library, functions, sandbox_error) = match sandbox.function_load(code, false) {
        Ok(name) => {
            let functions = sandbox
                .function_libraries()
                .iter()
                .find(|lib| lib.name == name)
                .map(|lib| {
                    lib.functions
                        .iter()
                        .map(|f| PlannedFunction {
                            name: f.name.clone(),
                            flags: flag_names(&f.flags),
                        })
                        .collect()
                })
                .unwrap_or_default();
            (name, functions, None)
        }
        Err(e) => (library_name(code).unwrap_or_default(), Vec::new(), Some(e)),
    };
    // On a cluster each master has its own libraries: the load (and so the comparison) is the first
    // master's.
    let node = if live.server.cluster {
        live.cluster_masters()?.first().cloned()
    } else {
        None
    };
    let server_library: Option<(LiveLibrary, Vec<u8>)> = if library.is_empty() {
        None
    } else {
        library_with_code_on(live, node.as_ref(), &library)?
    };
    let mut plan = LoadPlan {
        library,
        exists: server_library.is_some(),
        same_code: false,
        functions,
        added: Vec::new(),
        removed: Vec::new(),
        flags_changed: Vec::new(),
        diff: String::new(),
        sandbox_error,
        cluster_node: None,
        masters: Vec::new(),
    };
    if let Some((old, old_code)) = &server_library {
        plan.same_code = old_code.as_slice() == code;
        if plan.sandbox_error.is_none() {
            for f in &plan.functions {
                match old.functions.iter().find(|o| o.name == f.name) {
                    None => plan.added.push(f.name.clone()),
                    Some(o) => {
                        let mut before = o.flags.clone();
                        let mut after = f.flags.clone();
                        before.sort();
                        after.sort();
                        if before != after {
                            plan.flags_changed.push((
                                f.name.clone(),
                                o.flags.clone(),
                                f.flags.clone(),
                            ));
                        }
                    }
                }
            }
            plan.removed = old
                .functions
                .iter()
                .filter(|o| !plan.functions.iter().any(|f| f.name == o.name))
                .map(|o| o.name.clone())
                .collect();
        }
        if !plan.same_code {
            let (old_text, new_text) = (
                String::from_utf8_lossy(old_code),
                String::from_utf8_lossy(code),
            );
            plan.diff = similar::TextDiff::from_lines(old_text.as_ref(), new_text.as_ref())
                .unified_diff()
                .context_radius(2)
                .header(&format!("server: {}", plan.library), label)
                .to_string();
        }
    }
    plan.cluster_node = node.as_ref().map(ClusterNode::addr);
    Ok(plan)
}

fn flags_text(flags: &[String]) -> String {
    if flags.is_empty() {
        "no flags".into()
    } else {
        flags.join(",")
    }
}

impl LoadPlan {
    /// Only FUNCTION LOAD REPLACE loads it (the server has a library of that name).
    pub fn needs_replace(&self) -> bool {
        self.exists
    }

    /// What the load changes, in words (and the code's line diff when a library is replaced).
    pub fn summary(&self) -> String {
        let mut out = String::new();
        let name = if self.library.is_empty() {
            "(no name= in the shebang)".to_string()
        } else {
            self.library.clone()
        };
        if self.exists {
            out.push_str(&format!(
                "library {name}: replaces the server's library of that name (FUNCTION LOAD REPLACE){}\n",
                if self.same_code { "; the code is the same: nothing changes" } else { "" }
            ));
        } else {
            out.push_str(&format!(
                "library {name}: new on the server (FUNCTION LOAD)\n"
            ));
        }
        if let Some(e) = &self.sandbox_error {
            out.push_str(&format!(
                "  the sandbox refuses to load it: {e} (the server will most likely refuse it too)\n"
            ));
        }
        let list = |names: &[String]| names.join(", ");
        if !self.exists && !self.functions.is_empty() {
            let described: Vec<String> = self
                .functions
                .iter()
                .map(|f| format!("{} ({})", f.name, flags_text(&f.flags)))
                .collect();
            out.push_str(&format!("  functions: {}\n", described.join(", ")));
        }
        if !self.added.is_empty() {
            out.push_str(&format!("  functions added: {}\n", list(&self.added)));
        }
        if !self.removed.is_empty() {
            out.push_str(&format!("  functions removed: {}\n", list(&self.removed)));
        }
        for (f, before, after) in &self.flags_changed {
            out.push_str(&format!(
                "  flags of {f}: {} -> {}\n",
                flags_text(before),
                flags_text(after)
            ));
        }
        if let Some(node) = &self.cluster_node {
            out.push_str(&format!(
                "  cluster: FUNCTION LOAD goes to one master ({node}); the other masters do not get the library (--every-master loads it on each)\n"
            ));
        }
        if !self.diff.is_empty() {
            out.push_str(&self.diff);
            if !self.diff.ends_with('\n') {
                out.push('\n');
            }
        }
        out
    }
}

/// Send FUNCTION LOAD (REPLACE when `replace`) as planned: the server's reply (the library's name,
/// or its error text exactly). On a cluster it goes to the plan's master. The role is read again
/// first: a server that became a replica is refused.
pub fn load(
    live: &mut LiveBackend,
    plan: &LoadPlan,
    code: &[u8],
    replace: bool,
) -> Result<Reply, LoadRefusal> {
    if plan.cluster_node.is_none() && role(live)? != "master" {
        return Err(LoadRefusal::Replica(live.target.display.clone()));
    }
    let mut args: Vec<&[u8]> = vec![b"FUNCTION", b"LOAD"];
    if replace {
        args.push(b"REPLACE");
    }
    args.push(code);
    let node = match &plan.cluster_node {
        Some(addr) => live
            .cluster_masters()?
            .into_iter()
            .find(|m| &m.addr() == addr),
        None => None,
    };
    Ok(match node {
        Some(node) => live.command_on(&node, &args)?,
        None => live.command(&args)?,
    })
}

/// One master of a cluster before a load on every master: does it have the library, with this code?
#[derive(Debug, Clone, PartialEq)]
pub struct MasterLibrary {
    /// "127.0.0.1:7000 (master, slots 0-5460)".
    pub node: String,
    /// "127.0.0.1:7000".
    pub addr: String,
    pub exists: bool,
    pub same_code: bool,
}

impl MasterLibrary {
    /// "does not have it", "has this code already", "has another version".
    pub fn state(&self) -> &'static str {
        match (self.exists, self.same_code) {
            (false, _) => "does not have it",
            (true, true) => "has this code already",
            (true, false) => "has another version",
        }
    }

    /// "127.0.0.1:7000 (master, slots 0-5460): has it (REPLACE replaces it)".
    pub fn describe(&self) -> String {
        let state = match (self.exists, self.same_code) {
            (false, _) => "does not have it (FUNCTION LOAD)",
            (true, true) => "has this code already (nothing to send)",
            (true, false) => "has another version (FUNCTION LOAD REPLACE)",
        };
        format!("{}: {state}", self.node)
    }
}

fn master_label(m: &ClusterNode) -> String {
    format!("{} (master, slots {})", m.addr(), m.ranges())
}

/// Each master of the cluster and whether it has `library` (with `code`) now; an error when one
/// cannot be asked.
pub fn masters_with(
    live: &mut LiveBackend,
    library: &str,
    code: &[u8],
) -> Result<Vec<MasterLibrary>, LoadRefusal> {
    let masters = live.cluster_masters()?;
    let mut out = Vec::new();
    for m in &masters {
        let found = if library.is_empty() {
            None
        } else {
            library_with_code_on(live, Some(m), library)?
        };
        out.push(MasterLibrary {
            node: master_label(m),
            addr: m.addr(),
            exists: found.is_some(),
            same_code: found.is_some_and(|(_, c)| c.as_slice() == code),
        });
    }
    Ok(out)
}

/// What FUNCTION LOAD did on one master of a cluster.
#[derive(Debug)]
pub struct MasterLoad {
    /// "127.0.0.1:7000 (master, slots 0-5460)".
    pub node: String,
    /// "127.0.0.1:7000".
    pub addr: String,
    /// FUNCTION LOAD was sent (false: the master has this code already).
    pub sent: bool,
    /// The master's answer (the library's name or its error), or why it could not be reached;
    /// None when nothing was sent.
    pub answer: Option<Result<Reply, LiveError>>,
}

impl MasterLoad {
    /// "loaded counters", the server's error, "not sent: ...", "has this code already: nothing sent".
    pub fn describe(&self) -> String {
        match &self.answer {
            None => "has this code already: nothing sent".into(),
            Some(Ok(Reply::Bulk(name))) => format!("loaded {}", String::from_utf8_lossy(name)),
            Some(Ok(other)) => other.to_cli().replace('\n', " "),
            Some(Err(e)) => format!("not sent: {e}"),
        }
    }

    /// The master did not load it: an error reply, or it could not be reached.
    pub fn failed(&self) -> bool {
        match &self.answer {
            None => false,
            Some(Ok(reply)) => reply.is_error(),
            Some(Err(_)) => true,
        }
    }

    /// `{"node", "addr", "sent", "reply", "error"}`.
    pub fn to_json(&self) -> serde_json::Value {
        let (reply, error) = match &self.answer {
            None => (serde_json::Value::Null, serde_json::Value::Null),
            Some(Ok(reply)) => (reply.to_json(), serde_json::Value::Null),
            Some(Err(e)) => (serde_json::Value::Null, serde_json::json!(e.to_string())),
        };
        serde_json::json!({
            "node": self.node,
            "addr": self.addr,
            "sent": self.sent,
            "reply": reply,
            "error": error,
        })
    }
}

/// FUNCTION LOAD on every master of the cluster that does not have this code yet (REPLACE when
/// `replace`), after one consent: each master with its own answer (the library's name, the
/// server's error, or why it could not be reached). Masters with the same code already are left
/// out ("nothing to send").
pub fn load_every_master(
    live: &mut LiveBackend,
    library: &str,
    code: &[u8],
    replace: bool,
) -> Result<Vec<MasterLoad>, LoadRefusal> {
    let masters = live.cluster_masters()?;
    let mut args: Vec<&[u8]> = vec![b"FUNCTION", b"LOAD"];
    if replace {
        args.push(b"REPLACE");
    }
    args.push(code);
    let mut out = Vec::new();
    for m in &masters {
        let same = !library.is_empty()
            && matches!(library_with_code_on(live, Some(m), library), Ok(Some((_, c))) if c == code);
        out.push(MasterLoad {
            node: master_label(m),
            addr: m.addr(),
            sent: !same,
            answer: (!same).then(|| live.command_on(m, &args)),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_library_name_is_read_from_the_shebang() {
        assert_eq!(
            library_name(b"#!lua name=mylib\nreturn 1").as_deref(),
            Some("mylib")
        );
        assert_eq!(library_name(b"#!lua\n"), None);
        assert_eq!(library_name(b"return 1"), None);
    }
}
