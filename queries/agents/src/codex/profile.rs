//! The Codex profile's answers in the shared shape ([`ctxgraph_db::profile`]).

use std::path::Path;
use std::sync::Arc;

use ctxgraph_db::agent::Agent;
use ctxgraph_db::db::{Db, Workspace};
use ctxgraph_db::fault::InputFault;
use ctxgraph_db::lint::{Budget, Finding};
use ctxgraph_db::profile::AgentFate;
use ctxgraph_db::profile::{
    About, Frame, InstallationSearch, LayoutBuilder, LeftOut, Part, Placement, Profile, ProfileError,
    Request, Section, Setting, Source, Status, WordingSource,
};
use ctxgraph_db::session_costs::{SessionFileError, SessionOccurrences};
use ctxgraph_db::tokens::TokenCounter;

use super::skills::{Message as SkillsMessage, SkillFate, skills};
use super::wording::Wording;
use super::{BudgetSource, Doc, Fate, Scope, agents_context, config::codex_home};

/// Codex CLI 0.171.0.
pub struct Codex;

/// Where the message goes (CX4).
const POSITION: &str = "a user message before the first prompt: `# AGENTS.md instructions`";

/// Where a skill's line goes (CX10).
const SKILLS_POSITION: &str =
    "the second developer message: `<skills_instructions>`, before the permissions text";

/// `-c model_context_window=N` (CX13).
const CONTEXT_WINDOW: &str = "model_context_window";
/// CX13: the context window Codex assumes for a model it has no metadata for.
const FALLBACK_CONTEXT_WINDOW: u64 = 272_000;

/// `-c project_doc_max_bytes=N`, the one Codex setting ctxgraph models.
const MAX_BYTES: &str = "project_doc_max_bytes";

/// The value of the `-c KEY=VALUE` override of `key`, if any. Codex applies its overrides
/// in order, so a key given twice takes its last value (captured for both keys ctxgraph
/// models, in both orders: `tests/agents/codex/CX-15`, `CX-16`).
fn override_of<'a>(request: &'a Request, key: &str) -> Option<&'a str> {
    request.settings.iter().rev().find(|(k, _)| k == key).map(|(_, value)| value.as_str())
}

impl Codex {
    /// CX13: `-c model_context_window=N`, else `config.toml`'s, else Codex's fallback.
    fn context_window(
        db: &dyn Db,
        ws: Workspace,
        request: &Request,
    ) -> Result<(u64, WindowFrom), ProfileError> {
        if let Some(value) = override_of(request, CONTEXT_WINDOW) {
            let tokens = value.trim().parse::<u64>().ok().filter(|&n| n > 0).ok_or_else(|| {
                ProfileError::Setting(format!(
                    "-c {CONTEXT_WINDOW}={value}: {CONTEXT_WINDOW} must be a positive integer"
                ))
            })?;
            return Ok((tokens, WindowFrom::CommandLine));
        }
        let host = ws.host(db);
        match super::config::codex_config(db, host).as_ref().ok().and_then(|c| c.context_window) {
            Some(tokens) => Ok((tokens, WindowFrom::ConfigFile(codex_home(db, host).join("config.toml")))),
            None => Ok((FALLBACK_CONTEXT_WINDOW, WindowFrom::Fallback)),
        }
    }

    /// CX5: `-c project_doc_max_bytes=N`, when given.
    fn max_bytes(request: &Request) -> Result<Option<u64>, ProfileError> {
        override_of(request, MAX_BYTES)
            .map(|value| {
                value.trim().parse::<u64>().map_err(|err| {
                    ProfileError::Setting(format!(
                        "-c {MAX_BYTES}={value}: {MAX_BYTES} must be a non-negative integer ({err})"
                    ))
                })
            })
            .transpose()
    }
}

/// The skills message of `--section request` (CX7–CX10, CX13) and what goes with it.
struct SkillsPart {
    message: Option<SkillsMessage>,
    /// Skills found and not listed, each with its reason.
    left_out: Vec<LeftOut>,
    /// `model_context_window`, the budget's base.
    window: Setting,
    /// Set when the budget shortened the listing.
    note: Option<String>,
    wording: WordingSource,
}

