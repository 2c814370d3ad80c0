//! `lint --agent gemini`: the `@import`s Gemini CLI does not inline (CG015, `docs/lint.md`),
//! read off its facts.

use super::{GeminiContext, Outcome};
use ctxgraph_db::lint::{Code, Finding};
use ctxgraph_db::path;

/// CG015: every `@import` in a file Gemini sends that it does not inline (a missing file, a
/// directory, a path outside the project, a cycle, the depth limit).
pub fn gemini_findings(ctx: &GeminiContext) -> Vec<Finding> {
    let mut findings = Vec::new();
    for doc in ctx.docs.iter().filter(|d| d.is_sent()) {
        for import in &doc.imports {
            let why = match &import.outcome {
                Outcome::Inlined | Outcome::InCode | Outcome::Skipped | Outcome::Missing => continue,
                failed => failed.describe(),
            };
            findings.push(Finding::about_file(
                Code::GeminiImportFailed,
                format!(
                    "Gemini CLI does not inline `@{}` in {}: {why}; the model sees an HTML comment instead (GM4)",
                    import.path,
                    path::display(&import.importer)
                ),
                &import.importer,
                "fix the path, or write the `@` inside backticks if it is not an import",
            ));
        }
    }
    findings
}
