//! `lint`: rule setups that load something other than what their authors meant.
//!
//! Every finding is read off the [`Explanation`] and the discovery facts behind it; codes
//! are stable (`CG001`…), so CI configurations and SARIF viewers can refer to them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::config::{LayerStatus, SourceKind, entry_line, merged_config};
use crate::explain::{Explanation, Item, Reason, Source, Stage, Via, explain};
use crate::instructions::{GlobMode, rule_text, system_paths};
use crate::mcp::{Connect, mcp_servers};
use crate::prompt::BuildError;
use ctxgraph_db::db::{Db, Workspace};
use ctxgraph_db::mcp::McpState;
use ctxgraph_db::path;
use ctxgraph_db::remote::Pin;
use ctxgraph_db::secrets::find_secrets;
use ctxgraph_db::tokens::TokenCounter;

use ctxgraph_db::lint::{Budget, Code, Finding, Location};

/// Runs every rule; findings are sorted by location, then code.
pub fn lint(
    db: &dyn Db,
    ws: Workspace,
    counter: &dyn TokenCounter,
    budget: Budget,
) -> Result<Vec<Finding>, BuildError> {
    let explanation = explain(db, ws, counter)?;
    let mut linter = Linter { db, ws, explanation: &explanation, findings: Vec::new() };
    linter.shadowed_and_side_by_side();
    linter.outside_repository();
    linter.entries()?;
    linter.content(budget);
    linter.nearby_only_constraints();
    linter.mcp_servers()?;
    linter.skills(counter, budget);
    let mut findings = linter.findings;
    findings.sort_by(|a, b| {
        let key = |f: &Finding| f.location.as_ref().map(|l| (l.uri.clone(), l.line, l.column));
        key(a).cmp(&key(b)).then(a.code.cmp(&b.code))
    });
    Ok(findings)
}

struct Linter<'a> {
    db: &'a dyn Db,
    ws: Workspace,
    explanation: &'a Explanation,
    findings: Vec<Finding>,
}

fn file_location(path: &Path, line: Option<usize>) -> Location {
    Location { uri: path::display(path), line, column: None }
}

