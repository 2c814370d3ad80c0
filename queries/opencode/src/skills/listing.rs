//! B5.5, B5.9: which registered skills one agent's listing shows, and why each one is in or
//! out; the block's text for that agent.

use crate::agents::{Action, Rule, agents, wildcard_match};
use crate::config::ConfigError;
use crate::prompt::{Block, BlockKind};
use ctxgraph_db::db::{Db, Workspace};
use ctxgraph_db::installation::{Asset, Unavailable, asset};

use super::render::Prose;
use super::{Description, Fate, Origin, Skills, render, skills};

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

/// B5.8: the block's text for a listing, `None` when the block is omitted, with opencode's
/// sentences and the built-in skill's description from `prose`.
pub fn listing_text(skills: &Skills, listing: &Listing, prose: &Prose<'_>) -> Option<String> {
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
    Some(render::block_text(prose, &render::listed(skills, prose.builtin_description, listed)))
}

/// The installation's asset (L2) for the block's first line.
pub const INTRO: &str = "skills/intro";
/// The asset for the block's second line.
pub const HOW_TO_LOAD: &str = "skills/how-to-load";
/// The asset for the line that replaces an empty listing.
pub const NONE_AVAILABLE: &str = "skills/none-available";
/// The asset for the built-in skill's description.
pub const BUILTIN_DESCRIPTION: &str = "skill/customize-opencode/description";

/// B5: the skills block for `agent`, `None` when the agent's permission omits it. opencode's
/// sentences and the built-in skill's description come from the opencode installation;
/// without one each is a marked placeholder, and the block is unavailable when it shows
/// one (L3).
#[salsa::tracked(returns(ref))]
pub fn skills_block(db: &dyn Db, ws: Workspace, agent: String) -> Result<Option<Block>, ListingError> {
    let skills = skills(db, ws).as_ref().map_err(|e| ConfigError::Flag(e.clone()))?;
    let listing = skill_listing(db, ws, agent.clone()).as_ref().map_err(Clone::clone)?;
    let [intro, how_to_load, none_available, builtin] =
        [INTRO, HOW_TO_LOAD, NONE_AVAILABLE, BUILTIN_DESCRIPTION]
            .map(|name| asset(db, db.installation(), name));
    let shown = |loaded: &Asset| loaded.as_ref().map_or_else(Unavailable::placeholder, ToString::to_string);
    let [intro_text, how_to_load_text, none_available_text, builtin_text] =
        [&intro, &how_to_load, &none_available, &builtin].map(shown);
    let prose = Prose {
        intro: &intro_text,
        how_to_load: &how_to_load_text,
        none_available: &none_available_text,
        builtin_description: &builtin_text,
    };
    let Some(text) = listing_text(skills, listing, &prose) else { return Ok(None) };
    let listed = listing.decisions.iter().filter(|d| d.listed()).count();
    let builtin_listed =
        listing.decisions.iter().any(|d| d.listed() && skills.registry[d.registry].origin == Origin::Builtin);
    // L3: only a text the block shows makes it unavailable.
    let shown_assets = [
        Some(&intro),
        Some(&how_to_load),
        (listed == 0).then_some(&none_available),
        builtin_listed.then_some(&builtin),
    ];
    let unavailable =
        shown_assets.into_iter().flatten().find_map(|loaded| loaded.as_ref().err()).map(|u| u.reason.clone());
    Ok(Some(Block {
        unavailable,
        unstable: racy_listing(skills, listing),
        ..Block::new(
            BlockKind::Skills,
            text,
            "B5",
            format!(
                "the skills listing for agent {agent}: {listed} of {} registered skill(s) listed (explain says why each is in or out)",
                skills.registry.len()
            ),
        )
    }))
}

