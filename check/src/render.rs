//! Building one scenario: the pinned body and the blocks it is made of.

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

use ctxgraph_db::hash::content_hash;
use ctxgraph_db::profile::{Request, WordingSource};
use ctxgraph_engine::remote::FetchOptions;
use ctxgraph_engine::{Engine, EngineError, HostEnv, Policy};
use serde::Serialize;

use crate::hermetic::{JailSystem, host_env};
use crate::portable::Placeholders;
use crate::scenarios::Scenario;

/// A scenario's result, machine-independent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rendered {
    /// The section's exact text, then for each read file a `--- read <path> ---` line and
    /// the reminder the read tool would append (or `(no rules attached)`).
    pub body: String,
    /// The blocks of the body, in order.
    pub blocks: Vec<BlockEntry>,
}

/// One block of a body: what produced it, and a hash of its text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BlockEntry {
    /// `environment`, the rule file's path, or `<rule path> (read <file>)`.
    pub id: String,
    /// The first 16 hex digits of the blake3 of the block's text.
    pub hash: String,
    /// Why the block is there (only known for a fresh build, not for a stored snapshot).
    #[serde(skip)]
    pub reason: Option<String>,
}

impl BlockEntry {
    /// `hash` is a full [`content_hash`]; a snapshot keeps its first 16 hex digits.
    fn new(id: String, hash: &str, reason: String) -> Self {
        Self { id, hash: hash[..16].to_owned(), reason: Some(reason) }
    }
}

/// Builds a scenario in its hermetic world (see [`crate::hermetic`]): the profile's layout
/// of the section with one block per part it carries, then what each read attaches. An
/// agent's own wording is kept as its fingerprints, as recorded fixtures keep it: a snapshot
/// never holds another project's prose. A profile whose section holds texts read from the
/// installation input (opencode's whole message) has them found as `build` finds them,
/// outside the jail; without one, or with a text missing from it, the scenario fails rather
/// than pinning a placeholder.
pub fn render(scenario: &Scenario, repo: &Path) -> Result<Rendered, EngineError> {
    let env = host_env(scenario);
    let placeholders = Placeholders::new(repo, &env.home);
    let mut engine = Engine::new(Arc::new(JailSystem::new(repo.to_path_buf())), env);
    let ws = engine.open(&scenario.cwd)?;
    let (agent, reads, section) = (scenario.agent, &scenario.reads, scenario.section);
    let profile = ctxgraph_engine::profiles::profile(agent);
    // No cache: a scenario writes nothing outside the repository, and a stale copy must not
    // pass for the live document. A failed MCP server is left out of the block, as the agent
    // leaves it out; the snapshot's diff shows the difference.
    let policy = Policy {
        fetch: FetchOptions { cache_dir: None, ..FetchOptions::default() },
        remote: scenario.fetch_remote,
        mcp: scenario.mcp,
    };
    engine.prepare_agent(ws, agent, section, &policy)?;
    let from_installation = profile.texts_from_installation(section);
    let wording = if from_installation {
        engine.load_agent_installation(agent, section, None, &HostEnv::from_process().vars)
    } else {
        profile.fingerprints()
    };
    let request = Request { section, settings: scenario.settings(), wording };
    let layout = engine.agent_layout(ws, agent, &request)?;
    if from_installation {
        let placeholder = layout.blocks.iter().find_map(|b| b.placeholder.clone());
        let missing = match &layout.wording {
            WordingSource::Unavailable { reason } => Some(reason.clone()),
            _ => placeholder,
        };
        if let Some(reason) = missing {
            return Err(EngineError::NoInstallation { reason });
        }
    }
    let entry = |text: &str, block: &ctxgraph_db::profile::Block, id: String| {
        BlockEntry::new(id, &content_hash(&placeholders.apply(text)), placeholders.apply(&block.reason))
    };
    let (text, placed) = layout.sets_in_one_order();
    let id = |block: &ctxgraph_db::profile::Block| {
        let source = placeholders.apply(&block.source.name());
        match &block.listed {
            Some(listed) => in_a_set(&source, listed, &placeholders),
            None => source,
        }
    };
    let mut blocks: Vec<BlockEntry> =
        placed.iter().map(|(block, text)| entry(text, block, id(block))).collect();
    let mut body = placeholders.apply(&text);
    for read in reads {
        let shown = placeholders.path(read);
        let _ = write!(body, "\n\n--- read {shown} ---\n");
        match engine.agent_read(ws, agent, read, &request)? {
            attached if !attached.text.is_empty() => {
                body.push_str(&placeholders.apply(&attached.text));
                for block in &attached.blocks {
                    let id = format!("{} (read {shown})", placeholders.apply(&block.source.name()));
                    blocks.push(entry(&attached.text[block.range.clone()], block, id));
                }
            }
            _ => body.push_str("(no rules attached)"),
        }
    }
    Ok(Rendered { body, blocks })
}

/// A block of a listed run says so in its id, which the snapshot's header and a change's
/// sources show: its place was not compared.
fn in_a_set(source: &str, listed: &ctxgraph_db::profile::Listed, placeholders: &Placeholders) -> String {
    let dir = placeholders.path(&listed.dir);
    match listed.order {
        ctxgraph_db::profile::ListedOrder::Race => {
            format!("{source} (one of a set: its order below {dir} is a race, compared without it)")
        }
        _ => format!("{source} (one of a set: its order is {dir}'s listing, compared without it)"),
    }
}
