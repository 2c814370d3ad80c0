//! B5: the skills opencode 1.18.33 lists in its system message, and the facts behind each
//! decision (found where, parsed how, shadowed by which, listed or not), for the block,
//! `explain` and `lint`.
//!
//! Queries, bottom up: [`discover::skill_roots`] (where to look), [`discover::skills_below`]
//! (one `**/SKILL.md` walk step per directory), [`skill_file`] (one SKILL.md's frontmatter),
//! [`skills`] (every file found, with its fate, and the registry opencode ends up with).
//! Adding a SKILL.md re-executes the walk step of its directory, its own parse, and
//! [`skills`]; nothing else.

pub mod discover;
pub mod explain;
pub mod frontmatter;
pub mod listing;
pub mod remote;
pub mod render;

use std::collections::HashSet;
use std::path::PathBuf;

use crate::flags::FlagError;
use ctxgraph_db::db::{Db, Workspace};
use ctxgraph_db::files::{File, ReadFailure, file_text};

pub use discover::{MissingPath, Root, SkillFlags, SkillSource};
pub use frontmatter::{Frontmatter, NotASkill, YamlError};
pub use listing::{Decision, Listing, ListingError, listing_text, skill_listing, skills_block};

/// The built-in skill's name (B5.4): registered before any file, so a SKILL.md with this
/// name replaces it.
pub const BUILTIN_NAME: &str = "customize-opencode";
/// The built-in skill's location, as opencode writes it (escaped in the listing).
pub const BUILTIN_LOCATION: &str = "<built-in>";

/// What opencode makes of one SKILL.md (B5.3), or why it could not read it.
#[salsa::tracked(returns(ref))]
pub fn skill_file(db: &dyn Db, file: File) -> Result<Frontmatter, ReadFailure> {
    file_text(db, file).as_ref().map(|decoded| frontmatter::parse(&decoded.text)).map_err(Clone::clone)
}

/// One SKILL.md the walk found, and what became of it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Found {
    /// The path as the walk reached it (through symlinks, not resolved): the location.
    pub path: PathBuf,
    /// Index into [`Skills::roots`] of the first root that reached it.
    pub root: usize,
    /// What happened to it.
    pub fate: Fate,
}

/// The fate of one SKILL.md (the built-in skill has none: it is always registered).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Fate {
    /// Registered under `name` (whether it is listed depends on the agent and description).
    Registered {
        /// The `name` field.
        name: String,
        /// The `description`; `None` means never listed (B5.5).
        description: Option<String>,
    },
    /// B5.7: an earlier file has the same name (index into [`Skills::found`]); opencode's
    /// choice between them is a race.
    Shadowed {
        /// The name both files declare.
        name: String,
        /// Its own description.
        description: Option<String>,
        /// The file that won.
        by: usize,
    },
    /// Parsed, not a skill (B5.3): dropped silently by opencode.
    NotASkill(NotASkill),
    /// B5.3: the frontmatter is not YAML opencode accepts; it reports and drops the skill.
    Invalid(YamlError),
    /// Could not be read; opencode drops it.
    Unreadable(ReadFailure),
}

/// The registry opencode builds (B5.1–B5.7), with every file considered.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Skills {
    /// The roots scanned, in opencode's order.
    pub roots: Vec<Root>,
    /// `skills.paths` entries opencode skips.
    pub missing_paths: Vec<MissingPath>,
    /// The flags that switched roots off.
    pub flags: SkillFlags,
    /// B5.10: every `skills.urls` entry, with its index's state.
    pub urls: Vec<remote::UrlEntry>,
    /// SKILL.md URLs not fetched (yet, or the fetch failed): their skills are left out.
    pub pending_downloads: Vec<String>,
    /// Every SKILL.md found, once each, in discovery order.
    pub found: Vec<Found>,
    /// The registered skills, sorted by name with `localeCompare` (B5.6).
    pub registry: Vec<Registered>,
}

/// One skill of the registry.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Registered {
    /// Its name.
    pub name: String,
    /// Where it comes from: a file (index into [`Skills::found`]) or the built-in skill.
    pub origin: Origin,
}

/// A registered skill's description.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Description<'a> {
    /// The built-in skill's: opencode's text, which the installation supplies.
    Builtin,
    /// A file's `description`.
    Text(&'a str),
    /// None: the skill is never listed (B5.5).
    Missing,
}

/// Where a registered skill comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Origin {
    /// B5.4: opencode's own `customize-opencode`; its description is opencode's text.
    Builtin,
    /// A SKILL.md, by index into [`Skills::found`].
    File(usize),
}

