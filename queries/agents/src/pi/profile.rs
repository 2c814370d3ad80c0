//! The pi profile's answers in the shared shape ([`ctxgraph_db::profile`]). `build` prints
//! pi's whole system message: its own wording (PI10) comes with the request as a
//! [`Wording`], loaded from the installation by the engine, or placeholders.

use std::borrow::Cow;
use std::path::Path;

use ctxgraph_db::agent::Agent;
use ctxgraph_db::db::{Db, Workspace};
use ctxgraph_db::lint::{Budget, Code, Finding};
use ctxgraph_db::profile::{
    About, AgentFate, Frame, Layout, LayoutBuilder, LeftOut, Part, Placement, Profile, ProfileError, Request,
    Source, Status, looked_at,
};
use ctxgraph_db::tokens::TokenCounter;

use super::skills::SkillFate;
use super::text::{What, iso_date, system_message};
use super::{CONTEXT_NAMES, Fate, Kind, PiContext, Wording, pi_context};

/// pi 0.73.1.
pub struct Pi;

const ABOUT: About = About {
    agent: Agent::Pi,
    title: "pi",
    release: "pi-0.73.1",
    doc: "docs/profiles/pi.md",
    files: &[
        "AGENTS.md",
        "AGENTS.MD",
        "CLAUDE.md",
        "CLAUDE.MD",
        ".pi/SYSTEM.md",
        ".pi/APPEND_SYSTEM.md",
        ".pi/skills/**",
        ".agents/skills/**/SKILL.md",
        ".pi/extensions/**",
        ".pi/settings.json",
    ],
};

/// Where the system message's parts go.
const POSITION: &str = "pi's one system message";

/// PI15: what a project or global extension means for the prediction.
pub fn extension_reason() -> String {
    "an extension: code pi loads at start, which can rewrite the system message; ctxgraph cannot predict what it does (PI15)".to_owned()
}

/// The wording the request carries, or placeholders.
fn wording(request: &Request) -> Cow<'_, Wording> {
    request.wording::<Wording>().map_or_else(
        || Cow::Owned(Wording::unavailable("pi's installation was not looked for")),
        Cow::Borrowed,
    )
}

fn left_out(ctx: &PiContext) -> Vec<LeftOut> {
    let files = ctx.candidates().filter(|c| c.fate != Fate::Sent).map(|c| {
        let fate = match c.fate {
            Fate::Sent => "sent",
            Fate::Shadowed { .. } => "shadowed",
            Fate::Empty => "empty",
            Fate::Repeated => "repeated",
            Fate::Unreadable { .. } => "unreadable",
        };
        LeftOut { source: c.source.clone(), fate, rule: c.rule(), reason: c.reason() }
    });
    let skills = ctx.skills.found.iter().filter(|s| s.fate != SkillFate::Listed).map(|s| {
        let fate = match s.fate {
            SkillFate::Listed => "sent",
            SkillFate::Hidden => "hidden",
            SkillFate::NoDescription => "no_description",
            SkillFate::Unparsable { .. } => "unreadable",
            SkillFate::Clash { .. } => "shadowed",
            SkillFate::SameFile { .. } => "repeated",
        };
        LeftOut { source: s.path.clone(), fate, rule: s.rule(), reason: s.reason() }
    });
    let extensions = ctx.extensions.iter().map(|path| LeftOut {
        source: path.clone(),
        fate: "unpredictable",
        rule: "PI15",
        reason: extension_reason(),
    });
    files.chain(skills).chain(extensions).collect()
}

