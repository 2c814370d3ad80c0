//! The Aider profile's answers in the shared shape ([`ctxgraph_db::profile`]). Aider's own
//! sentences (AI9) come with the request ([`Request::wording`] as a [`Wording`]), loaded by
//! the engine from the installation; without them the text holds a placeholder.

use std::borrow::Cow;
use std::path::Path;

use ctxgraph_db::agent::Agent;
use ctxgraph_db::db::{Db, Workspace};
use ctxgraph_db::lint::{Budget, Finding};
use ctxgraph_db::profile::{
    About, AgentFate, Frame, Layout, LayoutBuilder, LeftOut, Part, Placement, Profile, ProfileError, Request,
    Setting, Source, Status, WordingSource,
};
use ctxgraph_db::tokens::TokenCounter;

use super::{AiderContext, AiderError, ConfigFate, Fate, ListFrom, ReadOnly, Wording, aider_context};

/// Aider 0.86.2.
pub struct Aider;

/// Where the read-only files go (AI4).
const POSITION: &str = "the first user message, after Aider's two lines on read-only files (its reply follows as the next message)";

/// AI5: why the order of the files is not Aider's.
pub const UNORDERED: &str = "Aider keeps its read-only files in a Python set, whose order follows per-process string hashes: the order of these files changes between starts; ctxgraph lists them in the order they are named (AI5)";

const ABOUT: About = About {
    agent: Agent::Aider,
    title: "Aider",
    release: "aider-0.86.2",
    doc: "docs/profiles/aider.md",
    files: &[".aider.conf.yml"],
};

/// A configuration file Aider refuses (AI3); YAML positions are not kept.
fn would_not_start(err: &AiderError) -> ProfileError {
    let AiderError::Config { path, .. } = err;
    let fault = ctxgraph_db::fault::InputFault::new(
        "invalid-config",
        Some(path.display().to_string()),
        err.to_string(),
    );
    ProfileError::WouldNotStart { agent: Agent::Aider.name(), fault: Box::new(fault) }
}

/// The `--read` entries of the request (`-c read=FILE`, each once per flag).
fn command_line(request: &Request) -> Vec<String> {
    request.settings.iter().filter(|(k, _)| k == "read").map(|(_, v)| v.clone()).collect()
}

/// The wording the request carries, or a placeholder.
fn wording(request: &Request) -> Cow<'_, Wording> {
    request.wording::<Wording>().map_or_else(
        || Cow::Owned(Wording::unavailable("Aider's installation was not looked for")),
        Cow::Borrowed,
    )
}

/// Where the list came from, in words.
fn list_source(ctx: &AiderContext) -> String {
    match &ctx.list_from {
        ListFrom::CommandLine => "--read on the command line".to_owned(),
        ListFrom::Environment => format!("${}", super::READ_ENV),
        ListFrom::Config { path } => format!("`read:` in {}", ctxgraph_db::path::display(path)),
        ListFrom::Nothing => "nothing".to_owned(),
    }
}

/// Why a file is in the message, or why not, with the rule behind it.
fn reason(ctx: &AiderContext, file: &ReadOnly) -> (&'static str, &'static str, String) {
    let named = format!("named as `{}` by {}", file.named, list_source(ctx));
    match &file.fate {
        Fate::Sent => {
            let order = if ctx.is_unordered() { "; in no stable order with the others (AI5)" } else { "" };
            ("sent", "AI4", format!("a read-only file {named} (AI2, AI4){order}"))
        }
        Fate::Missing => {
            ("missing", "AI6", format!("{named}, but nothing exists there: Aider warns and skips it (AI6)"))
        }
        Fate::Image => (
            "image",
            "AI6",
            format!("{named}: an image, sent in a message of its own, not in this text (AI6)"),
        ),
        Fate::NotUtf8 => (
            "not_utf8",
            "AI7",
            format!("{named}: not UTF-8, so Aider cannot read it and leaves it out (AI7)"),
        ),
        Fate::Unreadable { reason } => {
            ("unreadable", "AI7", format!("{named}: cannot be read ({reason}) (AI7)"))
        }
        Fate::Duplicate { of } => (
            "duplicate",
            "AI5",
            format!("{named}: the same file as {}, sent once (AI5)", ctxgraph_db::path::display(of)),
        ),
    }
}

impl Aider {
    fn context<'db>(
        db: &'db dyn Db,
        ws: Workspace,
        request: &Request,
    ) -> Result<&'db AiderContext, ProfileError> {
        aider_context(db, ws, command_line(request)).as_ref().map_err(would_not_start)
    }
}

