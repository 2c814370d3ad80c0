//! The Claude Code profile's answers in the shared shape ([`ctxgraph_db::profile`]). Claude Code's
//! own words come with the request ([`Request::wording`] as a [`Prose`]), loaded by the
//! engine from the installation; without them the text has placeholders (CC10).

use std::path::Path;

use ctxgraph_db::agent::Agent;
use ctxgraph_db::db::{Db, Workspace};
use ctxgraph_db::profile::AgentFate;
use ctxgraph_db::profile::{
    About, Frame, LayoutBuilder, LeftOut, Listed, ListedOrder, Part, Placement, Profile, ProfileError,
    ReadLayout, Request, Section, Setting, Source, Status, WordingSource,
};
use ctxgraph_db::tokens::TokenCounter;

use super::approval::{APPROVAL_KEY, ApprovalState};
use super::nearby::{read_attachment, reminder};
use super::{Fate, MemoryFile, Prose, claude_md_context, entry};

/// Claude Code 2.1.332.
pub struct ClaudeCode;

/// Where the block goes (CC2).
const POSITION: &str = "first user message: a <system-reminder> text block before the prompt";
/// Where a Read's attachments go (CC11).
const READ_POSITION: &str = "the Read tool's result, after the file's lines";

/// The prose the request carries, or placeholders.
fn prose(request: &Request) -> std::borrow::Cow<'_, Prose> {
    request.wording::<Prose>().map_or_else(
        || std::borrow::Cow::Owned(Prose::unavailable("Claude Code's installation was not looked for")),
        std::borrow::Cow::Borrowed,
    )
}

fn fate_word(fate: &Fate) -> (&'static str, &'static str) {
    match fate {
        Fate::Sent | Fate::Matched { .. } => ("sent", "CC2"),
        Fate::Empty => ("empty", "CC9"),
        Fate::Conditional { .. } => ("conditional", "CC6"),
        Fate::ExternalNotApproved => ("not_approved", "CC8"),
        Fate::LinkOutside => ("link_outside", "CC13"),
        Fate::TooDeep => ("too_deep", "CC5"),
        Fate::NotText => ("not_text", "CC4"),
        Fate::AlreadyLoaded => ("already_loaded", "CC5"),
        Fate::Missing => ("missing", "CC4"),
        Fate::Unreadable { .. } => ("unreadable", "CC3"),
        Fate::Excluded { .. } => ("excluded", "CC14"),
    }
}

fn rule(file: &MemoryFile) -> &'static str {
    match (&file.parent, file.kind, &file.fate) {
        (Some(_), _, _) => "CC4",
        (None, _, Fate::Matched { .. }) => "CC11",
        (None, _, _) if file.link.is_some() => "CC13",
        (None, super::Kind::User, _) => "CC1",
        (None, _, _) => "CC3",
    }
}

fn left_out(file: &MemoryFile, reason: String) -> LeftOut {
    let (fate, rule) = fate_word(&file.fate);
    LeftOut { source: file.source.clone(), fate, rule, reason }
}

const ABOUT: About = About {
    agent: Agent::ClaudeCode,
    title: "Claude Code",
    release: "claude-code-2.1.332",
    doc: "docs/profiles/claude-code.md",
    files: &[
        "CLAUDE.md",
        "CLAUDE.local.md",
        ".claude/CLAUDE.md",
        ".claude/rules/**",
        ".claude/settings.json",
        ".claude/settings.local.json",
        // The whole request's listings (CC17-CC19).
        ".claude/skills/**",
        ".claude/commands/**",
        ".claude/agents/**",
        ".claude/output-styles/**",
    ],
};

/// `PostToolUse` in `.claude/settings.json`, after the tools that write a file; the findings
/// go back as a `block` decision's reason, which the model reads after the tool's result.
static HOOK: ctxgraph_db::profile::HookFormat = ctxgraph_db::profile::HookFormat {
    settings: ".claude/settings.json",
    event: "PostToolUse",
    matcher: "Write|Edit|MultiEdit",
    answer: ctxgraph_db::profile::HookAnswer::Block,
};

