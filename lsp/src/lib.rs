//! `ctxgraph lsp`: a language server over stdio on the warm engine `serve` uses.
//!
//! It shows, in the editor, what `lint` finds in a rule file or config and where a config is
//! broken (diagnostics, updated as the user types), what every agent attaches when its model
//! reads the open file and what each does with a rule file (code lenses on line 1), and
//! what an `instructions` entry or an `@import` names (hover, go to definition, document
//! links). The editor's unsaved buffers are the engine's overlays: an open document is
//! never read from the disk. Built on rust-analyzer's `lsp-server` and `lsp-types`; the
//! main loop is in [`server`], what it answers in [`analysis`].

pub mod analysis;
pub mod pool;
pub mod references;
pub mod scope;
pub mod server;
pub mod text;
pub mod transport;
pub mod uri;

pub use server::Stop;

use std::path::PathBuf;

use ctxgraph_engine::Engine;
use lsp_server::{ErrorCode, Message, Response};
use lsp_types::{
    CodeLensOptions, DocumentLinkOptions, HoverProviderCapability, InitializeParams, OneOf, SaveOptions,
    ServerCapabilities, ServerInfo, TextDocumentSyncCapability, TextDocumentSyncKind,
    TextDocumentSyncOptions, TextDocumentSyncSaveOptions, WorkDoneProgressOptions,
};

/// What the server tells the editor it answers.
pub fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        text_document_sync: Some(TextDocumentSyncCapability::Options(TextDocumentSyncOptions {
            open_close: Some(true),
            // The whole text on each change: rule files are small, and the overlay is the
            // buffer's text as it is.
            change: Some(TextDocumentSyncKind::FULL),
            save: Some(TextDocumentSyncSaveOptions::SaveOptions(SaveOptions { include_text: Some(false) })),
            ..TextDocumentSyncOptions::default()
        })),
        code_lens_provider: Some(CodeLensOptions { resolve_provider: Some(false) }),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        definition_provider: Some(OneOf::Left(true)),
        document_link_provider: Some(DocumentLinkOptions {
            resolve_provider: Some(false),
            work_done_progress_options: WorkDoneProgressOptions::default(),
        }),
        ..ServerCapabilities::default()
    }
}

/// The workspace folders of an `initialize` request (the deprecated `rootUri` when the
/// client sends no folders).
#[allow(deprecated)]
pub fn roots(params: &InitializeParams) -> Vec<PathBuf> {
    let folders =
        params.workspace_folders.iter().flatten().filter_map(|folder| uri::uri_to_path(&folder.uri));
    let mut roots: Vec<PathBuf> = folders.collect();
    if roots.is_empty() {
        roots.extend(params.root_uri.as_ref().and_then(uri::uri_to_path));
    }
    roots
}

/// Why the server stopped other than by the editor's shutdown or hanging up.
#[derive(Debug)]
pub enum LspError {
    /// What the editor sent is not a Language Server Protocol message (broken framing, not
    /// JSON, an `initialize` that is not one): bad input, not a bug.
    BadMessage(String),
    /// Reading or writing stdio failed, or the server did.
    Failed(String),
}

impl LspError {
    /// A malformed message, its description cut to a few hundred bytes (it quotes what was
    /// sent, which may be a whole document).
    fn bad_message(why: &str) -> LspError {
        const KEEP: usize = 300;
        let mut end = why.len().min(KEEP);
        while !why.is_char_boundary(end) {
            end -= 1;
        }
        let cut = if end < why.len() { "…" } else { "" };
        LspError::BadMessage(format!("{}{cut}", &why[..end]))
    }
}

