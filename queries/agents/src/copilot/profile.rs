//! The Copilot CLI profile's answers in the shared shape ([`ctxgraph_db::profile`]). Copilot's own
//! words come with the request ([`Request::wording`] as a [`Prose`]), loaded by the engine
//! from the installation; without them the text has placeholders (CP16).

use std::borrow::Cow;
use std::path::Path;

use ctxgraph_db::agent::Agent;
use ctxgraph_db::db::{Db, Workspace};
use ctxgraph_db::profile::AgentFate;
use ctxgraph_db::profile::{
    About, Frame, LayoutBuilder, LeftOut, Part, Placement as Where, Profile, ProfileError, ReadLayout,
    Request, Setting, Source, Status,
};
use ctxgraph_db::tokens::{BytesPerFour, TokenCounter};

use super::nearby::reminder;
use super::{
    DEFAULT_MAX_PROMPT_TOKENS, Fate, Import, Kind, Outcome, Placement, Prose, RuleFile, copilot_context,
    copilot_read,
};

/// GitHub Copilot CLI 1.0.102.
pub struct Copilot;

/// The prose the request carries, or placeholders.
fn prose(request: &Request) -> Cow<'_, Prose> {
    request.wording::<Prose>().map_or_else(
        || Cow::Owned(Prose::unavailable("Copilot CLI's installation was not looked for")),
        Cow::Borrowed,
    )
}

fn rule(file: &RuleFile) -> &'static str {
    match (file.placement, file.kind) {
        (Placement::Block, _) => "CP2",
        (Placement::Text, _) => "CP5",
        (Placement::TableRow, _) => "CP7",
        (Placement::Read, _) if !file.patterns.is_empty() => "CP11",
        (Placement::Read, _) => "CP12",
    }
}

fn inlines(file: &RuleFile) -> Vec<std::path::PathBuf> {
    file.imports.iter().filter(|i| i.outcome == Outcome::Inlined).map(|i| i.target.clone()).collect()
}

fn left_out(file: &RuleFile) -> LeftOut {
    let (fate, rule) = match file.fate {
        Fate::Sent | Fate::Listed => ("sent", rule(file)),
        Fate::Duplicate { .. } => ("duplicate", "CP4"),
        Fate::SameFile { .. } => ("same_file", "CP4"),
        Fate::Excluded => ("excluded", "CP6"),
        Fate::Unreadable { .. } => ("unreadable", rule(file)),
        Fate::NotMatched => ("not_matched", if file.kind == Kind::Model { "CP12" } else { "CP11" }),
    };
    LeftOut { source: file.source.clone(), fate, rule, reason: file.reason() }
}

fn import_left_out(import: &Import) -> LeftOut {
    let fate = match import.outcome {
        Outcome::Inlined => "inlined",
        Outcome::AlreadyLoaded => "already_loaded",
        Outcome::Missing => "missing",
        Outcome::NotAFile => "not_a_file",
        Outcome::Outside => "outside",
        Outcome::TooDeep => "too_deep",
    };
    LeftOut {
        source: import.target.clone(),
        fate,
        rule: "CP10",
        reason: format!("`@{}` in {}: {}", import.token, import.from.display(), import.reason()),
    }
}

fn part<'a>(file: &RuleFile, text: &'a str, placement: Where) -> Part<'a> {
    Part {
        source: Source::File(file.source.clone()),
        placement,
        position: file.placement.describe(),
        text,
        status: Status::Sent,
        rule: rule(file),
        reason: file.reason(),
        inlines: inlines(file),
    }
}

const ABOUT: About = About {
    agent: Agent::Copilot,
    title: "Copilot CLI",
    release: "copilot-1.0.102",
    doc: "docs/profiles/copilot.md",
    files: &[
        ".github/copilot-instructions.md",
        ".github/instructions/**/*.instructions.md",
        "AGENTS.md",
        "CLAUDE.md",
        "GEMINI.md",
        ".claude/CLAUDE.md",
        ".claude/rules/**",
    ],
};