impl ClaudeCode {
    /// CC16: the whole first request.
    fn whole_request(
        &self,
        db: &dyn Db,
        ws: Workspace,
        request: &Request,
        prose: &Prose,
        ctx: &super::ClaudeMdContext,
    ) -> ctxgraph_db::profile::Layout {
        let super::request::Built { text, pieces, left_out: mut left, mut settings } =
            super::request::build(db, ws, request, prose, ctx);
        let (builder, unstable) = super::request::place(text, pieces);
        left.extend(
            ctx.files.iter().filter(|f| !f.is_sent()).map(|f| left_out(f, f.reason(&ctx.cwd, &ctx.approval))),
        );
        settings.push(approval_setting(ctx));
        // The whole request's own texts are not read from an installation yet (CC16): the
        // layout says so whenever they are placeholders.
        let wording = match &prose.request.source {
            WordingSource::Unavailable { .. } => prose.request.source.clone(),
            _ => prose.source.clone(),
        };
        let frame = Frame { cwd: ctx.cwd.clone(), root: None, left_out: left, settings, wording };
        let mut layout = frame.layout(self, builder);
        for (block, why) in layout.blocks.iter_mut().zip(unstable) {
            block.unstable = why;
        }
        layout
    }
}

/// A block of what a Read attaches (CC11, CC21).
fn read_part<'a>(source: std::path::PathBuf, text: &'a str, rule: &'static str, reason: String) -> Part<'a> {
    Part {
        source: Source::File(source),
        placement: Placement::ToolResult,
        position: READ_POSITION,
        text,
        status: Status::Sent,
        rule,
        reason,
        inlines: Vec::new(),
    }
}

/// CC8's setting, as the layout names it.
fn approval_setting(ctx: &super::ClaudeMdContext) -> Setting {
    let approved = match &ctx.approval.state {
        ApprovalState::Set { approved } => approved.to_string(),
        ApprovalState::NotSet | ApprovalState::NoConfig => "not set".to_owned(),
        ApprovalState::Invalid { reason } => format!("cannot be used ({reason})"),
    };
    Setting {
        name: APPROVAL_KEY,
        value: approved,
        from: Some(ctx.approval.config.clone()).filter(|_| ctx.approval.state != ApprovalState::NoConfig),
    }
}

