//! CG007 for every agent but opencode (whose lint has its own, with its read tool's files):
//! a file whose block in the agent's layout is over `--max-rule-tokens`.

use ctxgraph_db::lint::{Budget, Code, Finding, Location};
use ctxgraph_db::path;
use ctxgraph_db::profile::Layout;
use ctxgraph_db::tokens::TokenCounter;

/// What opencode's CG007 says, for the same fix.
const HINT: &str = "split it, and move what is needed only in part of the tree into nested rule files";

/// Each block of `layout` that carries a file and is over `budget.rule` tokens of `counter`.
pub fn rule_budget_findings(layout: &Layout, counter: &dyn TokenCounter, budget: Budget) -> Vec<Finding> {
    let mut findings = Vec::new();
    for block in &layout.blocks {
        let Some(file) = block.source.path() else { continue };
        let tokens = counter.count(layout.text_of(block));
        if tokens <= budget.rule {
            continue;
        }
        findings.push(Finding {
            code: Code::RuleOverBudget,
            severity: Code::RuleOverBudget.severity(),
            message: format!(
                "{} is {tokens} tokens in what {} sends, over the budget of {} per rule file",
                path::display(file),
                layout.agent,
                budget.rule
            ),
            location: Some(Location { uri: path::display(file), line: None, column: None }),
            hint: HINT.to_owned(),
        });
    }
    findings
}
