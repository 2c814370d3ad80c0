//! Why each skill is in or out of one agent's skills block: the facts of [`skills`] and
//! [`skill_listing`] in one list, for `explain` (and read by `lint`).

use std::fmt::Write as _;
use std::path::PathBuf;

use serde::Serialize;

use crate::config::ConfigError;
use ctxgraph_db::db::{Db, Workspace};
use ctxgraph_db::path;

use super::listing::{Listing, ListingError};
use super::{Fate, NotASkill, Origin, SkillSource, Skills, skill_listing, skills};

/// One skill or SKILL.md, and its fate in the block.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SkillItem {
    /// The skill's name, when the file declares one (the built-in skill's is
    /// `customize-opencode`).
    pub name: Option<String>,
    /// The SKILL.md (through symlinks, as found), or `<built-in>`.
    pub location: String,
    /// Which B5.1 source found it (`None` for the built-in skill).
    pub source: Option<SkillSource>,
    /// Listed in the block.
    pub listed: bool,
    /// The rule id that decided.
    pub rule: &'static str,
    /// Why, in one sentence.
    pub why: String,
    /// 1-based line and column of a frontmatter error.
    pub at: Option<(usize, usize)>,
}

/// Every skill considered for one agent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SkillsExplanation {
    /// The opencode agent.
    pub agent: String,
    /// B5.9: the rule that omits the whole block, in words, when it is omitted.
    pub omitted: Option<String>,
    /// The registry in listing order, then every file that is not in it, in discovery order.
    pub items: Vec<SkillItem>,
    /// `skills.paths` entries that are not directories (opencode skips them with a warning).
    pub missing_paths: Vec<(String, PathBuf)>,
    /// `skills.urls` SKILL.md files not fetched: their skills are left out until they are.
    pub pending_downloads: Vec<String>,
}

fn source_words(source: &SkillSource) -> String {
    match source {
        SkillSource::HomeClaude => "~/.claude/skills".to_owned(),
        SkillSource::HomeAgents => "~/.agents/skills".to_owned(),
        SkillSource::Project => "a project .claude/.agents directory".to_owned(),
        SkillSource::ConfigDirectory => "a config directory's skill/skills".to_owned(),
        SkillSource::Path { entry } => format!("skills.paths entry {entry:?}"),
        SkillSource::Url { url } => format!("skills.urls entry {url}"),
    }
}

fn not_a_skill(why: &NotASkill) -> String {
    match why {
        NotASkill::NoMapping => "no YAML frontmatter mapping, so opencode drops it silently".to_owned(),
        NotASkill::NoName => "the frontmatter has no `name`, so opencode drops it silently".to_owned(),
        NotASkill::NameNotString(kind) => {
            format!("`name` is {kind}, not a string, so opencode drops it silently")
        }
        NotASkill::DescriptionNotString(kind) => {
            format!("`description` is {kind}, not a string, so opencode drops the skill silently")
        }
    }
}

