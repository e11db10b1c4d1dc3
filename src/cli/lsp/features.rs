//! What the server answers, each from the engine's own knowledge: diagnostics from the lint
//! (engine/analysis), hovers from the profile's command table and the servers' COMMAND DOCS,
//! completions from the same table, the sandbox's libraries and the sidecar, and code actions.

use super::document::{self, Document, Kind};
use super::library;
use crate::engine::analysis::{lint_with, rules, Diagnostic as Finding};
use crate::engine::commands::{docs, is_container, lookup_in, table, table_of};
use crate::engine::profile::{Profile, PROFILES};
use lsp_types::{
    CodeAction, CodeActionKind, CompletionItem, CompletionItemKind, CompletionTextEdit, Diagnostic,
    DiagnosticSeverity, Documentation, Hover, HoverContents, MarkupContent, MarkupKind,
    NumberOrString, Position, Range, TextEdit, Uri, WorkspaceEdit,
};
use std::collections::HashMap;

/// What a document is checked with: the server it is for and its sidecar's KEYS and ARGV.
pub struct Setting<'a> {
    pub profile: &'static Profile,
    pub keys: Option<&'a [String]>,
    pub argv: Option<&'a [String]>,
}

/// The lint's findings as LSP diagnostics.
pub fn diagnostics(doc: &Document, setting: &Setting) -> Vec<Diagnostic> {
    findings(doc, setting)
        .iter()
        .map(|f| diagnostic(doc, f))
        .collect()
}

fn findings(doc: &Document, setting: &Setting) -> Vec<Finding> {
    lint_with(&doc.text, setting.profile, setting.keys)
}

fn diagnostic(doc: &Document, f: &Finding) -> Diagnostic {
    Diagnostic {
        range: doc.token_range(f.line, f.column),
        severity: Some(match f.severity {
            rules::Severity::Error => DiagnosticSeverity::ERROR,
            rules::Severity::Warning => DiagnosticSeverity::WARNING,
        }),
        code: Some(NumberOrString::String(f.rule.to_string())),
        source: Some("evalbench".into()),
        message: f.message.clone(),
        ..Diagnostic::default()
    }
}

fn markdown(value: String) -> MarkupContent {
    MarkupContent {
        kind: MarkupKind::Markdown,
        value,
    }
}

/// Hover on a command name in `redis.call('…')` (or a container's subcommand), or on a
/// `redis.*`/library function.
pub fn hover(doc: &Document, position: Position, profile: &'static Profile) -> Option<Hover> {
    let line_no = position.line as usize;
    let line = doc.line(line_no);
    let at = doc.column_byte(position)?;
    if let Some(hover) = function_hover(doc, line_no, at) {
        return Some(hover);
    }
    if let Some(arg) = document::call_argument(line, at) {
        let name = match (arg.index, &arg.command) {
            (0, _) => arg.text.to_ascii_lowercase(),
            (_, Some(command)) => {
                let command = command.to_ascii_lowercase();
                if !is_container(profile, &command) {
                    return None;
                }
                format!("{command}|{}", arg.text.to_ascii_lowercase())
            }
            _ => return None,
        };
        return Some(Hover {
            contents: HoverContents::Markup(markdown(command_text(&name, profile))),
            range: Some(Range::new(
                doc.position(line_no, arg.text_start),
                doc.position(line_no, arg.text_end),
            )),
        });
    }
    let (name, start) = document::name_at(line, at)?;
    let (signature, text) = library::doc(&name)?;
    Some(Hover {
        contents: HoverContents::Markup(markdown(format!("```lua\n{signature}\n```\n{text}"))),
        range: Some(Range::new(
            doc.position(line_no, start),
            doc.position(line_no, start + name.len()),
        )),
    })
}

