//! The main loop: one thread owns the engine and the open documents, reads the editor's
//! messages in order, and hands every computation to a worker of one bounded [`Pool`],
//! holding a [`ctxgraph_engine::Snapshot`].
//!
//! It reads only what it must: an open document is the editor's text (up to
//! [`MAX_DOCUMENT_BYTES`]); anything else through the engine's bounded, non-blocking,
//! regular-file-only read; and only inside the workspace folders ([`Scope`]): a URI that
//! leaves them is refused.
//!
//! An edit is applied on the main thread as an overlay before anything else is read
//! ([`Engine::set_overlay`]): salsa then interrupts every worker still computing on the old
//! text (their queries unwind, and they drop their snapshots), so a stale answer is never
//! finished, let alone sent. A request interrupted that way is answered `ContentModified`, as
//! the protocol asks; `$/cancelRequest` interrupts that request's snapshot alone and is
//! answered `RequestCanceled`. Diagnostics are recomputed for every open document of the
//! workspace after each change (a rule file's edit changes another's findings: a shadowed
//! name, a duplicate), and published only if no newer change came in meanwhile.

use std::cell::Cell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

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
use crate::pool::Pool;
use crate::scope::{InScope, Scope};
use crate::text::offset_of;

/// The largest open document the server analyses. Rule files are small (Codex stops
/// reading at 32 KiB); a bigger buffer gets one diagnostic saying so, and no overlay, so
/// an editor cannot make the server hold or lint megabytes per keystroke (docs/editors.md).
pub const MAX_DOCUMENT_BYTES: usize = 1024 * 1024;

/// An open document's path, URI, version and text, handed to a worker.
type Opened = (PathBuf, Uri, i32, Arc<str>);

/// What a worker sends back to the main loop.
enum Done {
    /// A request's answer (or its interruption, answered by the main loop); `None` when
    /// computing it failed (a bug: the reply says so rather than never coming).
    Reply { id: RequestId, result: Option<Result<serde_json::Value, Interrupted>> },
    /// Diagnostics of the open documents of one workspace, computed at `generation`.
    Diagnostics { generation: u64, published: Vec<(Uri, i32, Vec<lsp_types::Diagnostic>)> },
}

struct Document {
    uri: Uri,
    version: i32,
    /// `None` when the editor's text is over [`MAX_DOCUMENT_BYTES`]: not kept, not analysed.
    text: Option<Arc<str>>,
}

/// The server's state, owned by the main thread.
pub struct Server {
    connection: Connection,
    engine: Engine,
    /// The editor's workspace folders: nothing outside them is read or answered.
    scope: Scope,
    /// The open documents inside the workspace; one overlay each, dropped on close.
    documents: HashMap<PathBuf, Document>,
    /// The requests a worker is computing, each with what interrupts it alone.
    running: HashMap<RequestId, Cancel>,
    /// Bumped by every change: diagnostics computed before the last one are dropped, and
    /// not even started when a newer change came before a worker was free.
    generation: Arc<AtomicU64>,
    done: (Sender<Done>, Receiver<Done>),
    pool: Pool,
    /// `shutdown` was answered: only `exit` is obeyed now, requests are refused.
    shutting_down: bool,
    /// A reply could not be written: the editor stopped reading.
    output_closed: Cell<bool>,
}

/// Why the main loop ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    /// The editor said `exit`.
    Exit(Stop),
    /// The reader stopped: the end of stdin, or bytes that are not a message (the reader's
    /// error says which).
    InputClosed,
    /// Writing a reply failed: the editor closed its end of stdout.
    OutputClosed,
}

/// How the editor ended the session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// `shutdown` then `exit`, or the editor hung up (stdin or stdout closed).
    Clean,
    /// `exit` with no `shutdown` before it: the protocol asks for exit code 1.
    ExitWithoutShutdown,
}

impl Server {
    /// A server over `connection`, answering from `engine`, for the workspace folders `roots`.
    /// With no folder in `roots`, the directory the server was started in is the workspace.
    pub fn new(connection: Connection, engine: Engine, roots: Vec<PathBuf>) -> std::io::Result<Self> {
        let cwd = std::env::current_dir().ok();
        let done = crossbeam_channel::unbounded();
        Ok(Server {
            connection,
            engine,
            scope: Scope::new(roots, cwd),
            documents: HashMap::new(),
            running: HashMap::new(),
            generation: Arc::new(AtomicU64::new(0)),
            done,
            pool: Pool::new()?,
            shutting_down: false,
            output_closed: Cell::new(false),
        })
    }

