//! The scenarios file: parsed with positions, validated against the repository.
//!
//! ```toml
//! [scenario.api]
//! cwd = "packages/api"                        # relative to this file; default "."
//! reads = ["packages/api/src/handlers/users.ts"]  # files the model reads (nearby rules)
//! section = "system"                          # system | environment | instructions | message
//! opencode_agent = "build"                    # with section = "message": the opencode agent
//! model = "anthropic/claude-sonnet-4-5"        # the model line of the environment block
//! home = "ci/home"                            # HOME; default: none (a path that does not exist)
//! config_dir = "ci/global/opencode"           # plays ~/.config/opencode; default: <home>/.config/opencode
//! env = { OPENCODE_DISABLE_CLAUDE_CODE = "1" } # values may use <repo> and <home>
//! date = "2026-01-01"                         # the default
//! platform = "linux"                          # linux | darwin | win32; the default is linux
//! agent = "opencode"                          # any `--agent` name (default opencode): whose context is pinned
//! mcp = true                                  # connect to the config's MCP servers (default: off)
//! ```
//!
//! `section = "message"` pins the whole system message, opencode's own texts included: it
//! needs the opencode installation (`$CTXGRAPH_OPENCODE` or `opencode` on PATH, read outside
//! the jail) and fails, saying so, without one.
//!
//! With `agent = "codex"` the snapshot pins the `AGENTS.md` message Codex sends (CX4), and
//! with `section = "request"` its skills message before it (CX10); for any agent whose
//! profile builds it, `section = "request"` pins its whole first request. `reads`, the other
//! `section`s, `model`, `fetch_remote` and `mcp` are opencode's and are refused there.
//! With `agent = "claude-code"` it pins Claude Code's rule-file `<system-reminder>` (CC2),
//! its own wording kept as `<prose:blake3=…>` fingerprints (so no installation is needed and
//! none of its text lands in the repository), and after each of `reads` what the Read
//! attaches (CC11). `agent = "qwen-code"` pins Qwen Code's context and rule blocks (QW6),
//! the output-language file it writes kept as a fingerprint the same way, and after each of
//! `reads` the `paths:` rules the read attaches (QW10). `agent = "kilo"` pins Kilo Code's
//! `Instructions from:` parts (KI5) and after each of `reads` what the read attaches (KI10).
//! `agent = "aider"` pins Aider's
//! read-only message (AI4), its files in an order of ctxgraph's (by path): Aider's own is a
//! Python set's (AI5), so naming them in another order leaves the snapshot as it is.
//!
//! `mcp = true` spawns the config's local MCP servers (with the scenario's environment only:
//! name commands by absolute path or set `PATH` in `env`) and connects to remote ones, so the
//! MCP block (B4) is pinned too; off by default, a snapshot depends on no running process.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ctxgraph_db::agent::Agent;
use ctxgraph_db::lines::{Column, LineColumn, Lines};
use ctxgraph_db::path;
use ctxgraph_db::profile::Request;
use ctxgraph_db::profile::Section as ProfileSection;
use serde::Deserialize;
use toml::Spanned;

/// The date every scenario sees unless it names one.
pub const DEFAULT_DATE: &str = "2026-01-01";
/// `HOME` for a scenario without one. Outside every repository, so it reads as missing.
pub const NO_HOME: &str = "/nonexistent/ctxgraph-scenario/home";

/// One scenario, validated: every path absolute and inside the repository.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// The scenario's name: its `[scenario.<name>]` key and its snapshot's file name.
    pub name: String,
    /// The working directory opencode would start in.
    pub cwd: PathBuf,
    /// Files the agent reads, whose nearby rules the snapshot shows after the prompt.
    pub reads: Vec<PathBuf>,
    /// The part of what the agent sends that is pinned: its rules text, or a section its
    /// profile builds (opencode's environment, instructions or whole message; another
    /// agent's whole first request).
    pub section: ProfileSection,
    /// The model whose prompt is built, when it matters to the text (`PROVIDER/ID`).
    pub model: Option<String>,
    /// `None`: the scenario has no home directory.
    pub home: Option<PathBuf>,
    /// The directory playing `~/.config/opencode`; `None` for the default under `home`.
    pub config_dir: Option<PathBuf>,
    /// Placeholders already expanded.
    pub env: BTreeMap<String, String>,
    /// `Date.toDateString()` of the pinned date, e.g. `Thu Jan 01 2026`.
    pub date: String,
    /// The `process.platform` the environment block names.
    pub platform: &'static str,
    /// Fetch remote `instructions` URLs (off by default: a scenario touches no network).
    pub fetch_remote: bool,
    /// Connect to the config's MCP servers (off by default: a scenario starts no process).
    pub mcp: bool,
    /// Whose context the snapshot pins.
    pub agent: Agent,
    /// With `section = "message"`: the opencode agent (`build` by default).
    pub opencode_agent: String,
}