/// Hover on a function the document's library registers: its name where it is registered, or
/// in `FCALL`/`FCALL_RO`'s function argument. Read from the text, never run.
fn function_hover(doc: &Document, line_no: usize, at: usize) -> Option<Hover> {
    let line = doc.line(line_no);
    let token = document::tokens(line).into_iter().find(|t| {
        matches!(&t.kind, document::Kind::Str { content, .. }
            if at >= t.content_start() && at <= t.content_start() + content.len())
    })?;
    let document::Kind::Str { content, .. } = &token.kind else {
        return None;
    };
    let library = crate::engine::analysis::library::library(&doc.text)?;
    let function = library.functions.iter().find(|f| &f.name == content)?;
    let in_fcall = document::call_argument(line, at).is_some_and(|arg| {
        arg.index == 1
            && arg.command.as_deref().is_some_and(|c| {
                c.eq_ignore_ascii_case("fcall") || c.eq_ignore_ascii_case("fcall_ro")
            })
    });
    if function.line != line_no + 1 && !in_fcall {
        return None;
    }
    Some(Hover {
        contents: HoverContents::Markup(markdown(function_text(library.name.as_deref(), function))),
        range: Some(Range::new(
            doc.position(line_no, token.content_start()),
            doc.position(line_no, token.content_start() + content.len()),
        )),
    })
}

/// A registered function's hover: its library, flags and what they mean for FCALL.
fn function_text(library: Option<&str>, f: &crate::engine::analysis::library::Function) -> String {
    let flags = if f.flags.is_empty() {
        "none (FCALL only: FCALL_RO refuses a function that may write)".to_string()
    } else {
        f.flags.join(", ")
    };
    let ro = if f.flags.iter().any(|flag| flag == "no-writes") {
        "\n- Callable with FCALL_RO (and on a read-only replica); its writes are refused"
    } else {
        ""
    };
    format!(
        "**{}** · function of library `{}` · registered on line {}\n\n- Flags: {flags}{ro}\n- Called as `FCALL {} numkeys key... arg...`: `function(keys, args)`",
        f.name,
        library.unwrap_or("?"),
        f.line,
        f.name
    )
}

/// How a reply reaches the script (Redis's conversion rules, RESP2).
const IN_LUA: &str = "integer → number, bulk string → string, nil → false, array → table, status → `{ok = \"…\"}`; an error reply raises a Lua error (`redis.call`) or comes back as `{err = \"…\"}` (`redis.pcall`). After `redis.setresp(3)`: map → `{map = {…}}`, set → `{set = {…}}`, double → `{double = n}`, null → nil, booleans as such.";

/// A command's hover: summary and syntax (COMMAND DOCS), arity, keys, flags, the profiles
/// that have it, and what its reply is in Lua.
pub fn command_text(name: &str, profile: &'static Profile) -> String {
    let display = name.replace('|', " ").to_uppercase();
    let here = lookup_in(profile, name).map(|r| r.info);
    let having: Vec<&'static Profile> = PROFILES
        .iter()
        .filter(|p| lookup_in(p, name).is_some())
        .collect();
    let info = here.or_else(|| {
        having
            .first()
            .and_then(|p| lookup_in(p, name))
            .map(|r| r.info)
    });
    let doc = docs::doc(name);
    let Some(info) = info else {
        return format!(
            "**{display}** is not a command of any profile ({}): a module's command, or a typo?",
            PROFILES.iter().map(|p| p.id).collect::<Vec<_>>().join(", ")
        );
    };
    let mut out = format!("**{display}**");
    if let Some(d) = &doc {
        out.push_str(&format!(
            " · {} · since {}\n\n{}\n",
            d.group, d.since, d.summary
        ));
        out.push_str(&format!("```\n{}\n```\n", d.syntax));
    } else {
        out.push('\n');
    }
    if here.is_none() {
        out.push_str(&format!(
            "\n**Not a command of {}**: the call fails there.\n",
            profile.id
        ));
    } else if info.has(table::F_NOSCRIPT) {
        out.push_str(&format!(
            "\n**Refused in scripts** ({}): {}\n",
            profile.id, profile.noscript_text
        ));
    }
    let arity = if info.arity >= 0 {
        format!("exactly {}", info.arity)
    } else {
        format!("at least {}", -info.arity)
    };
    out.push_str(&format!(
        "\n- Arity: {arity} arguments, counting the name\n"
    ));
    out.push_str(&format!("- Keys: {}\n", keys_text(info)));
    out.push_str(&format!(
        "- Flags: {}\n",
        table::flag_text(info.flags).replace('|', ", ")
    ));
    out.push_str(&format!(
        "- Profiles: {}\n",
        having.iter().map(|p| p.id).collect::<Vec<_>>().join(", ")
    ));
    out.push_str(&format!("- In Lua: {IN_LUA}\n"));
    out
}

