//! What every agent's lint reports: the rule codes (`CG001`…, `docs/lint.md`), their levels,
//! findings and the token budgets. The rules themselves live with the profile whose facts
//! they read (opencode's, the other agents', the cross-agent ones).

use serde::Serialize;

/// How bad a finding is. Ordered: `Note < Warning < Error`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing; fails the run only under `--deny notes`.
    Note,
    /// Likely not what the author meant; fails under `--deny warnings`.
    Warning,
    /// Certainly wrong or unsafe; fails the run by default.
    Error,
}

/// The lint rules. Their ids and names are a stable interface; `docs/lint.md` describes
/// each, with the opencode rule it relies on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(into = "&'static str")]
pub enum Code {
    /// CG001: never loaded, because another rule name won the I4 lookup.
    ShadowedRuleFile,
    /// CG002: `AGENTS.md` and a different `CLAUDE.md` in one directory, so opencode and
    /// Claude Code get different rules.
    AgentsBesideClaude,
    /// CG003: rules loaded from outside the repository, so other machines differ.
    OutsideRepository,
    /// CG004: a remote URL whose content nothing checks.
    UnpinnedRemote,
    /// CG005: a likely credential in text sent to the model provider.
    LikelySecret,
    /// CG006: the whole system text is over `--max-total-tokens`.
    PromptOverBudget,
    /// CG007: one rule file's block is over `--max-rule-tokens`.
    RuleOverBudget,
    /// CG008: an `instructions` entry that loads nothing.
    UnmatchedEntry,
    /// CG009: the same text loaded twice, paid for twice.
    DuplicateContent,
    /// CG010: an absolute entry whose directory holds glob characters, which opencode
    /// never expands.
    AbsoluteGlobDirectory,
    /// CG011: a repository-wide "never"/"must" the model sees only after a nearby read.
    NearbyOnlyConstraint,
    /// CG012: a project rule file exactly one of the agents sends (`lint --agent all`).
    SingleAgentRule,
    /// CG013: `GEMINI.md` beside `AGENTS.md` or `CLAUDE.md` with different rules.
    AgentFilesDrift,
    /// CG014: Codex cuts or skips a file: `project_doc_max_bytes` runs out.
    CodexBudgetOverflow,
    /// CG015: an `@import` Gemini CLI does not inline.
    GeminiImportFailed,
    /// CG016: a configured MCP server that could not be used, so its instructions (B4) and
    /// tools are missing.
    McpServerFailed,
    /// CG017: two SKILL.md files declare one skill name; opencode's pick is a race (B5.7).
    SkillShadowed,
    /// CG018: a skill without a description, which opencode never lists (B5.5).
    SkillWithoutDescription,
    /// CG019: the skills block is over the per-block budget (`--max-rule-tokens`).
    SkillListingOverBudget,
    /// CG020: a SKILL.md the agent drops (opencode, Codex): bad or missing frontmatter, a
    /// missing or non-text field.
    SkillNotLoaded,
    /// CG021: one SKILL.md under two paths (through a symlink): opencode lists it under
    /// either, so the skills block changes between starts (B5.7).
    SkillUnderTwoPaths,
    /// CG022: two or more rule files of one agent ordered by a directory's listing, so
    /// their order differs on another disk.
    ListingOrder,
    /// CG023: code the agent runs at start (pi's extensions) can rewrite what it sends, so
    /// no prediction of it is certain.
    UnpredictableExtension,
    /// CG024: the skill listing is over the agent's own budget (Codex's CX13): descriptions
    /// are shortened, or skills left out.
    SkillDescriptionsCut,
    /// CG025: a pattern meant to keep rule files out that can match no file (Claude Code's
    /// `claudeMdExcludes` written relative to the project, CC14), so nothing is kept out.
    ExcludeMatchesNothing,
    /// CG026: a context file name the project's settings give (`context.fileName`) that no
    /// folder the agent searched holds, so the setting adds nothing.
    ContextNameFindsNothing,
}

impl Code {
    /// Every code in id order: SARIF's rule table indexes into it.
    pub const ALL: [Code; 26] = [
        Code::ShadowedRuleFile,
        Code::AgentsBesideClaude,
        Code::OutsideRepository,
        Code::UnpinnedRemote,
        Code::LikelySecret,
        Code::PromptOverBudget,
        Code::RuleOverBudget,
        Code::UnmatchedEntry,
        Code::DuplicateContent,
        Code::AbsoluteGlobDirectory,
        Code::NearbyOnlyConstraint,
        Code::SingleAgentRule,
        Code::AgentFilesDrift,
        Code::CodexBudgetOverflow,
        Code::GeminiImportFailed,
        Code::McpServerFailed,
        Code::SkillShadowed,
        Code::SkillWithoutDescription,
        Code::SkillListingOverBudget,
        Code::SkillNotLoaded,
        Code::SkillUnderTwoPaths,
        Code::ListingOrder,
        Code::UnpredictableExtension,
        Code::SkillDescriptionsCut,
        Code::ExcludeMatchesNothing,
        Code::ContextNameFindsNothing,
    ];