fn request_skills(db: &dyn Db, ws: Workspace, request: &Request) -> Result<SkillsPart, ProfileError> {
    let skills = skills(db, ws);
    let words = request
        .wording::<Wording>()
        .cloned()
        .unwrap_or_else(|| Wording::unavailable("Codex's installation was not loaded"));
    let mut left_out: Vec<LeftOut> = skills
        .found
        .iter()
        .filter(|s| s.fate != SkillFate::Listed)
        .map(|s| LeftOut {
            source: s.path.clone(),
            fate: match s.fate {
                SkillFate::Failed { .. } => "not_loaded",
                SkillFate::SameFile { .. } => "same_file",
                _ => "hidden",
            },
            rule: s.rule(),
            reason: s.reason(),
        })
        .collect();
    let (window, from) = Codex::context_window(db, ws, request)?;
    let message = skills.message(&words.skills_intro, window);
    let mut note = None;
    if let Some(message) = &message {
        let shown: std::collections::HashSet<&Path> =
            message.lines.iter().map(|l| l.path.as_path()).collect();
        left_out.extend(skills.listed().into_iter().filter(|s| !shown.contains(s.path.as_path())).map(|s| LeftOut {
            source: s.path.clone(),
            fate: "over_budget",
            rule: "CX13",
            reason: "left out of the skills listing: even its line without a description did not fit Codex's budget after the lines before it (CX13)".to_owned(),
        }));
        if let Some(budget) = message.budget {
            let assumed = if from == WindowFrom::Fallback {
                format!(
                    " (Codex's fallback window of {window} tokens: give -c {CONTEXT_WINDOW}=N for your model's)"
                )
            } else {
                String::new()
            };
            let omitted = if message.omitted > 0 {
                format!(" and {} skill(s) left out", message.omitted)
            } else {
                String::new()
            };
            note = Some(format!(
                "the skills listing exceeds Codex's budget of {budget} estimated tokens, 2% of the model's context window{assumed}: descriptions are shortened{omitted} (CX13)"
            ));
        }
    }
    let window = Setting {
        name: CONTEXT_WINDOW,
        value: window.to_string(),
        from: match from {
            WindowFrom::ConfigFile(path) => Some(path),
            WindowFrom::CommandLine | WindowFrom::Fallback => None,
        },
    };
    Ok(SkillsPart { message, left_out, window, note, wording: words.source })
}

/// Where the context window the skills budget is based on comes from (CX13).
#[derive(Clone, Debug, PartialEq, Eq)]
enum WindowFrom {
    CommandLine,
    ConfigFile(std::path::PathBuf),
    /// Codex's window for a model it has no metadata for.
    Fallback,
}

/// `config.toml` as Codex refuses it (CX5 reads it), with the line for a snippet.
fn would_not_start(err: &super::CodexError) -> ProfileError {
    let super::CodexError::Config { path, line, column, message, line_text } = err;
    let at = (*line, *column, ctxgraph_db::lines::Column::Chars);
    let fault = InputFault::in_file("invalid-config", path, at, line_text, (err.to_string(), message), "CX5");
    ProfileError::WouldNotStart { agent: Agent::Codex.name(), fault: Box::new(fault) }
}

/// The fate of a file left out, as one word and its rule.
fn left_out(doc: &Doc, budget: &super::Budget) -> LeftOut {
    let (fate, rule) = match doc.fate {
        Fate::Included | Fate::Cut { .. } => ("sent", "CX4"),
        Fate::OverBudget => ("over_budget", "CX5"),
        Fate::Empty => ("empty", "CX6"),
        Fate::Shadowed { .. } => ("shadowed", "CX3"),
        Fate::Unreadable { .. } => ("unreadable", "CX2"),
    };
    LeftOut { source: doc.source.clone(), fate, rule, reason: doc.reason(budget) }
}

const ABOUT: About = About {
    agent: Agent::Codex,
    title: "Codex",
    release: "codex-0.171.0",
    doc: "docs/profiles/codex.md",
    files: &[
        super::AGENTS_NAME,
        super::OVERRIDE_NAME,
        ".codex/skills/**/SKILL.md",
        ".codex/skills/**/agents/openai.yaml",
        ".agents/skills/**/SKILL.md",
        ".agents/skills/**/agents/openai.yaml",
    ],
};