fn keys_text(info: &table::RedisCommandInfo) -> String {
    if info.has(table::F_MOVABLEKEYS) {
        return "found in its arguments by the command's own rules (numkeys, STREAMS, …)".into();
    }
    if info.first_key <= 0 || info.step <= 0 {
        return "none".into();
    }
    let every = if info.step > 1 {
        format!(", every {}", info.step)
    } else {
        String::new()
    };
    match info.last_key {
        l if l == info.first_key => format!("argument {}", info.first_key),
        -1 => format!("arguments {} to the last{every}", info.first_key),
        l if l < 0 => format!(
            "arguments {} to the last but {}{every}",
            info.first_key,
            -l - 1
        ),
        l => format!("arguments {} to {l}{every}", info.first_key),
    }
}

/// Completions at a position: command names (and subcommands) in `redis.call('…')`, members
/// after `redis.`/`cjson.`/…, indexes in `KEYS[`/`ARGV[` with the sidecar's values.
pub fn completion(doc: &Document, position: Position, setting: &Setting) -> Vec<CompletionItem> {
    let line_no = position.line as usize;
    let line = doc.line(line_no);
    let Some(at) = doc.column_byte(position) else {
        return Vec::new();
    };
    let edit = |start: usize, label: &str| {
        Some(CompletionTextEdit::Edit(TextEdit::new(
            Range::new(doc.position(line_no, start), position),
            label.to_string(),
        )))
    };
    if let Some(arg) = document::call_argument(line, at) {
        let typed = &arg.text[..at - arg.text_start];
        // Written as the user writes: `hs` completes to `hset`, `HS` and `` to `HSET`.
        let lower = !typed.is_empty() && typed.chars().all(|c| !c.is_ascii_uppercase());
        let case = |s: &str| {
            if lower {
                s.to_string()
            } else {
                s.to_ascii_uppercase()
            }
        };
        if let Some(items) = function_names(doc, &arg, typed, &edit) {
            return items;
        }
        let candidates: Vec<(String, String)> = match (arg.index, &arg.command) {
            (0, _) => table_of(setting.profile)
                .into_iter()
                .filter(|c| !c.name.contains('|') && !c.has(table::F_NOSCRIPT))
                .map(|c| (c.name.to_string(), c.name.to_string()))
                .collect(),
            (_, Some(command)) if is_container(setting.profile, &command.to_ascii_lowercase()) => {
                let parent = format!("{}|", command.to_ascii_lowercase());
                table_of(setting.profile)
                    .into_iter()
                    .filter(|c| !c.has(table::F_NOSCRIPT))
                    .filter_map(|c| {
                        c.name
                            .strip_prefix(&parent)
                            .map(|sub| (sub.to_string(), c.name.to_string()))
                    })
                    .collect()
            }
            _ => Vec::new(),
        };
        return candidates
            .into_iter()
            .filter(|(label, _)| label.starts_with(&typed.to_ascii_lowercase()))
            .map(|(label, name)| {
                let label = case(&label);
                let d = docs::doc(&name);
                CompletionItem {
                    kind: Some(CompletionItemKind::FUNCTION),
                    detail: d.as_ref().map(|d| d.summary.clone()),
                    documentation: d.map(|d| {
                        Documentation::MarkupContent(markdown(format!("```\n{}\n```", d.syntax)))
                    }),
                    text_edit: edit(arg.text_start, &label),
                    label,
                    ..CompletionItem::default()
                }
            })
            .collect();
    }
    if let Some(table_name) = document::table_index_before(line, at) {
        let values = match table_name {
            "KEYS" => setting.keys,
            _ => setting.argv,
        };
        let digits_start = line[..at]
            .trim_end_matches(|c: char| c.is_ascii_digit())
            .len();
        return values
            .unwrap_or_default()
            .iter()
            .enumerate()
            .map(|(i, value)| {
                let label = (i + 1).to_string();
                CompletionItem {
                    kind: Some(CompletionItemKind::VALUE),
                    detail: Some(format!(
                        "{table_name}[{label}] = \"{value}\" (the sidecar's)"
                    )),
                    sort_text: Some(format!("{:05}", i + 1)),
                    text_edit: edit(digits_start, &label),
                    label,
                    ..CompletionItem::default()
                }
            })
            .collect();
    }
    if let Some((base, typed)) = document::member_prefix(line, at) {
        if !library::LIBRARIES.contains(&base.as_str()) && base != "server" {
            return Vec::new();
        }
        return library::members(&base)
            .into_iter()
            .filter(|(member, _)| member.starts_with(&typed))
            .map(|(member, function)| {
                let doc = library::doc(&format!("{base}.{member}"));
                CompletionItem {
                    kind: Some(if function {
                        CompletionItemKind::FUNCTION
                    } else {
                        CompletionItemKind::CONSTANT
                    }),
                    detail: doc.map(|(signature, _)| signature.to_string()),
                    documentation: doc
                        .map(|(_, text)| Documentation::MarkupContent(markdown(text.to_string()))),
                    text_edit: edit(at - typed.len(), &member),
                    label: member,
                    ..CompletionItem::default()
                }
            })
            .collect();
    }
    Vec::new()
}