/// B5: why each skill is in or out of `agent`'s block.
pub fn explain_skills(db: &dyn Db, ws: Workspace, agent: &str) -> Result<SkillsExplanation, ListingError> {
    let skills: &Skills = skills(db, ws).as_ref().map_err(|e| ConfigError::Flag(e.clone()))?;
    let listing: &Listing = skill_listing(db, ws, agent.to_owned()).as_ref().map_err(Clone::clone)?;
    let omitted = listing.omitted_by.as_ref().map(|rule| {
        format!(
            "the agent's last `skill` rule is {{{}: {}}} with action deny, which disables the skill tool, so opencode sends no skills block",
            rule.permission, rule.pattern
        )
    });
    let mut items = Vec::new();
    for decision in &listing.decisions {
        let skill = &skills.registry[decision.registry];
        let (location, source) = match skill.origin {
            Origin::Builtin => (super::BUILTIN_LOCATION.to_owned(), None),
            Origin::File(i) => {
                let found = &skills.found[i];
                (path::display(&found.path), Some(skills.roots[found.root].source.clone()))
            }
        };
        let from = source.as_ref().map_or("opencode itself".to_owned(), source_words);
        let (rule, why) = if let Some(rule) = &decision.denied_by {
            let action = format!("{:?}", rule.action).to_lowercase();
            (
                "B5.9",
                format!("denied for this agent by permission rule {{skill: {{{}: {action}}}}}", rule.pattern),
            )
        } else if decision.no_description {
            ("B5.5", format!("registered from {from}, but it has no description, so opencode never lists it"))
        } else if omitted.is_some() {
            ("B5.9", "the whole block is omitted for this agent".to_owned())
        } else if skill.origin == Origin::Builtin {
            ("B5.4", "opencode's built-in skill, registered before any file".to_owned())
        } else {
            ("B5.1", format!("found in {from}"))
        };
        let listed = decision.listed() && omitted.is_none();
        items.push(SkillItem {
            name: Some(skill.name.clone()),
            location,
            source,
            listed,
            rule,
            why,
            at: None,
        });
    }
    let builtin_replaced =
        skills.registry.iter().any(|s| s.name == super::BUILTIN_NAME && s.origin != Origin::Builtin);
    if builtin_replaced {
        items.push(SkillItem {
            name: Some(super::BUILTIN_NAME.to_owned()),
            location: super::BUILTIN_LOCATION.to_owned(),
            source: None,
            listed: false,
            rule: "B5.4",
            why: "opencode's built-in skill, replaced by a SKILL.md of the same name".to_owned(),
            at: None,
        });
    }
    for found in &skills.found {
        let source = Some(skills.roots[found.root].source.clone());
        let location = path::display(&found.path);
        let (name, rule, why, at) = match &found.fate {
            Fate::Registered { .. } => continue,
            Fate::Shadowed { name, by, .. } => (
                Some(name.clone()),
                "B5.7",
                format!(
                    "shadowed: {} also declares {name:?}; opencode keeps whichever file's parse finishes last (a race), ctxgraph the first found; the listed entry can change between opencode starts, which changes the system prompt and makes a provider's prompt cache miss",
                    path::display(&skills.found[*by].path)
                ),
                None,
            ),
            Fate::NotASkill(why) => (None, "B5.3", not_a_skill(why), None),
            Fate::Invalid(error) => (
                None,
                "B5.3",
                format!(
                    "the frontmatter is not YAML opencode accepts ({}), so opencode drops the skill",
                    error.message
                ),
                Some((error.line, error.column)),
            ),
            Fate::Unreadable(failure) => {
                (None, "B5.3", format!("cannot be read ({failure}), so opencode drops it"), None)
            }
        };
        items.push(SkillItem { name, location, source, listed: false, rule, why, at });
    }
    Ok(SkillsExplanation {
        agent: agent.to_owned(),
        omitted,
        items,
        missing_paths: skills.missing_paths.iter().map(|m| (m.entry.clone(), m.resolved.clone())).collect(),
        pending_downloads: skills.pending_downloads.clone(),
    })
}

impl SkillsExplanation {
    /// Nothing to explain beyond opencode's built-in skill being listed: no skill of the
    /// user's or project's was found, nothing omitted, skipped or pending.
    pub fn only_builtin(&self) -> bool {
        self.omitted.is_none()
            && self.missing_paths.is_empty()
            && self.pending_downloads.is_empty()
            && self.items.iter().all(|item| item.source.is_none() && item.listed)
    }

    /// The explanation in words, one line per skill.
    pub fn prose(&self) -> String {
        let mut out = format!("Skills for agent {} (B5):\n", self.agent);
        if let Some(omitted) = &self.omitted {
            let _ = writeln!(out, "  block omitted: {omitted}");
        }
        for item in &self.items {
            let mark = if item.listed { "in " } else { "out" };
            let name = item.name.as_deref().unwrap_or("-");
            let at = item.at.map(|(l, c)| format!(":{l}:{c}")).unwrap_or_default();
            let _ =
                write!(out, "  {mark} {name}  {}{at}\n      [{}] {}\n", item.location, item.rule, item.why);
        }
        for (entry, resolved) in &self.missing_paths {
            let _ = writeln!(
                out,
                "  skills.paths entry {entry:?} ({}) is not a directory: opencode skips it",
                path::display(resolved)
            );
        }
        for url in &self.pending_downloads {
            let _ = writeln!(out, "  {url} was not fetched: its skill is left out");
        }
        out
    }
}
