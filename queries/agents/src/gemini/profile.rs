//! The Gemini CLI profile's answers in the shared shape ([`ctxgraph_db::profile`]).

use std::path::Path;

use ctxgraph_db::agent::Agent;
use ctxgraph_db::db::{Db, Workspace};
use ctxgraph_db::lint::{Budget, Finding};
use ctxgraph_db::profile::AgentFate;
use ctxgraph_db::profile::{
    About, Frame, LayoutBuilder, LeftOut, Part, Placement, Profile, ProfileError, ReadLayout, Request,
    Setting, Source, Status, WordingSource,
};
use ctxgraph_db::tokens::TokenCounter;

use super::nearby::gemini_read_context;
use super::settings::ImportFormat;
use super::{Doc, Fate, GeminiError, Outcome, Scope, gemini_context, gemini_home};

/// Gemini CLI 0.61.0.
pub struct Gemini;

/// A settings file as Gemini CLI refuses it (GM5), with the line for a snippet.
fn would_not_start(err: &GeminiError) -> ProfileError {
    let GeminiError::Settings { path, line, column, message, line_text } = err;
    let fault =
        super::settings::settings_fault(path, (*line, *column), line_text, (err.to_string(), message), "GM5");
    ProfileError::WouldNotStart { agent: Agent::Gemini.name(), fault: Box::new(fault) }
}

fn placement(scope: Scope) -> Placement {
    match scope {
        Scope::Global => Placement::SystemMessage,
        Scope::Project => Placement::FirstUserMessage,
        Scope::Read => Placement::ToolResult,
    }
}

fn rule(scope: Scope) -> &'static str {
    match scope {
        Scope::Global => "GM1",
        Scope::Project => "GM2",
        Scope::Read => "GM8",
    }
}

fn part(doc: &Doc) -> Part<'_> {
    Part {
        source: Source::File(doc.source.clone()),
        placement: placement(doc.scope),
        position: doc.scope.placement(),
        text: &doc.text,
        status: Status::Sent,
        rule: rule(doc.scope),
        reason: doc.reason(),
        inlines: doc.imports.iter().filter(|i| i.is_inlined()).map(|i| i.resolved.clone()).collect(),
    }
}

fn left_out(doc: &Doc) -> LeftOut {
    let (fate, rule) = match doc.fate {
        Fate::Included => ("sent", rule(doc.scope)),
        Fate::Empty => ("empty", "GM7"),
        Fate::Unreadable { .. } => ("unreadable", rule(doc.scope)),
    };
    LeftOut { source: doc.source.clone(), fate, rule, reason: doc.reason() }
}

/// The `@imports` of a sent file that Gemini does not inline (GM4).
fn imports_left_out(doc: &Doc) -> impl Iterator<Item = LeftOut> + '_ {
    doc.imports.iter().filter(|i| !i.is_inlined()).map(|import| LeftOut {
        source: import.resolved.clone(),
        fate: match import.outcome {
            Outcome::Inlined => "importer_empty",
            Outcome::InCode => "in_code",
            Outcome::OutsideProject { .. } => "outside_project",
            Outcome::AlreadyProcessed => "import_cycle",
            Outcome::Missing => "missing",
            Outcome::Failed { .. } => "import_failed",
            Outcome::Skipped => "skipped",
            Outcome::DepthLimit => "too_deep",
        },
        rule: "GM4",
        reason: super::explain::import_reason(import),
    })
}

const ABOUT: About = About {
    agent: Agent::Gemini,
    title: "Gemini CLI",
    release: "gemini-cli-0.61.0",
    doc: "docs/profiles/gemini.md",
    files: &["GEMINI.md", ".gemini/settings.json"],
};

/// GEMINI.md (`context.fileName`'s default), which the other agents do not read.
static OWN_RULES_FILE: ctxgraph_db::profile::OwnRulesFile = ctxgraph_db::profile::OwnRulesFile {
    name: super::settings::DEFAULT_CONTEXT_FILENAME,
    hint: "keep one file: make GEMINI.md `@./AGENTS.md` (Gemini inlines it), or a symlink",
};

/// Gemini CLI 0.61.0 (its bundled docs/hooks/reference.md): `AfterTool` in
/// `.gemini/settings.json`, after the file tools `write_file` and `replace`.
static HOOK: ctxgraph_db::profile::HookFormat = ctxgraph_db::profile::HookFormat {
    settings: ".gemini/settings.json",
    event: "AfterTool",
    matcher: "write_file|replace",
    answer: ctxgraph_db::profile::HookAnswer::AdditionalContext { event_name: Some("AfterTool") },
};

