//! Every agent ctxgraph reproduces, one line each. `--agent all` and every table of agents
//! go through this list, in this order.

use crate::agent::Agent;

use super::Profile;

/// The profiles, in the order `--agent all` reports them.
pub static PROFILES: &[&dyn Profile] = &[
    &crate::opencode::profile::Opencode,
    &crate::codex::profile::Codex,
    &crate::claude_code::profile::ClaudeCode,
    &crate::gemini::profile::Gemini,
    &crate::copilot::profile::Copilot,
    &crate::qwen_code::profile::QwenCode,
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
