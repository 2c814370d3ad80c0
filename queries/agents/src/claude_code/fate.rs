//! `explain --agent claude-code FILE`: Claude Code's verdict on one file, from its facts.

use std::path::Path;

use super::listing::Listings;
use super::{ClaudeMdContext, Fate};
use ctxgraph_db::profile::{AgentFate, Status};

/// Claude Code's verdict: the file's [`Fate`] (the sent entry first when a file
/// is met twice), its place in the first request's listings (CC17–CC19), or why the walk
/// never meets it (CC3, CC11).
pub fn claude_code_fate(ctx: &ClaudeMdContext, listings: &Listings, path: &Path) -> AgentFate {
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
    if let Some(fate) = listed(listings, path) {
        return fate;
    }
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

/// CC17–CC19: a skill's, command's, agent's or output style's file, as the first request's
/// listings take it (`build --section request`).
fn listed(listings: &Listings, path: &Path) -> Option<AgentFate> {
    let agent = "claude-code";
    let sent = |placement, rule, reason: String| AgentFate {
        agent,
        status: Status::Sent,
        placement: Some(placement),
        rule,
        reason,
    };
    if let Some(entry) = listings.skills.iter().find(|e| e.source == path) {
        return Some(sent("first user message, a line of the skill list", "CC17", entry.reason.clone()));
    }
    if let Some(entry) = listings.agents.iter().find(|e| e.source == path) {
        return Some(sent("first user message, a line of the agent list", "CC18", entry.reason.clone()));
    }
    if let Some(style) = listings.style.as_ref().filter(|s| !s.builtin && s.source == path) {
        let reason = format!(
            "the output style {} chosen by outputStyle in {}: its text after the model block, its name in a reminder (CC19)",
            style.name,
            style.settings.display()
        );
        return Some(sent("first user message, the output style's <system-reminder>", "CC19", reason));
    }
    let (_, _, reason) = listings.left_out.iter().find(|(source, _, _)| source == path)?;
    let rule = ["CC17", "CC18", "CC19"].into_iter().find(|id| reason.contains(id)).unwrap_or("CC17");
    Some(AgentFate { agent, status: Status::NotSent, placement: None, rule, reason: reason.clone() })
}
