//! The page's data: plain values read off the engine's answers, serialised once as the JSON
//! the page embeds (and its snapshot tests pin), and rendered as the page's tables.

use std::fmt::Write as _;

use serde::Serialize;

use ctxgraph_check::ScenarioReport;
use ctxgraph_engine::answers::explain::SessionExplanation;

/// Everything one page shows.
#[derive(Serialize)]
pub struct Page {
    /// The working directory the agents are started in, as paths are printed.
    pub cwd: String,
    /// The directory the map's paths are relative to: the git root, else `cwd`.
    pub root: String,
    /// The tokenizer every count is in.
    pub tokenizer: &'static str,
    /// One per agent, in the engine's profile order.
    pub agents: Vec<AgentBudget>,
    /// Every directory holding a rule file any agent looked at, in path order.
    pub map: Vec<RuleDir>,
    /// `--session`: the session explained.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<SessionExplanation>,
    /// `--agent NAME --session RECORD`: what each rule-like file cost over that agent's
    /// recorded session (`session rules`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_costs: Option<SessionCostsPage>,
    /// `--scenarios` / `check --format html`: each scenario against its snapshot.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub changes: Option<Changes>,
}

/// One agent's recorded session: what `session rules --agent NAME --format json` answers.
#[derive(Serialize)]
pub struct SessionCostsPage {
    /// The `--agent` name.
    pub agent: &'static str,
    /// The name in prose.
    pub title: &'static str,
    /// The record, as given.
    pub record: String,
    /// Per step and over the session.
    pub costs: ctxgraph_engine::answers::profile::SessionCosts,
}

/// One agent's context from `cwd`: what `build --agent <its name>` prints, block by block.
#[derive(Serialize)]
pub struct AgentBudget {
    /// The `--agent` name.
    pub agent: &'static str,
    /// The name in prose.
    pub title: &'static str,
    /// The release reproduced.
    pub release: &'static str,
    /// What the layout covers (opencode: its system section, or the whole message).
    pub scope: String,
    /// Bytes of the whole text.
    pub bytes: usize,
    /// Tokens of the whole text.
    pub tokens: usize,
    /// Tokens of the text around the blocks (the agent's wrappers and separators): the
    /// whole text's less the blocks' (token counts do not add up exactly across cuts).
    pub framing_tokens: usize,
    /// In text order.
    pub blocks: Vec<BudgetBlock>,
    /// Files it looked at and did not send.
    pub left_out: Vec<LeftOutFile>,
    /// Why it would send none of this after all, or what is missing from it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// It would not start here: why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// It would send none of its text after all (Copilot over its model's budget, CP13);
    /// the reason is among `notes`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub sends_nothing: bool,
}

impl AgentBudget {
    /// The blocks of rule files it sends from here: not its own text (environment,
    /// prompts), not the home folder's files (sent from anywhere), none when it would not
    /// start or would send nothing.
    pub fn rule_blocks_from_here(&self) -> impl Iterator<Item = &BudgetBlock> {
        let sends = self.error.is_none() && !self.sends_nothing;
        self.blocks.iter().filter(move |b| sends && b.kind == Kind::RuleFile && !b.from_home)
    }

    /// Tokens of [`AgentBudget::rule_blocks_from_here`].
    pub fn rule_tokens_from_here(&self) -> usize {
        self.rule_blocks_from_here().map(|b| b.tokens).sum()
    }
}

/// What a block is, for its colour and the legend.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// The working directory, date, platform lines.
    Environment,
    /// A rule file from disk.
    RuleFile,
    /// A document fetched from a URL.
    Remote,
    /// The agent's own prompt text (the model prompt, an agent prompt).
    Prompt,
    /// Listings of tools: skills, MCP servers' instructions, references.
    Tools,
    /// ctxgraph's workspace memory.
    Memory,
    /// Any other text the agent writes itself.
    AgentText,
}

impl Kind {
    /// Every kind, in legend order.
    pub const ALL: [Kind; 7] = [
        Kind::Prompt,
        Kind::Environment,
        Kind::RuleFile,
        Kind::Remote,
        Kind::Tools,
        Kind::Memory,
        Kind::AgentText,
    ];

    /// The class suffix and JSON word.
    pub fn word(self) -> &'static str {
        match self {
            Kind::Environment => "environment",
            Kind::RuleFile => "rule_file",
            Kind::Remote => "remote",
            Kind::Prompt => "prompt",
            Kind::Tools => "tools",
            Kind::Memory => "memory",
            Kind::AgentText => "agent_text",
        }
    }

    /// The legend's words.
    pub fn label(self) -> &'static str {
        match self {
            Kind::Environment => "environment",
            Kind::RuleFile => "rule file",
            Kind::Remote => "remote document",
            Kind::Prompt => "model / agent prompt",
            Kind::Tools => "skills, MCP, references",
            Kind::Memory => "memory",
            Kind::AgentText => "agent's own text",
        }
    }
}

