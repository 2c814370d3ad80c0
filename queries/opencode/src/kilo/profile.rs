//! The Kilo Code profile's answers in the shared shape ([`ctxgraph_db::profile`]). Kilo's
//! text holds no sentence of its own: `Instructions from: ` and `<system-reminder>` are
//! opencode's format markers (I9, N5), so its wording is [`WordingSource::None`].

use std::path::Path;

use ctxgraph_db::agent::Agent;
use ctxgraph_db::db::{Db, Workspace};
use ctxgraph_db::lint::{Budget, Finding};
use ctxgraph_db::profile::{
    About, AgentFate, Frame, Layout, LayoutBuilder, LeftOut, Listed, ListedOrder, Part, Placement, Profile,
    ProfileError, ReadLayout, Request, Source, Status, WordingSource,
};
use ctxgraph_db::tokens::TokenCounter;

use super::nearby::{Skip, kilo_read};
use super::{Doc, KiloContext, kilo_context, rule_names};

/// Kilo Code 7.7.7.
pub struct Kilo;

/// Where the start-up files go (KI5).
const SYSTEM_POSITION: &str =
    "system message, after Kilo's own prompt: one `Instructions from:` part per file";
/// Where a read's files go (KI11).
const READ_POSITION: &str = "the read tool's result: a <system-reminder> after the file's lines";

const ABOUT: About = About {
    agent: Agent::Kilo,
    title: "Kilo Code",
    release: "kilo-7.7.7",
    doc: "docs/profiles/kilo.md",
    files: &[
        "AGENTS.md",
        "CLAUDE.md",
        "CONTEXT.md",
        ".kilocoderules*",
        ".kilocode/rules*/**",
        ".kilo/rules*/**",
        "kilo.json",
        "opencode.json",
    ],
};

/// A file read at start-up and not sent, as one word and a reason.
fn doc_left_out(doc: &Doc) -> LeftOut {
    let (fate, rule, reason) = match &doc.read.refused {
        Some(refused) => (refused.fate, refused.rule, refused.why.clone()),
        None => ("empty", "KI5", "it reads as empty: no part (KI5)".to_owned()),
    };
    LeftOut { source: doc.source.clone(), fate, rule, reason: format!("{}; {reason}", doc.kind.describe()) }
}

