//! Every agent ctxgraph reproduces, one line each. `--agent all` and every table of agents
//! go through this list, in this order. It lives in the engine, the first crate above both
//! `ctxgraph-opencode` and `ctxgraph-agents`, so those two compile side by side.

use std::path::Path;

use ctxgraph_db::agent::Agent;
use ctxgraph_db::db::{Db, Workspace};
use ctxgraph_db::profile::{AgentFate, Profile};
use ctxgraph_db::tokens::TokenCounter;

/// The profiles, in the order `--agent all` reports them.
pub static PROFILES: &[&dyn Profile] = &[
    &ctxgraph_opencode::profile::Opencode,
    &ctxgraph_agents::codex::profile::Codex,
    &ctxgraph_agents::claude_code::profile::ClaudeCode,
    &ctxgraph_agents::gemini::profile::Gemini,
    &ctxgraph_agents::copilot::profile::Copilot,
    &ctxgraph_agents::qwen_code::profile::QwenCode,
    &ctxgraph_opencode::kilo::profile::Kilo,
    &ctxgraph_agents::cline::profile::Cline,
    &ctxgraph_agents::continue_cli::profile::ContinueCli,
    &ctxgraph_agents::aider::profile::Aider,
    &ctxgraph_agents::pi::profile::Pi,
    &ctxgraph_agents::auggie::profile::Auggie,
];

/// The profile of `agent`.
///
/// # Panics
///
/// When `agent` has no line above: a test checks every [`Agent`] has one.
pub fn profile(agent: Agent) -> &'static dyn Profile {
    PROFILES
        .iter()
        .copied()
        .find(|profile| profile.agent() == agent)
        .unwrap_or_else(|| panic!("{agent} has no profile in PROFILES"))
}

/// `file`'s fate in every agent, in [`PROFILES`] order.
pub fn every_fate(db: &dyn Db, ws: Workspace, counter: &dyn TokenCounter, file: &Path) -> Vec<AgentFate> {
    PROFILES.iter().map(|profile| profile.fate(db, ws, counter, file)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_agent_has_one_profile_in_its_order() {
        let listed: Vec<Agent> = PROFILES.iter().map(|p| p.agent()).collect();
        assert_eq!(listed, Agent::ALL);
        for profile in PROFILES {
            assert!(
                profile.release().starts_with(profile.agent().name().split('-').next().unwrap_or_default())
            );
        }
    }
}
