//! `evalbench lsp`: a Language Server (LSP 3.17 over stdio) for Redis Lua scripts. A thin front
//! end: diagnostics are `evalbench lint`'s findings, hovers and completions come from the
//! profile's command table, the servers' COMMAND DOCS and the sandbox's libraries, the sidecar
//! (SCRIPT.json) gives KEYS and ARGV. Messages are read on a thread of their own; the documents
//! changed by all the messages waiting are checked once, after them.

mod document;
mod features;
mod library;
mod transport;

use crate::cli::common::CliError;
use crate::engine::formats::config::Config;
use crate::engine::formats::{sidecar_path, Sidecar};
use crate::engine::profile::Profile;
use clap::Args;
use document::Document;
use features::Setting;
use lsp_server::{ErrorCode, Message, Notification, Request, Response};
use lsp_types::{notification::Notification as _, request::Request as _, Uri};
use std::collections::{BTreeSet, HashMap};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use transport::Incoming;

pub const LSP_HELP: &str = "Speaks the Language Server Protocol on stdin/stdout, for an editor to start: diagnostics\n(every `evalbench lint` rule, as you type), hover on commands and redis.*/cjson/bit functions,\ncompletion of commands, subcommands, library functions and KEYS[n]/ARGV[n] from the sidecar, and\ncode actions. The server checked for: --profile, else `profile` in the nearest evalbench.toml\nabove the file, else config.toml's, else redis-7.0. Setup per editor: docs/lsp.md.\n\nExamples:\n  evalbench lsp                                  (what an editor runs)\n  evalbench lsp --profile valkey-9.1             (check for Valkey 9.1's commands)\n  nvim: vim.lsp.start{ name = 'evalbench', cmd = { 'evalbench', 'lsp' } }";

#[derive(Args, Debug)]
pub struct LspArgs {
    /// Check for this server: redis-7.0, redis-7.2, redis-7.4, redis-8.0, valkey-8.1, valkey-9.1 (default: the project's evalbench.toml, else config.toml, else redis-7.0).
    #[arg(long, value_name = "ID", value_parser = crate::cli::common::parse_profile)]
    pub profile: Option<&'static Profile>,
    /// Accepted for editors that pass it: stdio is the only transport.
    #[arg(long, hide = true)]
    pub stdio: bool,
    /// Print help.
    #[arg(long, action = clap::ArgAction::Help)]
    pub help: Option<bool>,
}

/// The project's config file: the nearest one in the script's folder or above it.
pub const PROJECT_FILE: &str = "evalbench.toml";
/// A larger document is not checked (a script goes to the server whole in every EVAL).
pub const MAX_DOCUMENT: usize = 4 << 20;

pub fn lsp_main(args: &LspArgs) -> Result<(i32, String), CliError> {
    // Bounded: a client that sends faster than the checks run waits, rather than the messages
    // (each up to transport::MAX_MESSAGE) piling up in memory.
    let (sender, receiver) = std::sync::mpsc::sync_channel::<Incoming>(16);
    // The reader ends at the end of the input, or when the loop below is gone.
    std::thread::Builder::new()
        .name("lsp-reader".into())
        .spawn(move || {
            let stdin = io::stdin();
            let mut input = stdin.lock();
            loop {
                let incoming = transport::read(&mut input).unwrap_or(Incoming::End);
                let end = matches!(incoming, Incoming::End);
                if sender.send(incoming).is_err() || end {
                    return;
                }
            }
        })
        .map_err(|e| CliError {
            code: crate::cli::common::EXIT_BACKEND,
            message: format!("cannot start the message reader: {e}"),
        })?;
    let mut server = Server::new(args.profile, Config::load().profile);
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let code = server.run(&receiver, &mut out);
    Ok((code, String::new()))
}

struct Open {
    doc: Document,
    path: Option<PathBuf>,
    /// Too large to check: its size.
    too_large: Option<usize>,
}

struct Server {
    /// `--profile`, which wins over any file.
    fixed: Option<&'static Profile>,
    /// config.toml's (or the default).
    user: &'static Profile,
    documents: HashMap<Uri, Open>,
    /// Documents to check once the waiting messages are handled.
    dirty: BTreeSet<Uri>,
    initialized: bool,
    shutdown: bool,
    /// Config files already warned about.
    warned: BTreeSet<PathBuf>,
    /// Notifications to send after the current message's answer.
    pending: Vec<Message>,
}

/// What a handler answers: a result, or an error with its code.
type Answer = Result<serde_json::Value, (ErrorCode, String)>;

impl Server {
    fn new(fixed: Option<&'static Profile>, user: &'static Profile) -> Server {
        Server {
            fixed,
            user,
            documents: HashMap::new(),
            dirty: BTreeSet::new(),
            initialized: false,
            shutdown: false,
            warned: BTreeSet::new(),
            pending: Vec::new(),
        }
    }

