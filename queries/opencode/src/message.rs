//! A1–A2, B1: the whole system message opencode sends for one model call, as blocks in
//! its order: the model or agent prompt, the environment (B2), references (B3), the
//! instruction blocks (I9), ctxgraph's memory block, MCP (B4), skills (B5), the
//! structured-output line (A1) and `user.system` (A2).
//!
//! `system_prompt` (from the environment block to the memory block) is reused as is, so
//! `--section system|environment|instructions` keep their bytes.

use std::sync::Arc;

use crate::agents::{Agent, AgentPrompt, agents};
use crate::config::merged_config;
use crate::mcp::mcp_block;
use crate::prompt::{Block, BlockKind, BuildError, Layout, ModelRef, Prompt, Section, system_prompt};
use crate::references::references_block;
use crate::skills::{ListingError, skills_block};
use ctxgraph_db::db::{Db, Workspace};
use ctxgraph_db::installation::{Asset, asset};

/// What one model call is built for.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct MessageOptions {
    /// `--model PROVIDER/ID`; without it, the agent's `model`, then the config's.
    pub model: Option<ModelRef>,
    /// `--opencode-agent NAME`: the opencode agent (`build` by default).
    pub agent: String,
    /// `--json-schema`: the user asked for structured output (A1).
    pub json_schema: bool,
    /// `--user-system TEXT`: the user message's `system` (A2).
    pub user_system: Option<String>,
}

impl Default for MessageOptions {
    fn default() -> Self {
        MessageOptions { model: None, agent: "build".to_owned(), json_schema: false, user_system: None }
    }
}

/// B1: which of opencode's model prompts a model gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ModelPrompt {
    /// The asset's family name (`anthropic`, `gpt`, …; `model/<family>` in the table).
    pub family: &'static str,
    /// The substring test that chose it, in words (for `explain`).
    pub because: &'static str,
    /// For the Muse prompt: the name put in place of `{{MODEL_NAME}}`.
    pub model_name: Option<&'static str>,
}

/// B1 as 1.18.33 does it: substring tests on the model's API id, first match wins.
pub fn model_prompt(model: &ModelRef) -> ModelPrompt {
    let id = model.id.as_str();
    let lower = id.to_lowercase();
    let pick = |family, because| ModelPrompt { family, because, model_name: None };
    if id.contains("muse") {
        let name = if id.contains("muse-glimmer") { "Muse Glimmer" } else { "Muse Spark" };
        return ModelPrompt { family: "muse", because: "the id contains `muse`", model_name: Some(name) };
    }
    if id.contains("gpt-4") || id.contains("o1") || id.contains("o3") {
        return pick("beast", "the id contains `gpt-4`, `o1` or `o3`");
    }
    if id.contains("gpt") {
        if id.contains("gpt-6") {
            return pick("gpt-6", "the id contains `gpt-6`");
        }
        if id.contains("codex") {
            return pick("codex", "the id contains `gpt` and `codex`");
        }
        return pick("gpt", "the id contains `gpt`");
    }
    if id.contains("gemini-") {
        return pick("gemini", "the id contains `gemini-`");
    }
    if id.contains("claude") {
        return pick("anthropic", "the id contains `claude`");
    }
    if lower.contains("trinity") {
        return pick("trinity", "the id contains `trinity` (any case)");
    }
    if lower.contains("kimi")
        || ["kimi-for-coding", "moonshotai", "moonshotai-cn"].contains(&model.provider.as_str())
    {
        return pick("kimi", "the id contains `kimi` (any case) or the provider is a Kimi one");
    }
    pick("default", "no other family matched")
}

/// The model the message is for: `--model`, else the agent's `model`, else the config's.
fn resolve_model(db: &dyn Db, ws: Workspace, given: Option<&ModelRef>, agent: &Agent) -> Option<ModelRef> {
    if let Some(model) = given {
        return Some(model.clone());
    }
    if let Some(model) = agent.model.as_deref().and_then(|m| m.parse().ok()) {
        return Some(model);
    }
    let config = merged_config(db, ws).as_ref().ok()?;
    config.tree.get("model")?.to_value().as_str()?.parse().ok()
}