impl Profile for ClaudeCode {
    fn about(&self) -> &'static About {
        &ABOUT
    }

    fn settings_files(&self, db: &dyn Db, ws: Workspace) -> Vec<ctxgraph_db::settings::SettingsFile> {
        super::settings::settings_files(db, ws)
    }

    /// The files, and what ctxgraph reads of them: `claudeMdExcludes` (every file's patterns
    /// add up), `disabledMcpjsonServers` and `outputStyle`; and CC8's approval from
    /// `~/.claude.json` when the project has one.
    fn settings_report(
        &self,
        db: &dyn Db,
        ws: Workspace,
    ) -> Result<ctxgraph_db::settings::SettingsReport, ProfileError> {
        let mut report = self.settings_layers(db, ws);
        // A file that is there but not a JSON object gives no key (CC14): say so, since
        // Claude Code does not.
        let parsed = super::settings::claude_settings(db, ws);
        for layer in &mut report.layers {
            let read = parsed.iter().any(|(path, _)| ctxgraph_db::path::display(path) == layer.source.name);
            if layer.status == ctxgraph_db::settings::LayerStatus::Loaded && !read {
                layer.status = ctxgraph_db::settings::LayerStatus::Unavailable(
                    "not a JSON object: Claude Code reads no setting from it".to_owned(),
                );
            }
        }
        let excludes = super::excludes::claude_md_excludes(db, ws).patterns().iter();
        report.set_list(
            super::excludes::EXCLUDES_KEY,
            excludes.map(|e| (e.pattern.as_str().into(), e.settings.clone())),
        );
        let servers = super::settings::values(db, ws, "disabledMcpjsonServers")
            .filter_map(|(list, from)| Some((list.as_array()?, from)))
            .flat_map(|(list, from)| list.iter().map(move |name| (name.clone(), from.clone())));
        report.set_list("disabledMcpjsonServers", servers.collect::<Vec<_>>());
        // The last file that sets it wins (CC19); the earlier ones are what it replaced.
        for (name, from) in super::settings::values(db, ws, "outputStyle") {
            report.set_value(&["outputStyle"], name.clone(), Some(from));
        }
        let approval = &claude_md_context(db, ws).approval;
        if let ApprovalState::Set { approved } = approval.state {
            let project = ctxgraph_db::path::display(&approval.project);
            let path = ["projects", project.as_str(), APPROVAL_KEY];
            report.set_value(&path, approved.into(), Some(&approval.config));
        }
        Ok(report)
    }

    fn wording(
        &self,
        search: &ctxgraph_db::profile::InstallationSearch<'_>,
    ) -> Option<ctxgraph_db::profile::Wording> {
        Some(std::sync::Arc::new(super::installation::prose(search)))
    }

    fn hook(&self) -> Option<&'static ctxgraph_db::profile::HookFormat> {
        Some(&HOOK)
    }

    fn fingerprints(&self) -> Option<std::sync::Arc<dyn std::any::Any + Send + Sync>> {
        Some(std::sync::Arc::new(Prose::fingerprints()))
    }

    fn settings(&self) -> &'static [&'static str] {
        &super::request::KEYS
    }

    fn sections(&self) -> &'static [Section] {
        &[Section::Request]
    }

    fn waits_on(&self, section: Section) -> ctxgraph_db::profile::Waits {
        // CC22: the whole request lists what its MCP servers answer.
        ctxgraph_db::profile::Waits { mcp: section == Section::Request, ..Default::default() }
    }

    fn layout(
        &self,
        db: &dyn Db,
        ws: Workspace,
        request: &Request,
    ) -> Result<ctxgraph_db::profile::Layout, ProfileError> {
        let prose = prose(request);
        let ctx = claude_md_context(db, ws);
        if request.section == Section::Request {
            super::request::check_flags(request)?;
            return Ok(self.whole_request(db, ws, request, &prose, ctx));
        }
        let mut builder = LayoutBuilder::new(ctx.reminder(&prose).unwrap_or_default());
        let entries: Vec<(&MemoryFile, String)> =
            ctx.sent().map(|file| (file, entry(file, &prose))).collect();
        for (file, text) in &entries {
            builder.block(Part {
                source: Source::File(file.source.clone()),
                placement: Placement::FirstUserMessage,
                position: POSITION,
                text,
                status: Status::Sent,
                rule: rule(file),
                reason: file.reason(&ctx.cwd, &ctx.approval),
                inlines: Vec::new(),
            });
        }
        let frame = Frame {
            cwd: ctx.cwd.clone(),
            root: None,
            left_out: ctx
                .files
                .iter()
                .filter(|f| !f.is_sent())
                .map(|f| left_out(f, f.reason(&ctx.cwd, &ctx.approval)))
                .collect(),
            settings: vec![approval_setting(ctx)],
            wording: prose.source.clone(),
        };
        let mut layout = frame.layout(self, builder);
        // CC6: a rules directory's files come in its listing order.
        layout.mark_listed(|path| {
            let file = entries.iter().find(|(f, _)| f.source == path)?.0;
            Some(Listed { dir: file.listed_in.clone()?, order: ListedOrder::AsListed })
        });
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
        Some(Ok(self.read_layout(db, ws, file, read_attachment(db, ws, file.to_path_buf()), &prose.request)))
    }

    fn read_in_session(
        &self,
        db: &dyn Db,
        ws: Workspace,
        file: &Path,
        request: &Request,
        session: ctxgraph_db::files::File,
    ) -> Option<Result<ReadLayout, ProfileError>> {
        let occurrences = match super::session::transcript_occurrences(db, session) {
            Ok(occurrences) => occurrences,
            Err(err) => return Some(Err(ProfileError::Session(err.clone()))),
        };
        // What the last request carried is in the history the next one re-sends (CC41).
        let held: std::collections::HashSet<&Path> = occurrences
            .steps
            .last()
            .map(|step| step.present.iter().map(|&(path, _, _)| occurrences.paths[path].as_path()).collect())
            .unwrap_or_default();
        let prose = prose(request);
        let attachment = super::nearby::read_after(db, ws, file, &held);
        Some(Ok(self.read_layout(db, ws, file, &attachment, &prose.request)))
    }

    fn mcp_servers(&self, db: &dyn Db, ws: Workspace) -> Vec<(String, ctxgraph_db::mcp::McpRequest)> {
        super::mcp::project_servers(db, ws)
            .servers
            .iter()
            .filter_map(|server| Some((server.name.clone(), server.connect.clone().ok()?)))
            .collect()
    }

    fn session_costs(
        &self,
        db: &dyn Db,
        _: Workspace,
        session: ctxgraph_db::files::File,
    ) -> Option<
        Result<ctxgraph_db::session_costs::SessionOccurrences, ctxgraph_db::session_costs::SessionFileError>,
    > {
        Some(super::session::transcript_occurrences(db, session).clone())
    }

    fn lint(
        &self,
        db: &dyn Db,
        ws: Workspace,
        _: &dyn TokenCounter,
        _: ctxgraph_db::lint::Budget,
    ) -> Result<Vec<ctxgraph_db::lint::Finding>, ProfileError> {
        Ok(super::lint::exclude_findings(db, ws))
    }

    fn fate(&self, db: &dyn Db, ws: Workspace, _: &dyn TokenCounter, file: &Path) -> AgentFate {
        super::fate::claude_code_fate(claude_md_context(db, ws), super::listing::listings(db, ws), file)
    }
}

