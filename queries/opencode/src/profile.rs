//! The opencode profile's answers in the shared shape ([`ctxgraph_db::profile`]): the system text
//! `build` prints (B2, I9 and the blocks around them), what the read tool attaches (N3), and
//! the fates and findings `explain` and `lint` already compute.

use std::path::Path;

use ctxgraph_db::agent::Agent;
use ctxgraph_db::db::{Db, Workspace};
use ctxgraph_db::profile::{
    About, AgentFate, Frame, LayoutBuilder, LeftOut, Part, Placement, Profile, ProfileError, ReadLayout,
    Request, Source, Status, WordingSource,
};
use ctxgraph_db::tokens::{BytesPerFour, TokenCounter};

use super::explain::{self as opencode_explain, Reason, Source as ExplainSource, explain_target};
use super::lint::lint;
use super::nearby::{Skip, nearby_rules};
use super::prompt::{BlockKind, BuildError, Section, system_prompt_layout};
use ctxgraph_db::lint::{Budget, Finding};

/// opencode-ai 1.18.33.
pub struct Opencode;

fn would_not_start(err: &BuildError) -> ProfileError {
    ProfileError::Build(std::sync::Arc::new(err.clone()))
}

/// A reason a file is not in the prompt, as one word and the rule behind it.
fn reason_word(reason: &Reason) -> (&'static str, &'static str) {
    match reason {
        Reason::Missing => ("missing", "I7"),
        Reason::Directory => ("directory", "I7"),
        Reason::ShadowedGlobal { .. } => ("shadowed", "I3"),
        Reason::ShadowedByCategory { .. } => ("shadowed", "I4"),
        Reason::DisabledByFlag { .. } => ("disabled_by_flag", "P7"),
        Reason::ProjectConfigDisabled { .. } => ("project_config_disabled", "P7"),
        Reason::OutsideWorktree { .. } => ("outside_worktree", "P5"),
        Reason::OutsideWorkingDirectory { .. } => ("never_looked_at", "I4"),
        Reason::Empty => ("empty", "I9"),
        Reason::Unreadable { .. } => ("unreadable", "I7"),
        Reason::Duplicate { .. } => ("duplicate", "I6"),
        Reason::NoPatternMatched { .. } => ("no_pattern_matched", "I5"),
        Reason::NearbyOnly { .. } => ("on_read", "N3"),
        Reason::NearbyShadowed { .. } => ("shadowed_on_read", "N3"),
        Reason::WalkFailed { .. } => ("walk_failed", "F2"),
        Reason::Remote { .. } => ("not_fetched", "I8"),
    }
}

const ABOUT: About = About {
    agent: Agent::Opencode,
    title: "opencode",
    release: "opencode-1.18.33",
    doc: "docs/opencode/README.md",
};