    /// Serve until `exit` (or the end of the input); returns the exit status LSP asks for.
    fn run(&mut self, receiver: &std::sync::mpsc::Receiver<Incoming>, out: &mut impl Write) -> i32 {
        while let Ok(first) = receiver.recv() {
            let mut next = Some(first);
            while let Some(incoming) = next.take() {
                match incoming {
                    Incoming::End => return 1,
                    Incoming::Malformed { id, code, message } => {
                        let sent = match id {
                            Some(id) => {
                                send(out, Response::new_err(id, code as i32, message).into())
                            }
                            None => transport::write_error_without_id(out, code, &message),
                        };
                        if sent.is_err() {
                            return 1;
                        }
                    }
                    Incoming::Message(Message::Notification(n)) if n.method == "exit" => {
                        return if self.shutdown { 0 } else { 1 };
                    }
                    Incoming::Message(message) => {
                        for reply in self.handle(message) {
                            if send(out, reply).is_err() {
                                return 1;
                            }
                        }
                    }
                }
                next = receiver.try_recv().ok();
            }
            for reply in self.publish_dirty() {
                if send(out, reply).is_err() {
                    return 1;
                }
            }
        }
        1
    }

    fn handle(&mut self, message: Message) -> Vec<Message> {
        match message {
            Message::Request(request) => {
                let id = request.id.clone();
                let answer = self.request(request);
                let response = match answer {
                    Ok(result) => Response::new_ok(id, result),
                    Err((code, text)) => Response::new_err(id, code as i32, text),
                };
                let mut out = vec![response.into()];
                out.extend(self.take_messages());
                out
            }
            Message::Notification(n) => {
                self.notification(n);
                self.take_messages()
            }
            Message::Response(_) => Vec::new(),
        }
    }

    fn take_messages(&mut self) -> Vec<Message> {
        std::mem::take(&mut self.pending)
    }

    fn request(&mut self, request: Request) -> Answer {
        use lsp_types::request::{
            CodeActionRequest, Completion, HoverRequest, Initialize, Shutdown,
        };
        if request.method == Initialize::METHOD {
            self.initialized = true;
            return Ok(serde_json::json!({
                "capabilities": capabilities(),
                "serverInfo": { "name": "evalbench", "version": env!("CARGO_PKG_VERSION") },
            }));
        }
        if !self.initialized {
            return Err((
                ErrorCode::ServerNotInitialized,
                format!(
                    "{} before initialize: send initialize first",
                    request.method
                ),
            ));
        }
        if self.shutdown {
            return Err((
                ErrorCode::InvalidRequest,
                format!("{} after shutdown: only exit is left", request.method),
            ));
        }
        match request.method.as_str() {
            Shutdown::METHOD => {
                self.shutdown = true;
                Ok(serde_json::Value::Null)
            }
            HoverRequest::METHOD => {
                let p: lsp_types::HoverParams = params(request.params)?;
                let uri = p.text_document_position_params.text_document.uri;
                let (open, setting) = self.checked(&uri)?;
                let hover = features::hover(
                    &open.doc,
                    p.text_document_position_params.position,
                    setting.profile,
                );
                Ok(serde_json::to_value(hover).unwrap_or_default())
            }
            Completion::METHOD => {
                let p: lsp_types::CompletionParams = params(request.params)?;
                let uri = p.text_document_position.text_document.uri;
                let (open, setting) = self.checked(&uri)?;
                let sidecar = open.path.as_deref().and_then(read_sidecar);
                let setting = Setting {
                    keys: sidecar.as_ref().map(|s| s.keys.as_slice()),
                    argv: sidecar.as_ref().map(|s| s.argv.as_slice()),
                    ..setting
                };
                let items =
                    features::completion(&open.doc, p.text_document_position.position, &setting);
                Ok(serde_json::to_value(items).unwrap_or_default())
            }
            CodeActionRequest::METHOD => {
                let p: lsp_types::CodeActionParams = params(request.params)?;
                let (open, setting) = self.checked(&p.text_document.uri)?;
                let sidecar = open.path.as_deref().and_then(read_sidecar);
                let setting = Setting {
                    keys: sidecar.as_ref().map(|s| s.keys.as_slice()),
                    argv: sidecar.as_ref().map(|s| s.argv.as_slice()),
                    ..setting
                };
                let file = open.path.as_deref().and_then(|path| {
                    let side = sidecar_path(path);
                    Some(features::SidecarFile {
                        uri: path_uri(&side)?,
                        text: std::fs::read_to_string(&side).ok(),
                    })
                });
                let actions = features::code_actions(
                    &p.text_document.uri,
                    &open.doc,
                    p.range,
                    &setting,
                    file.as_ref(),
                );
                Ok(serde_json::to_value(actions).unwrap_or_default())
            }
            other => Err((
                ErrorCode::MethodNotFound,
                format!("evalbench lsp does not answer {other}"),
            )),
        }
    }