/// B5.7: the listed skills more than one file declares. opencode lists whichever file's
/// parse finishes last, so the entry (its location, or its description) can change between
/// starts: the reason the block is unstable, or `None`.
fn racy_listing(skills: &Skills, listing: &Listing) -> Option<String> {
    let racy: Vec<&str> = listing
        .decisions
        .iter()
        .filter(|d| d.listed())
        .map(|d| skills.registry[d.registry].name.as_str())
        .filter(|name| {
            skills.found.iter().any(|f| matches!(&f.fate, Fate::Shadowed { name: n, .. } if n == name))
        })
        .collect();
    (!racy.is_empty()).then(|| {
        format!(
            "more than one SKILL.md path declares {}: opencode lists whichever it parses last, which can change between its starts (B5.7; lint CG017/CG021)",
            racy.iter().map(|n| format!("{n:?}")).collect::<Vec<_>>().join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::Arc;

    use salsa::Setter;

    use super::*;
    use ctxgraph_db::db::Host;
    use ctxgraph_db::installation::{InstallationState, Texts};
    use ctxgraph_db::system::MemorySystem;
    use ctxgraph_db::testing::TestDb;

    /// The config that denies the built-in skill, the only one registered: nothing is listed.
    const NOTHING_LISTED: &str = r#"{"permission": {"skill": {"customize-opencode": "deny"}}}"#;

    /// A workspace `/w` with `config` as its `opencode.json`, and an installation holding
    /// stand-in texts (ours, not opencode's) for `assets`, or none at all.
    fn world(config: Option<&str>, assets: Option<&[&str]>) -> (TestDb, Workspace) {
        let fs = MemorySystem::new();
        fs.create_dir_all("/w");
        if let Some(config) = config {
            fs.write_file("/w/opencode.json", config);
        }
        let mut db = TestDb::new(fs);
        if let Some(assets) = assets {
            let texts: BTreeMap<String, Arc<str>> =
                assets.iter().map(|name| ((*name).to_owned(), Arc::from(format!("<{name}>")))).collect();
            let found = Texts { binary: "/opt/opencode".into(), version: "1.18.33".into(), texts };
            db.installation().set_state(&mut db).to(InstallationState::Found(Arc::new(found)));
        }
        let host =
            Host::new(&db, BTreeMap::default(), "/home".into(), "linux".into(), "Sun Nov 29 2026".into());
        let ws = Workspace::new(&db, host, "/w".into());
        (db, ws)
    }

    fn block(db: &TestDb, ws: Workspace) -> Block {
        skills_block(db, ws, "build".to_owned()).clone().expect("listing").expect("a block")
    }

    const ALL: [&str; 4] = [INTRO, HOW_TO_LOAD, NONE_AVAILABLE, BUILTIN_DESCRIPTION];

    #[test]
    fn every_sentence_comes_from_the_installation() {
        let (db, ws) = world(None, Some(&ALL));
        let listed = block(&db, ws);
        assert_eq!(
            &*listed.text,
            "<skills/intro>\n<skills/how-to-load>\n<available_skills>\n  <skill>\n    \
             <name>customize-opencode</name>\n    \
             <description><skill/customize-opencode/description></description>\n    \
             <location>&lt;built-in&gt;</location>\n  </skill>\n</available_skills>"
        );
        assert_eq!(listed.unavailable, None);
        let (db, ws) = world(Some(NOTHING_LISTED), Some(&ALL));
        let empty = block(&db, ws);
        assert_eq!(&*empty.text, "<skills/intro>\n<skills/how-to-load>\n<skills/none-available>");
        assert_eq!(empty.unavailable, None);
    }

    #[test]
    fn without_an_installation_each_sentence_is_a_placeholder() {
        let placeholder = |name: &str| {
            Unavailable {
                asset: name.to_owned(),
                reason: "no opencode installation was looked for".to_owned(),
            }
            .placeholder()
        };
        let (db, ws) = world(None, None);
        let listed = block(&db, ws);
        let lines: Vec<&str> = listed.text.lines().collect();
        assert_eq!(
            lines[..3],
            [placeholder(INTRO), placeholder(HOW_TO_LOAD), "<available_skills>".to_owned()]
        );
        assert!(
            listed.text.contains(&format!("<description>{}</description>", placeholder(BUILTIN_DESCRIPTION)))
        );
        assert_eq!(listed.unavailable.as_deref(), Some("no opencode installation was looked for"));
        let (db, ws) = world(Some(NOTHING_LISTED), None);
        let empty = block(&db, ws);
        assert_eq!(*empty.text, [INTRO, HOW_TO_LOAD, NONE_AVAILABLE].map(placeholder).join("\n"));
        assert!(empty.unavailable.is_some());
    }

    /// L3: a missing text the block does not show leaves it available.
    #[test]
    fn only_a_shown_text_makes_the_block_unavailable() {
        let (db, ws) = world(None, Some(&[INTRO, HOW_TO_LOAD, BUILTIN_DESCRIPTION]));
        assert_eq!(block(&db, ws).unavailable, None, "the built-in skill is listed: no empty-listing line");
        let (db, ws) = world(Some(NOTHING_LISTED), Some(&[INTRO, HOW_TO_LOAD, NONE_AVAILABLE]));
        assert_eq!(block(&db, ws).unavailable, None, "nothing listed: no built-in description");
        let (db, ws) = world(Some(NOTHING_LISTED), Some(&[INTRO, HOW_TO_LOAD]));
        let reason = block(&db, ws).unavailable.expect("the empty-listing line is missing");
        assert!(reason.contains("not found in /opt/opencode"), "{reason}");
    }
}
