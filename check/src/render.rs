//! Building one scenario: the pinned body and the blocks it is made of.

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

use ctxgraph_db::Workspace;
use ctxgraph_db::agent::Agent;
use ctxgraph_db::hash::content_hash;
use ctxgraph_db::profile::Request;
use ctxgraph_engine::Policy;
use ctxgraph_engine::installation::Locate;
use ctxgraph_engine::remote::FetchOptions;
use ctxgraph_engine::{Engine, EngineError};
use ctxgraph_opencode::message::MessageOptions;
use ctxgraph_opencode::prompt::{Block, Prompt, Section};
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

/// `section = "message"`: the whole message, which holds opencode's own texts, so it needs
/// the installation (found as `build` finds it, outside the jail); without one, or with
/// a text missing from it, the scenario fails rather than pinning a placeholder.
fn message(engine: &mut Engine, ws: Workspace, scenario: &Scenario) -> Result<Prompt, EngineError> {
    engine.load_installation(&Locate::from_process());
    let options = MessageOptions {
        model: scenario.model.clone(),
        agent: scenario.opencode_agent.clone(),
        json_schema: false,
        user_system: None,
    };
    let prompt = engine.system_message(ws, options)?;
    if let Some(reason) = prompt.blocks.iter().find_map(|b| b.unavailable.clone()) {
        return Err(EngineError::NoInstallation { reason });
    }
    Ok(prompt)
}

/// Builds a scenario in its hermetic world (see [`crate::hermetic`]).
pub fn render(scenario: &Scenario, repo: &Path) -> Result<Rendered, EngineError> {
    let env = host_env(scenario);
    let placeholders = Placeholders::new(repo, &env.home);
    let mut engine = Engine::new(Arc::new(JailSystem::new(repo.to_path_buf())), env);
    let ws = engine.open(&scenario.cwd)?;
    if scenario.agent != Agent::Opencode {
        return render_agent(&engine, ws, scenario, &placeholders);
    }
    // No cache: a scenario writes nothing outside the repository, and a stale copy must not
    // pass for the live document. A failed MCP server is left out of the block, as opencode
    // leaves it out; the snapshot's diff shows the difference.
    let policy = Policy {
        fetch: FetchOptions { cache_dir: None, ..FetchOptions::default() },
        remote: scenario.fetch_remote,
        mcp: scenario.mcp,
    };
    engine.prepare(ws, &policy)?;
    let prompt = if scenario.section == Section::Message {
        message(&mut engine, ws, scenario)?
    } else {
        engine.system_prompt(ws, scenario.model.clone())?
    };

    let portable = Prompt {
        blocks: prompt
            .blocks
            .iter()
            .map(|block| Block {
                text: placeholders.apply(&block.text).into(),
                id: placeholders.apply(&block.id).into(),
                source: block.source.as_deref().map(|s| placeholders.apply(s).into()),
                reason: placeholders.apply(&block.reason).into(),
                ..block.clone()
            })
            .collect(),
    };
    let layout = portable.layout(scenario.section);
    // F4: the matches of one `instructions` glob come in an order the disk decides (or a
    // race): such a run is pinned in one order of ctxgraph's, and its blocks say so.
    let paths = engine.system_paths(ws)?;
    let listed: Vec<Option<ctxgraph_db::profile::Listed>> = layout
        .blocks
        .iter()
        .map(|placed| {
            let source = prompt.blocks.get(placed.index)?.source.as_deref()?;
            paths.listed(Path::new(source))
        })
        .collect();
    let parts: Vec<_> = layout
        .blocks
        .iter()
        .zip(&listed)
        .map(|(placed, listed)| {
            let key = (placed.source.as_deref().unwrap_or(&placed.id).to_owned(), placed.hash.to_string());
            (placed.range.clone(), listed.as_ref().map(|l| l.dir.clone()), key)
        })
        .collect();
    let (text, order) = ctxgraph_db::profile::sets_in_one_order(&layout.text, &parts);
    let mut blocks: Vec<BlockEntry> = order
        .into_iter()
        .map(|i| {
            let placed = &layout.blocks[i];
            let source = placed.source.as_ref().unwrap_or(&placed.id).to_string();
            let id = match &listed[i] {
                Some(listed) => in_a_set(&source, listed, &placeholders),
                None => source,
            };
            BlockEntry::new(id, &placed.hash.to_string(), format!("{}: {}", placed.rule, placed.reason))
        })
        .collect();

    let mut body = text;
    for read in &scenario.reads {
        let nearby = engine.nearby(ws, read)?;
        let shown = placeholders.path(read);
        let _ = write!(body, "\n\n--- read {shown} ---\n");
        match nearby.reminder() {
            Some(reminder) => body.push_str(&placeholders.apply(&reminder)),
            None => body.push_str("(no rules attached)"),
        }
        for rule in &nearby.rules {
            if let Some(text) = &rule.block {
                blocks.push(BlockEntry::new(
                    format!("{} (read {shown})", placeholders.path(&rule.path)),
                    &content_hash(&placeholders.apply(text)),
                    format!("N3: attached by the read tool when the model reads {shown}"),
                ));
            }
        }
    }
    Ok(Rendered { body, blocks })
}

/// `agent = "NAME"` for every agent but opencode: the profile's text with one block per
/// file it carries, then what each read attaches. An agent's own wording is kept as its
/// fingerprints, as recorded fixtures keep it: a snapshot never holds another project's prose.
fn render_agent(
    engine: &Engine,
    ws: Workspace,
    scenario: &Scenario,
    placeholders: &Placeholders,
) -> Result<Rendered, EngineError> {
    let (agent, reads) = (scenario.agent, &scenario.reads);
    let profile = ctxgraph_engine::profiles::profile(agent);
    let request =
        Request { section: scenario.agent_section, settings: Vec::new(), wording: profile.fingerprints() };
    let layout = engine.agent_layout(ws, agent, &request)?;
    let entry = |text: &str, block: &ctxgraph_db::profile::Block, id: String| {
        BlockEntry::new(id, &content_hash(&placeholders.apply(text)), placeholders.apply(&block.reason))
    };
    let (text, placed) = layout.sets_in_one_order();
    let id = |block: &ctxgraph_db::profile::Block| {
        let source = placeholders.apply(&block.source.display());
        match &block.listed {
            Some(listed) => in_a_set(&source, listed, placeholders),
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
                    let id = format!("{} (read {shown})", placeholders.apply(&block.source.display()));
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
