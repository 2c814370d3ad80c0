//! opencode's turns: its whole message (or a section of it) built turn after turn, each
//! text held as the graph's own memoized layout.

use std::collections::HashMap;
use std::sync::Arc;

use ctxgraph_db::Workspace;
use ctxgraph_db::agent::Agent;
use ctxgraph_db::hash::ContentHash;
use ctxgraph_db::profile::BlockView;
use ctxgraph_opencode::message::MessageOptions;
use ctxgraph_opencode::profile::block_view;
use ctxgraph_opencode::prompt::{Layout, ModelRef, Section};

use crate::{Engine, EngineError, TurnDiff};

impl TurnDiff {
    /// What changed from `previous` (none: the first build) to `current`.
    pub fn between(previous: Option<&Layout>, current: &Layout) -> Self {
        let ids = |layout: &Layout| -> Vec<(Arc<str>, ContentHash)> {
            layout.blocks.iter().map(|b| (Arc::clone(&b.id), b.hash)).collect()
        };
        TurnDiff::of_blocks(previous.map(|p| (p.text.as_str(), ids(p))), (&current.text, ids(current)))
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

impl Turn {
    /// Each block with its id, in the shape every agent's turn has ([`BlockView`]).
    pub fn blocks(&self) -> impl Iterator<Item = (&str, BlockView<'_>)> {
        self.layout.blocks.iter().map(|block| (&*block.id, block_view(block)))
    }

    /// Why the text holds placeholders for opencode's own texts (its installation could not
    /// give them: L3), if it does.
    pub fn unavailable(&self) -> Option<&str> {
        self.layout.blocks.iter().find_map(|block| block.unavailable_reason.as_deref())
    }
}

impl Turns {
    /// Whether `agent`'s builds are served by these turns rather than by [`AgentTurns`]:
    /// opencode's, whose texts the graph memoizes as layouts, so that an unchanged turn
    /// copies nothing. (Through the shared shape, its whole-text turn measured 40 % slower
    /// and 11 MiB heavier at 51 working directories: BENCHMARKS.md.)
    ///
    /// [`AgentTurns`]: crate::AgentTurns
    pub fn serves(agent: Agent) -> bool {
        agent == Agent::Opencode
    }

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
