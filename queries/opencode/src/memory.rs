//! Workspace memory in opencode's build: whether its merged config turns the `<memory>`
//! blocks on, and their budget. The recall itself is `ctxgraph_recall`'s.

use ctxgraph_db::db::{Db, Workspace};
use ctxgraph_recall::recall::{memory_context, session_start_recall, unreadable_store_file};
use ctxgraph_recall::render::MemoryContext;

use crate::config::merged_config;
use crate::prompt::BuildError;

/// The `<memory>` part of a build, when the merged config enables memory and something
/// was recalled. A config error yields nothing here: the build reports it elsewhere. A
/// store file that cannot be read fails the build by name: an empty memory block would
/// hide it.
#[salsa::tracked(returns(ref))]
pub fn prompt_memory(db: &dyn Db, ws: Workspace) -> Result<Option<MemoryContext>, BuildError> {
    let Ok(config) = merged_config(db, ws).as_ref() else { return Ok(None) };
    let settings = config.memory();
    if !settings.enabled {
        return Ok(None);
    }
    if let Some((path, reason)) = unreadable_store_file(db, ws) {
        return Err(BuildError::MemoryStore { path: ctxgraph_db::path::display(&path), reason });
    }
    let context = memory_context(db, ws, session_start_recall(db, ws, &settings));
    Ok((!context.text.is_empty()).then(|| context.clone()))
}