impl Profile for Codex {
    fn about(&self) -> &'static About {
        &ABOUT
    }

    fn settings_files(&self, db: &dyn Db, ws: Workspace) -> Vec<ctxgraph_db::settings::SettingsFile> {
        let path = codex_home(db, ws.host(db)).join("config.toml");
        vec![ctxgraph_db::settings::SettingsFile { kind: "user", label: "user config", path, rule: "CX5" }]
    }

    /// CX5/CX9/CX13: `config.toml`, and what ctxgraph reads of it: the project-doc budget,
    /// the skills settings and the context window, each where it was set.
    fn settings_report(
        &self,
        db: &dyn Db,
        ws: Workspace,
    ) -> Result<ctxgraph_db::settings::SettingsReport, ProfileError> {
        let host = ws.host(db);
        let config = super::config::codex_config(db, host).as_ref().map_err(would_not_start)?;
        let path = codex_home(db, host).join("config.toml");
        let mut report = self.settings_layers(db, ws);
        let budget_from = match &config.budget.source {
            BudgetSource::ConfigFile(file) => Some(file.as_path()),
            BudgetSource::Default | BudgetSource::CommandLine => None,
        };
        report.set_value(&["project_doc_max_bytes"], config.budget.bytes.into(), budget_from);
        if let Some(window) = config.context_window {
            report.set_value(&["model_context_window"], window.into(), Some(&path));
        }
        let skills = &config.skills;
        let from = |changed: bool| changed.then_some(path.as_path());
        let default = super::config::SkillsConfig::default();
        let include = skills.include_instructions;
        report.set_value(
            &["skills", "include_instructions"],
            include.into(),
            from(include != default.include_instructions),
        );
        report.set_value(
            &["skills", "bundled", "enabled"],
            skills.bundled.into(),
            from(skills.bundled != default.bundled),
        );
        Ok(report)
    }

    fn attaches_on_read(&self) -> bool {
        // Codex attaches nothing when its model reads a file: every rule file is in the
        // first message (CX2).
        false
    }

    fn settings(&self) -> &'static [&'static str] {
        &[MAX_BYTES, CONTEXT_WINDOW]
    }

    fn sections(&self) -> &'static [Section] {
        &[Section::Request]
    }

    fn wording(&self, search: &InstallationSearch<'_>) -> Option<ctxgraph_db::profile::Wording> {
        Some(Arc::new(super::wording::wording(search)))
    }

    fn fingerprints(&self) -> Option<Arc<dyn std::any::Any + Send + Sync>> {
        Some(Arc::new(Wording::fingerprints()))
    }

    fn layout(
        &self,
        db: &dyn Db,
        ws: Workspace,
        request: &Request,
    ) -> Result<ctxgraph_db::profile::Layout, ProfileError> {
        let ctx = agents_context(db, ws, Self::max_bytes(request)?).as_ref().map_err(would_not_start)?;
        let mut left_out: Vec<LeftOut> =
            ctx.docs.iter().filter(|d| !d.is_sent()).map(|d| left_out(d, &ctx.budget)).collect();
        let mut settings = vec![Setting {
            name: MAX_BYTES,
            value: ctx.budget.bytes.to_string(),
            from: match &ctx.budget.source {
                BudgetSource::ConfigFile(path) => Some(path.clone()),
                BudgetSource::Default | BudgetSource::CommandLine => None,
            },
        }];
        let skills = if request.section == Section::Request {
            let part = request_skills(db, ws, request)?;
            left_out.extend(part.left_out);
            settings.push(part.window);
            Some((part.message, part.note, part.wording))
        } else {
            None
        };
        let (skills_message, note, wording) = skills.unwrap_or((None, None, WordingSource::None));
        let agents_message = ctx.message.clone().unwrap_or_default();
        // CX10: the request's items are separate; the text shows them one after another,
        // a blank line between, skills first as Codex sends them.
        let text = match &skills_message {
            Some(skills) if !agents_message.is_empty() => format!("{}\n\n{agents_message}", skills.text),
            Some(skills) => skills.text.clone(),
            None => agents_message,
        };
        let mut builder = LayoutBuilder::new(text);
        if let Some(message) = &skills_message {
            for line in &message.lines {
                builder.block_at(line.range.start, Part {
                    source: Source::File(line.path.clone()),
                    placement: Placement::SystemMessage,
                    position: SKILLS_POSITION,
                    text: &message.text[line.range.clone()],
                    status: if line.cut { Status::Cut } else { Status::Sent },
                    rule: "CX10",
                    reason: "a line of the skills message: its name, description and path; its body is read only when the model opens the file (CX10)".to_owned(),
                    inlines: Vec::new(),
                });
            }
        }
        for doc in ctx.docs.iter().filter(|d| d.is_sent()) {
            builder.block(Part {
                source: Source::File(doc.source.clone()),
                placement: Placement::FirstUserMessage,
                position: POSITION,
                text: &doc.text,
                status: if matches!(doc.fate, Fate::Cut { .. }) { Status::Cut } else { Status::Sent },
                rule: match doc.scope {
                    Scope::Global => "CX1",
                    Scope::Project => "CX2",
                },
                reason: doc.reason(&ctx.budget),
                inlines: Vec::new(),
            });
        }
        let frame = Frame { cwd: ctx.cwd.clone(), root: ctx.git_root.clone(), left_out, settings, wording };
        let mut layout = frame.layout(self, builder);
        layout.note = note;
        Ok(layout)
    }

    fn session_costs(
        &self,
        db: &dyn Db,
        ws: Workspace,
        session: ctxgraph_db::files::File,
    ) -> Option<Result<SessionOccurrences, SessionFileError>> {
        Some(super::rollout::rollout_occurrences(db, ws, session).clone())
    }

    fn fate(&self, db: &dyn Db, ws: Workspace, _: &dyn TokenCounter, file: &Path) -> AgentFate {
        match agents_context(db, ws, None) {
            Ok(ctx) => {
                let skills = skills(db, ws);
                match skills.found.iter().find(|skill| skill.path == file) {
                    Some(skill) => super::fate::skill_fate(skill, skills.include_instructions),
                    None => super::fate::codex_fate(ctx, codex_home(db, ws.host(db)), file),
                }
            }
            Err(err) => ctxgraph_db::profile::not_sent(self.agent(), "CX5", would_not_start(err).to_string()),
        }
    }

    fn lint(
        &self,
        db: &dyn Db,
        ws: Workspace,
        _: &dyn TokenCounter,
        _: Budget,
    ) -> Result<Vec<Finding>, ProfileError> {
        let ctx = agents_context(db, ws, None).as_ref().map_err(would_not_start)?;
        let skills = skills(db, ws);
        let (window, _) = Codex::context_window(db, ws, &Request::default())?;
        let mut findings = super::lint::codex_findings(ctx);
        findings.extend(super::lint::skill_findings(skills, window));
        Ok(findings)
    }
}
