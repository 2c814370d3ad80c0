//! The Qwen Code profile's answers in the shared shape ([`ctxgraph_db::profile`]). Qwen's own words
//! (the output-language file it writes, QW3) come with the request ([`Request::wording`] as a
//! [`Wording`]), loaded by the engine from the installation; without them that block holds a
//! placeholder.

use std::borrow::Cow;
use std::path::Path;

use crate::gemini::ImportFormat;
use ctxgraph_db::agent::Agent;
use ctxgraph_db::db::{Db, Workspace};
use ctxgraph_db::lint::{Budget, Finding};
use ctxgraph_db::profile::AgentFate;
use ctxgraph_db::profile::{
    About, Frame, Layout, LayoutBuilder, LeftOut, Part, Placement, Profile, ProfileError, ReadLayout,
    Request, Setting, Source, Status, WordingSource,
};
use ctxgraph_db::tokens::TokenCounter;

use super::explain::{file_fate, import_reason, import_rule};
use super::nearby::qwen_read_context;
use super::{Doc, Fate, Kind, QwenError, Rule, RuleFate, Wording, qwen_context, qwen_dir};

/// Qwen Code 0.24.4.
pub struct QwenCode;

/// Where the context files go (QW6).
const CONTEXT_POSITION: &str =
    "system message, after Qwen's own prompt and its `---` line: the context files";
/// Where the rules without `paths:` go (QW9).
const RULE_POSITION: &str = "system message, after the context files: the rules";
/// Where a read's rules go (QW10).
const READ_POSITION: &str = "the read_file result, in a <system-reminder> after what the tool returns";

/// A settings file as Qwen Code refuses it (QW2), with the line for a snippet.
fn would_not_start(err: &QwenError) -> ProfileError {
    let QwenError::Settings { path, line, column, message, line_text } = err;
    let fault = crate::gemini::settings::settings_fault(
        path,
        (*line, *column),
        line_text,
        (err.to_string(), message),
        "QW2",
    );
    ProfileError::WouldNotStart { agent: Agent::QwenCode.name(), fault: Box::new(fault) }
}

/// The wording the request carries, or placeholders.
fn wording(request: &Request) -> Cow<'_, Wording> {
    request.wording::<Wording>().map_or_else(
        || Cow::Owned(Wording::unavailable("Qwen Code's installation was not looked for")),
        Cow::Borrowed,
    )
}

fn doc_rule(doc: &Doc) -> &'static str {
    match doc.kind {
        Kind::Global | Kind::Home | Kind::Project => "QW1",
        Kind::OutputLanguage => "QW3",
        Kind::Local => "QW4",
    }
}

fn doc_left_out(doc: &Doc) -> LeftOut {
    let fate = match doc.fate {
        Fate::Included => "sent",
        Fate::Empty => "empty",
        Fate::Unreadable { .. } => "unreadable",
        Fate::Duplicate { .. } => "duplicate",
    };
    LeftOut { source: doc.source.clone(), fate, rule: "QW5", reason: doc.reason() }
}

fn rule_left_out(rule: &Rule) -> LeftOut {
    let (fate, id) = match rule.fate {
        RuleFate::Sent => ("sent", "QW9"),
        RuleFate::OnRead => ("conditional", "QW10"),
        RuleFate::Empty => ("empty", "QW9"),
        RuleFate::Unreadable { .. } => ("unreadable", "QW9"),
    };
    LeftOut { source: rule.source.clone(), fate, rule: id, reason: rule.reason() }
}

/// The `@imports` of a sent file that Qwen does not inline (QW7, QW8).
fn imports_left_out(doc: &Doc) -> impl Iterator<Item = LeftOut> + '_ {
    doc.imports.iter().filter(|i| !i.is_inlined()).map(|import| LeftOut {
        source: import.resolved.clone(),
        fate: match import.outcome {
            crate::gemini::Outcome::Inlined => "importer_empty",
            crate::gemini::Outcome::InCode => "in_code",
            crate::gemini::Outcome::OutsideProject { .. } => "outside_project",
            crate::gemini::Outcome::AlreadyProcessed => "import_cycle",
            crate::gemini::Outcome::Failed { .. } => "import_failed",
            crate::gemini::Outcome::Missing => "missing",
            crate::gemini::Outcome::Skipped => "skipped",
            crate::gemini::Outcome::DepthLimit => "too_deep",
        },
        rule: import_rule(import),
        reason: import_reason(import),
    })
}

