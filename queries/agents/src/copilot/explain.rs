//! Why a file is, or is not, in Copilot CLI's context: read off [`CopilotContext`]'s facts
//! and the rules of discovery (CP1–CP15).

use std::path::Path;

use ctxgraph_db::profile::{AgentFate, Status};

use super::{CopilotContext, Fate, MODEL_NAMES, Outcome, REPO_FILE};

/// `path`'s fate in Copilot's start-up section and on views.
pub fn file_fate(ctx: &CopilotContext, path: &Path) -> AgentFate {
    let agent = "copilot";
    if let Some(file) = ctx.files.iter().find(|f| f.source == path) {
        let status = match file.fate {
            Fate::Sent => Status::Sent,
            Fate::Listed => Status::OnRead,
            _ => Status::NotSent,
        };
        let placement = file.is_sent().then(|| file.placement.describe());
        return AgentFate { agent, status, placement, rule: file.rule(), reason: file.reason() };
    }
    let imports = ctx.files.iter().flat_map(|f| f.imports.iter().map(move |i| (f, i)));
    let imported: Vec<_> = imports.filter(|(_, i)| i.target == path).collect();
    if let Some((file, _)) = imported.iter().find(|(f, i)| i.outcome == Outcome::Inlined && f.is_sent()) {
        return AgentFate {
            agent,
            status: Status::Inlined,
            placement: Some(file.placement.describe()),
            rule: "CP9",
            reason: format!("inlined into {} after its @path (CP9)", file.source.display()),
        };
    }
    if let Some((file, import)) = imported.first() {
        return AgentFate {
            agent,
            status: Status::NotSent,
            placement: None,
            rule: import.rule(),
            reason: format!("`@{}` in {}: {}", import.token, file.source.display(), import.reason()),
        };
    }
    if let Some(not) = ctx.not_read.iter().find(|n| n.source == path) {
        return AgentFate {
            agent,
            status: Status::NotSent,
            placement: None,
            rule: "CP15",
            reason: not.reason.to_owned(),
        };
    }
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let (status, rule, reason) = if path.starts_with(&ctx.cwd)
        && path != ctx.cwd
        && is_attached_on_view(path, &name)
    {
        (
            Status::OnRead,
            "CP12",
            "below the working directory: attached when the model views a file under its directory (CP12)"
                .to_owned(),
        )
    } else if !path.starts_with(&ctx.root) && !path.starts_with(&ctx.copilot_home) {
        let reason =
            format!("outside {} and ~/.copilot: Copilot does not look there (CP2, CP15)", ctx.root.display());
        (Status::NotSent, "CP15", reason)
    } else if is_attached_on_view(path, &name) {
        (Status::NotSent, "CP2", "not a place Copilot looks from this working directory: only the root, the working directory and the directories between (CP2, CP5)".to_owned())
    } else {
        let reason = format!(
            "not a rule file name Copilot reads ({}, .github/{REPO_FILE}, instruction folders; CP2, CP5)",
            MODEL_NAMES.join(", ")
        );
        (Status::NotSent, "CP2", reason)
    };
    AgentFate { agent, status, placement: None, rule, reason }
}

/// CP12: the files a view attaches from a directory between the viewed file and the
/// working directory: its `.github/copilot-instructions.md`, `AGENTS.md`, `CLAUDE.md`,
/// `.claude/CLAUDE.md`, `GEMINI.md`, and the files of its `.github/instructions` and
/// `.claude/rules` folders. (Another agent's `rules` folder, `.continue/rules`, is none.)
fn is_attached_on_view(path: &Path, name: &str) -> bool {
    let in_folder = |outer: &str, inner: &str| {
        let parts: Vec<_> = path.components().map(std::path::Component::as_os_str).collect();
        parts.windows(2).any(|pair| pair[0] == outer && pair[1] == inner)
    };
    MODEL_NAMES.iter().any(|n| n.eq_ignore_ascii_case(name))
        || name.eq_ignore_ascii_case(REPO_FILE)
        || (in_folder(".github", "instructions") && name.to_ascii_lowercase().ends_with(".instructions.md"))
        || (in_folder(".claude", "rules") && name.to_ascii_lowercase().ends_with(".md"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_copilots_own_folders_are_attached_on_view() {
        let on_view = |path: &str| {
            let path = Path::new(path);
            is_attached_on_view(path, &path.file_name().unwrap().to_string_lossy())
        };
        assert!(on_view("/r/pkg/AGENTS.md"));
        assert!(on_view("/r/pkg/.claude/rules/style.md"));
        assert!(on_view("/r/pkg/.github/instructions/ts.instructions.md"));
        assert!(on_view("/r/pkg/.github/copilot-instructions.md"));
        assert!(!on_view("/r/.continue/rules/style.md"));
        assert!(!on_view("/r/rules/style.md"));
        assert!(!on_view("/r/pkg/README.md"));
    }
}