/// The document's library's functions in `FCALL`'s (`FCALL_RO`'s: the no-writes ones) function
/// argument; None when the argument is no such one.
fn function_names(
    doc: &Document,
    arg: &document::CallArgument,
    typed: &str,
    edit: &dyn Fn(usize, &str) -> Option<CompletionTextEdit>,
) -> Option<Vec<CompletionItem>> {
    let command = arg.command.as_deref().filter(|_| arg.index == 1)?;
    let read_only = command.eq_ignore_ascii_case("fcall_ro");
    if !read_only && !command.eq_ignore_ascii_case("fcall") {
        return None;
    }
    let library = crate::engine::analysis::library::library(&doc.text).unwrap_or_default();
    Some(
        library
            .functions
            .iter()
            .filter(|f| f.name.starts_with(typed))
            .filter(|f| !read_only || f.flags.iter().any(|flag| flag == "no-writes"))
            .map(|f| CompletionItem {
                kind: Some(CompletionItemKind::FUNCTION),
                detail: Some(if f.flags.is_empty() {
                    "function of this library".to_string()
                } else {
                    format!("function of this library · {}", f.flags.join(", "))
                }),
                text_edit: edit(arg.text_start, &f.name),
                label: f.name.clone(),
                ..CompletionItem::default()
            })
            .collect(),
    )
}

/// Where a script's sidecar is and what it holds, for the action that declares a key.
pub struct SidecarFile {
    pub uri: Uri,
    /// Its text, when it exists.
    pub text: Option<String>,
}

/// Code actions on a range: call with `redis.pcall` and check its error; declare a key
/// written in the script in KEYS (the call and the sidecar).
pub fn code_actions(
    uri: &Uri,
    doc: &Document,
    range: Range,
    setting: &Setting,
    sidecar: Option<&SidecarFile>,
) -> Vec<CodeAction> {
    let mut out = Vec::new();
    for line in range.start.line..=range.end.line.min(doc.line_count() as u32 - 1) {
        if let Some(action) = wrap_in_pcall(uri, doc, line as usize) {
            out.push(action);
            break;
        }
    }
    out.extend(declare_keys(uri, doc, range, setting, sidecar));
    out
}