    /// An open document that can be checked, and its setting (the sidecar's keys not read).
    fn checked(&self, uri: &Uri) -> Result<(&Open, Setting<'static>), (ErrorCode, String)> {
        let open = self.documents.get(uri).ok_or_else(|| {
            (
                ErrorCode::InvalidParams,
                format!(
                    "{} is not open: send textDocument/didOpen first",
                    uri.as_str()
                ),
            )
        })?;
        if let Some(size) = open.too_large {
            return Err((ErrorCode::RequestFailed, too_large_text(size)));
        }
        let profile = self.profile_for(open.path.as_deref()).0;
        Ok((
            open,
            Setting {
                profile,
                keys: None,
                argv: None,
            },
        ))
    }

    /// The profile of a document: --profile, the project's evalbench.toml, config.toml.
    fn profile_for(
        &self,
        path: Option<&Path>,
    ) -> (&'static Profile, Option<(PathBuf, Vec<String>)>) {
        if let Some(p) = self.fixed {
            return (p, None);
        }
        let Some(dir) = path.and_then(Path::parent) else {
            return (self.user, None);
        };
        for folder in dir.ancestors() {
            let file = folder.join(PROJECT_FILE);
            if file.is_file() {
                let config = Config::load_from(&file);
                return (config.profile, Some((file, config.warnings)));
            }
        }
        (self.user, None)
    }

    fn notification(&mut self, n: Notification) {
        use lsp_types::notification::{
            DidChangeTextDocument, DidCloseTextDocument, DidOpenTextDocument, DidSaveTextDocument,
        };
        if !self.initialized {
            return; // LSP: notifications before initialize are dropped
        }
        match n.method.as_str() {
            DidOpenTextDocument::METHOD => {
                let Ok(p) =
                    serde_json::from_value::<lsp_types::DidOpenTextDocumentParams>(n.params)
                else {
                    return;
                };
                let item = p.text_document;
                let path = uri_path(&item.uri);
                self.set_text(item.uri, path, item.text, item.version);
            }
            DidChangeTextDocument::METHOD => {
                let Ok(p) =
                    serde_json::from_value::<lsp_types::DidChangeTextDocumentParams>(n.params)
                else {
                    return;
                };
                // Full sync: the last change holds the whole text.
                let Some(change) = p.content_changes.into_iter().next_back() else {
                    return;
                };
                let uri = p.text_document.uri;
                let path = uri_path(&uri);
                self.set_text(uri, path, change.text, p.text_document.version);
            }
            DidCloseTextDocument::METHOD => {
                let Ok(p) =
                    serde_json::from_value::<lsp_types::DidCloseTextDocumentParams>(n.params)
                else {
                    return;
                };
                self.documents.remove(&p.text_document.uri);
                self.dirty.remove(&p.text_document.uri);
                // Its findings go with it.
                self.pending
                    .push(publish(p.text_document.uri, Vec::new(), None));
            }
            DidSaveTextDocument::METHOD => {
                // A saved sidecar or evalbench.toml changes what the others are checked with.
                self.dirty.extend(self.documents.keys().cloned());
            }
            _ => {}
        }
    }

    fn set_text(&mut self, uri: Uri, path: Option<PathBuf>, text: String, version: i32) {
        let too_large = (text.len() > MAX_DOCUMENT).then_some(text.len());
        let text = if too_large.is_some() {
            String::new()
        } else {
            text
        };
        self.documents.insert(
            uri.clone(),
            Open {
                doc: Document::new(text, version),
                path,
                too_large,
            },
        );
        self.dirty.insert(uri);
    }

    /// Diagnostics of the documents changed since the last time.
    fn publish_dirty(&mut self) -> Vec<Message> {
        let mut out = std::mem::take(&mut self.pending);
        for uri in std::mem::take(&mut self.dirty) {
            let Some(open) = self.documents.get(&uri) else {
                continue;
            };
            if let Some(size) = open.too_large {
                let diagnostic = lsp_types::Diagnostic {
                    range: lsp_types::Range::default(),
                    severity: Some(lsp_types::DiagnosticSeverity::WARNING),
                    source: Some("evalbench".into()),
                    message: too_large_text(size),
                    ..lsp_types::Diagnostic::default()
                };
                out.push(publish(uri, vec![diagnostic], Some(open.doc.version)));
                continue;
            }
            let (profile, config) = self.profile_for(open.path.as_deref());
            let sidecar = open.path.as_deref().and_then(read_sidecar);
            let setting = Setting {
                profile,
                keys: sidecar.as_ref().map(|s| s.keys.as_slice()),
                argv: sidecar.as_ref().map(|s| s.argv.as_slice()),
            };
            let diagnostics = features::diagnostics(&open.doc, &setting);
            out.push(publish(uri, diagnostics, Some(open.doc.version)));
            if let Some((file, warnings)) = config {
                if !warnings.is_empty() && self.warned.insert(file) {
                    out.push(
                        Notification::new(
                            lsp_types::notification::ShowMessage::METHOD.into(),
                            lsp_types::ShowMessageParams {
                                typ: lsp_types::MessageType::WARNING,
                                message: warnings.join("\n"),
                            },
                        )
                        .into(),
                    );
                }
            }
        }
        out
    }
}

