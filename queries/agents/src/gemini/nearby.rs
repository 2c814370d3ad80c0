//! GM8: what Gemini CLI attaches to a `read_file` result: the context files between the file
//! read and the project root that were not loaded before ("just in time" context).

use std::path::{Path, PathBuf};

use serde::Serialize;

use ctxgraph_db::db::{Db, Workspace};
use ctxgraph_db::system::FileKind;

use super::{Doc, GeminiError, Scope, gemini_context, gemini_home, load_doc, upward};

/// GM8: the line that opens the attached context.
pub const PREFIX: &str = "\n\n--- Newly Discovered Project Context ---\n";
/// GM8: the line that closes it.
pub const SUFFIX: &str = "\n--- End Project Context ---";

/// What a read of one file attaches.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct ReadContext {
    /// The file read.
    pub target: PathBuf,
    /// Why nothing can be attached at all (the file is outside the workspace).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outside: Option<String>,
    /// The context files newly found, root-most first, sent or not.
    pub docs: Vec<Doc>,
    /// Already loaded at start-up: found again, not attached again.
    pub already_loaded: Vec<PathBuf>,
    /// Exactly what is appended to the read's result, or `None`.
    pub text: Option<String>,
}

/// GM8: what reading `target` (absolute) attaches in `ws`, right after start-up.
#[salsa::tracked(returns(ref))]
pub fn gemini_read_context(db: &dyn Db, ws: Workspace, target: PathBuf) -> Result<ReadContext, GeminiError> {
    let ctx = gemini_context(db, ws).as_ref().map_err(Clone::clone)?;
    let mut read = ReadContext {
        target: target.clone(),
        outside: None,
        docs: Vec::new(),
        already_loaded: Vec::new(),
        text: None,
    };
    if !target.starts_with(&ctx.cwd) {
        read.outside = Some(format!(
            "{} is outside the workspace {}: Gemini's read_file refuses it, so nothing is attached",
            target.display(),
            ctx.cwd.display()
        ));
        return Ok(read);
    }
    let start: &Path = match db.files().get(db, &target).kind(db) {
        FileKind::Directory => &target,
        _ => target.parent().unwrap_or(Path::new("/")),
    };
    let home = gemini_home(db, ws.host(db));
    let mut found = upward(db, start, &ctx.ceiling, home, &ctx.settings.filenames);
    found.dedup();
    for path in found {
        if ctx.loaded().any(|loaded| loaded == path) {
            read.already_loaded.push(path);
        } else {
            read.docs.push(load_doc(db, path, Scope::Read, &ctx.settings));
        }
    }
    let blocks: Vec<&str> = read.docs.iter().filter(|d| d.is_sent()).map(|d| d.text.as_str()).collect();
    if !blocks.is_empty() {
        read.text = Some(format!("{PREFIX}{}{SUFFIX}", blocks.join("\n\n")));
    }
    Ok(read)
}
