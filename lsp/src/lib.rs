//! `ctxgraph lsp`: a language server over stdio on the warm engine `serve` uses.
//!
//! It shows, in the editor, what `lint` finds in a rule file or config and where a config is
//! broken (diagnostics, updated as the user types), what every agent attaches when its model
//! reads the open file and what each does with a rule file (code lenses on line 1), and
//! what an `instructions` entry or an `@import` names (hover, go to definition, document
//! links). The editor's unsaved buffers are the engine's overlays: an open document is
//! never read from the disk. Built on rust-analyzer's `lsp-server` and `lsp-types`; the
//! main loop is in [`server`], what it answers in [`analysis`].

#![warn(missing_docs)]

pub mod analysis;
pub mod references;
pub mod server;
pub mod text;
pub mod uri;

pub use server::Stop;

use std::path::PathBuf;

use ctxgraph_engine::Engine;
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

/// Runs the server on stdin and stdout until the editor shuts it down or hangs up. An editor
/// that leaves before `initialize` (stdin closed) is a clean stop, as one that leaves later is.
pub fn run_stdio(engine: Engine) -> Result<Stop, LspError> {
    let (connection, io_threads) = lsp_server::Connection::stdio();
    let initialize = serde_json::json!({
        "capabilities": capabilities(),
        "serverInfo": ServerInfo { name: "ctxgraph".to_owned(), version: Some(env!("CARGO_PKG_VERSION").to_owned()) },
    });
    let (id, params) = match connection.initialize_start() {
        Ok(start) => start,
        // The reader stopped: at the end of stdin, or on bytes that are not a message (its
        // error, from `join`, says which).
        Err(err) if err.channel_is_disconnected() => {
            drop(connection);
            return join(io_threads).map(|()| Stop::Clean);
        }
        Err(err) => return Err(LspError::bad_message(&err.to_string())),
    };
    let params: InitializeParams =
        serde_json::from_value(params).map_err(|err| LspError::bad_message(&format!("initialize: {err}")))?;
    match connection.initialize_finish(id, initialize) {
        Ok(()) => {}
        // The editor left right after `initialize`: as clean a stop as leaving before it.
        Err(err) if err.channel_is_disconnected() => {
            drop(connection);
            return join(io_threads).map(|()| Stop::Clean);
        }
        Err(err) => return Err(LspError::Failed(err.to_string())),
    }
    let roots = roots(&params);
    let stop = server::Server::new(connection, engine, roots)
        .run()
        .map_err(|err| LspError::Failed(err.to_string()))?;
    // The writer ends when the connection's sender is dropped, the reader at the end of
    // stdin; an `exit` without `shutdown` may come with stdin still open, so the reader is
    // not waited for then.
    match stop {
        Stop::Clean => join(io_threads).map(|()| stop),
        Stop::ExitWithoutShutdown => Ok(stop),
    }
}

/// Waits for the stdio threads; a reader that stopped on a malformed message is bad input.
fn join(io_threads: lsp_server::IoThreads) -> Result<(), LspError> {
    io_threads.join().map_err(|err| match err.kind() {
        std::io::ErrorKind::InvalidData | std::io::ErrorKind::UnexpectedEof => {
            LspError::bad_message(&err.to_string())
        }
        _ => LspError::Failed(err.to_string()),
    })
}