impl Scenario {
    /// The section's name as the scenarios file and snapshot headers write it.
    pub fn section_name(&self) -> &'static str {
        section_key(self.section)
    }

    /// The `-c` settings the scenario's keys stand for: opencode's `model` and, for its
    /// whole message, `agent`.
    pub fn settings(&self) -> Vec<(String, String)> {
        let mut settings = Vec::new();
        if let Some(model) = &self.model {
            settings.push(("model".to_owned(), model.clone()));
        }
        if self.section == ProfileSection::Message {
            settings.push(("agent".to_owned(), self.opencode_agent.clone()));
        }
        settings
    }

    /// The home directory the scenario runs with: its own, or [`NO_HOME`].
    pub fn home_or_none(&self) -> PathBuf {
        self.home.clone().unwrap_or_else(|| PathBuf::from(NO_HOME))
    }
}

/// Why a scenarios file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ScenariosError {
    #[error("cannot read {}: {source}", path.display())]
    /// The file could not be read.
    Read {
        /// The scenarios file.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// Invalid TOML or an invalid value, at a position in the file.
    #[error("{}:{}:{}: {message}", path.display(), at.line, at.column)]
    Invalid {
        /// The scenarios file.
        path: PathBuf,
        /// What is wrong.
        message: String,
        /// Where.
        at: Position,
    },
    #[error("no scenario named {name:?} in {} (it has: {known})", path.display())]
    /// A scenario asked for by name is not in the file.
    UnknownScenario {
        /// The scenarios file.
        path: PathBuf,
        /// The name asked for.
        name: String,
        /// The names the file has, comma-separated.
        known: String,
    },
    #[error(
        "no {} between {} and its worktree root {}; propose one with `ctxgraph init-check`, or pass --scenarios",
        crate::SCENARIOS_FILE,
        start.display(),
        root.display()
    )]
    /// No scenarios file between the starting directory and its worktree root.
    NotFound {
        /// Where the search started.
        start: PathBuf,
        /// Where it stopped.
        root: PathBuf,
    },
}

/// A 1-based line and column (in characters), with the line's text for a snippet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Position {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// The line's text, without its line break.
    pub line_text: String,
}

impl Position {
    /// The position of byte `offset` in `text`.
    pub fn of(text: &str, offset: usize) -> Self {
        let lines = Lines::new(text);
        let LineColumn { line, column } = lines.locate(offset, Column::Chars);
        Position { line, column, line_text: lines.line_text(line).to_owned() }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    scenario: BTreeMap<Spanned<String>, Spanned<RawScenario>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScenario {
    cwd: Option<Spanned<String>>,
    #[serde(default)]
    reads: Vec<Spanned<String>>,
    #[serde(default)]
    section: SectionName,
    model: Option<Spanned<String>>,
    home: Option<Spanned<String>>,
    config_dir: Option<Spanned<String>>,
    #[serde(default)]
    env: BTreeMap<Spanned<String>, Spanned<String>>,
    date: Option<Spanned<String>>,
    #[serde(default)]
    platform: Platform,
    #[serde(default)]
    fetch_remote: bool,
    #[serde(default)]
    mcp: bool,
    agent: Option<Spanned<String>>,
    opencode_agent: Option<Spanned<String>>,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "lowercase")]
enum SectionName {
    #[default]
    System,
    Environment,
    Instructions,
    Message,
    Request,
}

/// node's `process.platform` values opencode distinguishes.
#[derive(Default, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Platform {
    #[default]
    Linux,
    Darwin,
    Win32,
}