impl Profile for Copilot {
    fn about(&self) -> &'static About {
        &ABOUT
    }

    fn wording(
        &self,
        search: &ctxgraph_db::profile::InstallationSearch<'_>,
    ) -> Option<ctxgraph_db::profile::Wording> {
        Some(std::sync::Arc::new(super::installation::prose(search)))
    }

    fn fingerprints(&self) -> Option<std::sync::Arc<dyn std::any::Any + Send + Sync>> {
        Some(std::sync::Arc::new(Prose::fingerprints()))
    }

    fn layout(
        &self,
        db: &dyn Db,
        ws: Workspace,
        request: &Request,
    ) -> Result<ctxgraph_db::profile::Layout, ProfileError> {
        let prose = prose(request);
        let ctx = copilot_context(db, ws);
        let (text, spans) = ctx.layout(&prose);
        let mut builder = LayoutBuilder::new(text);
        let sent: Vec<&RuleFile> = ctx.sent().collect();
        // Every span but the table's introduction is a sent file.
        for span in &spans {
            let Some(source) = &span.source else { continue };
            if let Some(file) = sent.iter().find(|f| f.source == *source && f.placement == span.placement) {
                builder.block_at(span.range.0, part(file, &file.text, Where::SystemMessage));
            }
        }
        let mut left: Vec<LeftOut> = ctx.files.iter().filter(|f| !f.is_sent()).map(left_out).collect();
        left.extend(
            sent.iter()
                .flat_map(|f| f.imports.iter())
                .filter(|i| i.outcome != Outcome::Inlined)
                .map(import_left_out),
        );
        left.extend(ctx.not_read.iter().map(|n| LeftOut {
            source: n.source.clone(),
            fate: "not_read",
            rule: "CP15",
            reason: n.reason.to_owned(),
        }));
        let frame = Frame {
            cwd: ctx.cwd.clone(),
            root: ctx.git_root.clone(),
            left_out: left,
            settings: vec![
                Setting {
                    name: "COPILOT_HOME",
                    value: ctxgraph_db::path::display(&ctx.copilot_home),
                    from: None,
                },
                Setting {
                    name: "COPILOT_PROVIDER_MAX_PROMPT_TOKENS",
                    value: format!("{DEFAULT_MAX_PROMPT_TOKENS} (Copilot's default for a BYOK model)"),
                    from: None,
                },
            ],
            wording: prose.source.clone(),
        };
        let mut layout = frame.layout(self, builder);
        // CP13 with the crude count a layout has (`fate` and `lint` take the host's counter).
        let budget = ctx.budget(&prose, &BytesPerFour);
        if budget.refused {
            layout.note = Some(format!(
                "Copilot would send nothing: this section (about {} tokens, {}) and its own prompt and tools (about {}) pass {} tokens, {}% of the model's prompt limit, so it refuses the run (CP13)",
                budget.section_tokens,
                budget.counter,
                budget.overhead_tokens,
                budget.limit_tokens,
                super::BUDGET_PERCENT
            ));
        }
        Ok(layout)
    }

    fn read(
        &self,
        db: &dyn Db,
        ws: Workspace,
        file: &Path,
        request: &Request,
    ) -> Option<Result<ReadLayout, ProfileError>> {
        let prose = prose(request);
        let read = copilot_read(db, ws, file.to_path_buf());
        let mut builder = LayoutBuilder::new(read.text(&prose).unwrap_or_default());
        let reminders: Vec<(&RuleFile, String)> = read.sent().map(|f| (f, reminder(f, &prose))).collect();
        for (sent, text) in &reminders {
            builder.block(part(sent, text, Where::AfterToolResult));
        }
        let left = read.files.iter().filter(|f| f.fate != Fate::Sent).map(left_out).collect();
        let mut layout = builder.read(self.agent(), file, left, prose.source.clone());
        layout.note.clone_from(&read.refused);
        Some(Ok(layout))
    }

    fn fate(&self, db: &dyn Db, ws: Workspace, _: &dyn TokenCounter, file: &Path) -> AgentFate {
        super::explain::file_fate(copilot_context(db, ws), file)
    }
}