impl Fate {
    fn from_parse(parsed: Result<&Frontmatter, &ReadFailure>) -> Fate {
        match parsed {
            Err(failure) => Fate::Unreadable(failure.clone()),
            Ok(Frontmatter::Skill { name, description }) => {
                Fate::Registered { name: name.clone(), description: description.clone() }
            }
            Ok(Frontmatter::NotASkill(why)) => Fate::NotASkill(why.clone()),
            Ok(Frontmatter::Invalid(error)) => Fate::Invalid(error.clone()),
        }
    }

    /// The name and description of a file that is a skill (registered or shadowed).
    pub fn skill(&self) -> Option<(&str, Option<&str>)> {
        match self {
            Fate::Registered { name, description } | Fate::Shadowed { name, description, .. } => {
                Some((name, description.as_deref()))
            }
            _ => None,
        }
    }
}

impl Skills {
    /// The description of a registered skill.
    pub fn description(&self, origin: Origin) -> Description<'_> {
        match origin {
            Origin::Builtin => Description::Builtin,
            Origin::File(index) => match self.found[index].fate.skill() {
                Some((_, Some(text))) => Description::Text(text),
                _ => Description::Missing,
            },
        }
    }

    /// The location opencode prints for a registered skill (not yet escaped).
    pub fn location(&self, origin: Origin) -> String {
        match origin {
            Origin::Builtin => BUILTIN_LOCATION.to_owned(),
            Origin::File(index) => ctxgraph_db::path::display(&self.found[index].path),
        }
    }
}

/// B5.1–B5.7: every SKILL.md opencode would find for this workspace, and its registry.
///
/// Name collisions (B5.7): opencode parses all files concurrently and the last parse to
/// finish writes the registry entry, so its winner is a race (the same fixture gave
/// different winners on repeated runs of the oracle). ctxgraph keeps the first file found,
/// a deterministic choice among opencode's possible ones that also keeps a skill's direct
/// path over a path through a symlink to it, and `lint` reports every collision.
#[salsa::tracked(returns(ref))]
pub fn skills(db: &dyn Db, ws: Workspace) -> Result<Skills, FlagError> {
    let roots = discover::skill_roots(db, ws).as_ref().map_err(Clone::clone)?;
    let mut all_roots = roots.roots.clone();
    let mut found: Vec<Found> = Vec::new();
    let mut seen: HashSet<PathBuf> = HashSet::new();
    let mut add =
        |found: &mut Vec<Found>, path: PathBuf, root: usize, parsed: Result<&Frontmatter, &ReadFailure>| {
            if seen.insert(path.clone()) {
                found.push(Found { path, root, fate: Fate::from_parse(parsed) });
            }
        };
    for (index, root) in roots.roots.iter().enumerate() {
        for path in discover::scan(db, root) {
            let parsed = skill_file(db, db.files().get(db, &path)).as_ref();
            add(&mut found, path, index, parsed);
        }
    }
    // B5.10: each downloaded skill's cache directory, after the local roots.
    let mut pending_downloads = Vec::new();
    for entry in remote::url_entries(db, ws) {
        for (dir, source) in &entry.skills {
            let root =
                Root { dir: dir.clone(), dot: false, source: SkillSource::Url { url: entry.url.clone() } };
            let index = all_roots.len();
            match source {
                remote::UrlSkill::Cached(_) => {
                    for path in discover::scan(db, &root) {
                        let parsed = skill_file(db, db.files().get(db, &path)).as_ref();
                        add(&mut found, path, index, parsed);
                    }
                }
                remote::UrlSkill::Download { url, path } => {
                    match remote::downloaded_skill(db, db.remotes().get(db, url)) {
                        Some(parsed) => add(&mut found, path.clone(), index, Ok(parsed)),
                        None => pending_downloads.push(url.clone()),
                    }
                }
            }
            all_roots.push(root);
        }
    }
    // The registry: the built-in skill first, which any file of its name replaces; among
    // files of one name the first found stays (B5.7).
    let mut by_name: indexmap::IndexMap<String, Origin> = indexmap::IndexMap::new();
    by_name.insert(BUILTIN_NAME.to_owned(), Origin::Builtin);
    for (index, file) in found.iter_mut().enumerate() {
        let Fate::Registered { name, description } = &file.fate else { continue };
        let (name, description) = (name.clone(), description.clone());
        match by_name.get(&name) {
            Some(Origin::File(first)) => file.fate = Fate::Shadowed { name, description, by: *first },
            Some(Origin::Builtin) | None => {
                by_name.insert(name, Origin::File(index));
            }
        }
    }
    let mut registry: Vec<Registered> =
        by_name.into_iter().map(|(name, origin)| Registered { name, origin }).collect();
    registry.sort_by(|a, b| ctxgraph_db::collate::locale_compare(&a.name, &b.name));
    Ok(Skills {
        roots: all_roots,
        pending_downloads,
        urls: remote::url_entries(db, ws).clone(),
        missing_paths: roots.missing_paths.clone(),
        flags: roots.flags.clone(),
        found,
        registry,
    })
}