/// `local v = redis.call(…)` (or the call as a statement) → `redis.pcall` and a check of its
/// `{err = …}` after the call.
fn wrap_in_pcall(uri: &Uri, doc: &Document, line_no: usize) -> Option<CodeAction> {
    let line = doc.line(line_no);
    let toks = document::tokens(line);
    let k = toks.iter().position(
        |t| matches!(&t.kind, Kind::Name(n) if n == "redis.call" || n == "server.call"),
    )?;
    if toks.get(k + 1).map(|t| &t.kind) != Some(&Kind::Punct('(')) {
        return None;
    }
    let callee = &toks[k];
    let before = line[..callee.start].trim();
    let indent: String = line.chars().take_while(|c| c.is_whitespace()).collect();
    let local_name = |s: &str| {
        let s = s.strip_prefix("local ")?.trim().strip_suffix('=')?.trim();
        (!s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
            .then(|| s.to_string())
    };
    let (variable, replacement) = match local_name(before) {
        Some(name) => (name, "redis.pcall".to_string()),
        None if before.is_empty() => ("reply".into(), "local reply = redis.pcall".to_string()),
        None => return None,
    };
    let (end_line, after) = call_end(doc, line_no, toks[k + 1].start)?;
    // The call must end its statement: nothing but a comment after it.
    let rest = doc.line(end_line)[after..].trim();
    if !(rest.is_empty() || rest.starts_with("--")) {
        return None;
    }
    let end = doc.line(end_line).len();
    let check = format!(
        "\n{indent}if type({variable}) == 'table' and {variable}.err then\n{indent}  return {variable} -- the command's error, as the script's error reply\n{indent}end"
    );
    let edits = vec![
        TextEdit::new(
            Range::new(
                doc.position(line_no, callee.start),
                doc.position(line_no, callee.end),
            ),
            replacement,
        ),
        TextEdit::new(
            Range::new(doc.position(end_line, end), doc.position(end_line, end)),
            check,
        ),
    ];
    Some(CodeAction {
        title: "Call with redis.pcall and check its error".into(),
        kind: Some(CodeActionKind::REFACTOR_REWRITE),
        edit: Some(WorkspaceEdit {
            changes: Some(HashMap::from([(uri.clone(), edits)])),
            ..WorkspaceEdit::default()
        }),
        ..CodeAction::default()
    })
}

/// The line and byte after the `)` that closes the `(` at (line, byte), strings skipped.
fn call_end(doc: &Document, line_no: usize, open: usize) -> Option<(usize, usize)> {
    let mut depth = 0usize;
    let mut first = true;
    for n in line_no..doc.line_count().min(line_no + 200) {
        let line = doc.line(n);
        let from = if first { open } else { 0 };
        first = false;
        for t in document::tokens(&line[from..]) {
            match t.kind {
                Kind::Punct('(') => depth += 1,
                Kind::Punct(')') => {
                    depth = depth.checked_sub(1)?;
                    if depth == 0 {
                        return Some((n, from + t.end));
                    }
                }
                _ => {}
            }
        }
    }
    None
}

/// For each key written into the script (a key-not-from-keys finding on a string literal) in
/// the range: `KEYS[n]` in its place (every place it is written as a key) and the key added to
/// the sidecar's "keys".
// WorkspaceEdit keys its changes by lsp-types' Uri, whose lazily parsed parts clippy takes for
// mutable state; its hash and equality are those of its text.
#[allow(clippy::mutable_key_type)]
fn declare_keys(
    uri: &Uri,
    doc: &Document,
    range: Range,
    setting: &Setting,
    sidecar: Option<&SidecarFile>,
) -> Vec<CodeAction> {
    let all = findings(doc, setting);
    let literal = |f: &Finding| -> Option<(String, Range)> {
        if f.rule != rules::KEY_NOT_FROM_KEYS {
            return None;
        }
        let line = f.line.checked_sub(1)?;
        let start = doc.byte_of_column(line, f.column);
        let token = document::tokens(doc.line(line))
            .into_iter()
            .find(|t| t.start == start)?;
        match token.kind {
            Kind::Str {
                content,
                closed: true,
            } if !content.contains('\\') => Some((
                content,
                Range::new(
                    doc.position(line, token.start),
                    doc.position(line, token.end),
                ),
            )),
            _ => None,
        }
    };
    let in_range = |r: &Range| r.start.line >= range.start.line && r.start.line <= range.end.line;
    let mut declared: Vec<String> = Vec::new();
    let mut out = Vec::new();
    // The sidecar as JSON, when there is one to edit.
    let sidecar_json = match sidecar.and_then(|s| s.text.as_deref()) {
        Some(text) => match serde_json::from_str::<serde_json::Value>(text) {
            Ok(v) if v.is_object() => Some(v),
            _ => return Vec::new(), // a broken sidecar is not rewritten
        },
        None => None,
    };
    let sidecar_keys: Vec<String> = setting.keys.map(<[String]>::to_vec).unwrap_or_default();
    for f in &all {
        let Some((key, place)) = literal(f) else {
            continue;
        };
        if !in_range(&place) || declared.contains(&key) {
            continue;
        }
        declared.push(key.clone());
        let places: Vec<(Range, &Finding)> = all
            .iter()
            .filter_map(|g| literal(g).filter(|(k, _)| *k == key).map(|(_, r)| (r, g)))
            .collect();
        let existing = sidecar_keys.iter().position(|k| *k == key);
        let n = match existing {
            Some(i) => i + 1,
            None if sidecar.is_some_and(|s| s.text.is_some()) => sidecar_keys.len() + 1,
            None => highest_keys_index(doc) + 1,
        };
        let script_edits: Vec<TextEdit> = places
            .iter()
            .map(|(r, _)| TextEdit::new(*r, format!("KEYS[{n}]")))
            .collect();
        let mut changes = HashMap::from([(uri.clone(), script_edits)]);
        let mut document_changes = None;
        match (sidecar, &sidecar_json, existing) {
            (_, _, Some(_)) => {}
            (Some(file), Some(json), None) => {
                let mut json = json.clone();
                let keys = json
                    .as_object_mut()
                    .expect("an object")
                    .entry("keys")
                    .or_insert_with(|| serde_json::Value::Array(Vec::new()));
                if let Some(list) = keys.as_array_mut() {
                    list.push(serde_json::Value::String(key.clone()));
                } else {
                    continue;
                }
                let text = file.text.as_deref().unwrap_or_default();
                let old = Document::new(text.to_string(), 0);
                let new_text = format!(
                    "{}\n",
                    serde_json::to_string_pretty(&json).unwrap_or_default()
                );
                changes.insert(
                    file.uri.clone(),
                    vec![TextEdit::new(old.full_range(), new_text)],
                );
            }
            (Some(file), None, None) if n == 1 => {
                // No sidecar yet and no KEYS in the script: one with this key.
                let text = format!(
                    "{}\n",
                    serde_json::to_string_pretty(&serde_json::json!({ "keys": [key] }))
                        .unwrap_or_default()
                );
                document_changes = Some(create_and_edit(uri, doc, &changes, &file.uri, text));
                changes.clear();
            }
            _ => {}
        }
        out.push(CodeAction {
            title: format!("Declare \"{key}\" in KEYS (KEYS[{n}])"),
            kind: Some(CodeActionKind::QUICKFIX),
            diagnostics: Some(places.iter().map(|(_, g)| diagnostic(doc, g)).collect()),
            edit: Some(WorkspaceEdit {
                changes: (!changes.is_empty()).then_some(changes),
                document_changes,
                ..WorkspaceEdit::default()
            }),
            ..CodeAction::default()
        });
    }
    out
}

/// The edits of a new sidecar: create it, write its text, then the script's edits.
#[allow(clippy::mutable_key_type)]
fn create_and_edit(
    uri: &Uri,
    doc: &Document,
    changes: &HashMap<Uri, Vec<TextEdit>>,
    sidecar: &Uri,
    text: String,
) -> lsp_types::DocumentChanges {
    use lsp_types::{
        CreateFile, DocumentChangeOperation, DocumentChanges, OneOf,
        OptionalVersionedTextDocumentIdentifier, ResourceOp, TextDocumentEdit,
    };
    let edit = |uri: &Uri, version: Option<i32>, edits: Vec<TextEdit>| {
        DocumentChangeOperation::Edit(TextDocumentEdit {
            text_document: OptionalVersionedTextDocumentIdentifier {
                uri: uri.clone(),
                version,
            },
            edits: edits.into_iter().map(OneOf::Left).collect(),
        })
    };
    DocumentChanges::Operations(vec![
        DocumentChangeOperation::Op(ResourceOp::Create(CreateFile {
            uri: sidecar.clone(),
            options: None,
            annotation_id: None,
        })),
        edit(sidecar, None, vec![TextEdit::new(Range::default(), text)]),
        edit(
            uri,
            Some(doc.version),
            changes.get(uri).cloned().unwrap_or_default(),
        ),
    ])
}

/// The largest n of a `KEYS[n]` written in the script.
fn highest_keys_index(doc: &Document) -> usize {
    let mut highest = 0;
    for n in 0..doc.line_count() {
        let toks = document::tokens(doc.line(n));
        for w in toks.windows(3) {
            if let (Kind::Name(name), Kind::Punct('['), Kind::Number(i)) =
                (&w[0].kind, &w[1].kind, &w[2].kind)
            {
                if name == "KEYS" {
                    highest = highest.max(i.parse().unwrap_or(0));
                }
            }
        }
    }
    highest
}
