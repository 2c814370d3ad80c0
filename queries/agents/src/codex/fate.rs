//! `explain --agent codex FILE`: Codex's verdict on one file, from its facts.

use std::path::Path;

use super::skills::{Skill, SkillFate};
use super::{AGENTS_NAME, AgentsContext, Fate, OVERRIDE_NAME};
use ctxgraph_db::profile::{AgentFate, Status};

/// Codex's verdict: the file's [`Fate`], or why discovery never meets it (CX1–CX3).
pub fn codex_fate(ctx: &AgentsContext, codex_home: &Path, path: &Path) -> AgentFate {
    let agent = "codex";
    if let Some(doc) = ctx.docs.iter().find(|d| d.source == path) {
        let status = match doc.fate {
            Fate::Included => Status::Sent,
            Fate::Cut { .. } => Status::Cut,
            _ => Status::NotSent,
        };
        let placement = doc.is_sent().then_some("user message before the first prompt");
        return AgentFate { agent, status, placement, rule: doc.rule(), reason: doc.reason(&ctx.budget) };
    }
    let not_sent =
        |rule, reason: String| AgentFate { agent, status: Status::NotSent, placement: None, rule, reason };
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    let dir = path.parent().unwrap_or(Path::new("/"));
    if name != AGENTS_NAME && name != OVERRIDE_NAME {
        return not_sent("CX3", format!("Codex reads only {OVERRIDE_NAME} and {AGENTS_NAME} (CX1, CX3)"));
    }
    if dir == codex_home {
        return not_sent("CX1", "the global file is not used: the other global file is (CX1)".to_owned());
    }
    let top = ctx.git_root.as_deref().unwrap_or(&ctx.cwd);
    if ctx.cwd.starts_with(dir) && dir.starts_with(top) {
        return not_sent("CX2", format!("there is no such file in {} (CX2)", dir.display()));
    }
    if ctx.cwd.starts_with(dir) {
        return not_sent("CX2", format!("above the git root {}, where Codex starts (CX2)", top.display()));
    }
    if dir.starts_with(&ctx.cwd) {
        return not_sent("CX2", "below the working directory: Codex reads directories from the git root down to the working directory only, and attaches nothing on reads (CX2)".to_owned());
    }
    not_sent("CX2", format!("beside the path from {} to the working directory (CX2)", top.display()))
}

/// Codex's verdict on a `SKILL.md` it found (CX7–CX10): a listed skill's name and
/// description go in the skills message, its body only when the model opens the file.
pub fn skill_fate(skill: &Skill, include_instructions: bool) -> AgentFate {
    let agent = "codex";
    if skill.fate == SkillFate::Listed && !include_instructions {
        return AgentFate {
            agent,
            status: Status::NotSent,
            placement: None,
            rule: "CX9",
            reason:
                "[skills] include_instructions = false in config.toml: Codex sends no skills message (CX9)"
                    .to_owned(),
        };
    }
    let listed = skill.fate == SkillFate::Listed;
    AgentFate {
        agent,
        status: if listed { Status::Sent } else { Status::NotSent },
        placement: listed.then_some("the skills developer message: name and description only"),
        rule: skill.rule(),
        reason: skill.reason(),
    }
}
