//! G1–G6: opencode's agents as 1.18.33 resolves them (the built-ins, then config
//! `agent.*`/`mode.*`), each with its permission ruleset, and the two questions other stages
//! ask of a ruleset: [`Ruleset::evaluate`] (G5, last matching rule wins) and
//! [`Ruleset::is_tool_disabled`] (G6, what B4 and B5 drop).
//!
//! Everything here was read from the binary and checked with `opencode debug agent NAME`
//! (`tests/opencode-agents/`); the rules are written up in `docs/opencode/agents.md`.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::config::{ConfigError, Node, Provenance, merged_config};
use crate::paths::global_paths;
use ctxgraph_db::db::{Db, Workspace, env_var};
use ctxgraph_db::path;
use ctxgraph_db::worktree::worktree;

/// What a permission rule decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    /// Run without asking.
    Allow,
    /// Ask the user first (also the answer when no rule matches).
    Ask,
    /// Refuse.
    Deny,
}

impl Action {
    fn parse(text: &str) -> Option<Action> {
        match text {
            "allow" => Some(Action::Allow),
            "ask" => Some(Action::Ask),
            "deny" => Some(Action::Deny),
            _ => None,
        }
    }
}

/// One rule: `permission` and `pattern` are wildcards ([`wildcard_match`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Rule {
    /// The permission (tool) name it applies to, e.g. `bash`, `external_directory`, `*`.
    pub permission: String,
    /// What the tool is asked to do, e.g. a command or a path.
    pub pattern: String,
    /// The decision.
    pub action: Action,
}

impl Rule {
    fn new(permission: &str, pattern: &str, action: Action) -> Rule {
        Rule { permission: permission.to_owned(), pattern: pattern.to_owned(), action }
    }
}

/// G2: rules in the order they were merged; later rules win.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct Ruleset(pub Vec<Rule>);

impl Ruleset {
    /// G5 (`evaluate`): the last rule whose permission and pattern both match; `ask` for
    /// `permission` with pattern `*` when none does.
    pub fn evaluate(&self, permission: &str, pattern: &str) -> Rule {
        self.0
            .iter()
            .rev()
            .find(|rule| {
                wildcard_match(permission, &rule.permission) && wildcard_match(pattern, &rule.pattern)
            })
            .cloned()
            .unwrap_or_else(|| Rule::new(permission, "*", Action::Ask))
    }

    /// G6 (`disabled`): a tool is disabled when the last rule whose permission matches its
    /// permission name denies with the literal pattern `*`. `edit`, `write` and
    /// `apply_patch` ask for `edit`; the three MCP resource tools ask for `read`.
    pub fn is_tool_disabled(&self, tool: &str) -> bool {
        let permission = match tool {
            "edit" | "write" | "apply_patch" => "edit",
            "list_mcp_resources" | "list_mcp_resource_templates" | "read_mcp_resource" => "read",
            other => other,
        };
        self.0
            .iter()
            .rev()
            .find(|rule| wildcard_match(permission, &rule.permission))
            .is_some_and(|rule| rule.pattern == "*" && rule.action == Action::Deny)
    }

    /// G3 (`fromConfig`): a string value is one rule with pattern `*`; an object value is
    /// one rule per entry, in JavaScript key order, `~/`, `~`, `$HOME/` and `$HOME` at the
    /// start of a pattern replaced by `os_home`.
    fn from_config(node: &Node, os_home: &Path) -> Ruleset {
        let mut rules = Vec::new();
        for (permission, value) in node.js_entries() {
            match value.to_value() {
                Value::String(action) => {
                    rules.extend(Action::parse(&action).map(|a| Rule::new(permission, "*", a)));
                }
                Value::Object(_) => {
                    for (pattern, action) in value.js_entries() {
                        if let Value::String(action) = action.to_value()
                            && let Some(action) = Action::parse(&action)
                        {
                            rules.push(Rule::new(permission, &expand_home(pattern, os_home), action));
                        }
                    }
                }
                // The config schema admits only the two forms; anything else grants nothing.
                _ => {}
            }
        }
        Ruleset(rules)
    }