fn rule_part<'a>(rule: &'a Rule, placement: Placement, position: &'static str, reason: String) -> Part<'a> {
    Part {
        source: Source::File(rule.source.clone()),
        placement,
        position,
        text: &rule.text,
        status: Status::Sent,
        rule: if placement == Placement::ToolResult { "QW10" } else { "QW9" },
        reason,
        inlines: Vec::new(),
    }
}

const ABOUT: About = About {
    agent: Agent::QwenCode,
    title: "Qwen Code",
    release: "qwen-code-0.24.4",
    doc: "docs/profiles/qwen-code.md",
    files: &[
        "QWEN.md",
        "QWEN.local.md",
        "AGENTS.md",
        ".qwen/rules/**",
        ".qwen/settings.json",
        ".qwen/output-language.md",
    ],
};

/// Qwen Code 0.24.4 (its bundled qc-helper/docs/features/hooks.md): `PostToolUse` in
/// `.qwen/settings.json`, after the runtime tool ids `write_file` and `edit` (anchored:
/// `edit` alone would match `notebook_edit`).
static HOOK: ctxgraph_db::profile::HookFormat = ctxgraph_db::profile::HookFormat {
    settings: ".qwen/settings.json",
    event: "PostToolUse",
    matcher: "^(write_file|edit)$",
    answer: ctxgraph_db::profile::HookAnswer::AdditionalContext { event_name: None },
};

