//! The Cline profile's answers in the shared shape ([`ctxgraph_db::profile`]). Cline's
//! section holds no sentence of its own: `# Rules`, the `## ` headings and the titles
//! `Workspace AGENTS.md` and `Global AGENTS.md` are format markers and names (CL5, CL8),
//! so its wording is [`WordingSource::None`].

use std::path::Path;

use ctxgraph_db::agent::Agent;
use ctxgraph_db::db::{Db, Workspace};
use ctxgraph_db::profile::{
    About, AgentFate, Frame, Layout, LayoutBuilder, LeftOut, Part, Placement, Profile, ProfileError, Request,
    Source, Status, WordingSource, looked_at, not_sent,
};
use ctxgraph_db::tokens::TokenCounter;

use super::{Candidate, Fate, NOT_READ, cline_rules};

/// Cline 3.0.65.
pub struct Cline;

/// Where the rules go (CL8).
const POSITION: &str = "the end of the system prompt, after a blank line: the `# Rules` section";

const ABOUT: About = About {
    agent: Agent::Cline,
    title: "Cline",
    release: "cline-3.0.65",
    doc: "docs/profiles/cline.md",
    files: &[
        super::CLINERULES,
        ".clinerules/**",
        super::AGENTS_MD,
        ".cline/rules/**",
        ".cursorrules",
        ".windsurfrules",
    ],
};

fn left_out(candidate: &Candidate) -> LeftOut {
    let (fate, rule) = match candidate.fate {
        Fate::Sent => ("sent", "CL8"),
        Fate::Replaced { .. } => ("shadowed", "CL7"),
        Fate::Disabled => ("disabled", "CL6"),
        Fate::Empty => ("empty", "CL6"),
        Fate::BadFrontMatter { .. } => ("bad_front_matter", "CL6"),
        Fate::Unreadable { .. } => ("unreadable", "CL3"),
    };
    LeftOut { source: candidate.source.clone(), fate, rule, reason: candidate.reason() }
}

impl Profile for Cline {
    fn about(&self) -> &'static About {
        &ABOUT
    }

    fn attaches_on_read(&self) -> bool {
        // CL10: a read_files result carries the file's lines and nothing else.
        false
    }

    fn layout(&self, db: &dyn Db, ws: Workspace, _: &Request) -> Result<Layout, ProfileError> {
        let rules = cline_rules(db, ws);
        let sections: Vec<(&Candidate, String)> = rules.sent().map(|c| (c, c.section())).collect();
        let mut builder = LayoutBuilder::new(rules.text());
        for (candidate, text) in &sections {
            builder.block(Part {
                source: Source::File(candidate.source.clone()),
                placement: Placement::SystemMessage,
                position: POSITION,
                text,
                status: Status::Sent,
                rule: "CL8",
                reason: candidate.reason(),
                inlines: Vec::new(),
            });
        }
        let frame = Frame {
            cwd: rules.workspace.clone(),
            root: Some(rules.workspace.clone()),
            left_out: rules.candidates.iter().filter(|c| c.fate != Fate::Sent).map(left_out).collect(),
            settings: Vec::new(),
            wording: WordingSource::None,
        };
        let mut layout = frame.layout(self, builder);
        // CL7: which of two same-titled files in one folder wins is the file system's
        // listing order, which Cline does not sort.
        for (block, (candidate, _)) in layout.blocks.iter_mut().zip(&sections) {
            if candidate.listing_order {
                block.unstable = Some(
                    "another file in its folder has the same title; which one Cline keeps follows the order the file system lists them in (CL7)"
                        .to_owned(),
                );
            }
        }
        Ok(layout)
    }

    fn fate(&self, db: &dyn Db, ws: Workspace, _: &dyn TokenCounter, file: &Path) -> AgentFate {
        let rules = cline_rules(db, ws);
        if let Some(candidate) = rules.candidates.iter().find(|c| c.source == file) {
            let sent = candidate.fate == Fate::Sent;
            return looked_at(
                self.agent(),
                sent,
                "the system prompt's # Rules section",
                candidate.rule(),
                candidate.reason(),
            );
        }
        let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let (rule, reason) = if let Some((_, whose)) = NOT_READ.iter().find(|(known, _)| *known == name) {
            ("CL9", format!("{whose}: Cline does not read it (CL9)"))
        } else if !file.starts_with(&rules.workspace) {
            let reason = format!(
                "outside the workspace {} (the working directory) and not in a home rule folder (CL1, CL2)",
                ctxgraph_db::path::display(&rules.workspace)
            );
            ("CL1", reason)
        } else {
            ("CL2", "not one of the places Cline reads: the workspace's AGENTS.md, .clinerules (a file, or a folder's top-level .md, .markdown and .txt files), .cline/rules (CL2, CL4)".to_owned())
        };
        not_sent(self.agent(), rule, reason)
    }
}