impl Profile for Kilo {
    fn about(&self) -> &'static About {
        &ABOUT
    }

    /// KI13: each of its global folder's names (found or not), then the project's config
    /// files it found, in its merge order.
    fn settings_files(&self, db: &dyn Db, ws: Workspace) -> Vec<ctxgraph_db::settings::SettingsFile> {
        let ctx = kilo_context(db, ws);
        let file =
            |kind, label, path| ctxgraph_db::settings::SettingsFile { kind, label, path, rule: "KI13" };
        let global = super::config::GLOBAL_FILES
            .iter()
            .map(|name| file("global", "global config", ctx.config_dir.join(name)));
        let project = ctx.configs.iter().filter(|config| !config.global);
        global.chain(project.map(|config| file("project", "project config", config.path.clone()))).collect()
    }

    /// KI13: the files (one Kilo skips whole says why), and the `instructions` they add up
    /// to, each entry from the file that first names it.
    fn settings_report(
        &self,
        db: &dyn Db,
        ws: Workspace,
    ) -> Result<ctxgraph_db::settings::SettingsReport, ProfileError> {
        let mut report = self.settings_layers(db, ws);
        add_instructions(&mut report, kilo_context(db, ws));
        Ok(report)
    }

    fn layout(&self, db: &dyn Db, ws: Workspace, _: &Request) -> Result<Layout, ProfileError> {
        let ctx = kilo_context(db, ws);
        let mut builder = LayoutBuilder::new(ctx.text());
        let sent: Vec<(&Doc, String)> =
            ctx.docs.iter().filter(|d| d.is_sent()).map(|d| (d, d.block())).collect();
        for (doc, text) in &sent {
            builder.block(Part {
                source: Source::File(doc.source.clone()),
                placement: Placement::SystemMessage,
                position: SYSTEM_POSITION,
                text,
                status: Status::Sent,
                rule: doc.kind.rule(),
                reason: doc.kind.describe(),
                inlines: doc.read.inlines.clone(),
            });
        }
        let mut left: Vec<LeftOut> = ctx.docs.iter().filter(|d| !d.is_sent()).map(doc_left_out).collect();
        left.extend(ctx.skipped.iter().map(|s| LeftOut {
            source: s.source.clone(),
            fate: s.fate,
            rule: s.rule,
            reason: s.reason.clone(),
        }));
        let frame = Frame {
            cwd: ctx.cwd.clone(),
            root: ctx.git_root.clone(),
            left_out: left,
            settings: Vec::new(),
            wording: WordingSource::None,
        };
        let mut layout = frame.layout(self, builder);
        // KI12: a rule folder's files come as the file system lists them.
        layout.mark_listed(|file| {
            let doc = sent.iter().find(|(doc, _)| doc.source == file && doc.listed_with_others)?;
            Some(Listed { dir: doc.0.source.parent()?.to_path_buf(), order: ListedOrder::AsListed })
        });
        Ok(layout)
    }

    fn read(
        &self,
        db: &dyn Db,
        ws: Workspace,
        file: &Path,
        _: &Request,
    ) -> Option<Result<ReadLayout, ProfileError>> {
        let read = kilo_read(db, ws, file.to_path_buf());
        let mut builder = LayoutBuilder::new(read.text());
        let mut left = Vec::new();
        for rule in &read.rules {
            if let Some(text) = rule.block() {
                builder.block(Part {
                    source: Source::File(rule.path.clone()),
                    placement: Placement::ToolResult,
                    position: READ_POSITION,
                    text: &text,
                    status: Status::Sent,
                    rule: "KI10",
                    reason: "the first of AGENTS.md, CLAUDE.md, CONTEXT.md in a folder between the file read and the working directory (KI10)".to_owned(),
                    inlines: rule.read.as_ref().map(|r| r.inlines.clone()).unwrap_or_default(),
                });
                continue;
            }
            let (fate, reason) = match rule.skipped {
                Some(Skip::IsTarget) => ("is_target", "it is the file being read (KI10)".to_owned()),
                Some(Skip::InSystemMessage) => {
                    ("in_system_message", "the system message already names it (KI10)".to_owned())
                }
                Some(Skip::Empty) | None => {
                    let why = rule.read.as_ref().and_then(|r| r.refused.as_ref()).map(|r| r.why.clone());
                    ("empty", why.unwrap_or_else(|| "it reads as empty: nothing attached (KI10)".to_owned()))
                }
            };
            left.push(LeftOut { source: rule.path.clone(), fate, rule: "KI10", reason });
        }
        let mut layout = builder.read(self.agent(), file, left, WordingSource::None);
        if !read.below_cwd {
            layout.note =
                Some("outside the working directory: Kilo's read tool attaches nothing (KI10)".to_owned());
        }
        Some(Ok(layout))
    }

    fn fate(&self, db: &dyn Db, ws: Workspace, _: &dyn TokenCounter, file: &Path) -> AgentFate {
        file_fate(db, kilo_context(db, ws), file)
    }

    fn lint(
        &self,
        db: &dyn Db,
        ws: Workspace,
        _: &dyn TokenCounter,
        _: Budget,
    ) -> Result<Vec<Finding>, ProfileError> {
        // No check of Kilo's own yet; `lint --agent all` includes it in CG012/CG013.
        let _ = kilo_context(db, ws);
        Ok(Vec::new())
    }
}

