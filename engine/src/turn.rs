//! One build as an agent host sees it between turns: an agent's layout and what changed
//! since the previous build ([`AgentTurns`]; opencode's whole message keeps its own turns,
//! `opencode::turn`).

use std::collections::HashMap;
use std::sync::Arc;

use ctxgraph_db::Workspace;
use ctxgraph_db::agent::Agent;
use ctxgraph_db::hash::ContentHash;
use ctxgraph_db::profile;
use serde::Serialize;

use crate::{Engine, EngineError};

/// A text and its blocks' ids and hashes, in text order: what [`TurnDiff::of_blocks`]
/// compares.
pub type IdentifiedText<'a> = (&'a str, Vec<(Arc<str>, ContentHash)>);

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
    /// What changed between two texts, each with its blocks' ids and hashes in text order:
    /// the one diff every layout's turns share.
    pub fn of_blocks(previous: Option<IdentifiedText<'_>>, current: IdentifiedText<'_>) -> Self {
        let (text, blocks) = current;
        let Some((previous_text, previous)) = previous else {
            let added = blocks.into_iter().map(|(id, _)| id).collect();
            return TurnDiff { added, ..TurnDiff::default() };
        };
        let before: HashMap<&Arc<str>, ContentHash> = previous.iter().map(|(id, hash)| (id, *hash)).collect();
        let now: HashMap<&Arc<str>, ContentHash> = blocks.iter().map(|(id, hash)| (id, *hash)).collect();
        let mut diff = TurnDiff::default();
        for (id, hash) in &blocks {
            match before.get(id) {
                None => diff.added.push(Arc::clone(id)),
                Some(was) if was != hash => diff.modified.push(Arc::clone(id)),
                Some(_) => {}
            }
        }
        diff.removed =
            previous.iter().filter(|(id, _)| !now.contains_key(id)).map(|(id, _)| Arc::clone(id)).collect();
        diff.stable_prefix_bytes = common_prefix(previous_text.as_bytes(), text.as_bytes());
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

/// Which text an agent's build is of: working directory, agent, section and settings.
pub type AgentTextKey = (Workspace, Agent, profile::Section, Vec<(String, String)>);

/// One client's builds of any agent's text ([`Engine::agent_layout`]), turn after turn, each
/// compared with that client's previous build of the same text: the diff opencode's
/// [`crate::Turns`] gives, for every profile. Tied to the one engine it builds with: a revision of
/// another engine says nothing about this one's inputs.
#[derive(Debug, Default)]
pub struct AgentTurns {
    /// Each text's previous build, with its blocks' ids (computed once per build).
    previous: HashMap<AgentTextKey, Built>,
}

/// A text's last build, and what it was built from besides the key.
#[derive(Clone, Debug)]
struct Built {
    layout: Arc<profile::Layout>,
    ids: BlockIds,
    /// The inputs' state it was built at.
    revision: crate::InputsRevision,
    /// The wording it was built with, held so that its identity stays its own: the same
    /// `Arc` is the same sentences.
    wording: Option<Wording>,
}

/// A request's wording, compared by identity.
#[derive(Clone)]
struct Wording(Arc<dyn std::any::Any + Send + Sync>);

impl std::fmt::Debug for Wording {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Wording(…)")
    }
}

impl Wording {
    fn same(held: Option<&Wording>, asked: Option<&Arc<dyn std::any::Any + Send + Sync>>) -> bool {
        match (held, asked) {
            (None, None) => true,
            (Some(held), Some(asked)) => Arc::ptr_eq(&held.0, asked),
            _ => false,
        }
    }
}

/// A layout's blocks' ids, in block order ([`block_ids`]), shared between the turns of an
/// unchanged text.
pub type BlockIds = Arc<[Arc<str>]>;

/// An agent's build, its blocks' ids and what changed.
#[derive(Clone, Debug)]
pub struct AgentTurn {
    /// The layout; the previous turn's when nothing changed.
    pub layout: Arc<profile::Layout>,
    /// Each block's id, in block order ([`block_ids`]).
    pub ids: BlockIds,
    /// What changed since this client's previous build of the same text.
    pub diff: TurnDiff,
    /// Queries that executed (rather than being reused) for this build.
    pub executed: u64,
}

impl AgentTurn {
    /// Each block with its id, as a host's reply carries it ([`profile::BlockView`]).
    pub fn blocks(&self) -> impl Iterator<Item = (&str, profile::BlockView<'_>)> {
        self.layout.blocks.iter().zip(self.ids.iter()).map(|(block, id)| (&**id, block.view()))
    }

    /// blake3 of the text, as a host names it (the empty text's when the agent sends
    /// nothing): what `known_hash` is compared with.
    pub fn hash(&self) -> String {
        self.layout.hash.unwrap_or_else(|| ContentHash::of("")).to_string()
    }