impl Linter<'_> {
    /// CG017–CG020, for opencode's default agent (`build`): read off the skills facts.
    fn skills(&mut self, counter: &dyn TokenCounter, budget: Budget) {
        use crate::skills::{Fate, NotASkill, Origin, skill_listing, skills, skills_block};
        const AGENT: &str = "build";
        let Ok(found) = skills(self.db, self.ws).as_ref() else { return };
        for file in &found.found {
            let at = |line| Some(file_location(&file.path, Some(line)));
            match &file.fate {
                // One file under two paths (a symlink, as `npx skills` makes for several
                // agents): the model reads the same skill, but the listed location flips
                // between opencode starts, so the prompt cache misses.
                Fate::Shadowed { name, by, .. }
                    if self.real_path(&found.found[*by].path) == self.real_path(&file.path) =>
                {
                    let kept = &found.found[*by].path;
                    let hint = self.one_path_hint(kept, &file.path);
                    self.push(
                        Code::SkillUnderTwoPaths,
                        format!(
                            "skill {name:?} is found under two paths, {} and {} (one file, reached through a symlink); opencode lists it under whichever it parses last, which changes between its starts, so the system prompt differs between sessions for nothing and the provider's prompt cache misses",
                            path::display(kept),
                            path::display(&file.path)
                        ),
                        at(1),
                        hint,
                    );
                }
                // Two copies with the same bytes: the same skill whichever wins (the listed
                // location still flips, which `build --format json` marks as unstable).
                Fate::Shadowed { by, .. } if self.same_file(&found.found[*by].path, &file.path) => {}
                Fate::Shadowed { name, by, .. } => self.push(
                    Code::SkillShadowed,
                    format!(
                        "{} and {} both declare skill {name:?}; opencode keeps whichever it parses last, so which one the model sees can change between runs",
                        path::display(&found.found[*by].path),
                        path::display(&file.path)
                    ),
                    at(1),
                    "rename one of the skills, or delete the copy you do not want".to_owned(),
                ),
                Fate::Registered { name, description: None } => self.push(
                    Code::SkillWithoutDescription,
                    format!("skill {name:?} has no description: opencode registers it but never lists it, so the model does not know it exists"),
                    at(1),
                    "add a `description:` to the frontmatter saying when to use the skill".to_owned(),
                ),
                Fate::Invalid(error) => self.push(
                    Code::SkillNotLoaded,
                    format!("the frontmatter does not parse as YAML ({}); opencode drops this skill", error.message),
                    Some(Location { uri: path::display(&file.path), line: Some(error.line), column: Some(error.column) }),
                    "fix the YAML between the `---` lines (quote values that contain `: `)".to_owned(),
                ),
                Fate::NotASkill(why) => {
                    let what = match why {
                        NotASkill::NoMapping => "it has no YAML frontmatter".to_owned(),
                        NotASkill::NoName => "its frontmatter has no `name`".to_owned(),
                        NotASkill::NameNotString(kind) => format!("its `name` is {kind}, not a string"),
                        NotASkill::DescriptionNotString(kind) => format!("its `description` is {kind}, not a string"),
                    };
                    self.push(
                        Code::SkillNotLoaded,
                        format!("opencode drops this SKILL.md without a word: {what}"),
                        at(1),
                        "start the file with `---`, `name: …`, `description: …`, `---`; quote values YAML would read as numbers, dates or null".to_owned(),
                    );
                }
                Fate::Unreadable(failure) => self.push(
                    Code::SkillNotLoaded,
                    format!("cannot be read ({failure}); opencode drops this skill"),
                    at(1),
                    "make the file readable".to_owned(),
                ),
                Fate::Registered { .. } => {}
            }
        }
        // Only a listing that holds the project's or user's own skills: the built-in skill
        // alone is opencode's fixed cost, which nobody here can shorten.
        let own_listed = skill_listing(self.db, self.ws, AGENT.to_owned()).as_ref().is_ok_and(|listing| {
            listing
                .decisions
                .iter()
                .any(|d| d.listed() && found.registry[d.registry].origin != Origin::Builtin)
        });
        if let (true, Ok(Some(block))) =
            (own_listed, skills_block(self.db, self.ws, AGENT.to_owned()).as_ref())
        {
            let tokens = counter.count(&block.text);
            if tokens > budget.rule {
                self.push(
                    Code::SkillListingOverBudget,
                    format!(
                        "the skills listing is {tokens} tokens, over the per-block budget of {}; opencode sends it with every request",
                        budget.rule
                    ),
                    None,
                    "shorten descriptions, deny rarely used skills with permission.skill, or raise --max-rule-tokens".to_owned(),
                );
            }
        }
    }

    /// CG021's fix for a skill at `a` and `b`: remove the skill directory that is a symlink
    /// (never the real directory it points to), or else the link that leads to `b`.
    fn one_path_hint(&self, a: &Path, b: &Path) -> String {
        let linked_dir = |file: &Path| {
            let dir = file.parent()?;
            let parent = dir.parent()?;
            (self.real_path(dir) != self.real_path(parent).join(dir.file_name()?)).then(|| dir.to_path_buf())
        };
        match (linked_dir(b), linked_dir(a)) {
            (Some(link), _) => format!(
                "keep one path: remove the symlink {}; opencode still finds the skill at {}",
                path::display(&link),
                path::display(a)
            ),
            (None, Some(link)) => format!(
                "keep one path: remove the symlink {}; opencode still finds the skill at {}",
                path::display(&link),
                path::display(b)
            ),
            (None, None) => format!(
                "keep one path: remove the symlink that puts the skill at {}; opencode still finds it at {}",
                path::display(b),
                path::display(a)
            ),
        }
    }

    /// Whether two paths hold the same file: one real path, or the same bytes.
    fn same_file(&self, a: &Path, b: &Path) -> bool {
        if self.real_path(a) == self.real_path(b) {
            return true;
        }
        let bytes =
            |p: &Path| ctxgraph_db::files::file_bytes(self.db, self.db.files().get(self.db, p)).clone().ok();
        bytes(a).is_some_and(|x| Some(x) == bytes(b))
    }

    fn push(&mut self, code: Code, message: String, location: Option<Location>, hint: String) {
        self.findings.push(Finding { code, severity: code.severity(), message, location, hint });
    }

    fn files(&self) -> impl Iterator<Item = (&Item, &Path)> {
        self.explanation.items.iter().filter_map(|item| match &item.source {
            Source::File(path) => Some((item, path.as_path())),
            Source::Url(_) => None,
        })
    }

    fn content_hash(&self, path: &Path) -> Option<blake3::Hash> {
        let text = rule_text(self.db, path);
        (!text.text().is_empty()).then(|| blake3::hash(text.text().as_bytes()))
    }

    /// Whether an agent reading `file` gets the rules in `other`: the same file (a
    /// symlink), the same text, or a `file` that is nothing but Claude Code's import of
    /// `other` (`@AGENTS.md`, the layout Claude Code's documentation suggests for sharing
    /// AGENTS.md). Two such files are one set of rules under two names, not a shadowing.
    fn same_rules(&self, file: &Path, other: &Path) -> bool {
        if self.real_path(file) == self.real_path(other) {
            return true;
        }
        let text = rule_text(self.db, file);
        if !text.text().is_empty() && self.content_hash(file) == self.content_hash(other) {
            return true;
        }
        let import = text.text().trim();
        let Some(target) = import.strip_prefix('@').filter(|t| !t.contains(char::is_whitespace)) else {
            return false;
        };
        let dir = file.parent().unwrap_or(Path::new("/"));
        self.real_path(&path::resolve(dir, Path::new(target))) == self.real_path(other)
    }

    /// Whether `winner` names `shadowed` (a file beside it): its authors point the model at
    /// that file on purpose (a glossary, a design note), so opencode not loading it is no
    /// mistake.
    fn points_to(&self, winner: &Path, shadowed: &Path) -> bool {
        let Some(name) = shadowed.file_name().and_then(|n| n.to_str()) else { return false };
        winner.parent() == shadowed.parent() && rule_text(self.db, winner).text().contains(name)
    }

    /// [`real_path`](ctxgraph_db::files::real_path), a query: answered from its memo until
    /// the path's input changes.
    fn real_path(&self, path: &Path) -> PathBuf {
        ctxgraph_db::files::real_path(self.db, path)
    }

    /// CG001 and CG002. A `CLAUDE.md` beside an `AGENTS.md` gets CG002 only: that is the
    /// more specific fact, and the fix is the same.
    fn shadowed_and_side_by_side(&mut self) {
        let mut by_dir: BTreeMap<PathBuf, Vec<PathBuf>> = BTreeMap::new();
        for (_, path) in self.files() {
            if let Some(dir) = path.parent() {
                by_dir.entry(dir.to_path_buf()).or_default().push(path.to_path_buf());
            }
        }
        let mut beside = Vec::new();
        for (dir, files) in &by_dir {
            let has = |name: &str| files.iter().any(|f| f.file_name().is_some_and(|n| n == name));
            let (agents, claude) = (dir.join("AGENTS.md"), dir.join("CLAUDE.md"));
            if has("AGENTS.md") && has("CLAUDE.md") && !self.same_rules(&claude, &agents) {
                beside.push(claude);
            }
        }
        for claude in &beside {
            self.push(
                Code::AgentsBesideClaude,
                format!(
                    "{} sits beside an AGENTS.md with different content; opencode reads only AGENTS.md, Claude Code only CLAUDE.md",
                    path::display(claude)
                ),
                Some(file_location(claude, Some(1))),
                "keep one file: merge them, and make CLAUDE.md a symlink to AGENTS.md".to_owned(),
            );
        }
        let shadowed: Vec<(PathBuf, Reason)> = self
            .files()
            .filter(|(_, path)| !beside.iter().any(|b| b == path))
            .filter_map(|(item, path)| {
                let reason = item.reasons.iter().find(|r| matches!(r, Reason::ShadowedByCategory { .. }))?;
                Some((path.to_path_buf(), reason.clone()))
            })
            .filter(|(path, reason)| {
                let Reason::ShadowedByCategory { winning_files, .. } = reason else { return false };
                !winning_files
                    .iter()
                    .any(|winner| self.same_rules(path, winner) || self.points_to(winner, path))
            })
            .collect();
        for (path, reason) in shadowed {
            let Reason::ShadowedByCategory { winner, winning_files, .. } = &reason else { continue };
            let first = winning_files.first().map(|p| path::display(p)).unwrap_or_default();
            self.push(
                Code::ShadowedRuleFile,
                format!(
                    "{} is never loaded: {winner} won the rule name lookup ({first})",
                    path::display(&path)
                ),
                Some(file_location(&path, Some(1))),
                reason.hint().unwrap_or_default(),
            );
        }
    }

    /// CG003: outside git, the project walk runs up to `/`; inside, a project config can
    /// point at files outside the repository, and a rule file in it can be a symlink to
    /// one outside (judged on the resolved path: other checkouts do not have the target).
    fn outside_repository(&mut self) {
        let explanation = self.explanation;
        let worktree = self.real_path(&explanation.worktree);
        let mut found = Vec::new();
        for (item, path) in self.files() {
            let attached = item.reasons.iter().any(|r| matches!(r, Reason::NearbyOnly { .. }));
            if item.loaded.is_none() && !attached {
                continue;
            }
            let real = self.real_path(path);
            let outside = explanation.git && !real.starts_with(&worktree);
            match &item.via {
                Some(Via::Project { level, .. }) if !explanation.git && *level > 0 => found.push((
                    path.to_path_buf(),
                    format!(
                        "{} is loaded from above the working directory because {} is not in a git repository, so opencode looks for rule files all the way up to /",
                        path::display(path),
                        path::display(&explanation.cwd)
                    ),
                    "run opencode inside a git repository (git init), or move the file".to_owned(),
                )),
                Some(Via::Instruction { config, .. })
                    if explanation.git
                        && !path.starts_with(&explanation.worktree)
                        && self.is_project_config(config) =>
                {
                    found.push((
                        path.to_path_buf(),
                        format!(
                            "{} is outside the repository {} but loaded through the project config {config}; other checkouts will not have it",
                            path::display(path),
                            path::display(&explanation.worktree)
                        ),
                        "move the file into the repository, or the entry into your global config".to_owned(),
                    ));
                }
                Some(Via::Global { .. }) => {}
                Some(Via::Instruction { config, .. }) if !self.is_project_config(config) => {}
                _ if outside && path.starts_with(&explanation.worktree) => found.push((
                    path.to_path_buf(),
                    format!(
                        "{} is a symlink to {}, outside the repository {}; other checkouts will not have it, and its text is sent to the model provider",
                        path::display(path),
                        path::display(&real),
                        path::display(&explanation.worktree)
                    ),
                    "commit the rules themselves instead of a link out of the repository".to_owned(),
                )),
                _ => {}
            }
        }
        for (path, message, hint) in found {
            self.push(Code::OutsideRepository, message, Some(file_location(&path, None)), hint);
        }
    }

    fn is_project_config(&self, config: &str) -> bool {
        let root = &self.explanation.worktree;
        merged_config(self.db, self.ws).as_ref().is_ok_and(|merged| {
            merged.layers.iter().any(|layer| {
                let source = &layer.source;
                layer.status == LayerStatus::Loaded
                    && *source.name == *config
                    && matches!(source.kind, SourceKind::Project | SourceKind::Directory)
                    && source.path().is_some_and(|path| path.starts_with(root))
            })
        })
    }

    /// CG016: MCP servers the engine connected to and that failed (servers it did not
    /// connect to, with `--no-mcp`, are not findings).
    fn mcp_servers(&mut self) -> Result<(), BuildError> {
        let servers = mcp_servers(self.db, self.ws).as_ref().map_err(|e| BuildError::Config(e.clone()))?;
        for server in servers {
            let Connect::Yes(request) = &server.connect else { continue };
            let McpState::Failed(failure) = self.db.remotes().mcp().get(self.db, request).state(self.db)
            else {
                continue;
            };
            let location = server.config_location();
            self.push(
                Code::McpServerFailed,
                format!(
                    "MCP server {:?} from {} failed: {failure}; opencode leaves out its instructions and tools",
                    server.name,
                    server.source.name()
                ),
                location,
                "fix the server's command, URL, headers or timeout, or set \"enabled\": false to leave it out on purpose"
                    .to_owned(),
            );
        }
        Ok(())
    }

    /// CG004, CG008, CG010: the `instructions` entries.
    fn entries(&mut self) -> Result<(), BuildError> {
        let paths = system_paths(self.db, self.ws).as_ref().map_err(|e| BuildError::Config(e.clone()))?;
        let config = merged_config(self.db, self.ws).as_ref().map_err(|e| BuildError::Config(e.clone()))?;
        let location = |index: usize| {
            let entry = &config.instructions[index];
            let line = entry_line(entry);
            entry.source.path().map(|path| file_location(path, line))
        };
        let mut found = Vec::new();
        for remote in &paths.remote {
            if Pin::parse(&remote.url).is_none() {
                found.push((
                    Code::UnpinnedRemote,
                    format!(
                        "{} in {} has no integrity pin; whatever the server returns goes into every prompt",
                        remote.shown,
                        remote.source.name()
                    ),
                    location(remote.index),
                    "pin the content: append #sha256=<hex> or #blake3=<hex> of the document you reviewed"
                        .to_owned(),
                ));
            }
        }
        for expansion in &paths.expansions {
            // Messages quote the entry as written: `{env:}` stays a token.
            let shown =
                config.instructions.get(expansion.index).map_or(expansion.entry.as_str(), |e| e.shown());
            let directory_magic = expansion.mode == GlobMode::Absolute
                && Path::new(expansion.entry.strip_prefix("~/").unwrap_or(&expansion.entry))
                    .parent()
                    .is_some_and(|dir| path::display(dir).contains(['*', '?', '[', '{']));
            if directory_magic {
                found.push((
                    Code::AbsoluteGlobDirectory,
                    format!(
                        "instructions entry {:?} in {} has glob characters in its directory; opencode globs only the file name of an absolute entry, so it matches nothing",
                        shown,
                        expansion.source.name()
                    ),
                    location(expansion.index),
                    "use a pattern relative to the project (e.g. \"docs/*/rules.md\"), or list each file".to_owned(),
                ));
            } else if expansion.matched_nothing() {
                found.push((
                    Code::UnmatchedEntry,
                    format!("instructions entry {shown:?} in {} matches no file", expansion.source.name()),
                    location(expansion.index),
                    "fix the pattern or remove the entry; relative entries are matched from the working directory up to the repository root, not from the config file's directory".to_owned(),
                ));
            }
        }
        for (code, message, location, hint) in found {
            self.push(code, message, location, hint);
        }
        Ok(())
    }

    /// CG005, CG006, CG007, CG009: what the loaded (or attached) text contains.
    fn content(&mut self, budget: Budget) {
        let explanation = self.explanation;
        let mut found = Vec::new();
        let mut first_by_hash: BTreeMap<[u8; 32], PathBuf> = BTreeMap::new();
        for (item, path) in self.files() {
            let attached = item.reasons.iter().any(|r| matches!(r, Reason::NearbyOnly { .. }));
            if item.loaded.is_none() && !attached {
                continue;
            }
            let text = rule_text(self.db, path);
            for secret in find_secrets(text.text()) {
                found.push((
                    Code::LikelySecret,
                    format!(
                        "{} contains a likely {} (line {}); rule files are sent to the model provider",
                        path::display(path),
                        secret.kind,
                        secret.line
                    ),
                    Some(Location {
                        uri: path::display(path),
                        line: Some(secret.line),
                        column: Some(secret.column),
                    }),
                    ctxgraph_db::lint::SECRET_HINT.to_owned(),
                ));
            }
            let Some(loaded) = &item.loaded else { continue };
            if loaded.size.tokens > budget.rule {
                found.push((
                    Code::RuleOverBudget,
                    format!(
                        "{} is {} tokens, over the budget of {} per rule file",
                        path::display(path),
                        loaded.size.tokens,
                        budget.rule
                    ),
                    Some(file_location(path, None)),
                    "split it, and move what is needed only in part of the tree into nested rule files"
                        .to_owned(),
                ));
            }
            if let Some(hash) = self.content_hash(path) {
                match first_by_hash.get(hash.as_bytes()) {
                    Some(first) => found.push((
                        Code::DuplicateContent,
                        format!(
                            "{} has the same content as {}, which is already loaded; it is sent twice",
                            path::display(path),
                            path::display(first)
                        ),
                        Some(file_location(path, None)),
                        "remove one of them (a symlinked directory or a second glob can reach the same file)"
                            .to_owned(),
                    )),
                    None => {
                        first_by_hash.insert(*hash.as_bytes(), path.to_path_buf());
                    }
                }
            }
        }
        if explanation.total.tokens > budget.total {
            found.push((
                Code::PromptOverBudget,
                format!(
                    "the system prompt from {} is {} tokens, over the budget of {}",
                    path::display(&explanation.cwd),
                    explanation.total.tokens,
                    budget.total
                ),
                None,
                "run `ctxgraph explain` to see the largest blocks".to_owned(),
            ));
        }
        for (code, message, location, hint) in found {
            self.push(code, message, location, hint);
        }
    }

    /// CG011: "never"/"must" rules for the whole repository that only a read attaches.
    ///
    /// A rule file below the working directory is how monorepos scope rules to a package,
    /// and its constraints are meant to apply only there: on six real monorepos every such
    /// "never"/"must" was package-scoped (README, lint corpus). The mistake is a constraint
    /// that claims the whole repository as its scope (`never push to main anywhere in the
    /// repo`) but reaches the model only after it happens to read a file in that package.
    fn nearby_only_constraints(&mut self) {
        let mut found = Vec::new();
        for (item, path) in self.files() {
            let Some(dir) = item.reasons.iter().find_map(|r| match r {
                Reason::NearbyOnly { dir } => Some(dir),
                _ => None,
            }) else {
                continue;
            };
            if item.stage != Stage::Nearby {
                continue;
            }
            let text = rule_text(self.db, path);
            let lines: Vec<usize> = text
                .text()
                .lines()
                .enumerate()
                .filter(|(_, line)| claims_the_repository(line))
                .map(|(index, _)| index + 1)
                .collect();
            if let Some(first) = lines.first() {
                found.push((
                    path.to_path_buf(),
                    *first,
                    format!(
                        "{} states constraints for the whole repository (\"never\"/\"must\", {} line{}) but is only attached when the model reads a file under {}, once per session",
                        path::display(path),
                        lines.len(),
                        if lines.len() == 1 { "" } else { "s" },
                        path::display(dir)
                    ),
                ));
            }
        }
        for (path, line, message) in found {
            self.push(
                Code::NearbyOnlyConstraint,
                message,
                Some(file_location(&path, Some(line))),
                "move constraints that must always hold into the root AGENTS.md, or list this file in `instructions`".to_owned(),
            );
        }
    }
}