impl Profile for QwenCode {
    fn about(&self) -> &'static About {
        &ABOUT
    }

    fn settings_files(&self, db: &dyn Db, ws: Workspace) -> Vec<ctxgraph_db::settings::SettingsFile> {
        super::settings::settings_files(db, ws)
    }

    /// QW2: the files, and the context settings in effect, each from the file that set it.
    fn settings_report(
        &self,
        db: &dyn Db,
        ws: Workspace,
    ) -> Result<ctxgraph_db::settings::SettingsReport, ProfileError> {
        let settings = super::settings::qwen_settings(db, ws).as_ref().map_err(would_not_start)?;
        let mut report = self.settings_layers(db, ws);
        let names = serde_json::json!(settings.filenames);
        report.set_value(&["context", "fileName"], names, settings.filenames_from.as_deref());
        let format = serde_json::to_value(settings.import_format).unwrap_or_default();
        report.set_value(&["context", "importFormat"], format, settings.import_format_from.as_deref());
        if let Some(language) = &settings.output_language {
            let from = settings.output_language_from.as_deref();
            report.set_value(&["general", "outputLanguage"], language.as_str().into(), from);
        }
        Ok(report)
    }

    fn wording(
        &self,
        search: &ctxgraph_db::profile::InstallationSearch<'_>,
    ) -> Option<ctxgraph_db::profile::Wording> {
        Some(std::sync::Arc::new(super::installation::wording(search)))
    }

    fn hook(&self) -> Option<&'static ctxgraph_db::profile::HookFormat> {
        Some(&HOOK)
    }

    fn fingerprints(&self) -> Option<std::sync::Arc<dyn std::any::Any + Send + Sync>> {
        Some(std::sync::Arc::new(Wording::fingerprints()))
    }

    fn layout(&self, db: &dyn Db, ws: Workspace, request: &Request) -> Result<Layout, ProfileError> {
        let wording = wording(request);
        let ctx = qwen_context(db, ws).as_ref().map_err(would_not_start)?;
        let mut builder = LayoutBuilder::new(ctx.text(&wording));
        let blocks: Vec<(&Doc, String)> =
            ctx.docs.iter().filter(|d| d.is_sent()).map(|d| (d, d.block(&wording))).collect();
        for (doc, text) in &blocks {
            builder.block(Part {
                source: Source::File(doc.source.clone()),
                placement: Placement::SystemMessage,
                position: CONTEXT_POSITION,
                text,
                status: Status::Sent,
                rule: doc_rule(doc),
                reason: doc.reason(),
                inlines: doc.imports.iter().filter(|i| i.is_inlined()).map(|i| i.resolved.clone()).collect(),
            });
        }
        for rule in ctx.rules.iter().filter(|r| r.fate == RuleFate::Sent) {
            builder.block(rule_part(rule, Placement::SystemMessage, RULE_POSITION, rule.reason()));
        }
        let mut left: Vec<LeftOut> = ctx.docs.iter().filter(|d| !d.is_sent()).map(doc_left_out).collect();
        left.extend(ctx.docs.iter().filter(|d| d.is_sent()).flat_map(imports_left_out));
        left.extend(ctx.rules.iter().filter(|r| r.fate != RuleFate::Sent).map(rule_left_out));
        let settings = &ctx.settings;
        let frame = Frame {
            cwd: ctx.cwd.clone(),
            root: ctx.git_root.clone(),
            left_out: left,
            settings: vec![
                Setting {
                    name: "context.fileName",
                    value: settings.filenames.join(", "),
                    from: settings.filenames_from.clone(),
                },
                Setting {
                    name: "context.importFormat",
                    value: match settings.import_format {
                        ImportFormat::Tree => "tree",
                        ImportFormat::Flat => "flat",
                    }
                    .to_owned(),
                    from: settings.import_format_from.clone(),
                },
                Setting {
                    name: "general.outputLanguage",
                    value: settings.output_language.clone().unwrap_or_else(|| "auto".to_owned()),
                    from: settings.output_language_from.clone(),
                },
            ],
            wording: if ctx.has_wording() { wording.source.clone() } else { WordingSource::None },
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
        let ctx = match qwen_context(db, ws) {
            Ok(ctx) => ctx,
            Err(err) => return Some(Err(would_not_start(err))),
        };
        let read = match qwen_read_context(db, ws, file.to_path_buf()) {
            Ok(read) => read,
            Err(err) => return Some(Err(would_not_start(err))),
        };
        let mut builder = LayoutBuilder::new(read.text.clone().unwrap_or_default());
        let matched = read.matched_as.join(" or ");
        let on_read = ctx.rules.iter().filter(|r| r.fate == RuleFate::OnRead);
        let mut left = Vec::new();
        for rule in on_read {
            let globs = rule.paths.as_deref().unwrap_or_default().join(", ");
            if read.attached.contains(&rule.source) {
                let reason = format!("its `paths:` ({globs}) match {matched}, relative to the root (QW10)");
                builder.block(rule_part(rule, Placement::ToolResult, READ_POSITION, reason));
            } else if !read.matched_as.is_empty() {
                left.push(LeftOut {
                    source: rule.source.clone(),
                    fate: "no_match",
                    rule: "QW10",
                    reason: format!("its `paths:` ({globs}) do not match {matched} (QW10)"),
                });
            }
        }
        left.extend(read.unattached_context.iter().map(|path| LeftOut {
            source: path.clone(),
            fate: "not_attached",
            rule: "QW11",
            reason: "a context file near the file read: Qwen never attaches context files to a read, and did not send this one at start-up (QW11)".to_owned(),
        }));
        // A read's reminder holds only rule blocks: no sentence of Qwen's own.
        let mut layout = builder.read(self.agent(), file, left, WordingSource::None);
        if read.matched_as.is_empty() {
            layout.note = Some(format!(
                "outside {}, the root rules are matched against: Qwen attaches nothing (QW10)",
                ctxgraph_db::path::display(&ctx.root)
            ));
        }
        Some(Ok(layout))
    }

    fn fate(&self, db: &dyn Db, ws: Workspace, _: &dyn TokenCounter, file: &Path) -> AgentFate {
        match qwen_context(db, ws) {
            Ok(ctx) => file_fate(ctx, qwen_dir(db, ws), ws.host(db).home(db), file),
            Err(err) => ctxgraph_db::profile::not_sent(self.agent(), "QW2", would_not_start(err).to_string()),
        }
    }

    fn lint(
        &self,
        db: &dyn Db,
        ws: Workspace,
        _: &dyn TokenCounter,
        _: Budget,
    ) -> Result<Vec<Finding>, ProfileError> {
        let ctx = qwen_context(db, ws).as_ref().map_err(would_not_start)?;
        let workspace = ctx.cwd.join(super::settings::QWEN_DIR).join("settings.json");
        let settings = &ctx.settings;
        Ok(crate::gemini::lint::context_name_findings(
            db,
            (self.title(), "QW2"),
            (&settings.filenames, settings.filenames_from.as_deref()),
            &workspace,
            &[],
            ctx.docs.iter().map(|doc| doc.source.as_path()),
        ))
    }
}
