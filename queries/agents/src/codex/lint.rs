//! `lint --agent codex`: what Codex's budget leaves out (CG014, `docs/lint.md`), read off
//! its facts.

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