/// The scenario's keys against what `agent`'s profile builds and takes: the section among
/// its sections, `reads` only for an agent that attaches rule files to reads, `model` and
/// `opencode_agent` only where the profile takes them as settings (and their values as it
/// reads them), `fetch_remote` and `mcp` only for a profile that waits on remote documents
/// or MCP servers in some section. The error names the key and where it is.
fn check_against_profile(
    raw: &RawScenario,
    agent: Agent,
    section: ProfileSection,
    at: usize,
) -> Result<(), (String, usize)> {
    let profile = ctxgraph_engine::profiles::profile(agent);
    let title = profile.title();
    let built: Vec<ProfileSection> =
        std::iter::once(ProfileSection::Rules).chain(profile.sections().iter().copied()).collect();
    if !built.contains(&section) {
        let names: Vec<&str> = built.iter().map(|s| section_key(*s)).collect();
        return Err((
            format!("section = \"{}\": {title} builds only {}", section_key(section), names.join(", ")),
            at,
        ));
    }
    let waits = built
        .iter()
        .map(|s| profile.waits_on(*s))
        .fold((false, false), |(remote, mcp), w| (remote || w.remote_documents, mcp || w.mcp));
    let takes = |setting: &str| profile.settings().contains(&setting);
    let key_at = |key: &Option<Spanned<String>>| key.as_ref().map_or(at, |k| k.span().start);
    let refused = [
        (
            !raw.reads.is_empty() && !profile.attaches_on_read(),
            "reads",
            "attaches nothing to a file its model reads",
            at,
        ),
        (raw.model.is_some() && !takes("model"), "model", "takes no model setting", key_at(&raw.model)),
        (
            raw.opencode_agent.is_some() && !takes("agent"),
            "opencode_agent",
            "has no agents of its own",
            key_at(&raw.opencode_agent),
        ),
        (raw.fetch_remote && !waits.0, "fetch_remote", "fetches no remote document", at),
        (raw.mcp && !waits.1, "mcp", "starts no MCP server", at),
    ];
    if let Some((_, key, why, at)) = refused.into_iter().find(|(set, ..)| *set) {
        return Err((format!("`{key}`: {title} {why}"), at));
    }
    // The values, as the profile reads them (a model that is not `PROVIDER/ID`).
    let mut settings = Vec::new();
    if let Some(model) = &raw.model {
        settings.push(("model".to_owned(), model.get_ref().clone()));
    }
    let request = Request { section, settings, wording: None };
    profile.check_settings(&request).map_err(|err| (err.to_string(), key_at(&raw.model)))
}

/// A section as a scenarios file writes it (`system`: written so since before every agent
/// had a rules text).
fn section_key(section: ProfileSection) -> &'static str {
    match section {
        ProfileSection::Rules => "system",
        other => other.name(),
    }
}

/// What [`parse`] needs to know about where the file sits.
pub struct Anchor<'a> {
    /// The scenarios file (for messages).
    pub file: &'a Path,
    /// Its directory, canonical: relative paths start here.
    pub base: &'a Path,
    /// `<repo>`, canonical: every path must stay inside it.
    pub repo: &'a Path,
}

/// Parses and validates a scenarios file. Scenarios come out sorted by name.
pub fn parse(text: &str, anchor: &Anchor<'_>) -> Result<Vec<Scenario>, ScenariosError> {
    let invalid = |message: String, offset: usize| ScenariosError::Invalid {
        path: anchor.file.to_path_buf(),
        message,
        at: Position::of(text, offset),
    };
    let raw: RawFile = toml::from_str(text).map_err(|err| {
        let offset = err.span().map_or(0, |span| span.start);
        invalid(err.message().trim_end().to_owned(), offset)
    })?;
    let mut scenarios = Vec::with_capacity(raw.scenario.len());
    for (name, raw) in raw.scenario {
        let name_at = name.span().start;
        let name = name.into_inner();
        if !is_file_name(&name) {
            return Err(invalid(
                format!(
                    "scenario name {name:?} cannot name a snapshot file: use letters, digits, '-', '_' and '.', not starting with '.'"
                ),
                name_at,
            ));
        }
        let at = raw.span().start;
        scenarios.push(validate(name, at, raw.into_inner(), anchor, &invalid)?);
    }
    Ok(scenarios)
}