    fn from_pairs(pairs: &[(&str, &str, Action)]) -> Ruleset {
        Ruleset(
            pairs
                .iter()
                .map(|(permission, pattern, action)| Rule::new(permission, pattern, *action))
                .collect(),
        )
    }

    fn merged(parts: impl IntoIterator<Item = Ruleset>) -> Ruleset {
        Ruleset(parts.into_iter().flat_map(|r| r.0).collect())
    }
}

fn expand_home(pattern: &str, os_home: &Path) -> String {
    let home = path::display(os_home);
    if let Some(rest) = pattern.strip_prefix("~/") {
        format!("{home}/{rest}")
    } else if pattern == "~" {
        home
    } else if let Some(rest) = pattern.strip_prefix("$HOME") {
        // `$HOME/x` and `$HOMEx` both keep what follows the five letters.
        format!("{home}{rest}")
    } else {
        pattern.to_owned()
    }
}

/// G4 (`Wildcard.match`): `*` matches any run of characters (`/` and newlines included),
/// `?` exactly one UTF-16 code unit, everything else itself; a pattern ending in ` *` also
/// matches without the space and what follows (`git *` matches `git`). Backslashes count
/// as `/` on both sides.
///
/// Written by hand: opencode compiles this to a JavaScript regex; no glob crate has these
/// semantics (globset's `*` stops at `/`, its `?` is a char, not a UTF-16 unit), and a
/// regex per rule per evaluation would cost more than this small backtracking matcher.
pub fn wildcard_match(text: &str, pattern: &str) -> bool {
    let text: Vec<u16> = text.encode_utf16().map(slash).collect();
    let pattern: Vec<u16> = pattern.encode_utf16().map(slash).collect();
    let space_star = [u16::from(b' '), u16::from(b'*')];
    if let Some(stem) = pattern.strip_suffix(&space_star[..]) {
        // `( .*)?`: the stem alone, or the stem, a space and anything.
        return glob_units(&text, stem) || glob_units(&text, &pattern);
    }
    glob_units(&text, &pattern)
}

fn slash(unit: u16) -> u16 {
    if unit == u16::from(b'\\') { u16::from(b'/') } else { unit }
}

/// `*`/`?` matching over UTF-16 code units, the classic two-pointer algorithm: on a
/// mismatch, retry from the last `*` with one more unit consumed (linear space, no
/// exponential backtracking).
fn glob_units(text: &[u16], pattern: &[u16]) -> bool {
    let (star, any) = (u16::from(b'*'), u16::from(b'?'));
    let (mut t, mut p) = (0, 0);
    let mut retry: Option<(usize, usize)> = None;
    while t < text.len() {
        if p < pattern.len() && pattern[p] == star {
            retry = Some((p, t));
            p += 1;
        } else if p < pattern.len() && (pattern[p] == any || pattern[p] == text[t]) {
            p += 1;
            t += 1;
        } else if let Some((star_at, consumed)) = retry {
            p = star_at + 1;
            t = consumed + 1;
            retry = Some((star_at, consumed + 1));
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|&u| u == star)
}

/// An agent's `mode`: where it can be used.
pub type Mode = String;

/// An agent's own prompt, which replaces the model prompt (A2).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum AgentPrompt {
    /// A built-in agent's prompt: opencode's own text, loaded from the installation under
    /// this asset name (`agent/explore`, …).
    BuiltIn(&'static str),
    /// The config's `prompt`, after `{env:}`/`{file:}` substitution.
    Config {
        /// The text opencode sends.
        text: String,
        /// Who set it (the `{file:…}` token it came from, if any, is `origin.written`).
        origin: Provenance,
    },
}

/// One agent as opencode resolves it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Agent {
    /// The key it is looked up by (`--opencode-agent`), which config `name` does not change.
    pub key: String,
    /// `name` (the key unless config renames it).
    pub name: String,
    /// `description` from config. The built-ins' own descriptions are opencode's prose and
    /// never part of the system message, so they are not kept.
    pub description: Option<String>,
    /// `primary`, `subagent` or `all`.
    pub mode: Mode,
    /// A built-in agent (also when config overrides it).
    pub native: bool,
    /// Hidden from the agent list.
    pub hidden: Option<bool>,
    /// The agent's prompt, if any: a non-empty one replaces the model prompt (A2).
    pub prompt: Option<AgentPrompt>,
    /// `model` from config, as written (`provider/model`).
    pub model: Option<String>,
    /// The remaining settings opencode keeps, as config gave them (`temperature`, `top_p`,
    /// `color`, `variant`, `steps`, `options`), for display.
    pub settings: serde_json::Map<String, Value>,
    /// G2: the merged permission ruleset.
    pub permission: Ruleset,
}

