//! The Continue CLI profile's answers in the shared shape ([`ctxgraph_db::profile`]). The block
//! holds no sentence of Continue's own: `<context name="userRules">` and `</context>` are
//! format markers (CN7), so its wording is [`WordingSource::None`].

use std::path::Path;

use ctxgraph_db::agent::Agent;
use ctxgraph_db::db::{Db, Workspace};
use ctxgraph_db::profile::{
    About, AgentFate, Frame, Layout, LayoutBuilder, LeftOut, Part, Placement, Profile, ProfileError, Request,
    Source, Status, WordingSource, looked_at, not_sent,
};
use ctxgraph_db::tokens::TokenCounter;

use super::{Candidate, Fate, Kind, OPEN, continue_rules};

/// Continue CLI 1.5.47.
pub struct ContinueCli;

/// Where the block goes (CN7).
const POSITION: &str =
    "the end of the system message, after a blank line: the <context name=\"userRules\"> block";

const ABOUT: About = About {
    agent: Agent::Continue,
    title: "Continue CLI",
    release: "continue-1.5.47",
    doc: "docs/profiles/continue.md",
    files: &[".continue/rules/**", ".continuerules", "AGENTS.md", "AGENT.md", "CLAUDE.md", "CODEX.md"],
};

fn left_out(candidate: &Candidate) -> LeftOut {
    let (fate, rule) = match candidate.fate {
        Fate::Sent => ("sent", "CN7"),
        Fate::Shadowed { .. } => ("shadowed", "CN2"),
        Fate::Empty => ("empty", if candidate.kind == Kind::Agent { "CN2" } else { "CN5" }),
        Fate::Conditional { .. } => ("conditional", "CN5"),
        Fate::Unreadable { .. } => ("unreadable", if candidate.kind == Kind::Agent { "CN2" } else { "CN3" }),
    };
    LeftOut { source: candidate.source.clone(), fate, rule, reason: candidate.reason() }
}

impl Profile for ContinueCli {
    fn about(&self) -> &'static About {
        &ABOUT
    }

    fn attaches_on_read(&self) -> bool {
        // CN8: a Read result carries the file and nothing else; globs: rules are not attached.
        false
    }

    fn layout(&self, db: &dyn Db, ws: Workspace, _: &Request) -> Result<Layout, ProfileError> {
        let rules = continue_rules(db, ws);
        let text = rules.text();
        let mut builder = LayoutBuilder::new(text);
        let sent: Vec<&Candidate> = rules.agent().into_iter().chain(rules.rules()).collect();
        // Each text is placed where it starts: after the opening and its newline, then after
        // the blank line that follows the text before it (a rule's text may also occur inside
        // an earlier one, so it is not searched for).
        let mut at = OPEN.len() + 1;
        for (i, candidate) in sent.iter().enumerate() {
            if i > 0 {
                at += "\n\n".len();
            }
            builder.block_at(
                at,
                Part {
                    source: Source::File(candidate.source.clone()),
                    placement: Placement::SystemMessage,
                    position: POSITION,
                    text: &candidate.text,
                    status: Status::Sent,
                    rule: if candidate.kind == Kind::Agent { "CN2" } else { "CN3" },
                    reason: candidate.reason(),
                    inlines: Vec::new(),
                },
            );
            at += candidate.text.len();
        }
        let frame = Frame {
            cwd: rules.workspace.clone(),
            root: Some(rules.workspace.clone()),
            left_out: rules.candidates.iter().filter(|c| c.fate != Fate::Sent).map(left_out).collect(),
            settings: Vec::new(),
            wording: WordingSource::None,
        };
        Ok(frame.layout(self, builder))
    }

    fn fate(&self, db: &dyn Db, ws: Workspace, _: &dyn TokenCounter, file: &Path) -> AgentFate {
        let rules = continue_rules(db, ws);
        if let Some(candidate) = rules.candidates.iter().find(|c| c.source == file) {
            let sent = candidate.fate == Fate::Sent;
            return looked_at(
                self.agent(),
                sent,
                "the system message's userRules block",
                candidate.rule(),
                candidate.reason(),
            );
        }
        let (rule, reason) = if file.parent() == Some(rules.workspace.as_path()) {
            ("CN2", "not a file Continue reads: in the working directory only the first of AGENTS.md, AGENT.md, CLAUDE.md, CODEX.md, and .md files below .continue/rules (CN2, CN3)".to_owned())
        } else if file.starts_with(rules.workspace.join(".continue").join("rules")) {
            ("CN3", "below .continue/rules but not a .md file (CN3)".to_owned())
        } else {
            let reason = format!(
                "outside what Continue reads from {}: its agent file and .continue/rules, and ~/.continue/rules (CN1, CN3)",
                ctxgraph_db::path::display(&rules.workspace)
            );
            ("CN1", reason)
        };
        not_sent(self.agent(), rule, reason)
    }
}
