//! The main loop: one thread owns the engine and the open documents, reads the editor's
//! messages in order, and hands every computation to a worker holding a
//! [`Snapshot`](ctxgraph_engine::Snapshot).
//!
//! An edit is applied on the main thread as an overlay before anything else is read
//! ([`Engine::set_overlay`]): salsa then interrupts every worker still computing on the old
//! text (their queries unwind, and they drop their snapshots), so a stale answer is never
//! finished, let alone sent. A request interrupted that way is answered `ContentModified`, as
//! the protocol asks; `$/cancelRequest` interrupts that request's snapshot alone and is
//! answered `RequestCanceled`. Diagnostics are recomputed for every open document of the
//! workspace after each change (a rule file's edit changes another's findings: a shadowed
//! name, a duplicate), and published only if no newer change came in meanwhile.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crossbeam_channel::{Receiver, Sender, select};
use ctxgraph_engine::{Cancel, ChangeEvent, Engine, Interrupted, Snapshot, Workspace};
use lsp_server::{Connection, ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types::notification::Notification as _;
use lsp_types::request::Request as _;
use lsp_types::{
    CodeLensParams, DidChangeTextDocumentParams, DidChangeWatchedFilesParams, DidCloseTextDocumentParams,
    DidOpenTextDocumentParams, DidSaveTextDocumentParams, DocumentLinkParams, FileChangeType,
    GotoDefinitionParams, GotoDefinitionResponse, HoverParams, PublishDiagnosticsParams, Uri, notification,
    request,
};

use crate::analysis::{self, Open};
use crate::text::offset_of;
use crate::uri::uri_to_path;

/// What a worker sends back to the main loop.
enum Done {
    /// A request's answer (or its interruption, answered by the main loop).
    Reply { id: RequestId, result: Result<serde_json::Value, Interrupted> },
    /// Diagnostics of the open documents of one workspace, computed at `generation`.
    Diagnostics { generation: u64, published: Vec<(Uri, i32, Vec<lsp_types::Diagnostic>)> },
}

struct Document {
    uri: Uri,
    version: i32,
    text: Arc<str>,
}

/// The server's state, owned by the main thread.
pub struct Server {
    connection: Connection,
    engine: Engine,
    /// The editor's workspace folders, canonical; a document outside them is answered
    /// from its own directory.
    roots: Vec<PathBuf>,
    documents: HashMap<PathBuf, Document>,
    /// The requests a worker is computing, each with what interrupts it alone.
    running: HashMap<RequestId, Cancel>,
    /// Bumped by every change: diagnostics computed before the last one are dropped.
    generation: u64,
    done: (Sender<Done>, Receiver<Done>),
}

/// How the editor ended the session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// `shutdown` then `exit`, or the editor hung up (stdin closed).
    Clean,
    /// `exit` with no `shutdown` before it: the protocol asks for exit code 1.
    ExitWithoutShutdown,
}

impl Server {
    /// A server over `connection`, answering from `engine`, for the workspace folders `roots`.
    pub fn new(connection: Connection, engine: Engine, roots: Vec<PathBuf>) -> Self {
        let roots = roots.into_iter().map(|r| std::fs::canonicalize(&r).unwrap_or(r)).collect();
        let done = crossbeam_channel::unbounded();
        Server {
            connection,
            engine,
            roots,
            documents: HashMap::new(),
            running: HashMap::new(),
            generation: 0,
            done,
        }
    }

    /// Answers until the editor asks to shut down, says `exit`, or hangs up.
    pub fn run(mut self) -> Result<Stop, Box<dyn std::error::Error + Send + Sync>> {
        let receiver = self.connection.receiver.clone();
        let done = self.done.1.clone();
        loop {
            select! {
                recv(receiver) -> message => {
                    let Ok(message) = message else { return Ok(Stop::Clean) };
                    match message {
                        Message::Request(request) => {
                            // Answers `shutdown` and waits for the `exit` after it.
                            if self.connection.handle_shutdown(&request)? {
                                return Ok(Stop::Clean);
                            }
                            self.request(request);
                        }
                        Message::Notification(notification) if notification.method == notification::Exit::METHOD => {
                            return Ok(Stop::ExitWithoutShutdown);
                        }
                        Message::Notification(notification) => self.notification(notification),
                        Message::Response(_) => {}
                    }
                }
                recv(done) -> finished => {
                    if let Ok(finished) = finished {
                        self.finished(finished);
                    }
                }
            }
        }
    }

