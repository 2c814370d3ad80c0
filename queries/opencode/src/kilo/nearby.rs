//! KI10, KI11: what Kilo's read tool attaches when the model reads a file, in a fresh
//! session. The walk and the reminder are opencode's (N3, N5): from the file's folder up
//! to, not including, the working directory, each folder's first existing name of
//! `AGENTS.md`, `CLAUDE.md`, `CONTEXT.md`. Kilo's own: the names the system message already
//! holds are its own (KI2), and each file is read as a project file (KI7, KI9).

use std::path::{Path, PathBuf};

use super::markdown::{Read, Trust, read_rule};
use super::{kilo_context, rule_names};
use crate::instructions::render_block;
use crate::nearby::{ReadKind, read_kind, reminder};
use ctxgraph_db::db::{Db, Workspace};
use ctxgraph_db::path;

/// Why a folder's rule file was not attached.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Skip {
    /// It is the file being read.
    IsTarget,
    /// The system message already names it (sent, or read there as empty).
    InSystemMessage,
    /// It reads as empty (KI7, KI9 say why, when they do).
    Empty,
}

/// One folder's rule file on the way up from the file read.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct NearbyRule {
    /// The file.
    pub path: PathBuf,
    /// How it read, when it was read.
    pub read: Option<Read>,
    /// Why it is not attached, when it is not.
    pub skipped: Option<Skip>,
}

impl NearbyRule {
    /// Its block, when attached.
    pub fn block(&self) -> Option<String> {
        match (&self.read, &self.skipped) {
            (Some(read), None) => Some(render_block(&path::display(&self.path), &read.text)),
            _ => None,
        }
    }
}

/// What one read attaches.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct KiloRead {
    /// What the read tool makes of the file (only text gets a reminder).
    pub kind: ReadKind,
    /// Whether the file is below the working directory (nothing is attached otherwise).
    pub below_cwd: bool,
    /// Nearest first.
    pub rules: Vec<NearbyRule>,
}

impl KiloRead {
    /// KI11: what the read tool's result carries after the file's lines: a blank line and
    /// the reminder, or nothing.
    pub fn text(&self) -> String {
        let blocks: Vec<String> = self.rules.iter().filter_map(NearbyRule::block).collect();
        reminder(self.kind, blocks.iter().map(String::as_str)).map(|r| format!("\n\n{r}")).unwrap_or_default()
    }
}

/// KI10 for a read of `target` (absolute).
#[salsa::tracked(returns(ref))]
pub fn kilo_read(db: &dyn Db, ws: Workspace, target: PathBuf) -> KiloRead {
    let context = kilo_context(db, ws);
    let cwd = ws.cwd(db);
    let target = path::resolve(cwd, &target);
    let names = rule_names(!context.names.contains(&"CLAUDE.md"));
    let project = Trust::Project { root: context.scope.clone() };
    let cwd_text = path::display(cwd);
    let mut rules = Vec::new();
    let mut dir = target.parent().map(Path::to_path_buf);
    // As opencode's walk (N3): a plain string-prefix test against the working directory.
    while let Some(cur) = dir.take().filter(|cur| path::display(cur).starts_with(&cwd_text) && cur != cwd) {
        let found = names.iter().map(|name| cur.join(name)).find(|c| db.files().get(db, c).kind(db).exists());
        if let Some(found) = found {
            let skipped = if found == target {
                Some(Skip::IsTarget)
            } else if context.names_path(&found) {
                Some(Skip::InSystemMessage)
            } else {
                None
            };
            let rule = if skipped.is_some() {
                NearbyRule { path: found, read: None, skipped }
            } else {
                let read = read_rule(db, ws, &found, &project);
                let skipped = read.text.is_empty().then_some(Skip::Empty);
                NearbyRule { path: found, read: Some(read), skipped }
            };
            rules.push(rule);
        }
        dir = cur.parent().map(Path::to_path_buf);
    }
    let below_cwd = target.starts_with(cwd);
    let kind = read_kind(db, db.files().get(db, &target));
    KiloRead { kind, below_cwd, rules }
}