/// A block of opencode's own text: the text, or a marked placeholder saying why not (L3).
fn opencode_text(kind: BlockKind, loaded: Asset, rule: &'static str, reason: String) -> Block {
    let (text, unavailable) = match loaded {
        Ok(text) => (text.to_string(), None),
        Err(missing) => (missing.placeholder(), Some(missing.reason)),
    };
    Block { unavailable, ..Block::new(kind, text, rule, reason) }
}

/// The first part: the agent's own non-empty prompt (A2), else the model's prompt (B1).
fn first_block(db: &dyn Db, agent: &Agent, model: Option<&ModelRef>) -> Block {
    let installation = db.installation();
    match &agent.prompt {
        Some(AgentPrompt::Config { text, origin }) if !text.is_empty() => {
            let written = origin.written.as_deref().map(|w| format!(" (written `{w}`)")).unwrap_or_default();
            return Block::new(
                BlockKind::AgentPrompt,
                text.as_str(),
                "A2",
                format!(
                    "the {} agent's prompt from {}{written}, which replaces the model prompt",
                    agent.key,
                    origin.source.name()
                ),
            );
        }
        Some(AgentPrompt::BuiltIn(name)) => {
            return opencode_text(
                BlockKind::AgentPrompt,
                asset(db, installation, name),
                "A2",
                format!(
                    "the built-in {} agent's own prompt (opencode's {name}), which replaces the model prompt",
                    agent.key
                ),
            );
        }
        _ => {}
    }
    let Some(model) = model else {
        let missing = ctxgraph_db::installation::Unavailable {
            asset: "model/…".to_owned(),
            reason: "no model: pass --model PROVIDER/ID or set `model` in the config".to_owned(),
        };
        return opencode_text(
            BlockKind::ModelPrompt,
            Err(missing),
            "B1",
            "the model prompt, which depends on the model".to_owned(),
        );
    };
    let choice = model_prompt(model);
    let name = format!("model/{}", choice.family);
    let loaded = asset(db, installation, &name).map(|text| match choice.model_name {
        Some(model_name) => Arc::from(text.replace("{{MODEL_NAME}}", model_name)),
        None => text,
    });
    let filled = choice.model_name.map(|n| format!(", {{{{MODEL_NAME}}}} = {n}")).unwrap_or_default();
    opencode_text(
        BlockKind::ModelPrompt,
        loaded,
        "B1",
        format!(
            "opencode's {} prompt for {}/{}: {}{filled}; the {} agent has no prompt of its own",
            choice.family, model.provider, model.id, choice.because, agent.key
        ),
    )
}