/// A line that says "never" or "must" as a word, in any case.
fn has_hard_constraint(line: &str) -> bool {
    words(line).any(|word| word == "never" || word == "must")
}

/// Phrases (as lower-case word sequences) by which a sentence makes the whole repository
/// its scope.
const REPOSITORY_SCOPE: &[&[&str]] = &[
    &["repo"],
    &["repository"],
    &["monorepo"],
    &["codebase"],
    &["everywhere"],
    &["all", "packages"],
    &["every", "package"],
    &["any", "package"],
    &["whole", "project"],
    &["entire", "project"],
    &["project", "wide"],
];

/// A line with a sentence that is a hard constraint and claims the whole repository as
/// its scope, both in that sentence ("Repository tooling lives here. It never reads
/// vendored code." claims nothing).
fn claims_the_repository(line: &str) -> bool {
    line.split_inclusive(['.', '!', '?', ';']).any(|sentence| {
        let words: Vec<String> = words(sentence).collect();
        has_hard_constraint(sentence)
            && REPOSITORY_SCOPE.iter().any(|phrase| words.windows(phrase.len()).any(|w| w == *phrase))
    })
}

/// The lower-case words of a text (runs of letters and digits).
fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hard_constraints_are_words() {
        assert!(has_hard_constraint("Never call the DB directly."));
        assert!(has_hard_constraint("- handlers MUST validate input"));
        assert!(!has_hard_constraint("Mustache templates live in views/"));
        assert!(!has_hard_constraint("Nevertheless, prefer small files."));
    }

    #[test]
    fn repository_scope_is_claimed_in_the_constraint_itself() {
        assert!(claims_the_repository("Never push to main anywhere in the repository."));
        assert!(claims_the_repository("- All packages must use the shared logger"));
        assert!(!claims_the_repository("Never call the DB directly."));
        assert!(!claims_the_repository("Repository tooling lives here. It never reads vendored code."));
        assert!(!claims_the_repository("Never edit files under repos/*."));
    }

    #[test]
    fn codes_are_unique() {
        let ids: std::collections::BTreeSet<_> = Code::ALL.iter().map(|c| c.id()).collect();
        let names: std::collections::BTreeSet<_> = Code::ALL.iter().map(|c| c.name()).collect();
        assert_eq!((ids.len(), names.len()), (Code::ALL.len(), Code::ALL.len()));
    }
}
