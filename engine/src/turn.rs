//! One build as an agent host sees it between turns: the prompt's [`Layout`] and what
//! changed since the previous build.

use std::collections::HashMap;
use std::sync::Arc;

use ctxgraph_db::Workspace;
use ctxgraph_db::hash::ContentHash;
use ctxgraph_opencode::message::MessageOptions;
use ctxgraph_opencode::prompt::{Layout, ModelRef, PlacedBlock, Section};
use serde::Serialize;

use crate::{Engine, EngineError};

/// How a build differs from the previous one.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TurnDiff {
    /// Ids of blocks that are new.
    pub added: Vec<Arc<str>>,
    /// Ids of blocks that are gone.
    pub removed: Vec<Arc<str>>,
    /// Ids of blocks present in both whose bytes differ.
    pub modified: Vec<Arc<str>>,
    /// Leading bytes identical to the previous text: what a provider's prompt cache can
    /// reuse. Zero without a previous build.
    pub stable_prefix_bytes: usize,
}

impl TurnDiff {
    /// What changed from `previous` (none: the first build) to `current`.
    pub fn between(previous: Option<&Layout>, current: &Layout) -> Self {
        let Some(previous) = previous else {
            let added = current.blocks.iter().map(|b| b.id.clone()).collect();
            return TurnDiff { added, ..TurnDiff::default() };
        };
        let hashes = |blocks: &[PlacedBlock]| -> HashMap<Arc<str>, ContentHash> {
            blocks.iter().map(|b| (Arc::clone(&b.id), b.hash)).collect()
        };
        let (before, now) = (hashes(&previous.blocks), hashes(&current.blocks));
        let mut diff = TurnDiff::default();
        for block in &current.blocks {
            match before.get(&block.id) {
                None => diff.added.push(block.id.clone()),
                Some(hash) if *hash != block.hash => diff.modified.push(block.id.clone()),
                Some(_) => {}
            }
        }
        diff.removed =
            previous.blocks.iter().filter(|b| !now.contains_key(&b.id)).map(|b| b.id.clone()).collect();
        diff.stable_prefix_bytes = common_prefix(previous.text.as_bytes(), current.text.as_bytes());
        diff
    }

    /// Added or modified: the blocks a host has to look at again.
    pub fn changed(&self) -> Vec<Arc<str>> {
        self.added.iter().chain(&self.modified).cloned().collect()
    }

    /// Nothing was added, removed or modified.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.modified.is_empty()
    }
}

/// Which text a build is of: working directory, section and the message's options.
type TextKey = (Workspace, Section, MessageOptions);

/// One client's builds, turn after turn: each build is compared with that client's
/// previous build of the same text (working directory, section and options). Each text is
/// held as the graph's own memoized layout, so keeping it costs no copy.
#[derive(Debug, Default)]
pub struct Turns {
    previous: HashMap<TextKey, Arc<Layout>>,
}

/// A build and what it cost.
#[derive(Clone, Debug)]
pub struct Turn {
    /// The text and its blocks; shared with the previous turn's when nothing changed, so
    /// an unchanged turn copies none of it.
    pub layout: Arc<Layout>,
    /// What changed since this client's previous build of the same text.
    pub diff: TurnDiff,
    /// Queries that executed (rather than being reused) for this build.
    pub executed: u64,
}

impl Turns {
    /// Builds `section` of `ws`'s prompt and compares it with the previous build of the
    /// same text; an unchanged prompt is neither laid out nor hashed again.
    pub fn build(
        &mut self,
        engine: &Engine,
        ws: Workspace,
        section: Section,
        model: Option<ModelRef>,
    ) -> Result<Turn, EngineError> {
        self.build_message(engine, ws, section, MessageOptions { model, ..MessageOptions::default() })
    }

    /// [`Turns::build`] with the whole message's options (`options.model` is the only one
    /// the other sections use).
    pub fn build_message(
        &mut self,
        engine: &Engine,
        ws: Workspace,
        section: Section,
        options: MessageOptions,
    ) -> Result<Turn, EngineError> {
        let before = engine.db().executions().total();
        let layout = Arc::clone(engine.layout(ws, section, options.clone())?);
        let executed = engine.db().executions().total() - before;
        let key = (ws, section, same_text(options));
        let previous = self.previous.get(&key);
        // The common turn: the memo was reused (the same `Arc`, no comparison at all), or
        // recomputed to an equal layout.
        if let Some(previous) =
            previous.filter(|previous| Arc::ptr_eq(previous, &layout) || ***previous == *layout)
        {
            let diff = TurnDiff { stable_prefix_bytes: previous.text.len(), ..TurnDiff::default() };
            return Ok(Turn { layout: Arc::clone(previous), diff, executed });
        }
        let diff = TurnDiff::between(previous.map(|l| &**l), &layout);
        self.previous.insert(key, Arc::clone(&layout));
        Ok(Turn { layout, diff, executed })
    }
}

/// What makes two builds "the same text" whose turns are compared: the model and the
/// opencode agent. The structured-output line and `user.system` belong to one user message,
/// so they may change from turn to turn and show up as blocks added, removed or modified.
pub fn same_text(options: MessageOptions) -> MessageOptions {
    MessageOptions { json_schema: false, user_system: None, ..options }
}

fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    use ctxgraph_opencode::prompt::{Block, BlockKind, Prompt};

    /// A layout of instruction blocks whose ids are the given ids (`file:<source>`).
    fn laid_out(blocks: &[(&str, &str)]) -> Layout {
        let blocks = blocks
            .iter()
            .map(|(id, body)| Block {
                id: (*id).into(),
                source: Some(id.strip_prefix("file:").unwrap_or(id).into()),
                ..Block::new(BlockKind::Instruction, *body, "I4", "")
            })
            .collect();
        Prompt { blocks }.layout(Section::System)
    }

    #[test]
    fn diff_names_added_removed_and_modified_blocks() {
        let before = laid_out(&[("file:/env", "env"), ("file:/a", "aaa"), ("file:/b", "bbb")]);
        let after = laid_out(&[("file:/env", "env"), ("file:/a", "aXa"), ("file:/c", "ccc")]);
        let diff = TurnDiff::between(Some(&before), &after);
        let ids = |ids: &[&str]| -> Vec<Arc<str>> { ids.iter().map(|&id| id.into()).collect() };
        assert_eq!(diff.added, ids(&["file:/c"]));
        assert_eq!(diff.removed, ids(&["file:/b"]));
        assert_eq!(diff.modified, ids(&["file:/a"]));
        assert_eq!(diff.changed(), ids(&["file:/c", "file:/a"]));
        // "env\na" is shared; the 'X' is the first differing byte.
        assert_eq!(diff.stable_prefix_bytes, "env\na".len());
    }

    #[test]
    fn first_build_adds_everything_and_shares_nothing() {
        let only = laid_out(&[("file:/env", "env")]);
        let diff = TurnDiff::between(None, &only);
        assert_eq!(diff.added, [Arc::from("file:/env")]);
        assert_eq!(diff.stable_prefix_bytes, 0);
        assert!(TurnDiff::between(Some(&only), &only).is_empty());
    }
}