    /// `CG001`…: what output, `--format json` and SARIF `ruleId` show.
    pub fn id(self) -> &'static str {
        match self {
            Code::ShadowedRuleFile => "CG001",
            Code::AgentsBesideClaude => "CG002",
            Code::OutsideRepository => "CG003",
            Code::UnpinnedRemote => "CG004",
            Code::LikelySecret => "CG005",
            Code::PromptOverBudget => "CG006",
            Code::RuleOverBudget => "CG007",
            Code::UnmatchedEntry => "CG008",
            Code::DuplicateContent => "CG009",
            Code::AbsoluteGlobDirectory => "CG010",
            Code::NearbyOnlyConstraint => "CG011",
            Code::SingleAgentRule => "CG012",
            Code::AgentFilesDrift => "CG013",
            Code::CodexBudgetOverflow => "CG014",
            Code::GeminiImportFailed => "CG015",
            Code::McpServerFailed => "CG016",
            Code::SkillShadowed => "CG017",
            Code::SkillWithoutDescription => "CG018",
            Code::SkillListingOverBudget => "CG019",
            Code::SkillNotLoaded => "CG020",
            Code::SkillUnderTwoPaths => "CG021",
            Code::ListingOrder => "CG022",
            Code::UnpredictableExtension => "CG023",
            Code::SkillDescriptionsCut => "CG024",
            Code::ExcludeMatchesNothing => "CG025",
            Code::ContextNameFindsNothing => "CG026",
        }
    }

    /// The kebab-case name beside the id, readable where the number is not.
    pub fn name(self) -> &'static str {
        match self {
            Code::ShadowedRuleFile => "shadowed-rule-file",
            Code::AgentsBesideClaude => "agents-beside-claude",
            Code::OutsideRepository => "outside-repository",
            Code::UnpinnedRemote => "unpinned-remote",
            Code::LikelySecret => "likely-secret",
            Code::PromptOverBudget => "prompt-over-budget",
            Code::RuleOverBudget => "rule-over-budget",
            Code::UnmatchedEntry => "unmatched-entry",
            Code::DuplicateContent => "duplicate-content",
            Code::AbsoluteGlobDirectory => "absolute-glob-directory",
            Code::NearbyOnlyConstraint => "nearby-only-constraint",
            Code::SingleAgentRule => "single-agent-rule",
            Code::AgentFilesDrift => "agent-files-drift",
            Code::CodexBudgetOverflow => "codex-budget-overflow",
            Code::GeminiImportFailed => "gemini-import-failed",
            Code::McpServerFailed => "mcp-server-failed",
            Code::SkillShadowed => "skill-shadowed",
            Code::SkillWithoutDescription => "skill-without-description",
            Code::SkillListingOverBudget => "skill-listing-over-budget",
            Code::SkillNotLoaded => "skill-not-loaded",
            Code::SkillUnderTwoPaths => "skill-under-two-paths",
            Code::ListingOrder => "listing-order",
            Code::UnpredictableExtension => "unpredictable-extension",
            Code::SkillDescriptionsCut => "skill-descriptions-cut",
            Code::ExcludeMatchesNothing => "exclude-matches-nothing",
            Code::ContextNameFindsNothing => "context-name-finds-nothing",
        }
    }

    /// The default level: errors for what is certainly wrong or leaks, warnings otherwise.
    pub fn severity(self) -> Severity {
        match self {
            Code::LikelySecret | Code::AbsoluteGlobDirectory => Severity::Error,
            _ => Severity::Warning,
        }
    }

    /// One line on what the rule checks (SARIF `shortDescription`).
    pub fn summary(self) -> &'static str {
        match self {
            Code::ShadowedRuleFile => "A rule file is ignored because another rule file name won",
            Code::AgentsBesideClaude => "AGENTS.md and CLAUDE.md with different content in one directory",
            Code::OutsideRepository => "Rules are loaded from outside the repository",
            Code::UnpinnedRemote => "A remote instructions URL has no integrity pin",
            Code::LikelySecret => "A rule file sent to the model provider contains a likely secret",
            Code::PromptOverBudget => "The system prompt is over the token budget",
            Code::RuleOverBudget => "One rule file is over the token budget",
            Code::UnmatchedEntry => "An instructions entry matches no file",
            Code::DuplicateContent => "The same content is loaded twice",
            Code::AbsoluteGlobDirectory => {
                "An absolute instructions entry has glob characters in its directory"
            }
            Code::NearbyOnlyConstraint => {
                "Constraints for the whole repository live only in a rule file the read tool attaches"
            }
            Code::SingleAgentRule => "A project rule file only one of the agents sends",
            Code::AgentFilesDrift => {
                "GEMINI.md and AGENTS.md or CLAUDE.md with different rules in one directory"
            }
            Code::CodexBudgetOverflow => "Codex cuts or skips a rule file: project_doc_max_bytes runs out",
            Code::GeminiImportFailed => "An @import that Gemini CLI does not inline",
            Code::McpServerFailed => "A configured MCP server could not be used",
            Code::SkillShadowed => "Two SKILL.md files declare the same skill name",
            Code::SkillWithoutDescription => "A skill has no description, so the model never sees it",
            Code::SkillListingOverBudget => "The skills listing is over the token budget",
            Code::SkillNotLoaded => "A SKILL.md is dropped by the agent",
            Code::SkillUnderTwoPaths => {
                "One skill under two paths, so opencode's skills block changes between its starts"
            }
            Code::ListingOrder => {
                "Rule files are sent in the order the disk lists them, which differs between machines"
            }
            Code::UnpredictableExtension => {
                "Code the agent runs at start can rewrite what it sends, so no prediction is certain"
            }
            Code::SkillDescriptionsCut => {
                "The skill listing is over the agent's budget: descriptions are cut or skills left out"
            }
            Code::ExcludeMatchesNothing => {
                "A pattern meant to keep rule files out matches no file, so nothing is kept out"
            }
            Code::ContextNameFindsNothing => {
                "A context file name in the project's settings that no searched folder holds"
            }
        }
    }
}

