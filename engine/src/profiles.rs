//! Every agent's profile by [`Agent`], and the questions asked of all of them at once, over
//! the registry [`crate::PROFILES`].

use std::path::Path;

use ctxgraph_db::agent::Agent;
use ctxgraph_db::db::{Db, Workspace};
use ctxgraph_db::profile::{AgentFate, Profile};

use crate::PROFILES;
use ctxgraph_db::tokens::TokenCounter;

/// The profile of `agent`.
///
/// # Panics
///
/// When `agent` has no line in [`PROFILES`]: a test checks every [`Agent`] has one.
pub fn profile(agent: Agent) -> &'static dyn Profile {
    PROFILES
        .iter()
        .copied()
        .find(|profile| profile.agent() == agent)
        .unwrap_or_else(|| panic!("{agent} has no profile in PROFILES"))
}

/// The agent whose sessions the engine holds live, from its exports
/// ([`Profile::sessions_live`]): what `session compact` and `session messages` answer for,
/// and whose export a recorded session is when no agent is named.
///
/// # Panics
///
/// When no profile says so: a test checks that one does.
pub fn live_sessions_agent() -> Agent {
    PROFILES
        .iter()
        .find(|profile| profile.sessions_live())
        .map_or_else(|| panic!("no profile in PROFILES holds sessions live"), |profile| profile.agent())
}

/// `file`'s fate in every agent, in [`PROFILES`] order.
pub fn every_fate(db: &dyn Db, ws: Workspace, counter: &dyn TokenCounter, file: &Path) -> Vec<AgentFate> {
    PROFILES.iter().map(|profile| profile.fate(db, ws, counter, file)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_agent_holds_its_sessions_live() {
        let live: Vec<Agent> = PROFILES.iter().filter(|p| p.sessions_live()).map(|p| p.agent()).collect();
        assert_eq!(live, [live_sessions_agent()]);
    }

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