/// One block of an agent's text.
#[derive(Serialize)]
pub struct BudgetBlock {
    /// What it is.
    pub kind: Kind,
    /// A short name: the file relative to the root, or the agent text's name.
    pub label: String,
    /// What the text comes from, as `build` prints it.
    pub source: String,
    /// Where the agent puts it.
    pub placement: String,
    /// Byte range in the agent's text.
    pub start: usize,
    /// End of that range.
    pub end: usize,
    /// `end - start`.
    pub bytes: usize,
    /// Its tokens.
    pub tokens: usize,
    /// blake3 of its bytes.
    pub hash: String,
    /// `sent`, `cut` or `inlined`.
    pub status: &'static str,
    /// The rule that put it there.
    pub rule: &'static str,
    /// Why, with the rule behind it.
    pub reason: String,
    /// How it got there, from the agent's discovery to its place in the text.
    pub provenance: Vec<String>,
    /// Its first lines, as sent.
    pub first_lines: String,
    /// A file of the home folder (outside the project): sent from every directory, so
    /// not counted as what the agent sends from here.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub from_home: bool,
}

/// A file an agent looked at and left out.
#[derive(Serialize)]
pub struct LeftOutFile {
    /// Relative to the root where it is below it.
    pub file: String,
    /// What became of it, as one word.
    pub fate: &'static str,
    /// The rule behind that.
    pub rule: &'static str,
    /// Why.
    pub reason: String,
}

/// A directory of the map.
#[derive(Serialize)]
pub struct RuleDir {
    /// Relative to the root (`.` for the root itself); absolute outside it.
    pub dir: String,
    /// Where it is: in the project, in the home folder, or elsewhere outside the project.
    pub place: Place,
    /// Its rule files, by name.
    pub files: Vec<RuleFile>,
}

/// Where a directory of the map is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Place {
    /// Below the root.
    Project,
    /// Below the home folder (and not the project).
    Home,
    /// Anywhere else (a directory above the root, …).
    Outside,
}

impl Place {
    /// Words after a path, for the page.
    pub fn describe(self) -> &'static str {
        match self {
            Place::Project => "in the project",
            Place::Home => "in the home folder",
            Place::Outside => "outside the project",
        }
    }
}

/// One rule file and what each agent does with it.
#[derive(Serialize)]
pub struct RuleFile {
    /// Its name in the directory; bytes that are not UTF-8 written `\xNN`.
    pub name: String,
    /// Its path, relative to the root.
    pub path: String,
    /// One per agent shown, in profile order.
    pub fates: Vec<Fate>,
}

/// One agent's verdict on one rule file (the engine's `AgentFate`).
#[derive(Serialize)]
pub struct Fate {
    /// The `--agent` name.
    pub agent: &'static str,
    /// `sent`, `cut`, `inlined`, `on_read` or `not_sent`.
    pub status: &'static str,
    /// Where the text goes, when it goes anywhere.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placement: Option<&'static str>,
    /// The rule that decides the fate (the profile's [`AgentFate::rule`]).
    ///
    /// [`AgentFate::rule`]: ctxgraph_db::profile::AgentFate::rule
    pub rule: &'static str,
    /// Why, as `explain --agent all FILE` prints it.
    pub reason: String,
    /// What to do about it, as `explain` says it (opencode's hints).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

/// `check` against the snapshots.
#[derive(Serialize)]
pub struct Changes {
    /// The scenarios file, relative to `<repo>`.
    pub file: String,
    /// Each scenario's result, in file order.
    pub scenarios: Vec<ScenarioReport>,
}

/// A name or path as text: its UTF-8 as it is, each byte that is not UTF-8 as `\xNN`, so
/// two names never print alike and nothing is lost to U+FFFD.
pub fn escaped(name: &std::ffi::OsStr) -> String {
    let mut out = String::new();
    for chunk in name.as_encoded_bytes().utf8_chunks() {
        out.push_str(chunk.valid());
        for byte in chunk.invalid() {
            let _ = write!(out, "\\x{byte:02x}");
        }
    }
    out
}

/// The first `lines` lines of `text`, each cut at `width` characters.
pub fn first_lines(text: &str, lines: usize, width: usize) -> String {
    let mut out = String::new();
    for line in text.lines().take(lines) {
        if !out.is_empty() {
            out.push('\n');
        }
        if line.chars().count() > width {
            out.extend(line.chars().take(width));
            out.push('…');
        } else {
            out.push_str(line);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn names_that_are_not_utf8_are_escaped() {
        use std::os::unix::ffi::OsStrExt;
        let name = std::ffi::OsStr::from_bytes(b"zqnonutf\xe9.md");
        assert_eq!(escaped(name), "zqnonutf\\xe9.md");
        assert_eq!(escaped(std::ffi::OsStr::new("café.md")), "café.md");
    }

    #[test]
    fn first_lines_are_cut_by_count_and_width() {
        assert_eq!(first_lines("a\nbb\nccc\n", 2, 10), "a\nbb");
        assert_eq!(first_lines("abcdef", 3, 4), "abcd…");
    }
}