/// Why no message can be built.
#[derive(Clone, Debug, PartialEq, Eq, Hash, thiserror::Error)]
pub enum MessageError {
    /// The prompt's own errors (config, a rule file over the size limit).
    #[error(transparent)]
    Build(#[from] BuildError),
    /// `--opencode-agent` names no agent (or a disabled one).
    #[error("opencode has no agent {name:?} (agents: {})", available.join(", "))]
    UnknownAgent {
        /// The name asked for.
        name: String,
        /// The agents there are, in opencode's order.
        available: Vec<String>,
    },
}

/// [`system_message`] laid out, memoized like
/// [`system_prompt_layout`](crate::prompt::system_prompt_layout).
#[salsa::tracked(returns(ref))]
pub fn system_message_layout(
    db: &dyn Db,
    ws: Workspace,
    options: MessageOptions,
) -> Result<Arc<Layout>, MessageError> {
    let message = system_message(db, ws, options).as_ref().map_err(Clone::clone)?;
    Ok(Arc::new(message.layout(Section::Message)))
}

/// The whole system message (docs/opencode/prompt.md) for `options`, as blocks in opencode's order; join them
/// with `Prompt::layout(Section::Message)` for the bytes opencode sends.
#[salsa::tracked(returns(ref))]
pub fn system_message(db: &dyn Db, ws: Workspace, options: MessageOptions) -> Result<Prompt, MessageError> {
    let all = agents(db, ws).as_ref().map_err(|e| BuildError::Config(e.clone()))?;
    let Some(agent) = all.get(&options.agent) else {
        return Err(MessageError::UnknownAgent {
            name: options.agent.clone(),
            available: all.list.iter().map(|a| a.key.clone()).collect(),
        });
    };
    let model = resolve_model(db, ws, options.model.as_ref(), agent);
    let mut blocks = vec![first_block(db, agent, model.as_ref())];
    // B2, I9 and the memory block, exactly as `system_prompt` builds them, with B3's
    // references block right after the environment block.
    let system = system_prompt(db, ws, model.clone()).as_ref().map_err(Clone::clone)?;
    let mut system_blocks = system.blocks.iter().cloned();
    blocks.extend(system_blocks.next());
    blocks.extend(references_block(db, ws).clone());
    blocks.extend(system_blocks);
    // B4 (MCP) and B5 (skills) follow the instructions and memory.
    blocks.extend(mcp_block(db, ws, options.agent.clone()).clone());
    if let Some(skills) = skills_block(db, ws, agent.key.clone()).as_ref().map_err(|e| match e {
        ListingError::Config(e) => MessageError::Build(BuildError::Config(e.clone())),
        ListingError::UnknownAgent(name) => MessageError::UnknownAgent {
            name: name.clone(),
            available: all.list.iter().map(|a| a.key.clone()).collect(),
        },
    })? {
        blocks.push(skills.clone());
    }
    if options.json_schema {
        blocks.push(opencode_text(
            BlockKind::StructuredOutput,
            asset(db, db.installation(), "structured-output"),
            "A1",
            "the user asked for structured output (--json-schema)".to_owned(),
        ));
    }
    if let Some(text) = &options.user_system {
        blocks.push(Block::new(
            BlockKind::UserSystem,
            text.as_str(),
            "A2",
            "the user message's system text (--user-system), always last",
        ));
    }
    Ok(Prompt { blocks })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::Arc;

    use salsa::Setter;

    use super::*;
    use crate::prompt::Section;
    use ctxgraph_db::db::Host;
    use ctxgraph_db::installation::{InstallationState, Texts};
    use ctxgraph_db::system::MemorySystem;
    use ctxgraph_db::testing::TestDb;

    /// A database over `files` whose installation holds stand-in texts (ours, not
    /// opencode's: the assembly does not look inside them).
    fn world(files: &[(&str, &str)]) -> (TestDb, Workspace) {
        let fs = MemorySystem::new();
        fs.create_dir_all("/w");
        for (path, text) in files {
            fs.write_file(path, *text);
        }
        let mut db = TestDb::new(fs);
        let texts: BTreeMap<String, Arc<str>> = [
            ("model/anthropic", "ANTHROPIC PROMPT\n"),
            ("model/muse", "I am {{MODEL_NAME}}.\n"),
            ("structured-output", "USE THE TOOL."),
            ("agent/explore", "EXPLORE PROMPT"),
            ("skill/customize-opencode/description", "BUILT-IN SKILL."),
            ("skills/intro", "SKILLS INTRO."),
            ("skills/how-to-load", "HOW TO LOAD ONE."),
            ("skills/none-available", "NO SKILLS."),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), Arc::from(v)))
        .collect();
        let state = InstallationState::Found(Arc::new(Texts {
            binary: "/opt/opencode".into(),
            version: "1.18.33".into(),
            texts,
        }));
        db.installation().set_state(&mut db).to(state);
        let host =
            Host::new(&db, BTreeMap::default(), "/home".into(), "linux".into(), "Sun Nov 29 2026".into());
        let ws = Workspace::new(&db, host, "/w".into());
        (db, ws)
    }

    fn message(db: &TestDb, ws: Workspace, options: MessageOptions) -> (String, Vec<&'static str>) {
        let prompt = system_message(db, ws, options).as_ref().expect("message");
        let layout = prompt.layout(Section::Message);
        let kinds = layout.blocks.iter().map(|b| b.rule).collect();
        (layout.text, kinds)
    }

    #[test]
    fn the_message_is_assembled_in_opencode_s_order() {
        let (db, ws) = world(&[("/w/AGENTS.md", "Rule.\n")]);
        let options = MessageOptions {
            model: Some("anthropic/claude-x".parse().expect("model")),
            json_schema: true,
            user_system: Some("Mine.".to_owned()),
            ..MessageOptions::default()
        };
        let (text, rules) = message(&db, ws, options);
        assert_eq!(rules, ["B1", "B2", "I4", "B5", "A1", "A2"]);
        assert!(
            text.starts_with("ANTHROPIC PROMPT\n\nYou are powered by the model named claude-x."),
            "{text}"
        );
        assert!(
            text.ends_with(
                "</env>\nInstructions from: /w/AGENTS.md\nRule.\n\nSKILLS INTRO.\nHOW TO LOAD ONE.\n<available_skills>\n  <skill>\n    \
                 <name>customize-opencode</name>\n    <description>BUILT-IN SKILL.</description>\n    \
                 <location>&lt;built-in&gt;</location>\n  </skill>\n</available_skills>\nUSE THE TOOL.\nMine."
            ),
            "{text}"
        );
    }

    #[test]
    fn the_muse_prompt_names_the_model() {
        let (db, ws) = world(&[]);
        let options = MessageOptions {
            model: Some("meta/muse-glimmer".parse().expect("m")),
            ..MessageOptions::default()
        };
        assert!(message(&db, ws, options).0.starts_with("I am Muse Glimmer.\n\n"));
    }

    #[test]
    fn an_agent_prompt_replaces_the_model_prompt() {
        let config = r#"{"agent": {"build": {"prompt": "{file:./p.md}"}}}"#;
        let (db, ws) = world(&[("/w/opencode.json", config), ("/w/p.md", "From a file.")]);
        let options = MessageOptions {
            model: Some("anthropic/claude-x".parse().expect("m")),
            ..MessageOptions::default()
        };
        let prompt = system_message(&db, ws, options).as_ref().expect("message");
        assert_eq!(prompt.blocks[0].kind, BlockKind::AgentPrompt);
        assert_eq!(&*prompt.blocks[0].text, "From a file.");
        assert!(prompt.blocks[0].reason.contains("{file:./p.md}"), "{}", prompt.blocks[0].reason);
        // A built-in agent's prompt comes from the installation.
        let options = MessageOptions { agent: "explore".into(), ..MessageOptions::default() };
        assert!(message(&db, ws, options).0.starts_with("EXPLORE PROMPT\n"));
    }

    #[test]
    fn a_missing_text_is_a_marked_placeholder() {
        let (db, ws) = world(&[]);
        let options =
            MessageOptions { model: Some("openai/gpt-5".parse().expect("m")), ..MessageOptions::default() };
        let prompt = system_message(&db, ws, options).as_ref().expect("message");
        let placed = prompt.layout(Section::Message);
        assert!(placed.blocks[0].unavailable);
        assert!(prompt.blocks[0].text.contains("model/gpt"), "{}", prompt.blocks[0].text);
    }

    #[test]
    fn an_unknown_agent_is_an_error() {
        let (db, ws) = world(&[("/w/opencode.json", r#"{"agent": {"plan": {"disable": true}}}"#)]);
        let options = MessageOptions { agent: "plan".into(), ..MessageOptions::default() };
        let err = system_message(&db, ws, options).clone().expect_err("no plan agent");
        assert!(matches!(err, MessageError::UnknownAgent { ref name, .. } if name == "plan"), "{err}");
    }

    fn family(model: &str) -> &'static str {
        model_prompt(&model.parse().expect("model")).family
    }

    #[test]
    fn model_families_follow_the_binary() {
        assert_eq!(family("meta/muse-spark"), "muse");
        assert_eq!(family("meta/muse-glimmer-1"), "muse");
        assert_eq!(model_prompt(&"m/muse-glimmer".parse().expect("m")).model_name, Some("Muse Glimmer"));
        assert_eq!(family("openai/gpt-4o"), "beast");
        assert_eq!(family("openai/o3-mini"), "beast");
        assert_eq!(family("openai/gpt-6"), "gpt-6");
        assert_eq!(family("openai/gpt-5-codex"), "codex");
        assert_eq!(family("openai/gpt-5"), "gpt");
        assert_eq!(family("google/gemini-2.5-pro"), "gemini");
        assert_eq!(family("anthropic/claude-sonnet-4"), "anthropic");
        assert_eq!(family("x/Arcee-Trinity"), "trinity");
        assert_eq!(family("x/Kimi-K2"), "kimi");
        assert_eq!(family("moonshotai/k2"), "kimi");
        assert_eq!(family("fake/fake-model"), "default");
        // Only the last two tests ignore case.
        assert_eq!(family("x/CLAUDE"), "default");
    }
}