/// Every agent, in opencode's order (built-ins first, then config's new ones).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Agents {
    /// In the order opencode lists them internally.
    pub list: Vec<Agent>,
}

impl Agents {
    /// The agent `--opencode-agent KEY` selects, if it exists and is not disabled.
    pub fn get(&self, key: &str) -> Option<&Agent> {
        self.list.iter().find(|a| a.key == key)
    }
}

/// G1–G2: opencode's agents in `ws`, with their permission rulesets.
#[salsa::tracked(returns(ref))]
pub fn agents(db: &dyn Db, ws: Workspace) -> Result<Agents, ConfigError> {
    let config = merged_config(db, ws).as_ref().map_err(Clone::clone)?;
    let globals = global_paths(db, ws).as_ref().map_err(|e| ConfigError::Flag(e.clone()))?;
    let tool_output = globals.data.join("tool-output").join("*");
    let tool_output = path::display(&tool_output);
    let data = |rest: &[&str]| path::display(&rest.iter().fold(globals.data.clone(), |p, r| p.join(r)));
    let root = &worktree(db, ws).root;

    // G2: the directories every agent may read outside the project without asking.
    let mut granted = vec![tool_output.clone(), path::display(&os_tmpdir(db, ws).join("opencode").join("*"))];
    granted.extend(granted_directories(db, ws).iter().map(|d| path::display(&d.join("*"))));
    let mut external = vec![("external_directory", "*", Action::Ask)];
    external.extend(granted.iter().map(|d| ("external_directory", d.as_str(), Action::Allow)));
    let defaults = Ruleset::merged([
        Ruleset::from_pairs(&[("*", "*", Action::Allow), ("doom_loop", "*", Action::Ask)]),
        Ruleset::from_pairs(&external),
        Ruleset::from_pairs(&[
            ("question", "*", Action::Deny),
            ("plan_enter", "*", Action::Deny),
            ("plan_exit", "*", Action::Deny),
            ("read", "*", Action::Allow),
            ("read", "*.env", Action::Ask),
            ("read", "*.env.*", Action::Ask),
            ("read", "*.env.example", Action::Allow),
        ]),
    ]);
    let user = config
        .tree
        .get("permission")
        .map(|node| Ruleset::from_config(node, &globals.os_home))
        .unwrap_or_default();
    let with = |own: &[(&str, &str, Action)]| {
        Ruleset::merged([defaults.clone(), Ruleset::from_pairs(own), user.clone()])
    };
    let deny_all = [("*", "*", Action::Deny)];
    let plans_edit = path::relative(root, &globals.data.join("plans").join("*.md"));
    let explore_external: Vec<(&str, &str, Action)> =
        std::iter::once(("external_directory", "*", Action::Ask))
            .chain(granted.iter().map(|d| ("external_directory", d.as_str(), Action::Allow)))
            .collect();
    let mut explore_own = vec![
        ("*", "*", Action::Deny),
        ("grep", "*", Action::Allow),
        ("glob", "*", Action::Allow),
        ("list", "*", Action::Allow),
        ("bash", "*", Action::Allow),
        ("webfetch", "*", Action::Allow),
        ("websearch", "*", Action::Allow),
        ("read", "*", Action::Allow),
    ];
    explore_own.extend(explore_external);
    let plans_dir = data(&["plans", "*"]);

    let built_in = |key: &str, mode: &str, hidden: bool| Agent {
        key: key.to_owned(),
        name: key.to_owned(),
        description: None,
        mode: mode.to_owned(),
        native: true,
        hidden: hidden.then_some(true),
        prompt: None,
        model: None,
        settings: serde_json::Map::new(),
        permission: Ruleset::default(),
    };
    let mut list = vec![
        Agent {
            permission: with(&[("question", "*", Action::Allow), ("plan_enter", "*", Action::Allow)]),
            ..built_in("build", "primary", false)
        },
        Agent {
            permission: with(&[
                ("question", "*", Action::Allow),
                ("plan_exit", "*", Action::Allow),
                ("task", "general", Action::Deny),
                ("external_directory", &plans_dir, Action::Allow),
                ("edit", "*", Action::Deny),
                ("edit", ".opencode/plans/*.md", Action::Allow),
                ("edit", &plans_edit, Action::Allow),
            ]),
            ..built_in("plan", "primary", false)
        },
        Agent {
            permission: with(&[("todowrite", "*", Action::Deny)]),
            ..built_in("general", "subagent", false)
        },
        Agent {
            permission: with(&explore_own),
            prompt: Some(AgentPrompt::BuiltIn("agent/explore")),
            ..built_in("explore", "subagent", false)
        },
        Agent {
            permission: with(&deny_all),
            prompt: Some(AgentPrompt::BuiltIn("agent/compaction")),
            ..built_in("compaction", "primary", true)
        },
        Agent {
            permission: with(&deny_all),
            prompt: Some(AgentPrompt::BuiltIn("agent/title")),
            settings: [("temperature".to_owned(), Value::from(0.5))].into_iter().collect(),
            ..built_in("title", "primary", true)
        },
        Agent {
            permission: with(&deny_all),
            prompt: Some(AgentPrompt::BuiltIn("agent/summary")),
            ..built_in("summary", "primary", true)
        },
    ];

    // G1: config entries, in JavaScript key order (`mode.*` entries were folded into
    // `agent.*` by C3.10).
    let entries = config.tree.get("agent").map(Node::js_entries).unwrap_or_default();
    for (key, entry) in entries {
        if entry.get("disable").is_some_and(Node::is_truthy) {
            list.retain(|a| &a.key != key);
            continue;
        }
        let index = if let Some(index) = list.iter().position(|a| &a.key == key) {
            index
        } else {
            list.push(Agent {
                key: key.clone(),
                name: key.clone(),
                description: None,
                mode: "all".to_owned(),
                native: false,
                hidden: None,
                prompt: None,
                model: None,
                settings: serde_json::Map::new(),
                permission: Ruleset::merged([defaults.clone(), user.clone()]),
            });
            list.len() - 1
        };
        apply_config(&mut list[index], entry, &globals.os_home);
    }

    // G2: every agent may read opencode's tool output, unless it denies exactly that.
    let tool_output_rule = Rule::new("external_directory", &tool_output, Action::Allow);
    for agent in &mut list {
        let denied = agent.permission.0.iter().any(|r| {
            r.permission == "external_directory" && r.action == Action::Deny && r.pattern == tool_output
        });
        if !denied {
            agent.permission.0.push(tool_output_rule.clone());
        }
    }
    Ok(Agents { list })
}