    fn send(&self, message: impl Into<Message>) {
        // The client left: the reader sees the end of input next and the loop ends.
        // Every value shown (diagnostics, hovers, lenses) through the one redaction.
        let _ = self.connection.sender.send(ctxgraph_engine::secrets::redactor().serialized(message.into()));
    }

    /// The workspace a document is answered in: the deepest root holding it, else its
    /// own directory.
    fn workspace_root(&self, path: &Path) -> PathBuf {
        self.roots
            .iter()
            .filter(|root| path.starts_with(root))
            .max_by_key(|root| root.components().count())
            .cloned()
            .unwrap_or_else(|| path.parent().unwrap_or(Path::new("/")).to_path_buf())
    }

    fn open_workspace(&mut self, dir: &Path) -> Option<Workspace> {
        self.engine.open(dir).ok()
    }

    fn notification(&mut self, notification: Notification) {
        match notification.method.as_str() {
            notification::DidOpenTextDocument::METHOD => {
                let Ok(params) = notification
                    .extract::<DidOpenTextDocumentParams>(notification::DidOpenTextDocument::METHOD)
                else {
                    return;
                };
                let Some(path) = uri_to_path(&params.text_document.uri) else { return };
                let document = params.text_document;
                self.engine.set_overlay(&path, &document.text);
                self.documents.insert(
                    path,
                    Document { uri: document.uri, version: document.version, text: document.text.into() },
                );
                self.changed();
            }
            notification::DidChangeTextDocument::METHOD => {
                let Ok(params) = notification
                    .extract::<DidChangeTextDocumentParams>(notification::DidChangeTextDocument::METHOD)
                else {
                    return;
                };
                let Some(path) = uri_to_path(&params.text_document.uri) else { return };
                // Full sync: the last change holds the whole text.
                let Some(change) = params.content_changes.into_iter().last() else { return };
                let changed = self.engine.set_overlay(&path, &change.text);
                let version = params.text_document.version;
                if let Some(document) = self.documents.get_mut(&path) {
                    document.text = change.text.into();
                    document.version = version;
                }
                // The same text again (an undo back to it, a client resending) invalidated
                // nothing: the diagnostics published for it still hold.
                if changed {
                    self.changed();
                }
            }
            notification::DidCloseTextDocument::METHOD => {
                let Ok(params) = notification
                    .extract::<DidCloseTextDocumentParams>(notification::DidCloseTextDocument::METHOD)
                else {
                    return;
                };
                let Some(path) = uri_to_path(&params.text_document.uri) else { return };
                self.engine.clear_overlay(&path);
                self.documents.remove(&path);
                // Its diagnostics go with it; the editor shows none for a closed file.
                self.publish(params.text_document.uri, None, Vec::new());
                self.changed();
            }
            notification::DidSaveTextDocument::METHOD => {
                let Ok(params) = notification
                    .extract::<DidSaveTextDocumentParams>(notification::DidSaveTextDocument::METHOD)
                else {
                    return;
                };
                let Some(path) = uri_to_path(&params.text_document.uri) else { return };
                // The disk has the overlay's text now, and the file may be new on disk:
                // its directory's listing changed.
                let applied = self.engine.apply_changes(&[ChangeEvent::Created(path)]);
                if applied.touched_inputs() {
                    self.changed();
                }
            }
            notification::DidChangeWatchedFiles::METHOD => {
                let Ok(params) = notification
                    .extract::<DidChangeWatchedFilesParams>(notification::DidChangeWatchedFiles::METHOD)
                else {
                    return;
                };
                let events: Vec<ChangeEvent> = params
                    .changes
                    .iter()
                    .filter_map(|change| {
                        let path = uri_to_path(&change.uri)?;
                        Some(match change.typ {
                            FileChangeType::CREATED => ChangeEvent::Created(path),
                            FileChangeType::DELETED => ChangeEvent::Removed(path),
                            _ => ChangeEvent::Modified(path),
                        })
                    })
                    .collect();
                if self.engine.apply_changes(&events).touched_inputs() {
                    self.changed();
                }
            }
            notification::Cancel::METHOD => {
                let Ok(params) =
                    notification.extract::<lsp_types::CancelParams>(notification::Cancel::METHOD)
                else {
                    return;
                };
                let id: RequestId = match params.id {
                    lsp_types::NumberOrString::Number(n) => n.into(),
                    lsp_types::NumberOrString::String(s) => s.into(),
                };
                if let Some(cancel) = self.running.remove(&id) {
                    cancel.cancel();
                    self.send(Response::new_err(
                        id,
                        ErrorCode::RequestCanceled as i32,
                        "cancelled".to_owned(),
                    ));
                }
            }
            _ => {}
        }
    }