/// `file`'s fate in Kilo, read off the context's facts.
pub fn file_fate(db: &dyn Db, ctx: &KiloContext, file: &Path) -> AgentFate {
    let agent = Agent::Kilo.name();
    if let Some(doc) = ctx.docs.iter().find(|d| d.source == file) {
        if doc.is_sent() {
            return AgentFate {
                agent,
                status: Status::Sent,
                placement: Some("system message"),
                rule: doc.kind.rule(),
                reason: doc.kind.describe(),
            };
        }
        let left = doc_left_out(doc);
        return ctxgraph_db::profile::not_sent(Agent::Kilo, left.rule, left.reason);
    }
    if let Some(doc) = ctx.docs.iter().find(|d| d.is_sent() && d.read.inlines.iter().any(|i| i == file)) {
        return AgentFate {
            agent,
            status: Status::Inlined,
            placement: Some("system message"),
            rule: "KI9",
            reason: format!("a {{file:…}} of {} inlines it (KI9)", ctxgraph_db::path::display(&doc.source)),
        };
    }
    if let Some(skipped) = ctx.skipped.iter().find(|s| s.source == file) {
        return ctxgraph_db::profile::not_sent(Agent::Kilo, skipped.rule, skipped.reason.clone());
    }
    // KI10: the first name of its folder, below the working directory.
    let names = rule_names(!ctx.names.contains(&"CLAUDE.md"));
    let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    if let Some(dir) = file.parent()
        && dir.starts_with(&ctx.cwd)
        && dir != ctx.cwd
        && names.contains(&name.as_str())
    {
        let first = names.iter().map(|n| dir.join(n)).find(|c| db.files().get(db, c).kind(db).exists());
        if first.as_deref() == Some(file) {
            return AgentFate {
                agent,
                status: Status::OnRead,
                placement: Some("the read tool's result"),
                rule: "KI10",
                reason: "not at start-up; attached when the model reads a file in its folder or below (KI10)"
                    .to_owned(),
            };
        }
    }
    let in_rule_folder = file.parent().is_some_and(|dir| {
        let name = |d: &Path| d.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let folder = name(dir);
        let side = dir.parent().map(name).unwrap_or_default();
        (folder == "rules" || folder.starts_with("rules-")) && (side == ".kilo" || side == ".kilocode")
    });
    if in_rule_folder || name == ".kilocoderules" || name.starts_with(".kilocoderules-") {
        return ctxgraph_db::profile::not_sent(
            Agent::Kilo,
            "KI4",
            "Kilo looks for rule folders and .kilocoderules in the working directory and home only (KI4)"
                .to_owned(),
        );
    }
    let (rule, reason) = match &ctx.git_root {
        Some(root) if !file.starts_with(root) && names.contains(&name.as_str()) => {
            ("KI3", "outside the git root: Kilo's walk stops there (KI3)")
        }
        _ => ("KI6", "no stage of Kilo's discovery looks at this path (KI6)"),
    };
    ctxgraph_db::profile::not_sent(Agent::Kilo, rule, reason.to_owned())
}

/// KI13: a skipped file's layer says why; the `instructions` of the others, each entry once,
/// from the file that first names it.
fn add_instructions(report: &mut ctxgraph_db::settings::SettingsReport, ctx: &KiloContext) {
    use ctxgraph_db::settings::LayerStatus;
    let mut instructions: Vec<(serde_json::Value, std::path::PathBuf)> = Vec::new();
    for file in &ctx.configs {
        if let Some(why) = &file.invalid {
            let name = ctxgraph_db::path::display(&file.path);
            if let Some(layer) = report.layers.iter_mut().find(|layer| layer.source.name == name) {
                layer.status = LayerStatus::Unavailable(format!("Kilo skips this file whole: {why}"));
            }
            continue;
        }
        for entry in &file.instructions {
            if !instructions.iter().any(|(seen, _)| seen == entry.as_str()) {
                instructions.push((entry.as_str().into(), file.path.clone()));
            }
        }
    }
    report.set_list("instructions", instructions);
}
