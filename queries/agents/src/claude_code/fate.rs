//! `explain --agent claude-code FILE`: Claude Code's verdict on one file, from its facts.

use std::path::Path;

use super::{ClaudeMdContext, Fate};
use ctxgraph_db::profile::{AgentFate, Status};

/// Claude Code's verdict: the file's [`Fate`] (the sent entry first when a file
/// is met twice), or why the walk never meets it (CC3, CC11).
pub fn claude_code_fate(ctx: &ClaudeMdContext, path: &Path) -> AgentFate {
    let agent = "claude-code";
    // A rules folder's link is answered by what it loaded (CC13).
    let mut entries: Vec<_> =
        ctx.files.iter().filter(|f| f.source == path || f.link.as_deref() == Some(path)).collect();
    entries.sort_by_key(|f| !f.is_sent());
    if let Some(file) = entries.first() {
        let (status, placement) = match file.fate {
            Fate::Sent | Fate::Matched { .. } => {
                (Status::Sent, Some("first user message, in the rule-file <system-reminder>"))
            }
            Fate::Conditional { .. } => (Status::OnRead, Some("the Read result")),
            _ => (Status::NotSent, None),
        };
        return AgentFate {
            agent,
            status,
            placement,
            rule: file.rule(),
            reason: file.reason(&ctx.cwd, &ctx.approval),
        };
    }
    let not_sent =
        |rule, reason: String| AgentFate { agent, status: Status::NotSent, placement: None, rule, reason };
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    let dir = path.parent().unwrap_or(Path::new("/"));
    if name != "CLAUDE.md" && name != "CLAUDE.local.md" {
        return not_sent(
            "CC3",
            "not a Claude Code rule file: CLAUDE.md, CLAUDE.local.md, .claude/CLAUDE.md, .claude/rules/*.md, or an @import of one (CC3, CC4, CC6)"
                .to_owned(),
        );
    }
    if dir.starts_with(&ctx.cwd) && dir != ctx.cwd {
        return AgentFate {
            agent,
            status: Status::OnRead,
            placement: Some("the Read result"),
            rule: "CC11",
            reason: format!(
                "below the working directory: attached when the model reads a file under {} (CC11)",
                dir.display()
            ),
        };
    }
    not_sent(
        "CC3",
        format!(
            "beside the path from the filesystem root down to the working directory {} (CC3)",
            ctx.cwd.display()
        ),
    )
}