impl Profile for Opencode {
    fn about(&self) -> &'static About {
        &ABOUT
    }

    fn layout(
        &self,
        db: &dyn Db,
        ws: Workspace,
        _: &Request,
    ) -> Result<ctxgraph_db::profile::Layout, ProfileError> {
        let prompt = system_prompt_layout(db, ws, Section::System, None).as_ref().map_err(would_not_start)?;
        let explanation =
            opencode_explain::explain(db, ws, &BytesPerFour).map_err(|e| would_not_start(&e))?;
        let mut builder = LayoutBuilder::new(prompt.text.clone());
        for placed in &prompt.blocks {
            let source = match (placed.kind, &placed.source) {
                (BlockKind::Instruction, Some(path)) => Source::File(path.as_ref().into()),
                (BlockKind::Remote, Some(url)) => Source::Url(url.to_string()),
                (_, _) => Source::Agent(placed.id.to_string()),
            };
            builder.block(Part {
                source,
                placement: Placement::SystemMessage,
                position: "system message: one of the system array's strings",
                text: &prompt.text[placed.range.clone()],
                status: Status::Sent,
                rule: placed.rule,
                reason: placed.reason.to_string(),
                inlines: Vec::new(),
            });
        }
        let mut left_out = Vec::new();
        for item in explanation.items.iter().filter(|i| i.loaded.is_none()) {
            let ExplainSource::File(path) = &item.source else { continue };
            let Some(first) = item.reasons.first() else { continue };
            let (fate, rule) = reason_word(first);
            let reason = item.reasons.iter().map(Reason::describe).collect::<Vec<_>>().join("; ");
            left_out.push(LeftOut { source: path.clone(), fate, rule, reason });
        }
        let frame = Frame {
            cwd: explanation.cwd.clone(),
            root: explanation.git.then(|| explanation.worktree.clone()),
            left_out,
            settings: Vec::new(),
            wording: WordingSource::None,
        };
        let mut layout = frame.layout(self, builder);
        for (block, placed) in layout.blocks.iter_mut().zip(prompt.blocks.iter()) {
            block.unstable.clone_from(&placed.unstable_reason);
        }
        Ok(layout)
    }

    fn read(
        &self,
        db: &dyn Db,
        ws: Workspace,
        file: &Path,
        _: &Request,
    ) -> Option<Result<ReadLayout, ProfileError>> {
        let nearby = match nearby_rules(db, ws, file.to_path_buf()) {
            Ok(nearby) => nearby,
            Err(err) => return Some(Err(would_not_start(err))),
        };
        let mut builder = LayoutBuilder::new(nearby.reminder().unwrap_or_default());
        let mut left_out = Vec::new();
        for rule in &nearby.rules {
            match (&rule.block, &rule.skipped) {
                (Some(text), _) => {
                    builder.block(Part {
                        source: Source::File(rule.path.clone()),
                        placement: Placement::ToolResult,
                        position: "the read tool's result: a <system-reminder> after the file's lines",
                        text,
                        status: Status::Sent,
                        rule: "N3",
                        reason: "the nearest rule file of a directory between the file read and the working directory (N3)"
                            .to_owned(),
                        inlines: Vec::new(),
                    });
                }
                (None, skipped) => {
                    let (fate, reason) = match skipped {
                        Some(Skip::IsTarget) => ("is_target", "it is the file being read (N3)"),
                        Some(Skip::InSystemPrompt) => {
                            ("in_system_prompt", "already in the system prompt (N3)")
                        }
                        Some(Skip::Empty) | None => ("empty", "read as empty: no block (N3)"),
                    };
                    left_out.push(LeftOut {
                        source: rule.path.clone(),
                        fate,
                        rule: "N3",
                        reason: reason.to_owned(),
                    });
                }
            }
        }
        Some(Ok(builder.read(self.agent(), file, left_out, WordingSource::None)))
    }

    fn fate(&self, db: &dyn Db, ws: Workspace, counter: &dyn TokenCounter, file: &Path) -> AgentFate {
        opencode_fate(db, ws, counter, file)
    }

    fn lint(
        &self,
        db: &dyn Db,
        ws: Workspace,
        counter: &dyn TokenCounter,
        budget: Budget,
    ) -> Result<Vec<Finding>, ProfileError> {
        lint(db, ws, counter, budget).map_err(|e| would_not_start(&e))
    }
}

/// opencode's verdict, read off `explain`'s items for the path.
pub fn opencode_fate(db: &dyn Db, ws: Workspace, counter: &dyn TokenCounter, path: &Path) -> AgentFate {
    let agent = "opencode";
    let cwd = ws.cwd(db).clone();
    let answer = match explain_target(db, ws, counter, &path.to_string_lossy(), &cwd) {
        Ok(answer) => answer,
        Err(err) => {
            return AgentFate {
                agent,
                status: Status::NotSent,
                placement: None,
                reason: format!("opencode would not start: {err}"),
            };
        }
    };
    let items: Vec<_> =
        answer.items.iter().filter(|i| matches!(&i.source, ExplainSource::File(p) if p == path)).collect();
    if let Some(item) = items.iter().find(|i| i.loaded.is_some()) {
        let reason = item.via.as_ref().map_or_else(|| "loaded".to_owned(), opencode_explain::Via::describe);
        return AgentFate { agent, status: Status::Sent, placement: Some("system prompt"), reason };
    }
    let reasons: Vec<String> =
        items.iter().flat_map(|i| i.reasons.iter().map(opencode_explain::Reason::describe)).collect();
    let on_read = items
        .iter()
        .any(|i| i.reasons.iter().any(|r| matches!(r, opencode_explain::Reason::NearbyOnly { .. })));
    AgentFate {
        agent,
        status: if on_read { Status::OnRead } else { Status::NotSent },
        placement: on_read.then_some("the read tool's result"),
        reason: if reasons.is_empty() {
            "no stage of opencode's discovery looks at this path".to_owned()
        } else {
            reasons.join("; ")
        },
    }
}
