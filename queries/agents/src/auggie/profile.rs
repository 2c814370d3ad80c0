//! The Auggie profile's answers in the shared shape ([`ctxgraph_db::profile`]): the text is
//! the request's rule-bearing fields as JSON (AU1), each file's entry one block placed in
//! the request to Augment's server.

use std::path::Path;

use ctxgraph_db::agent::Agent;
use ctxgraph_db::db::{Db, Workspace};
use ctxgraph_db::profile::{
    About, AgentFate, Frame, InstallationSearch, Layout, LayoutBuilder, LeftOut, Part, Placement, Profile,
    ProfileError, Request, Source, Status, Wording as AnyWording, looked_at, not_sent,
};
use ctxgraph_db::tokens::TokenCounter;

use super::installation::Wording;
use super::{Candidate, Fate, Place, auggie_request};

/// Auggie 0.36.0.
pub struct Auggie;

const ABOUT: About = About {
    agent: Agent::Auggie,
    title: "Auggie",
    release: "auggie-0.36.0",
    doc: "docs/profiles/auggie.md",
    files: &[
        "AGENTS.md",
        "CLAUDE.md",
        ".augment/rules/**",
        ".augment-guidelines",
        ".augment/skills/**",
        ".claude/skills/**",
        ".agents/skills/**",
    ],
};

/// Where the fields go (AU1).
const POSITION: &str = "Auggie's chat request to Augment's server, which builds the model prompt from it";

fn wording(request: &Request) -> Wording {
    request
        .wording
        .as_ref()
        .and_then(|w| w.downcast_ref::<Wording>())
        .cloned()
        .unwrap_or_else(|| Wording::unavailable("no Auggie installation was looked for"))
}

fn fate_word(fate: &Fate) -> &'static str {
    match fate {
        Fate::Sent => "sent",
        Fate::Manual => "manual",
        Fate::Symlink => "symlink",
        Fate::Incomplete { .. } => "incomplete",
        Fate::Shadowed { .. } => "shadowed",
        Fate::Unreadable { .. } => "unreadable",
    }
}

fn left_out(candidate: &Candidate) -> LeftOut {
    LeftOut {
        source: candidate.source.clone(),
        fate: fate_word(&candidate.fate),
        rule: candidate.rule(),
        reason: candidate.reason(),
    }
}

fn json_text(value: &serde_json::Value) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

impl Profile for Auggie {
    fn about(&self) -> &'static About {
        &ABOUT
    }

    fn attaches_on_read(&self) -> bool {
        // AU9: a read's result goes to Augment's server with nothing of Auggie's added on the
        // machine; what the server then puts in the prompt is not observable here.
        false
    }

    fn prompt_built_by_server(&self) -> Option<&'static str> {
        Some(
            "Auggie sends these fields of its chat request to Augment's server, which builds the model prompt from them: this is not a model prompt (AU1)",
        )
    }

    fn fingerprints(&self) -> Option<AnyWording> {
        Some(std::sync::Arc::new(Wording::fingerprints()))
    }

    fn wording(&self, search: &InstallationSearch<'_>) -> Option<AnyWording> {
        Some(std::sync::Arc::new(super::installation::wording(search)))
    }

    fn layout(&self, db: &dyn Db, ws: Workspace, request: &Request) -> Result<Layout, ProfileError> {
        let found = auggie_request(db, ws);
        let wording = wording(request);
        let mut builder = LayoutBuilder::new(json_text(&found.fields(&wording.builtin)));
        let guidelines =
            found.guidelines.as_ref().filter(|(_, text)| !text.is_empty()).map(|(path, text)| {
                (path, format!("\"workspace_guidelines\":{}", json_text(&text.as_str().into())))
            });
        // Each file's entry, in the text's order: the guidelines, the rules, the skills.
        let guidelines = guidelines.map(|(path, text)| (path.as_path(), text, Place::Guidelines));
        let rules =
            found.rules.iter().map(|rule| (rule.source.as_path(), json_text(&rule.json()), rule.place));
        let skills =
            found.skills.iter().map(|skill| (skill.source.as_path(), json_text(&skill.json()), Place::Skill));
        let parts: Vec<(&Path, String, &'static str, String)> = guidelines
            .into_iter()
            .chain(rules)
            .chain(skills)
            .map(|(path, text, place)| (path, text, place.rule(), place.sent_reason()))
            .collect();
        for (path, text, rule, reason) in &parts {
            builder.block(Part {
                source: Source::File(path.to_path_buf()),
                placement: Placement::ServerRequest,
                position: POSITION,
                text,
                status: Status::Sent,
                rule,
                reason: reason.clone(),
                inlines: Vec::new(),
            });
        }
        let frame = Frame {
            cwd: found.cwd.clone(),
            root: Some(found.root.clone()),
            left_out: found.candidates.iter().filter(|c| c.fate != Fate::Sent).map(left_out).collect(),
            settings: Vec::new(),
            wording: wording.source,
        };
        Ok(frame.layout(self, builder))
    }

    fn fate(&self, db: &dyn Db, ws: Workspace, _: &dyn TokenCounter, file: &Path) -> AgentFate {
        let found = auggie_request(db, ws);
        if let Some(candidate) = found.candidates.iter().find(|c| c.source == file) {
            let sent = candidate.fate == Fate::Sent;
            return looked_at(
                self.agent(),
                sent,
                "the chat request to Augment's server",
                candidate.rule(),
                candidate.reason(),
            );
        }
        let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let (rule, reason) = if super::SHARED_FILES.contains(&name.as_str())
            && file.parent() != Some(found.root.as_path())
        {
            (
                "AU2",
                format!(
                    "Auggie reads {name} only at the repository root {} (AU2)",
                    ctxgraph_db::path::display(&found.root)
                ),
            )
        } else if name == "user-guidelines.md" {
            ("AU6", "Auggie 0.36.0 sent an empty user_guidelines although ~/.augment/user-guidelines.md existed (AU6)".to_owned())
        } else {
            ("AU3", "not one of the places Auggie reads: AGENTS.md and CLAUDE.md at the repository root, .md files under .augment/rules and ~/.augment/rules, .augment-guidelines, SKILL.md files in the skills folders (AU2, AU3, AU6, AU7)".to_owned())
        };
        not_sent(self.agent(), rule, reason)
    }
}