impl std::fmt::Display for LspError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LspError::BadMessage(why) => write!(f, "not a Language Server Protocol message: {why}"),
            LspError::Failed(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for LspError {}

/// Runs the server on stdin and stdout until the editor says `exit` or hangs up.
///
/// The exit status the protocol asks for: [`Stop::Clean`] after `shutdown` then `exit`,
/// [`Stop::ExitWithoutShutdown`] for an `exit` with no `shutdown` before it (also before
/// `initialize`). An editor that hangs up (stdin at its end, or stdout closed) leaves
/// nobody to read a status: that is a clean stop. What is not a Language Server Protocol
/// message (broken framing, a message over the size limit, not JSON-RPC, an `initialize`
/// that is not one) is [`LspError::BadMessage`].
pub fn run_stdio(engine: Engine) -> Result<Stop, LspError> {
    let (connection, io_threads) = transport::stdio()
        .map_err(|err| LspError::Failed(format!("cannot start the stdio threads: {err}")))?;
    let initialize = serde_json::json!({
        "capabilities": capabilities(),
        "serverInfo": ServerInfo { name: "ctxgraph".to_owned(), version: Some(env!("CARGO_PKG_VERSION").to_owned()) },
    });
    let (id, params) = loop {
        let Ok(message) = connection.receiver.recv() else {
            // The reader stopped: at the end of stdin, or on bytes that are not a message.
            drop(connection);
            return finish(io_threads, server::Ended::InputClosed);
        };
        match message {
            Message::Request(request) if request.method == "initialize" => {
                break (request.id, request.params);
            }
            Message::Request(request) => {
                let refused = Response::new_err(
                    request.id,
                    ErrorCode::ServerNotInitialized as i32,
                    format!("ctxgraph lsp answers {} only after `initialize`", request.method),
                );
                if connection.sender.send(refused.into()).is_err() {
                    drop(connection);
                    return finish(io_threads, server::Ended::OutputClosed);
                }
            }
            Message::Notification(notification) if notification.method == "exit" => {
                drop(connection);
                return finish(io_threads, server::Ended::Exit(Stop::ExitWithoutShutdown));
            }
            // Notifications before `initialize` are dropped, as the protocol asks.
            Message::Notification(_) | Message::Response(_) => {}
        }
    };
    let params: InitializeParams =
        serde_json::from_value(params).map_err(|err| LspError::bad_message(&format!("initialize: {err}")))?;
    if connection.sender.send(Response::new_ok(id, initialize).into()).is_err() {
        drop(connection);
        return finish(io_threads, server::Ended::OutputClosed);
    }
    let server = server::Server::new(connection, engine, roots(&params))
        .map_err(|err| LspError::Failed(format!("cannot start the worker threads: {err}")))?;
    let ended = server.run();
    finish(io_threads, ended)
}

/// How the session ended, once the writer has written what it was given: a reader that
/// stopped on a malformed message is bad input; a failed write other than a broken pipe
/// is a failure.
fn finish(io_threads: transport::IoThreads, ended: server::Ended) -> Result<Stop, LspError> {
    // Every sender of the writer's channel is gone (the connection was dropped), so the
    // writer stops after the replies already handed over.
    let (read, writer) = match ended {
        // The reader stops after `exit` or at the end of its input: waiting is bounded.
        server::Ended::Exit(_) | server::Ended::InputClosed => {
            let (read, writer) = io_threads.reader_result();
            (Some(read), writer)
        }
        // The reader may be waiting on an editor that keeps stdin open: not waited for.
        server::Ended::OutputClosed => (None, io_threads.writer()),
    };
    if let Some(Err(err)) = read {
        return Err(match err.kind() {
            std::io::ErrorKind::InvalidData | std::io::ErrorKind::UnexpectedEof => {
                LspError::bad_message(&err.to_string())
            }
            _ => LspError::Failed(err.to_string()),
        });
    }
    match writer.join() {
        Ok(Ok(())) => {}
        Ok(Err(err)) if err.kind() == std::io::ErrorKind::BrokenPipe => {}
        Ok(Err(err)) => return Err(LspError::Failed(format!("writing to stdout: {err}"))),
        Err(_) => return Err(LspError::Failed("the writer thread panicked".to_owned())),
    }
    Ok(match ended {
        server::Ended::Exit(stop) => stop,
        server::Ended::InputClosed | server::Ended::OutputClosed => Stop::Clean,
    })
}