fn is_file_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('.')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// `at`: where the scenario's table starts, for an error no single key explains.
fn validate(
    name: String,
    at: usize,
    raw: RawScenario,
    anchor: &Anchor<'_>,
    invalid: &impl Fn(String, usize) -> ScenariosError,
) -> Result<Scenario, ScenariosError> {
    // A path from the file: relative to its directory, lexically normalised, and inside
    // <repo> (nothing else exists for a scenario).
    let inside = |value: &Spanned<String>, what: &str| -> Result<PathBuf, ScenariosError> {
        let resolved = path::resolve(anchor.base, value.get_ref());
        if resolved.starts_with(anchor.repo) {
            Ok(resolved)
        } else {
            Err(invalid(
                format!(
                    "{what} {:?} is outside the repository {}: a scenario sees nothing else",
                    value.get_ref(),
                    anchor.repo.display()
                ),
                value.span().start,
            ))
        }
    };
    let directory = |value: &Spanned<String>, what: &str| -> Result<PathBuf, ScenariosError> {
        let dir = inside(value, what)?;
        match std::fs::canonicalize(&dir) {
            Ok(real) if real.is_dir() && real.starts_with(anchor.repo) => Ok(real),
            Ok(real) if real.is_dir() => Err(invalid(
                format!(
                    "{what} {:?} resolves to {}, outside the repository",
                    value.get_ref(),
                    real.display()
                ),
                value.span().start,
            )),
            Ok(_) => {
                Err(invalid(format!("{what} {:?} is not a directory", value.get_ref()), value.span().start))
            }
            Err(err) => Err(invalid(format!("{what} {:?}: {err}", value.get_ref()), value.span().start)),
        }
    };

    let agent = match &raw.agent {
        Some(agent) => agent.get_ref().parse::<Agent>().map_err(|e| invalid(e, agent.span().start))?,
        None => Agent::default(),
    };
    let section = match raw.section {
        SectionName::System => ProfileSection::Rules,
        SectionName::Environment => ProfileSection::Environment,
        SectionName::Instructions => ProfileSection::Instructions,
        SectionName::Message => ProfileSection::Message,
        SectionName::Request => ProfileSection::Request,
    };
    check_against_profile(&raw, agent, section, at).map_err(|(message, at)| invalid(message, at))?;
    if let Some(name) = &raw.opencode_agent
        && !matches!(raw.section, SectionName::Message)
    {
        return Err(invalid("`opencode_agent` needs section = \"message\"".to_owned(), name.span().start));
    }
    let cwd = match &raw.cwd {
        Some(cwd) => directory(cwd, "cwd")?,
        None => anchor.base.to_path_buf(),
    };
    let mut reads = Vec::with_capacity(raw.reads.len());
    for read in &raw.reads {
        let file = inside(read, "read")?;
        if !file.is_file() {
            return Err(invalid(format!("read {:?} is not a file", read.get_ref()), read.span().start));
        }
        reads.push(file);
    }
    let model = raw.model.as_ref().map(|model| model.get_ref().clone());
    let home = raw.home.as_ref().map(|home| directory(home, "home")).transpose()?;
    let config_dir = match &raw.config_dir {
        Some(value) => {
            let dir = directory(value, "config_dir")?;
            // opencode finds its global config as $XDG_CONFIG_HOME/opencode (P1): the
            // scenario sets XDG_CONFIG_HOME to the parent, so the name must match.
            if dir.file_name().is_none_or(|n| n != "opencode") {
                return Err(invalid(
                    format!(
                        "config_dir {:?} must be a directory named `opencode`: opencode reads its global config from $XDG_CONFIG_HOME/opencode",
                        value.get_ref()
                    ),
                    value.span().start,
                ));
            }
            Some(dir)
        }
        None => None,
    };
    let home_text = path::display(home.as_deref().unwrap_or(Path::new(NO_HOME)));
    let repo_text = path::display(anchor.repo);
    let mut env = BTreeMap::new();
    for (key, value) in raw.env {
        if key.get_ref() == "HOME" {
            return Err(invalid(
                "set the home directory with `home = \"…\"`, not env.HOME".to_owned(),
                key.span().start,
            ));
        }
        let value = value.into_inner().replace("<repo>", &repo_text).replace("<home>", &home_text);
        env.insert(key.into_inner(), value);
    }
    let date = raw.date.as_ref().map_or(DEFAULT_DATE, |d| d.get_ref().as_str());
    let date = date
        .parse::<jiff::civil::Date>()
        .map_err(|err| {
            invalid(
                format!("date {date:?} is not a YYYY-MM-DD date: {err}"),
                raw.date.as_ref().map_or(0, |d| d.span().start),
            )
        })?
        .strftime("%a %b %d %Y")
        .to_string();
    Ok(Scenario {
        name,
        cwd,
        reads,
        section,
        opencode_agent: raw
            .opencode_agent
            .as_ref()
            .map_or_else(|| "build".to_owned(), |a| a.get_ref().clone()),
        model,
        home,
        config_dir,
        env,
        date,
        platform: match raw.platform {
            Platform::Linux => "linux",
            Platform::Darwin => "darwin",
            Platform::Win32 => "win32",
        },
        fetch_remote: raw.fetch_remote,
        mcp: raw.mcp,
        agent,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_lines_and_characters() {
        let text = "a = 1\n[é]\nbad";
        assert_eq!(Position::of(text, 0), Position { line: 1, column: 1, line_text: "a = 1".into() });
        assert_eq!(Position::of(text, 11), Position { line: 3, column: 1, line_text: "bad".into() });
        // The column after a two-byte character counts it once.
        assert_eq!(Position::of(text, 9).column, 3);
    }

    #[test]
    fn scenario_names_must_be_file_names() {
        assert!(is_file_name("packages-api_v2.1"));
        for bad in ["", ".hidden", "a/b", "a b", "..", "ü"] {
            assert!(!is_file_name(bad), "{bad:?}");
        }
    }
}