impl Profile for Gemini {
    fn about(&self) -> &'static About {
        &ABOUT
    }

    fn settings_files(&self, db: &dyn Db, ws: Workspace) -> Vec<ctxgraph_db::settings::SettingsFile> {
        super::settings::settings_files(db, ws)
    }

    /// GM6: the files, and the context settings in effect, each from the file that set it
    /// (the file names as Gemini CLI ends up searching them, `GEMINI.md` added).
    fn settings_report(
        &self,
        db: &dyn Db,
        ws: Workspace,
    ) -> Result<ctxgraph_db::settings::SettingsReport, ProfileError> {
        let settings = super::settings::gemini_settings(db, ws).as_ref().map_err(would_not_start)?;
        let mut report = self.settings_layers(db, ws);
        let names = serde_json::json!(settings.filenames);
        report.set_value(&["context", "fileName"], names, settings.filenames_from.as_deref());
        let markers = serde_json::json!(settings.boundary_markers);
        report.set_value(
            &["context", "memoryBoundaryMarkers"],
            markers,
            settings.boundary_markers_from.as_deref(),
        );
        let format = serde_json::to_value(settings.import_format).unwrap_or_default();
        report.set_value(&["context", "importFormat"], format, settings.import_format_from.as_deref());
        Ok(report)
    }

    fn hook(&self) -> Option<&'static ctxgraph_db::profile::HookFormat> {
        Some(&HOOK)
    }

    fn own_rules_file(&self) -> Option<&'static ctxgraph_db::profile::OwnRulesFile> {
        Some(&OWN_RULES_FILE)
    }

    fn layout(
        &self,
        db: &dyn Db,
        ws: Workspace,
        _: &Request,
    ) -> Result<ctxgraph_db::profile::Layout, ProfileError> {
        let ctx = gemini_context(db, ws).as_ref().map_err(would_not_start)?;
        let mut builder = LayoutBuilder::new(ctx.text());
        for doc in ctx.docs.iter().filter(|d| d.is_sent()) {
            builder.block(part(doc));
        }
        let settings = &ctx.settings;
        let mut left: Vec<LeftOut> = ctx.docs.iter().filter(|d| !d.is_sent()).map(left_out).collect();
        left.extend(ctx.docs.iter().filter(|d| d.is_sent()).flat_map(imports_left_out));
        let frame = Frame {
            cwd: ctx.cwd.clone(),
            root: ctx.project_root.clone(),
            left_out: left,
            settings: vec![
                Setting {
                    name: "context.fileName",
                    value: settings.filenames.join(", "),
                    from: settings.filenames_from.clone(),
                },
                Setting {
                    name: "context.memoryBoundaryMarkers",
                    value: settings.boundary_markers.join(", "),
                    from: settings.boundary_markers_from.clone(),
                },
                Setting {
                    name: "context.importFormat",
                    value: match settings.import_format {
                        ImportFormat::Tree => "tree",
                        ImportFormat::Flat => "flat",
                    }
                    .to_owned(),
                    from: None,
                },
            ],
            wording: WordingSource::None,
        };
        Ok(frame.layout(self, builder))
    }

    fn read(
        &self,
        db: &dyn Db,
        ws: Workspace,
        file: &Path,
        _: &Request,
    ) -> Option<Result<ReadLayout, ProfileError>> {
        let read = match gemini_read_context(db, ws, file.to_path_buf()) {
            Ok(read) => read,
            Err(err) => return Some(Err(would_not_start(err))),
        };
        let mut builder = LayoutBuilder::new(read.text.clone().unwrap_or_default());
        for doc in read.docs.iter().filter(|d| d.is_sent()) {
            builder.block(part(doc));
        }
        let mut left: Vec<LeftOut> = read.docs.iter().filter(|d| !d.is_sent()).map(left_out).collect();
        left.extend(read.already_loaded.iter().map(|path| LeftOut {
            source: path.clone(),
            fate: "already_loaded",
            rule: "GM8",
            reason: "loaded at start-up: a read does not attach it again (GM8)".to_owned(),
        }));
        let mut layout = builder.read(self.agent(), file, left, WordingSource::None);
        layout.note.clone_from(&read.outside);
        Some(Ok(layout))
    }

    fn fate(&self, db: &dyn Db, ws: Workspace, _: &dyn TokenCounter, file: &Path) -> AgentFate {
        match gemini_context(db, ws) {
            Ok(ctx) => super::explain::file_fate(ctx, gemini_home(db, ws.host(db)), file),
            Err(err) => ctxgraph_db::profile::not_sent(self.agent(), "GM5", would_not_start(err).to_string()),
        }
    }

    fn lint(
        &self,
        db: &dyn Db,
        ws: Workspace,
        _: &dyn TokenCounter,
        _: Budget,
    ) -> Result<Vec<Finding>, ProfileError> {
        let ctx = gemini_context(db, ws).as_ref().map_err(would_not_start)?;
        let mut findings = super::lint::gemini_findings(ctx);
        let workspace = ctx.cwd.join(super::GEMINI_DIR).join("settings.json");
        let settings = &ctx.settings;
        findings.extend(super::lint::context_name_findings(
            db,
            (self.title(), "GM6"),
            (&settings.filenames, settings.filenames_from.as_deref()),
            &workspace,
            &[super::settings::DEFAULT_CONTEXT_FILENAME],
            ctx.docs.iter().map(|doc| doc.source.as_path()),
        ));
        Ok(findings)
    }
}
