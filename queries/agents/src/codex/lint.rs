//! `lint --agent codex`: what Codex's budgets leave out and which skills it drops (CG014,
//! CG020, CG024, `docs/lint.md`), read off its facts.

use super::skills::{SkillFate, Skills};
use super::{AgentsContext, Fate};
use ctxgraph_db::lint::{Code, Finding};
use ctxgraph_db::path;

/// CG014: every file Codex cuts or skips because `project_doc_max_bytes` ran out.
pub fn codex_findings(ctx: &AgentsContext) -> Vec<Finding> {
    let budget = &ctx.budget;
    let hint = "raise project_doc_max_bytes in ~/.codex/config.toml, or shorten the files before it";
    ctx.docs
        .iter()
        .filter_map(|doc| {
            let message = match doc.fate {
                Fate::Cut { kept } => format!(
                    "Codex sends only the first {kept} of {} bytes of {}: project_doc_max_bytes = {} runs out (CX5)",
                    doc.bytes,
                    path::display(&doc.source),
                    budget.bytes
                ),
                Fate::OverBudget => format!(
                    "Codex never sends {}: the files before it use all of project_doc_max_bytes = {} (CX5)",
                    path::display(&doc.source),
                    budget.bytes
                ),
                _ => return None,
            };
            Some(Finding::about_file(Code::CodexBudgetOverflow, message, &doc.source, hint))
        })
        .collect()
}

/// CG020: every `SKILL.md` Codex fails to load (CX8), which it reports only on stderr; CG024:
/// the listing over Codex's budget for a model of `context_window` tokens (CX13), reported on
/// the first skill whose description is cut or that is left out.
pub fn skill_findings(skills: &Skills, context_window: u64) -> Vec<Finding> {
    let mut findings: Vec<Finding> = skills
        .found
        .iter()
        .filter_map(|skill| match &skill.fate {
            SkillFate::Failed { reason } => Some(Finding::about_file(
                Code::SkillNotLoaded,
                format!("Codex does not load {}: {reason} (CX8)", path::display(&skill.path)),
                &skill.path,
                "open the file with a `---` line, give it a `description:` and a `name:` of at most 64 characters, no tabs and no key twice, and close it with `---`",
            )),
            _ => None,
        })
        .collect();
    let Some(message) = skills.message("", context_window) else { return findings };
    let Some(budget) = message.budget else { return findings };
    let cut = message.lines.iter().filter(|l| l.cut).count();
    let first = message.lines.iter().find(|l| l.cut).map(|l| l.path.clone()).or_else(|| {
        let shown: Vec<&std::path::Path> = message.lines.iter().map(|l| l.path.as_path()).collect();
        skills.listed().into_iter().map(|s| s.path.clone()).find(|p| !shown.contains(&p.as_path()))
    });
    if let Some(first) = first {
        findings.push(Finding::about_file(
            Code::SkillDescriptionsCut,
            format!(
                "Codex's skill listing is over its budget of {budget} estimated tokens (2% of a {context_window}-token context window): {cut} description(s) cut, {} skill(s) left out (CX13)",
                message.omitted
            ),
            &first,
            "shorten the longest descriptions, or hide skills the model need not pick by itself (agents/openai.yaml policy.allow_implicit_invocation: false, or [[skills.config]] enabled = false)",
        ));
    }
    findings
}