impl Profile for Pi {
    fn about(&self) -> &'static About {
        &ABOUT
    }

    fn attaches_on_read(&self) -> bool {
        // PI11: the read tool's result is the file's text and nothing else.
        false
    }

    fn wording(
        &self,
        search: &ctxgraph_db::profile::InstallationSearch<'_>,
    ) -> Option<ctxgraph_db::profile::Wording> {
        Some(std::sync::Arc::new(super::installation::wording(search)))
    }

    fn fingerprints(&self) -> Option<std::sync::Arc<dyn std::any::Any + Send + Sync>> {
        Some(std::sync::Arc::new(Wording::fingerprints()))
    }

    fn layout(&self, db: &dyn Db, ws: Workspace, request: &Request) -> Result<Layout, ProfileError> {
        let ctx = pi_context(db, ws);
        let wording = wording(request);
        let date = iso_date(ws.host(db).date(db)).unwrap_or_else(|| "<date unknown>".to_owned());
        let (text, placed) = system_message(ctx, &wording, &date);
        let mut builder = LayoutBuilder::new(text.clone());
        for piece in &placed {
            let piece_text = &text[piece.range.clone()];
            let (source, rule, reason) = match piece.what {
                What::BasePrompt => (
                    Source::Agent("pi's base prompt".to_owned()),
                    "PI7",
                    "pi's own base prompt: no SYSTEM.md replaces it (PI7, PI10)".to_owned(),
                ),
                What::File(file) => (Source::File(file.source.clone()), file.rule(), file.reason()),
                What::SkillsIntro => (
                    Source::Agent("pi's skills introduction".to_owned()),
                    "PI12",
                    "pi's own sentences before the skills listing (PI10, PI12)".to_owned(),
                ),
                What::Skill(i) => {
                    let skill = &ctx.skills.found[i];
                    (Source::File(skill.path.clone()), skill.rule(), skill.reason())
                }
                What::DateAndCwd => (
                    Source::Agent("date and working directory".to_owned()),
                    "PI9",
                    "the date and working directory pi ends its message with (PI9)".to_owned(),
                ),
            };
            builder.block_at(
                piece.range.start,
                Part {
                    source,
                    placement: Placement::SystemMessage,
                    position: POSITION,
                    text: piece_text,
                    status: Status::Sent,
                    rule,
                    reason,
                    inlines: Vec::new(),
                },
            );
        }
        let frame = Frame {
            cwd: ctx.cwd.clone(),
            root: ctx.git_root.clone(),
            left_out: left_out(ctx),
            settings: Vec::new(),
            wording: wording.source.clone(),
        };
        // PI15: extensions are in `left_out` (fate `unpredictable`), `explain` and `lint`
        // (CG023); `note` is kept for an agent that would send none of the text.
        Ok(frame.layout(self, builder))
    }

    fn fate(&self, db: &dyn Db, ws: Workspace, _: &dyn TokenCounter, file: &Path) -> AgentFate {
        let ctx = pi_context(db, ws);
        if let Some(candidate) = ctx.candidates().find(|c| c.source == file) {
            let sent = candidate.fate == Fate::Sent;
            return looked_at(
                self.agent(),
                sent,
                "pi's system message",
                candidate.rule(),
                candidate.reason(),
            );
        }
        if let Some(skill) = ctx.skills.found.iter().find(|s| s.path == file) {
            let listed = skill.fate == SkillFate::Listed;
            let placement = "pi's system message, <available_skills>";
            return looked_at(self.agent(), listed, placement, skill.rule(), skill.reason());
        }
        if ctx.extensions.iter().any(|e| file.starts_with(e)) {
            return ctxgraph_db::profile::not_sent(self.agent(), "PI15", extension_reason());
        }
        let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let (rule, reason) = if file.starts_with(&ctx.cwd) && file.parent() != Some(ctx.cwd.as_path()) {
            (
                "PI3",
                "below the working directory: pi reads no context file below it, and a read attaches nothing (PI3, PI11)"
                    .to_owned(),
            )
        } else if CONTEXT_NAMES.contains(&name.as_str()) || ctx.cwd.starts_with(file.parent().unwrap_or(file))
        {
            (
                "PI2",
                "not a file pi reads: one of AGENTS.md, AGENTS.MD, CLAUDE.md, CLAUDE.MD per folder from / down to the working directory (PI2)"
                    .to_owned(),
            )
        } else {
            (
                "PI2",
                format!(
                    "outside what pi reads from {}: the context files of its folders, .pi's SYSTEM.md and APPEND_SYSTEM.md, and skills (PI2)",
                    ctxgraph_db::path::display(&ctx.cwd)
                ),
            )
        };
        ctxgraph_db::profile::not_sent(self.agent(), rule, reason)
    }

    fn lint(
        &self,
        db: &dyn Db,
        ws: Workspace,
        _: &dyn TokenCounter,
        _: Budget,
    ) -> Result<Vec<Finding>, ProfileError> {
        let ctx = pi_context(db, ws);
        let mut findings = Vec::new();
        for extension in &ctx.extensions {
            findings.push(Finding::about_file(
                Code::UnpredictableExtension,
                format!(
                    "pi loads {} as code at start; it can rewrite the system message, so what pi sends here cannot be predicted (PI15)",
                    ctxgraph_db::path::display(extension)
                ),
                extension,
                "keep rules in AGENTS.md or .pi/SYSTEM.md where every reader sees them; treat the extension's prompt changes as unknown",
            ));
        }
        // CG003: pi's walk does not stop at the git root.
        if let Some(root) = &ctx.git_root {
            for file in ctx.sent().filter(|c| c.kind == Kind::Ancestor && !c.source.starts_with(root)) {
                findings.push(Finding::about_file(
                    Code::OutsideRepository,
                    format!(
                        "pi sends {} from above the git root {}: other machines have other files there (PI2)",
                        ctxgraph_db::path::display(&file.source),
                        ctxgraph_db::path::display(root)
                    ),
                    &file.source,
                    "move the rules into the repository, or keep them in ~/.pi/agent/AGENTS.md on purpose",
                ));
            }
        }
        Ok(findings)
    }
}