    /// An input changed: recompute the diagnostics of every open document, by workspace.
    fn changed(&mut self) {
        self.generation += 1;
        let mut by_root: HashMap<PathBuf, Vec<PathBuf>> = HashMap::new();
        for path in self.documents.keys() {
            by_root.entry(self.workspace_root(path)).or_default().push(path.clone());
        }
        for (root, paths) in by_root {
            let Some(ws) = self.open_workspace(&root) else { continue };
            let documents: Vec<(PathBuf, Uri, i32, Arc<str>)> = paths
                .into_iter()
                .filter_map(|path| {
                    let document = self.documents.get(&path)?;
                    Some((path, document.uri.clone(), document.version, document.text.clone()))
                })
                .collect();
            let snapshot = self.engine.snapshot();
            let generation = self.generation;
            let sender = self.done.0.clone();
            std::thread::spawn(move || {
                let opened: Vec<Open<'_>> =
                    documents.iter().map(|(path, _, _, text)| Open { path, text }).collect();
                // Interrupted: a newer change is computing its own.
                let Ok(found) = snapshot.run(|engine| analysis::diagnostics(engine, ws, &opened)) else {
                    return;
                };
                drop(snapshot);
                let published = documents
                    .iter()
                    .zip(found)
                    .map(|((_, uri, version, _), diagnostics)| (uri.clone(), *version, diagnostics))
                    .collect();
                let _ = sender.send(Done::Diagnostics { generation, published });
            });
        }
    }

    fn publish(&self, uri: Uri, version: Option<i32>, diagnostics: Vec<lsp_types::Diagnostic>) {
        let params = PublishDiagnosticsParams { uri, diagnostics, version };
        self.send(Notification::new(notification::PublishDiagnostics::METHOD.to_owned(), params));
    }

    fn finished(&mut self, finished: Done) {
        match finished {
            Done::Reply { id, result } => {
                // Not running any more: answered already ($/cancelRequest).
                if self.running.remove(&id).is_none() {
                    return;
                }
                let response = match result {
                    Ok(value) => Response::new_ok(id, value),
                    Err(Interrupted) => Response::new_err(
                        id,
                        ErrorCode::ContentModified as i32,
                        "the document changed while this was computed".to_owned(),
                    ),
                };
                self.send(response);
            }
            Done::Diagnostics { generation, published } => {
                if generation != self.generation {
                    return;
                }
                for (uri, version, diagnostics) in published {
                    self.publish(uri, Some(version), diagnostics);
                }
            }
        }
    }

    fn request(&mut self, request: Request) {
        let id = request.id.clone();
        let answer = match request.method.as_str() {
            request::CodeLensRequest::METHOD => self.code_lens(request),
            request::HoverRequest::METHOD => self.hover(request),
            request::GotoDefinition::METHOD => self.definition(request),
            request::DocumentLinkRequest::METHOD => self.document_links(request),
            _ => {
                let message = format!("ctxgraph lsp does not answer {}", request.method);
                self.send(Response::new_err(id, ErrorCode::MethodNotFound as i32, message));
                return;
            }
        };
        if let Err(message) = answer {
            self.send(Response::new_err(id, ErrorCode::InvalidParams as i32, message));
        }
    }