/// G1: one config entry over an agent: each given field replaces the agent's (a JSON
/// `null` counts as not given), `options` merge deeply, `permission` rules are appended.
fn apply_config(agent: &mut Agent, entry: &Node, os_home: &Path) {
    let string = |key: &str| entry.get(key).and_then(|n| n.to_value().as_str().map(str::to_owned));
    if let Some(model) = string("model") {
        agent.model = Some(model);
    }
    if let Some(prompt) = entry.get("prompt")
        && let Value::String(text) = prompt.to_value()
    {
        agent.prompt = Some(AgentPrompt::Config { text, origin: prompt.origin.clone() });
    }
    if let Some(description) = string("description") {
        agent.description = Some(description);
    }
    if let Some(mode) = string("mode") {
        agent.mode = mode;
    }
    if let Some(hidden) = entry.get("hidden").and_then(|n| n.to_value().as_bool()) {
        agent.hidden = Some(hidden);
    }
    if let Some(name) = string("name") {
        agent.name = name;
    }
    for (from, to) in [
        ("variant", "variant"),
        ("temperature", "temperature"),
        ("top_p", "topP"),
        ("color", "color"),
        ("steps", "steps"),
    ] {
        if let Some(value) = entry.get(from).map(Node::to_value).filter(|v| !v.is_null()) {
            agent.settings.insert(to.to_owned(), value);
        }
    }
    if let Some(options) = entry.get("options").map(Node::to_value).filter(Value::is_object) {
        let mut merged =
            agent.settings.remove("options").unwrap_or_else(|| Value::Object(serde_json::Map::new()));
        crate::config::merge_values(&mut merged, options);
        agent.settings.insert("options".to_owned(), merged);
    }
    if let Some(permission) = entry.get("permission") {
        agent.permission.0.extend(Ruleset::from_config(permission, os_home).0);
    }
}