    /// Answers until the editor says `exit` or hangs up. After `shutdown` every request is
    /// refused (`InvalidRequest`), as the protocol asks, and `exit` is a clean stop.
    pub fn run(mut self) -> Ended {
        let receiver = self.connection.receiver.clone();
        let done = self.done.1.clone();
        loop {
            if self.output_closed.get() {
                return Ended::OutputClosed;
            }
            select! {
                recv(receiver) -> message => {
                    let Ok(message) = message else { return Ended::InputClosed };
                    match message {
                        Message::Request(request) => self.request(request),
                        Message::Notification(notification) if notification.method == notification::Exit::METHOD => {
                            return Ended::Exit(if self.shutting_down { Stop::Clean } else { Stop::ExitWithoutShutdown });
                        }
                        Message::Notification(_) if self.shutting_down => {}
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
        // Every value shown (diagnostics, hovers, lenses) through the one redaction.
        let message = ctxgraph_engine::secrets::redactor().serialized(message.into());
        // The writer stopped: stdout is closed, the editor is gone.
        if self.connection.sender.send(message).is_err() {
            self.output_closed.set(true);
        }
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
                // Outside the workspace: not kept, not analysed (the server would walk there).
                let Some(path) = self.scope.contains(&params.text_document.uri) else { return };
                let document = params.text_document;
                let (text, _) = self.set_text(&path, document.text);
                self.documents.insert(path, Document { uri: document.uri, version: document.version, text });
                self.changed();
            }
            notification::DidChangeTextDocument::METHOD => {
                let Ok(params) = notification
                    .extract::<DidChangeTextDocumentParams>(notification::DidChangeTextDocument::METHOD)
                else {
                    return;
                };
                // Only an open document has an overlay: a change to any other would make
                // one that no close ever releases.
                let Some(path) = self.scope.contains(&params.text_document.uri) else { return };
                if !self.documents.contains_key(&path) {
                    return;
                }
                // Full sync: the last change holds the whole text.
                let Some(change) = params.content_changes.into_iter().last() else { return };
                let (text, changed) = self.set_text(&path, change.text);
                if let Some(document) = self.documents.get_mut(&path) {
                    document.text = text;
                    document.version = params.text_document.version;
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
                let Some(path) = self.scope.contains(&params.text_document.uri) else { return };
                if self.documents.remove(&path).is_none() {
                    return;
                }
                self.engine.clear_overlay(&path);
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
                let Some(path) = self.scope.contains(&params.text_document.uri) else { return };
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
                        let path = self.scope.contains(&change.uri)?;
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

    /// Makes `text` the overlay of the open document `path`, or drops its overlay when the
    /// text is over [`MAX_DOCUMENT_BYTES`]; the text kept (if any), and whether an input
    /// changed.
    fn set_text(&mut self, path: &Path, text: String) -> (Option<Arc<str>>, bool) {
        if text.len() > MAX_DOCUMENT_BYTES {
            let changed = self.engine.clear_overlay(path);
            return (None, changed);
        }
        let changed = self.engine.set_overlay(path, &text);
        (Some(text.into()), changed)
    }

    /// An input changed: recompute the diagnostics of every open document, by workspace.
    fn changed(&mut self) {
        let generation = self.generation.fetch_add(1, Ordering::SeqCst) + 1;
        let mut by_root: HashMap<PathBuf, Vec<Opened>> = HashMap::new();
        let mut oversized = Vec::new();
        for (path, document) in &self.documents {
            let Some(text) = &document.text else {
                oversized.push((document.uri.clone(), document.version));
                continue;
            };
            // Opened inside the workspace; its root is the deepest folder holding it.
            let Ok(InScope { root, .. }) = self.scope.resolve(&document.uri) else { continue };
            by_root.entry(root).or_default().push((
                path.clone(),
                document.uri.clone(),
                document.version,
                text.clone(),
            ));
        }
        for (uri, version) in oversized {
            self.publish(uri, Some(version), vec![analysis::oversized_diagnostic(MAX_DOCUMENT_BYTES)]);
        }
        for (root, documents) in by_root {
            let Some(ws) = self.open_workspace(&root) else { continue };
            let snapshot = self.engine.snapshot();
            let latest = self.generation.clone();
            let sender = self.done.0.clone();
            self.pool.run(move || {
                // A newer change came before a worker was free: its own job computes them.
                if latest.load(Ordering::SeqCst) != generation {
                    return;
                }
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
                    Some(Ok(value)) => Response::new_ok(id, value),
                    Some(Err(Interrupted)) => Response::new_err(
                        id,
                        ErrorCode::ContentModified as i32,
                        "the document changed while this was computed".to_owned(),
                    ),
                    None => Response::new_err(
                        id,
                        ErrorCode::InternalError as i32,
                        "ctxgraph lsp failed to compute this (a bug; its message is on stderr)".to_owned(),
                    ),
                };
                self.send(response);
            }
            Done::Diagnostics { generation, published } => {
                if generation != self.generation.load(Ordering::SeqCst) {
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
        if self.shutting_down {
            let message =
                format!("ctxgraph lsp is shutting down: only `exit` is obeyed now, not {}", request.method);
            self.send(Response::new_err(id, ErrorCode::InvalidRequest as i32, message));
            return;
        }
        let answer = match request.method.as_str() {
            request::Shutdown::METHOD => {
                // Requests still computing are answered when they finish; new ones are refused.
                self.shutting_down = true;
                self.send(Response::new_ok(id, ()));
                return;
            }
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

    /// The document `uri` names, inside the workspace, with its workspace: the editor's text
    /// when it is open, else the file's, read as the CLI reads (bounded, never waiting on a
    /// FIFO or device); or why there is none.
    fn document(&mut self, uri: &Uri) -> Result<(PathBuf, Arc<str>, Workspace), String> {
        let InScope { path, root } = self.scope.resolve(uri)?;
        let text = match self.documents.get(&path) {
            Some(Document { text: Some(text), .. }) => text.clone(),
            Some(Document { text: None, .. }) => return Err(oversized(&path)),
            None => read_file(&path)?.into(),
        };
        let ws = self.engine.open(&root).map_err(|e| e.to_string())?;
        Ok((path, text, ws))
    }

    /// Runs `work` on a snapshot on a worker; its answer goes back as `id`'s reply.
    fn spawn(&mut self, id: RequestId, work: impl FnOnce(&Engine) -> serde_json::Value + Send + 'static) {
        let snapshot: Snapshot = self.engine.snapshot();
        self.running.insert(id.clone(), snapshot.cancel_handle());
        let sender = self.done.0.clone();
        self.pool.run(move || {
            // A panic would leave the request unanswered: it is answered as a failure, and
            // the worker catches it to go on.
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| snapshot.run(work))).ok();
            drop(snapshot);
            let _ = sender.send(Done::Reply { id, result });
        });
    }

    fn code_lens(&mut self, request: Request) -> Result<(), String> {
        let (id, params) = extract::<CodeLensParams>(request, request::CodeLensRequest::METHOD)?;
        // The lenses read nothing of the file itself (the engine reads what agents read).
        let InScope { path, root } = self.scope.resolve(&params.text_document.uri)?;
        let ws = self.engine.open(&root).map_err(|e| e.to_string())?;
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

/// What an open document over the limit answers instead.
fn oversized(path: &Path) -> String {
    format!("{}: {}", path.display(), analysis::oversized_message(MAX_DOCUMENT_BYTES))
}

/// A file that is not open, read as the CLI reads one: a regular file only, opened without
/// blocking (a FIFO would stop the server), within the engine's size limit, and within the
/// open document's.
fn read_file(path: &Path) -> Result<String, String> {
    let bytes = ctxgraph_engine::read_regular_file(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if bytes.len() > MAX_DOCUMENT_BYTES {
        return Err(oversized(path));
    }
    String::from_utf8(bytes).map_err(|_| format!("{}: not UTF-8 text", path.display()))
}

fn extract<P: serde::de::DeserializeOwned>(request: Request, method: &str) -> Result<(RequestId, P), String> {
    let id = request.id.clone();
    request.extract::<P>(method).map_err(|e| format!("{e:?}")).map(|(_, params)| (id, params))
}

fn json(value: &impl serde::Serialize) -> serde_json::Value {
    serde_json::to_value(value).unwrap_or(serde_json::Value::Null)
}
