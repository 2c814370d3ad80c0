//! Each agent's own sentences (preambles, labels), read from the user's installation: I/O,
//! so it lives here; each profile recognises and verifies its own words by their hashes.
//! One line per agent that has words of its own in what it sends.

use std::any::Any;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use ctxgraph_db::agent::Agent;

/// The wording `agent`'s profile takes in [`Request::wording`](ctxgraph_db::profile::Request),
/// loaded from `explicit` or the installation `vars` name; `None` for an agent whose text has
/// no sentence of its own.
pub fn load(
    agent: Agent,
    explicit: Option<&Path>,
    vars: &BTreeMap<String, String>,
) -> Option<Arc<dyn Any + Send + Sync>> {
    match agent {
        Agent::ClaudeCode => Some(Arc::new(crate::claude_code::claude_code_prose(explicit, vars))),
        Agent::Copilot => Some(Arc::new(crate::copilot::copilot_prose(explicit, vars))),
        Agent::QwenCode => Some(Arc::new(crate::qwen_code::qwen_code_wording(explicit, vars))),
        Agent::Aider => Some(Arc::new(crate::aider::aider_wording(explicit, vars))),
        Agent::Pi => Some(Arc::new(crate::pi::pi_wording(explicit, vars))),
        Agent::Opencode | Agent::Codex | Agent::Gemini | Agent::Kilo | Agent::Cline | Agent::Continue => None,
    }
}