fn too_large_text(size: usize) -> String {
    format!(
        "the document is {:.1} MiB: evalbench lsp checks scripts up to {} MiB (a script goes to the server whole in every EVAL)",
        size as f64 / (1 << 20) as f64,
        MAX_DOCUMENT >> 20
    )
}

fn publish(uri: Uri, diagnostics: Vec<lsp_types::Diagnostic>, version: Option<i32>) -> Message {
    Notification::new(
        lsp_types::notification::PublishDiagnostics::METHOD.into(),
        lsp_types::PublishDiagnosticsParams {
            uri,
            diagnostics,
            version,
        },
    )
    .into()
}

fn params<P: serde::de::DeserializeOwned>(
    value: serde_json::Value,
) -> Result<P, (ErrorCode, String)> {
    serde_json::from_value(value)
        .map_err(|e| (ErrorCode::InvalidParams, format!("invalid params: {e}")))
}

fn send(out: &mut impl Write, message: Message) -> io::Result<()> {
    transport::write(out, message)
}

fn capabilities() -> lsp_types::ServerCapabilities {
    use lsp_types::*;
    ServerCapabilities {
        text_document_sync: Some(TextDocumentSyncCapability::Options(
            TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(TextDocumentSyncKind::FULL),
                save: Some(TextDocumentSyncSaveOptions::Supported(true)),
                ..TextDocumentSyncOptions::default()
            },
        )),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        completion_provider: Some(CompletionOptions {
            trigger_characters: Some(vec!["'".into(), "\"".into(), ".".into(), "[".into()]),
            ..CompletionOptions::default()
        }),
        code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
            code_action_kinds: Some(vec![
                CodeActionKind::QUICKFIX,
                CodeActionKind::REFACTOR_REWRITE,
            ]),
            ..CodeActionOptions::default()
        })),
        ..ServerCapabilities::default()
    }
}

/// The sidecar beside a script, when it exists and reads.
fn read_sidecar(script: &Path) -> Option<Sidecar> {
    crate::engine::formats::read_sidecar(&sidecar_path(script)).ok()
}

fn uri_path(uri: &Uri) -> Option<PathBuf> {
    url::Url::parse(uri.as_str()).ok()?.to_file_path().ok()
}

fn path_uri(path: &Path) -> Option<Uri> {
    Uri::from_str(url::Url::from_file_path(path).ok()?.as_str()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn notification(method: &str, params: serde_json::Value) -> Incoming {
        Incoming::Message(Notification::new(method.into(), params).into())
    }

    #[test]
    fn changes_waiting_together_are_checked_once() {
        let (sender, receiver) = std::sync::mpsc::sync_channel(16);
        let uri = "file:///scripts/a.lua";
        sender
            .send(Incoming::Message(
                Request::new(1.into(), "initialize".into(), serde_json::json!({})).into(),
            ))
            .unwrap();
        sender
            .send(notification(
                "textDocument/didOpen",
                serde_json::json!({ "textDocument": { "uri": uri, "languageId": "lua", "version": 1, "text": "x = 1" } }),
            ))
            .unwrap();
        for version in 2..=4 {
            sender
                .send(notification(
                    "textDocument/didChange",
                    serde_json::json!({ "textDocument": { "uri": uri, "version": version }, "contentChanges": [{ "text": format!("local x = {version}\nreturn x") }] }),
                ))
                .unwrap();
        }
        // The client is gone once these are read: the loop drains them, checks, and ends.
        drop(sender);
        let mut out = Vec::new();
        let profile = crate::engine::profile::DEFAULT;
        let mut server = Server::new(Some(profile), profile);
        assert_eq!(server.run(&receiver, &mut out), 1); // no exit: status 1
        let text = String::from_utf8(out).unwrap();
        // One check, of the last version, not one per change.
        assert_eq!(text.matches("publishDiagnostics").count(), 1, "{text}");
        let last = text.rsplit("\r\n\r\n").next().unwrap();
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(last).unwrap(),
            serde_json::json!({ "jsonrpc": "2.0", "method": "textDocument/publishDiagnostics",
                "params": { "uri": uri, "diagnostics": [], "version": 4 } })
        );
    }
}
