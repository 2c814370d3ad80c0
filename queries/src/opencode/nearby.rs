//! N1–N5: the rule files the read tool attaches when the model reads a file, in a fresh
//! session (no claims, no earlier reads).

use std::path::{Path, PathBuf};

use crate::db::{Db, Workspace};
use crate::opencode::config::ConfigError;
use crate::opencode::flags::flags;
use crate::opencode::instructions::{render_block, rule_names, rule_text, system_paths};
use crate::opencode::prompt::BuildError;
use crate::path;

/// Why a directory's rule file was not attached.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Skip {
    /// It is the file being read.
    IsTarget,
    /// Already in the system prompt.
    InSystemPrompt,
    /// Read as empty (missing content, unreadable, a directory).
    Empty,
}

/// A rule file found above a file the agent read (N2), attached or skipped.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct NearbyRule {
    /// The rule file.
    pub path: PathBuf,
    /// `Instructions from: <path>\n<content>`, or `None` when skipped.
    pub block: Option<String>,
    /// Why it was not attached, when it was not.
    pub skipped: Option<Skip>,
}

/// The rules the read tool attaches to one file read (N1–N5).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Nearby {
    /// One per visited directory that has a rule file, nearest first.
    pub rules: Vec<NearbyRule>,
}

impl Nearby {
    /// N5: what the read tool appends after `\n\n`, or `None` when nothing is attached.
    pub fn reminder(&self) -> Option<String> {
        let blocks: Vec<&str> = self.rules.iter().filter_map(|r| r.block.as_deref()).collect();
        (!blocks.is_empty())
            .then(|| format!("<system-reminder>\n{}\n</system-reminder>", blocks.join("\n\n")))
    }
}

/// N3 for a read of `target` (resolved against `D`).
#[salsa::tracked(returns(ref))]
pub fn nearby_rules(db: &dyn Db, ws: Workspace, target: PathBuf) -> Result<Nearby, BuildError> {
    let flags = flags(db, ws.host(db)).as_ref().map_err(|e| ConfigError::Flag(e.clone()))?;
    let system = system_paths(db, ws).as_ref().map_err(|e| BuildError::Config(e.clone()))?;
    let root = ws.cwd(db);
    let target = path::resolve(root, &target);
    let names = rule_names(flags.disable_claude_code_prompt.is_some());
    let root_text = path::display(root);
    let mut rules = Vec::new();
    let mut dir = target.parent().map(Path::to_path_buf);
    // N3: a plain string-prefix test, so a sibling `D2` of `D` sharing its prefix is walked.
    while let Some(cur) = dir.take().filter(|cur| path::display(cur).starts_with(&root_text) && cur != root) {
        let found = names
            .iter()
            .map(|name| cur.join(name))
            .find(|candidate| db.files().get(db, candidate).kind(db).exists());
        if let Some(found) = found {
            let skipped = if found == target {
                Some(Skip::IsTarget)
            } else if system.contains(&found) {
                Some(Skip::InSystemPrompt)
            } else {
                None
            };
            let rule = if skipped.is_some() {
                NearbyRule { path: found, block: None, skipped }
            } else {
                let text = rule_text(db, &found);
                if text.text().is_empty() {
                    NearbyRule { path: found, block: None, skipped: Some(Skip::Empty) }
                } else {
                    let block = render_block(&path::display(&found), text.text());
                    NearbyRule { path: found, block: Some(block), skipped: None }
                }
            };
            rules.push(rule);
        }
        dir = cur.parent().map(Path::to_path_buf);
    }
    Ok(Nearby { rules })
}