/// Directories opencode grants every agent besides its tool output and temp directory:
/// each discovered skill's directory, then each configured reference's path. The skills
/// and references stages provide them.
fn granted_directories(db: &dyn Db, ws: Workspace) -> Vec<PathBuf> {
    crate::references::granted_paths(db, ws)
}

/// node's `os.tmpdir()`: `$TMPDIR`, `$TMP` or `$TEMP` (the first set, one trailing `/`
/// dropped), else `/tmp`.
fn os_tmpdir(db: &dyn Db, ws: Workspace) -> PathBuf {
    let host = ws.host(db);
    for name in ["TMPDIR", "TMP", "TEMP"] {
        if let Some(value) = env_var(db, host, name.to_owned()).filter(|v| !v.is_empty()) {
            let trimmed = if value.len() > 1 { value.strip_suffix('/').unwrap_or(&value) } else { &value };
            return PathBuf::from(trimmed);
        }
    }
    PathBuf::from("/tmp")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards_follow_opencode() {
        assert!(wildcard_match("git status", "git *"));
        assert!(wildcard_match("git", "git *"));
        assert!(!wildcard_match("gitx", "git *"));
        assert!(wildcard_match("a/b/c.env", "*.env"));
        assert!(wildcard_match("x\ny", "x*"));
        assert!(wildcard_match("ab", "a?"));
        assert!(!wildcard_match("a😀", "a?"));
        assert!(wildcard_match("a😀", "a??"));
        assert!(wildcard_match("C:\\x", "C:/*"));
        assert!(wildcard_match("a.b", "a.b"));
        assert!(!wildcard_match("axb", "a.b"));
        assert!(wildcard_match("", "*"));
        assert!(wildcard_match("", " *"));
        assert!(wildcard_match("aXbXc", "a*b*c"));
        assert!(!wildcard_match("aXbXd", "a*b*c"));
    }

    #[test]
    fn last_matching_rule_wins() {
        let rules = Ruleset::from_pairs(&[
            ("*", "*", Action::Allow),
            ("bash", "*", Action::Ask),
            ("bash", "git *", Action::Allow),
            ("edit", "*", Action::Deny),
        ]);
        assert_eq!(rules.evaluate("bash", "git log").action, Action::Allow);
        assert_eq!(rules.evaluate("bash", "rm -rf").action, Action::Ask);
        assert_eq!(Ruleset::default().evaluate("bash", "x"), Rule::new("bash", "*", Action::Ask));
        assert!(rules.is_tool_disabled("write"));
        assert!(!rules.is_tool_disabled("bash"));
        let partly = Ruleset::from_pairs(&[("edit", "*", Action::Deny), ("edit", "*.md", Action::Allow)]);
        assert!(!partly.is_tool_disabled("edit"), "only a last rule with pattern `*` disables");
    }
}
