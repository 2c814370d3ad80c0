//! One build as an agent host sees it between turns: the text, its blocks with stable ids
//! and hashes, and what changed since the previous build.

use std::collections::HashMap;

use ctxgraph_queries::Workspace;
use ctxgraph_queries::opencode::prompt::{Block, BlockKind, ModelRef, Prompt, Section};
use serde::Serialize;

use crate::{Engine, EngineError};

/// A block's id: stable across builds for as long as the block has the same source, so a
/// host can tell which blocks changed (`environment`, `file:<path>`, `url:<url>`, `memory`).
pub fn block_id(block: &Block) -> String {
    match (&block.source, block.kind) {
        (Some(source), BlockKind::Remote) => format!("url:{source}"),
        (_, BlockKind::Memory) => "memory".to_owned(),
        (Some(source), _) => format!("file:{source}"),
        (None, _) => "environment".to_owned(),
    }
}

pub fn hash_hex(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BlockSpan {
    pub id: String,
    pub kind: BlockKind,
    pub source: Option<String>,
    /// Byte range of the block in the text.
    pub start: usize,
    pub end: usize,
    /// blake3 of the block's bytes.
    pub hash: String,
    /// Index into the prompt's blocks, for callers that need the block itself.
    #[serde(skip)]
    pub block: usize,
}

/// One section of a prompt, laid out.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Rendered {
    pub text: String,
    /// blake3 of `text`.
    pub hash: String,
    pub blocks: Vec<BlockSpan>,
}

impl Rendered {
    pub fn new(prompt: &Prompt, section: Section) -> Self {
        let layout = prompt.layout(section);
        let mut seen: HashMap<String, usize> = HashMap::new();
        let blocks = layout
            .spans
            .iter()
            .map(|(index, range)| {
                let block = &prompt.blocks[*index];
                // I8 keeps a URL listed twice as two blocks; the second is `url:…#2`.
                let id = block_id(block);
                let occurrence = seen.entry(id.clone()).and_modify(|n| *n += 1).or_insert(1);
                BlockSpan {
                    id: if *occurrence == 1 { id } else { format!("{id}#{occurrence}") },
                    kind: block.kind,
                    source: block.source.clone(),
                    start: range.start,
                    end: range.end,
                    hash: hash_hex(block.text.as_bytes()),
                    block: *index,
                }
            })
            .collect();
        Rendered { hash: hash_hex(layout.text.as_bytes()), text: layout.text, blocks }
    }
}

/// How a build differs from the previous one.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TurnDiff {
    /// Ids of blocks that are new.
    pub added: Vec<String>,
    /// Ids of blocks that are gone.
    pub removed: Vec<String>,
    /// Ids of blocks present in both whose bytes differ.
    pub modified: Vec<String>,
    /// Leading bytes identical to the previous text: what a provider's prompt cache can
    /// reuse. Zero without a previous build.
    pub stable_prefix_bytes: usize,
}

impl TurnDiff {
    pub fn between(previous: Option<&Rendered>, current: &Rendered) -> Self {
        let Some(previous) = previous else {
            let added = current.blocks.iter().map(|b| b.id.clone()).collect();
            return TurnDiff { added, ..TurnDiff::default() };
        };
        let hashes = |blocks: &[BlockSpan]| -> HashMap<String, String> {
            blocks.iter().map(|b| (b.id.clone(), b.hash.clone())).collect()
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
    pub fn changed(&self) -> Vec<String> {
        self.added.iter().chain(&self.modified).cloned().collect()
    }

    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.modified.is_empty()
    }
}

/// One client's builds, turn after turn: each build is compared with that client's
/// previous build of the same text (working directory, section and model).
#[derive(Debug, Default)]
pub struct Turns {
    previous: HashMap<(Workspace, Section, Option<ModelRef>), (Prompt, Rendered)>,
}

/// A build and what it cost.
#[derive(Clone, Debug)]
pub struct Turn {
    pub rendered: Rendered,
    pub diff: TurnDiff,
    /// Queries that executed (rather than being reused) for this build.
    pub executed: u64,
}

impl Turns {
    pub fn build(
        &mut self,
        engine: &Engine,
        ws: Workspace,
        section: Section,
        model: Option<ModelRef>,
    ) -> Result<Turn, EngineError> {
        let before = engine.db().executions().total();
        let prompt = engine.prompt(ws, model.clone())?;
        let executed = engine.db().executions().total() - before;
        let key = (ws, section, model);
        let previous = self.previous.get(&key);
        // The common turn: nothing changed, so neither layout nor hashing is redone.
        if let Some((_, rendered)) = previous.filter(|(before, _)| before == prompt) {
            let diff = TurnDiff { stable_prefix_bytes: rendered.text.len(), ..TurnDiff::default() };
            return Ok(Turn { rendered: rendered.clone(), diff, executed });
        }
        let rendered = Rendered::new(prompt, section);
        let diff = TurnDiff::between(previous.map(|(_, r)| r), &rendered);
        self.previous.insert(key, (prompt.clone(), rendered.clone()));
        Ok(Turn { rendered, diff, executed })
    }
}

fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rendered(blocks: &[(&str, &str)]) -> Rendered {
        let mut text = String::new();
        let mut spans = Vec::new();
        for (id, body) in blocks {
            if !text.is_empty() {
                text.push('\n');
            }
            let start = text.len();
            text.push_str(body);
            spans.push(BlockSpan {
                id: (*id).to_owned(),
                kind: BlockKind::Instruction,
                source: None,
                start,
                end: text.len(),
                hash: hash_hex(body.as_bytes()),
                block: spans.len(),
            });
        }
        Rendered { hash: hash_hex(text.as_bytes()), text, blocks: spans }
    }

    #[test]
    fn diff_names_added_removed_and_modified_blocks() {
        let before = rendered(&[("environment", "env"), ("file:/a", "aaa"), ("file:/b", "bbb")]);
        let after = rendered(&[("environment", "env"), ("file:/a", "aXa"), ("file:/c", "ccc")]);
        let diff = TurnDiff::between(Some(&before), &after);
        assert_eq!(diff.added, ["file:/c"]);
        assert_eq!(diff.removed, ["file:/b"]);
        assert_eq!(diff.modified, ["file:/a"]);
        assert_eq!(diff.changed(), ["file:/c", "file:/a"]);
        // "env\na" is shared; the 'X' is the first differing byte.
        assert_eq!(diff.stable_prefix_bytes, "env\na".len());
    }

    #[test]
    fn first_build_adds_everything_and_shares_nothing() {
        let only = rendered(&[("environment", "env")]);
        let diff = TurnDiff::between(None, &only);
        assert_eq!(diff.added, ["environment"]);
        assert_eq!(diff.stable_prefix_bytes, 0);
        assert!(TurnDiff::between(Some(&only), &only).is_empty());
    }
}
