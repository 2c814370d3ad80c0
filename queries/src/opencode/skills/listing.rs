//! B5.5, B5.9: which registered skills one agent's listing shows, and why each one is in or
//! out; the block's text for that agent.

use crate::db::{Db, Workspace};
use crate::opencode::agents::{Action, Rule, agents, wildcard_match};
use crate::opencode::config::ConfigError;
use crate::opencode::installation::asset;
use crate::opencode::prompt::{Block, BlockKind};

use super::{Description, Origin, Skills, render, skills};

/// Why a listing could not be computed.
#[derive(Clone, Debug, PartialEq, Eq, Hash, thiserror::Error)]
pub enum ListingError {
    /// The config (or a flag) opencode would refuse to start with.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// No agent has this key.
    #[error("opencode has no agent named {0:?}")]
    UnknownAgent(String),
}

/// One registered skill's place in an agent's listing.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Decision {
    /// Index into [`Skills::registry`].
    pub registry: usize,
    /// B5.9: the agent's rule that denies `skill` for this name (the last matching one).
    pub denied_by: Option<Rule>,
    /// B5.5: the skill has no description, so it is never listed.
    pub no_description: bool,
}

impl Decision {
    /// Listed: neither denied nor without a description.
    pub fn listed(&self) -> bool {
        self.denied_by.is_none() && !self.no_description
    }
}

/// One agent's view of the registry.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Listing {
    /// The agent key.
    pub agent: String,
    /// B5.9: the rule that disables the skill tool for this agent (the last rule for
    /// `skill`, with pattern `*` and action deny); the block is then omitted.
    pub omitted_by: Option<Rule>,
    /// Every registered skill, in registry (`localeCompare`) order.
    pub decisions: Vec<Decision>,
}

/// B5.5/B5.9: the listing for `agent` (an opencode agent key such as `build`).
#[salsa::tracked(returns(ref))]
pub fn skill_listing(db: &dyn Db, ws: Workspace, agent: String) -> Result<Listing, ListingError> {
    let skills = skills(db, ws).as_ref().map_err(|e| ConfigError::Flag(e.clone()))?;
    let agents = agents(db, ws).as_ref().map_err(Clone::clone)?;
    let found = agents.get(&agent).ok_or_else(|| ListingError::UnknownAgent(agent.clone()))?;
    let permission = &found.permission;
    // G6's test, keeping the rule that decided it for `explain`.
    let omitted_by = permission
        .is_tool_disabled("skill")
        .then(|| permission.0.iter().rev().find(|rule| wildcard_match("skill", &rule.permission)).cloned())
        .flatten();
    let decisions = skills
        .registry
        .iter()
        .enumerate()
        .map(|(registry, skill)| {
            let rule = permission.evaluate("skill", &skill.name);
            Decision {
                registry,
                denied_by: (rule.action == Action::Deny).then_some(rule),
                no_description: skills.description(skill.origin) == Description::Missing,
            }
        })
        .collect();
    Ok(Listing { agent, omitted_by, decisions })
}

/// B5.8: the block's text for a listing, `None` when the block is omitted. `builtin` is the
/// built-in skill's description, from the opencode installation.
pub fn listing_text(skills: &Skills, listing: &Listing, builtin: &str) -> Option<String> {
    if listing.omitted_by.is_some() {
        return None;
    }
    let listed = |name: &str| {
        listing
            .decisions
            .iter()
            .find(|d| skills.registry[d.registry].name == name)
            .is_some_and(|d| d.denied_by.is_none())
    };
    Some(render::block_text(&render::listed(skills, builtin, listed)))
}

/// The asset name of the built-in skill's description in the installation table.
pub const BUILTIN_DESCRIPTION: &str = "skill/customize-opencode/description";

/// B5: the skills block for `agent`, `None` when the agent's permission omits it. The
/// built-in skill's description comes from the opencode installation; without one it is a
/// marked placeholder (L3).
#[salsa::tracked(returns(ref))]
pub fn skills_block(db: &dyn Db, ws: Workspace, agent: String) -> Result<Option<Block>, ListingError> {
    let skills = skills(db, ws).as_ref().map_err(|e| ConfigError::Flag(e.clone()))?;
    let listing = skill_listing(db, ws, agent.clone()).as_ref().map_err(Clone::clone)?;
    let loaded = asset(db, db.installation(), BUILTIN_DESCRIPTION);
    let builtin = loaded.clone().unwrap_or_else(|u| u.placeholder().into());
    let Some(text) = listing_text(skills, listing, &builtin) else { return Ok(None) };
    let listed = listing.decisions.iter().filter(|d| d.listed()).count();
    // L3: the block carries a placeholder only when the built-in skill is listed.
    let builtin_listed =
        listing.decisions.iter().any(|d| d.listed() && skills.registry[d.registry].origin == Origin::Builtin);
    let unavailable = loaded.err().filter(|_| builtin_listed).map(|u| u.reason);
    Ok(Some(Block {
        kind: BlockKind::Skills,
        source: None,
        text,
        rule: "B5",
        reason: format!(
            "the skills listing for agent {agent}: {listed} of {} registered skill(s) listed (explain says why each is in or out)",
            skills.registry.len()
        ),
        candidate: None,
        remote: None,
        unavailable,
    }))
}