impl Profile for Aider {
    fn about(&self) -> &'static About {
        &ABOUT
    }

    /// AI2: Aider takes each key from the nearest file that sets it, so in the order a
    /// later one wins the files are the home directory's, the git root's, the working
    /// directory's.
    fn settings_files(&self, db: &dyn Db, ws: Workspace) -> Vec<ctxgraph_db::settings::SettingsFile> {
        let Ok(ctx) = aider_context(db, ws, Vec::new()) else { return Vec::new() };
        let rule = "AI2";
        let file = |path: &Path| ctxgraph_db::settings::SettingsFile {
            kind: "file",
            label: "config file",
            path: path.to_path_buf(),
            rule,
        };
        ctx.configs.iter().rev().map(|config| file(&config.path)).collect()
    }

    /// AI2/AI3: the files, and `read:` from each that sets it, the nearest in effect and
    /// the farther ones what it replaced; `$AIDER_READ`, which comes before every file, is a
    /// warning.
    fn settings_report(
        &self,
        db: &dyn Db,
        ws: Workspace,
    ) -> Result<ctxgraph_db::settings::SettingsReport, ProfileError> {
        let ctx = aider_context(db, ws, Vec::new()).as_ref().map_err(would_not_start)?;
        let mut report = self.settings_layers(db, ws);
        for config in ctx.configs.iter().rev().filter(|config| !config.read.is_empty()) {
            report.set_value(&["read"], serde_json::json!(config.read), Some(&config.path));
        }
        if ctx.list_from == ListFrom::Environment {
            let list = ctx.list.join(", ");
            report.warnings.push(format!("$AIDER_READ ({list}) comes before every file's `read:` (AI2)"));
        }
        Ok(report)
    }

    fn wording(
        &self,
        search: &ctxgraph_db::profile::InstallationSearch<'_>,
    ) -> Option<ctxgraph_db::profile::Wording> {
        Some(std::sync::Arc::new(super::installation::wording(search)))
    }

    fn attaches_on_read(&self) -> bool {
        // Aider has no read tool of its own that attaches anything: files reach the model
        // only when added to the chat.
        false
    }

    fn fingerprints(&self) -> Option<std::sync::Arc<dyn std::any::Any + Send + Sync>> {
        Some(std::sync::Arc::new(Wording::fingerprints()))
    }

    fn settings(&self) -> &'static [&'static str] {
        &["read"]
    }

    fn layout(&self, db: &dyn Db, ws: Workspace, request: &Request) -> Result<Layout, ProfileError> {
        let wording = wording(request);
        let ctx = Self::context(db, ws, request)?;
        let text = ctx.text(&wording);
        let mut start = wording.read_only_prefix.len();
        let mut builder = LayoutBuilder::new(text);
        for file in ctx.sent() {
            let part = ctx.part(file);
            let (_, rule, reason) = reason(ctx, file);
            builder.block_at(
                start,
                Part {
                    source: Source::File(file.path.clone()),
                    placement: Placement::FirstUserMessage,
                    position: POSITION,
                    text: &part,
                    status: Status::Sent,
                    rule,
                    reason,
                    inlines: Vec::new(),
                },
            );
            start += part.len();
        }
        let left_out = ctx
            .files
            .iter()
            .filter(|f| !f.is_sent())
            .map(|f| {
                let (fate, rule, reason) = reason(ctx, f);
                LeftOut { source: f.path.clone(), fate, rule, reason }
            })
            .chain(ctx.configs.iter().filter(|c| c.fate == ConfigFate::Overridden).map(|c| LeftOut {
                source: c.path.clone(),
                fate: "shadowed",
                rule: "AI3",
                reason: format!("its `read:` is not used: {} comes first (AI3)", list_source(ctx)),
            }))
            .collect();
        let settings = match &ctx.list_from {
            ListFrom::Nothing => Vec::new(),
            from => vec![Setting {
                name: "read",
                value: ctx.list.join(", "),
                from: match from {
                    ListFrom::Config { path } => Some(path.clone()),
                    _ => None,
                },
            }],
        };
        let sends_wording = ctx.sent().next().is_some();
        let frame = Frame {
            cwd: ctx.cwd.clone(),
            root: Some(ctx.root.clone()),
            left_out,
            settings,
            wording: if sends_wording { wording.source.clone() } else { WordingSource::None },
        };
        let mut layout = frame.layout(self, builder);
        if ctx.is_unordered() {
            for block in &mut layout.blocks {
                block.unstable = Some(UNORDERED.to_owned());
                block.unordered = true;
            }
        }
        Ok(layout)
    }

    fn fate(&self, db: &dyn Db, ws: Workspace, _: &dyn TokenCounter, file: &Path) -> AgentFate {
        let ctx = match Self::context(db, ws, &Request::default()) {
            Ok(ctx) => ctx,
            Err(err) => return ctxgraph_db::profile::not_sent(self.agent(), "AI3", err.to_string()),
        };
        let real = ctxgraph_db::files::real_path(db, file);
        let found = ctx
            .files
            .iter()
            .find(|f| f.path == real && f.is_sent())
            .or_else(|| ctx.files.iter().find(|f| f.path == real));
        let Some(f) = found else {
            let why = match &ctx.list_from {
                ListFrom::Nothing => "Aider loads no file by itself, and no `--read`, $AIDER_READ or `read:` in a .aider.conf.yml names any (AI1, AI2)".to_owned(),
                _ => format!("not named by {}: Aider loads no file by itself (AI1, AI2)", list_source(ctx)),
            };
            return ctxgraph_db::profile::not_sent(self.agent(), "AI1", why);
        };
        let (_, rule, why) = reason(ctx, f);
        if !f.is_sent() {
            return ctxgraph_db::profile::not_sent(self.agent(), rule, why);
        }
        AgentFate {
            agent: self.agent().name(),
            status: Status::Sent,
            placement: Some(Placement::FirstUserMessage.describe()),
            rule,
            reason: why,
        }
    }

    fn lint(
        &self,
        db: &dyn Db,
        ws: Workspace,
        _: &dyn TokenCounter,
        _: Budget,
    ) -> Result<Vec<Finding>, ProfileError> {
        // No check of Aider's own yet; `lint --agent all` includes it in CG012/CG013.
        Self::context(db, ws, &Request::default())?;
        Ok(Vec::new())
    }
}