    /// Why the text holds placeholders for the agent's own wording, if it does.
    pub fn unavailable(&self) -> Option<&str> {
        match &self.layout.wording {
            profile::WordingSource::Unavailable { reason } => Some(reason),
            _ => None,
        }
    }
}

impl AgentTurns {
    /// Lays out `agent`'s text for `request` and compares it with the previous build of the
    /// same text (working directory, agent, section, settings). When no input was set since
    /// that build (the same [`Engine::revision`]) and the wording is the same, the build is
    /// that one: nothing is laid out or compared, as opencode's memoized layout is reused.
    pub fn build(
        &mut self,
        engine: &Engine,
        ws: Workspace,
        agent: Agent,
        request: &profile::Request,
    ) -> Result<AgentTurn, EngineError> {
        let key = (ws, agent, request.section, request.settings.clone());
        let revision = engine.revision();
        let previous = self.previous.get(&key);
        if let Some(built) = previous
            && built.revision == revision
            && Wording::same(built.wording.as_ref(), request.wording.as_ref())
        {
            return Ok(built.unchanged(0));
        }
        let before = engine.db().executions().total();
        let layout = engine.agent_layout(ws, agent, request)?;
        let executed = engine.db().executions().total() - before;
        let wording = request.wording.clone().map(Wording);
        if let Some(built) = previous.filter(|built| *built.layout == layout) {
            let turn = built.unchanged(executed);
            self.previous.insert(key, Built { revision, wording, ..built.clone() });
            return Ok(turn);
        }
        let ids: BlockIds = block_ids(&layout).into();
        let hashed = |layout: &profile::Layout, ids: &[Arc<str>]| -> Vec<(Arc<str>, ContentHash)> {
            ids.iter().cloned().zip(layout.blocks.iter().map(|b| b.hash)).collect()
        };
        let diff = TurnDiff::of_blocks(
            previous.map(|p| (p.layout.text.as_str(), hashed(&p.layout, &p.ids))),
            (&layout.text, hashed(&layout, &ids)),
        );
        let layout = Arc::new(layout);
        let built = Built { layout: Arc::clone(&layout), ids: Arc::clone(&ids), revision, wording };
        self.previous.insert(key, built);
        Ok(AgentTurn { layout, ids, diff, executed })
    }
}

impl Built {
    /// This build again, unchanged.
    fn unchanged(&self, executed: u64) -> AgentTurn {
        let diff = TurnDiff { stable_prefix_bytes: self.layout.text.len(), ..TurnDiff::default() };
        AgentTurn { layout: Arc::clone(&self.layout), ids: Arc::clone(&self.ids), diff, executed }
    }
}

/// A stable id per block of a layout, for as long as the block has the same source:
/// `file:<path>`, `url:<url>`, or the name of a text the agent writes itself; a source seen
/// again in the same layout gets `#2`, `#3`, … (opencode's ids, for every agent).
pub fn block_ids(layout: &profile::Layout) -> Vec<Arc<str>> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    layout
        .blocks
        .iter()
        .map(|block| {
            let id = match &block.source {
                profile::Source::File(path) => format!("file:{}", path.display()),
                profile::Source::Url(url) => format!("url:{url}"),
                profile::Source::Agent(name) => name.clone(),
            };
            let occurrence = seen.entry(id.clone()).and_modify(|n| *n += 1).or_insert(1);
            if *occurrence == 1 { id.into() } else { format!("{id}#{occurrence}").into() }
        })
        .collect()
}

pub(crate) fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Any agent's blocks are named by their source, and a source seen again is numbered.
    #[test]
    fn every_profile_s_blocks_have_ids_by_source() {
        use ctxgraph_db::profile::{Frame, LayoutBuilder, Part, Placement, Source, Status, WordingSource};
        let mut builder = LayoutBuilder::new("env\na\nu\na".to_owned());
        for (source, text) in [
            (Source::Agent("environment".to_owned()), "env"),
            (Source::File("/r/AGENTS.md".into()), "a"),
            (Source::Url("https://x/r.md".to_owned()), "u"),
            (Source::File("/r/AGENTS.md".into()), "a"),
        ] {
            builder.block(Part {
                source,
                placement: Placement::SystemMessage,
                position: "",
                text,
                status: Status::Sent,
                rule: "I4",
                reason: String::new(),
                inlines: Vec::new(),
            });
        }
        let frame = Frame {
            cwd: "/r".into(),
            root: None,
            left_out: Vec::new(),
            settings: Vec::new(),
            wording: WordingSource::None,
        };
        let layout = frame.layout(crate::PROFILES[0], builder);
        let ids: Vec<Arc<str>> =
            ["environment", "file:/r/AGENTS.md", "url:https://x/r.md", "file:/r/AGENTS.md#2"]
                .map(Arc::from)
                .into();
        assert_eq!(block_ids(&layout), ids);
    }
}
