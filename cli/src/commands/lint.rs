//! `ctxgraph lint`.

use std::process::ExitCode;

use ctxgraph_db::agent::Agent;
use ctxgraph_db::lint::{Budget, Severity};

use crate::args::{DenyLevel, LintArgs, LintFormat};
use crate::error::{CliError, EXIT_FINDINGS};
use crate::output::write_stdout;
use crate::render;

pub fn run(args: LintArgs) -> Result<ExitCode, CliError> {
    let (engine, ws) = super::open_fetching(args.cwd.clone(), &args.remote)?;
    let budget = Budget { total: args.max_total_tokens, rule: args.max_rule_tokens };
    let findings = match args.agent.one() {
        Some(Agent::Opencode) => engine.lint(ws, budget)?,
        agent => engine.agents_lint(ws, agent, budget)?,
    };
    let out = match args.format {
        LintFormat::Text => render::lint::text(&findings),
        LintFormat::Json => render::json(&render::lint::JsonReport::new(&findings))?,
        LintFormat::Sarif => render::json(&render::sarif::log(&findings))?,
    };
    write_stdout(out.as_bytes())?;
    let deny = match args.deny {
        DenyLevel::Errors => Severity::Error,
        DenyLevel::Warnings => Severity::Warning,
        DenyLevel::Notes => Severity::Note,
    };
    Ok(if findings.iter().any(|f| f.severity >= deny) {
        ExitCode::from(EXIT_FINDINGS)
    } else {
        ExitCode::SUCCESS
    })
}
