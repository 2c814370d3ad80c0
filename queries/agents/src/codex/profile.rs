//! The Codex profile's answers in the shared shape ([`ctxgraph_db::profile`]).

use std::path::Path;

use ctxgraph_db::agent::Agent;
use ctxgraph_db::db::{Db, Workspace};
use ctxgraph_db::lint::{Budget, Finding};
use ctxgraph_db::profile::AgentFate;
use ctxgraph_db::profile::{
    About, Frame, LayoutBuilder, LeftOut, Part, Placement, Profile, ProfileError, Request, Setting, Source,
    Status, WordingSource,
};
use ctxgraph_db::tokens::TokenCounter;

use super::{BudgetSource, Doc, Fate, Scope, agents_context, config::codex_home};

/// Codex CLI 0.171.0.
pub struct Codex;

/// Where the message goes (CX4).
const POSITION: &str = "a user message before the first prompt: `# AGENTS.md instructions`";

/// `-c project_doc_max_bytes=N`, the one Codex setting ctxgraph models.
const MAX_BYTES: &str = "project_doc_max_bytes";

impl Codex {
    fn max_bytes(request: &Request) -> Result<Option<u64>, ProfileError> {
        let mut max_bytes = None;
        for (key, value) in &request.settings {
            if key == MAX_BYTES {
                let bytes = value.trim().parse::<u64>().map_err(|err| {
                    ProfileError::Setting(format!(
                        "-c {key}={value}: {MAX_BYTES} must be a non-negative integer ({err})"
                    ))
                })?;
                max_bytes = Some(bytes);
            }
        }
        Ok(max_bytes)
    }
}

fn would_not_start(err: &super::CodexError) -> ProfileError {
    ProfileError::WouldNotStart { agent: Agent::Codex.name(), message: err.to_string() }
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
    files: &[super::AGENTS_NAME, super::OVERRIDE_NAME],
};

impl Profile for Codex {
    fn about(&self) -> &'static About {
        &ABOUT
    }

    fn attaches_on_read(&self) -> bool {
        // Codex attaches nothing when its model reads a file: every rule file is in the
        // first message (CX2).
        false
    }

    fn settings(&self) -> &'static [&'static str] {
        &[MAX_BYTES]
    }

    fn layout(
        &self,
        db: &dyn Db,
        ws: Workspace,
        request: &Request,
    ) -> Result<ctxgraph_db::profile::Layout, ProfileError> {
        let ctx = agents_context(db, ws, Self::max_bytes(request)?).as_ref().map_err(would_not_start)?;
        let mut builder = LayoutBuilder::new(ctx.message.clone().unwrap_or_default());
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
        let from = match &ctx.budget.source {
            BudgetSource::ConfigFile(path) => Some(path.clone()),
            BudgetSource::Default | BudgetSource::CommandLine => None,
        };
        let frame = Frame {
            cwd: ctx.cwd.clone(),
            root: ctx.git_root.clone(),
            left_out: ctx.docs.iter().filter(|d| !d.is_sent()).map(|d| left_out(d, &ctx.budget)).collect(),
            settings: vec![Setting { name: MAX_BYTES, value: ctx.budget.bytes.to_string(), from }],
            wording: WordingSource::None,
        };
        Ok(frame.layout(self, builder))
    }

    fn fate(&self, db: &dyn Db, ws: Workspace, _: &dyn TokenCounter, file: &Path) -> AgentFate {
        match agents_context(db, ws, None) {
            Ok(ctx) => super::fate::codex_fate(ctx, codex_home(db, ws.host(db)), file),
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
        Ok(super::lint::codex_findings(ctx))
    }
}