/// Serialised as its id (`CG001` …, the `into` above), so its schema is the list of ids.
#[cfg(feature = "schema")]
impl schemars::JsonSchema for Code {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Code".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let ids: Vec<&str> = Code::ALL.iter().map(|code| code.id()).collect();
        schemars::json_schema!({
            "description": "The rule's id (docs/lint.md).",
            "type": "string",
            "enum": ids,
        })
    }
}

impl From<Code> for &'static str {
    fn from(code: Code) -> Self {
        code.id()
    }
}

/// CG005's hint, whichever agent sends the file.
pub const SECRET_HINT: &str =
    "remove it from the file and rotate it; point to where the secret lives instead";

/// What a finding points at.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Location {
    /// A file, or a URL.
    pub uri: String,
    /// 1-based line, when the finding is about one place in the file.
    pub line: Option<usize>,
    /// 1-based column, with `line`.
    pub column: Option<usize>,
}

/// One problem lint found: rendered as text, JSON and SARIF results alike.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Finding {
    /// Which rule fired.
    pub code: Code,
    /// The code's level (see [`Code::severity`]).
    pub severity: Severity,
    /// What is wrong, naming the files involved.
    pub message: String,
    /// Where to look; `None` when the finding is about no single file or entry.
    pub location: Option<Location>,
    /// What to do about it.
    pub hint: String,
}

impl Location {
    /// Where `value` is written as a JSON string in the settings file `file`: the first
    /// line that holds it, quoted (the whole file when it cannot be found there, as for a
    /// value written with escapes). Columns count characters.
    pub fn at_json_string(db: &dyn crate::Db, file: &std::path::Path, value: &str) -> Location {
        let uri = crate::path::display(file);
        let quoted = serde_json::to_string(value).unwrap_or_default();
        let Ok(decoded) = crate::files::file_text(db, db.files().get(db, file)) else {
            return Location { uri, line: None, column: None };
        };
        match decoded.text.find(&quoted) {
            Some(offset) => {
                let at = crate::lines::Lines::new(&decoded.text).locate(offset, crate::lines::Column::Chars);
                Location { uri, line: Some(at.line), column: Some(at.column) }
            }
            None => Location { uri, line: None, column: None },
        }
    }
}

impl Finding {
    /// A finding about a whole file (no line), at the code's severity.
    pub fn about_file(code: Code, message: String, file: &std::path::Path, hint: &str) -> Finding {
        Finding {
            code,
            severity: code.severity(),
            message,
            location: Some(Location { uri: crate::path::display(file), line: None, column: None }),
            hint: hint.to_owned(),
        }
    }
}

/// Token budgets, in the counter's tokens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// The whole system text.
    pub total: usize,
    /// One rule file's block.
    pub rule: usize,
}

impl Default for Budget {
    /// Generous defaults: a quarter of a 32k-token window for all rules, 4k for one file.
    fn default() -> Self {
        Budget { total: 8_000, rule: 4_000 }
    }
}
