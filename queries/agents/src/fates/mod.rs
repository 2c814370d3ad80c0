//! What reads more than one agent's facts: Codex's and Claude Code's reasons for a single
//! file (`explain --agent codex|claude-code FILE`), and the findings of `lint --agent all`.

use std::path::Path;

use crate::claude_code::{self, ClaudeMdContext};
use crate::codex::{self, AgentsContext};
use ctxgraph_db::profile::{AgentFate, Status};

pub mod budget;
pub mod lint;

/// Codex's verdict: the file's [`codex::Fate`], or why discovery never meets it (CX1–CX3).
pub fn codex_fate(ctx: &AgentsContext, codex_home: &Path, path: &Path) -> AgentFate {
    let agent = "codex";
    if let Some(doc) = ctx.docs.iter().find(|d| d.source == path) {
        let status = match doc.fate {
            codex::Fate::Included => Status::Sent,
            codex::Fate::Cut { .. } => Status::Cut,
            _ => Status::NotSent,
        };
        let placement = doc.is_sent().then_some("user message before the first prompt");
        return AgentFate { agent, status, placement, reason: doc.reason(&ctx.budget) };
    }
    let not_sent = |reason: String| AgentFate { agent, status: Status::NotSent, placement: None, reason };
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    let dir = path.parent().unwrap_or(Path::new("/"));
    if name != codex::AGENTS_NAME && name != codex::OVERRIDE_NAME {
        return not_sent(format!(
            "Codex reads only {} and {} (CX1, CX3)",
            codex::OVERRIDE_NAME,
            codex::AGENTS_NAME
        ));
    }
    if dir == codex_home {
        return not_sent("the global file is not used: the other global file is (CX1)".to_owned());
    }
    let top = ctx.git_root.as_deref().unwrap_or(&ctx.cwd);
    if ctx.cwd.starts_with(dir) && dir.starts_with(top) {
        return not_sent(format!("there is no such file in {} (CX2)", dir.display()));
    }
    if ctx.cwd.starts_with(dir) {
        return not_sent(format!("above the git root {}, where Codex starts (CX2)", top.display()));
    }
    if dir.starts_with(&ctx.cwd) {
        return not_sent("below the working directory: Codex reads directories from the git root down to the working directory only, and attaches nothing on reads (CX2)".to_owned());
    }
    not_sent(format!("beside the path from {} to the working directory (CX2)", top.display()))
}

/// Claude Code's verdict: the file's [`claude_code::Fate`] (the sent entry first when a file
/// is met twice), or why the walk never meets it (CC3, CC11).
pub fn claude_code_fate(ctx: &ClaudeMdContext, path: &Path) -> AgentFate {
    let agent = "claude-code";
    let mut entries: Vec<_> = ctx.files.iter().filter(|f| f.source == path).collect();
    entries.sort_by_key(|f| !f.is_sent());
    if let Some(file) = entries.first() {
        let (status, placement) = match file.fate {
            claude_code::Fate::Sent | claude_code::Fate::Matched { .. } => {
                (Status::Sent, Some("first user message, in the rule-file <system-reminder>"))
            }
            claude_code::Fate::Conditional { .. } => (Status::OnRead, Some("the Read result")),
            _ => (Status::NotSent, None),
        };
        return AgentFate { agent, status, placement, reason: file.reason(&ctx.cwd, &ctx.approval) };
    }
    let not_sent = |reason: String| AgentFate { agent, status: Status::NotSent, placement: None, reason };
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    let dir = path.parent().unwrap_or(Path::new("/"));
    if name != "CLAUDE.md" && name != "CLAUDE.local.md" {
        return not_sent(
            "not a Claude Code rule file: CLAUDE.md, CLAUDE.local.md, .claude/CLAUDE.md, .claude/rules/*.md, or an @import of one (CC3, CC4, CC6)"
                .to_owned(),
        );
    }
    if dir.starts_with(&ctx.cwd) && dir != ctx.cwd {
        return AgentFate {
            agent,
            status: Status::OnRead,
            placement: Some("the Read result"),
            reason: format!(
                "below the working directory: attached when the model reads a file under {} (CC11)",
                dir.display()
            ),
        };
    }
    not_sent(format!(
        "beside the path from the filesystem root down to the working directory {} (CC3)",
        ctx.cwd.display()
    ))
}
