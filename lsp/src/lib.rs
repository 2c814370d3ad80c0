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
pub mod references;
pub mod server;
pub mod text;
pub mod uri;

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

/// Runs the server on stdin and stdout until the editor shuts it down or hangs up.
pub fn run_stdio(engine: Engine) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let (connection, io_threads) = lsp_server::Connection::stdio();
    let initialize = serde_json::json!({
        "capabilities": capabilities(),
        "serverInfo": ServerInfo { name: "ctxgraph".to_owned(), version: Some(env!("CARGO_PKG_VERSION").to_owned()) },
    });
    let (id, params) = connection.initialize_start()?;
    let params: InitializeParams = serde_json::from_value(params)?;
    connection.initialize_finish(id, initialize)?;
    let roots = roots(&params);
    server::Server::new(connection, engine, roots).run()?;
    io_threads.join()?;
    Ok(())
}