    /// The open document `uri` names, with its workspace; or why there is none.
    fn document(&mut self, uri: &Uri) -> Result<(PathBuf, Arc<str>, Workspace), String> {
        let path = uri_to_path(uri).ok_or_else(|| format!("not a file URI: {}", uri.as_str()))?;
        let text = match self.documents.get(&path) {
            Some(document) => document.text.clone(),
            // Not open (a client asking for lenses of a file it did not open): the disk's.
            None => std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?.into(),
        };
        let root = self.workspace_root(&path);
        let ws = self.engine.open(&root).map_err(|e| e.to_string())?;
        Ok((path, text, ws))
    }

    /// Runs `work` on a snapshot on a worker thread; its answer goes back as `id`'s reply.
    fn spawn(&mut self, id: RequestId, work: impl FnOnce(&Engine) -> serde_json::Value + Send + 'static) {
        let snapshot: Snapshot = self.engine.snapshot();
        self.running.insert(id.clone(), snapshot.cancel_handle());
        let sender = self.done.0.clone();
        std::thread::spawn(move || {
            let result = snapshot.run(work);
            drop(snapshot);
            let _ = sender.send(Done::Reply { id, result });
        });
    }

    fn code_lens(&mut self, request: Request) -> Result<(), String> {
        let (id, params) = extract::<CodeLensParams>(request, request::CodeLensRequest::METHOD)?;
        let (path, _, ws) = self.document(&params.text_document.uri)?;
        let root = self.engine.cwd(ws).to_path_buf();
        // Every directory from the root down to the file's, opened here: a worker cannot
        // make workspaces (that takes the engine's `&mut`).
        let chain: Vec<Workspace> = analysis::working_directories(&root, &path)
            .iter()
            .filter_map(|dir| self.open_workspace(dir))
            .collect();
        self.spawn(id, move |engine| json(&analysis::code_lenses(engine, ws, &chain, &path)));
        Ok(())
    }

    fn hover(&mut self, request: Request) -> Result<(), String> {
        let (id, params) = extract::<HoverParams>(request, request::HoverRequest::METHOD)?;
        let at = params.text_document_position_params;
        let (path, text, ws) = self.document(&at.text_document.uri)?;
        let offset = offset_of(&text, at.position).ok_or("the position is past the end of its line")?;
        self.spawn(id, move |engine| {
            json(&analysis::hover(engine, ws, Open { path: &path, text: &text }, offset))
        });
        Ok(())
    }

    fn definition(&mut self, request: Request) -> Result<(), String> {
        let (id, params) = extract::<GotoDefinitionParams>(request, request::GotoDefinition::METHOD)?;
        let at = params.text_document_position_params;
        let (path, text, ws) = self.document(&at.text_document.uri)?;
        let offset = offset_of(&text, at.position).ok_or("the position is past the end of its line")?;
        self.spawn(id, move |engine| {
            let found = analysis::definition(engine, ws, Open { path: &path, text: &text }, offset);
            json(&(!found.is_empty()).then_some(GotoDefinitionResponse::Array(found)))
        });
        Ok(())
    }

    fn document_links(&mut self, request: Request) -> Result<(), String> {
        let (id, params) = extract::<DocumentLinkParams>(request, request::DocumentLinkRequest::METHOD)?;
        let (path, text, ws) = self.document(&params.text_document.uri)?;
        self.spawn(id, move |engine| {
            json(&analysis::document_links(engine, ws, Open { path: &path, text: &text }))
        });
        Ok(())
    }
}

fn extract<P: serde::de::DeserializeOwned>(request: Request, method: &str) -> Result<(RequestId, P), String> {
    let id = request.id.clone();
    request.extract::<P>(method).map_err(|e| format!("{e:?}")).map(|(_, params)| (id, params))
}

fn json(value: &impl serde::Serialize) -> serde_json::Value {
    serde_json::to_value(value).unwrap_or(serde_json::Value::Null)
}