impl ClaudeCode {
    /// A Read's layout: each attached file's reminder (CC11), the skill reminders of the
    /// folders it found (CC21), and what it left out.
    fn read_layout(
        &self,
        db: &dyn Db,
        ws: Workspace,
        file: &Path,
        attachment: &super::nearby::ReadAttachment,
        words: &super::request_prose::RequestProse,
    ) -> ReadLayout {
        let ctx = claude_md_context(db, ws);
        let mut builder = LayoutBuilder::new(attachment.text(words));
        let reminders: Vec<(&MemoryFile, String)> = attachment.sent().map(|f| (f, reminder(f))).collect();
        for (sent, text) in &reminders {
            let rule = if sent.parent.is_some() { "CC4" } else { "CC11" };
            let reason = attachment.reason(sent, &ctx.cwd, &ctx.approval);
            builder.block(read_part(sent.source.clone(), text, rule, reason));
        }
        // CC21: each found skills folder's announcement, then each skill's line.
        let cwd = &ctx.cwd;
        let announcements: Vec<String> =
            attachment.skill_dirs.iter().map(|d| d.announcement(words)).collect();
        for (dir, text) in attachment.skill_dirs.iter().zip(&announcements) {
            let reason = format!(
                "the Read is under {}/, whose own .claude/skills Claude Code finds on the first Read there and announces (CC21)",
                dir.relative
            );
            builder.block(read_part(cwd.join(&dir.relative).join(".claude/skills"), text, "CC21", reason));
        }
        for (skill, text) in &attachment.skill_lines(words) {
            let reason = format!(
                "the skill {} of a folder the Read found, in the skill list it adds, by name (CC21)",
                skill.name
            );
            builder.block(read_part(skill.source.clone(), text, "CC21", reason));
        }
        let left = attachment
            .files
            .iter()
            .filter(|f| !f.is_sent())
            .map(|f| left_out(f, attachment.reason(f, &ctx.cwd, &ctx.approval)))
            .collect();
        // A Read's rule reminders hold no sentence of Claude Code's own (CC11); its skill
        // reminders do (CC21).
        let wording =
            if attachment.skill_dirs.is_empty() { WordingSource::None } else { words.source.clone() };
        builder.read(self.agent(), file, left, wording)
    }
}
