//! `ctxgraph lint`.

use std::process::ExitCode;

use ctxgraph_db::Workspace;
use ctxgraph_db::agent::Agent;
use ctxgraph_db::lint::{Budget, Finding, Severity};
use ctxgraph_engine::{Engine, HostEnv};

use crate::args::{DenyLevel, LintArgs, LintFormat};
use crate::error::{CliError, EXIT_FINDINGS};
use crate::output::write_stdout;
use crate::render;

pub fn run(args: LintArgs) -> Result<ExitCode, CliError> {
    let env = HostEnv::from_process();
    let policy = super::policy(&args.remote, &env);
    let (mut engine, ws) = super::open_with(env, args.cwd.clone())?;
    // What each linted agent's answer reads that is not on disk; a broken opencode.json
    // stops only opencode's lint.
    let agents = args.agent.one().map_or(Agent::ALL.to_vec(), |agent| vec![agent]);
    for agent in agents {
        super::prepare_agent(
            &mut engine,
            ws,
            agent,
            ctxgraph_server::ops::explained_section(agent),
            &policy,
        )?;
    }
    let budget = Budget { total: args.max_total_tokens, rule: args.max_rule_tokens };
    let findings = findings(&engine, ws, args.agent.one(), budget)?;
    let out = match args.format {
        LintFormat::Text => render::lint::text(&findings),
        LintFormat::Json => render::json(&render::lint::JsonReport::new(&findings))?,
        LintFormat::Sarif => render::json(&render::sarif::log(&findings))?,
    };
    write_stdout(out.as_bytes())?;
    let deny = lowest_denied(args.deny);
    Ok(if findings.iter().any(|f| f.severity >= deny) {
        ExitCode::from(EXIT_FINDINGS)
    } else {
        ExitCode::SUCCESS
    })
}

/// `lint --agent`'s findings: opencode's own lint, one other agent's, or (`None`) all of them
/// with the cross-agent checks.
pub fn findings(
    engine: &Engine,
    ws: Workspace,
    agent: Option<Agent>,
    budget: Budget,
) -> Result<Vec<Finding>, CliError> {
    Ok(engine.agents_lint(ws, agent, budget)?)
}

/// The lowest severity `--deny` fails on.
pub fn lowest_denied(deny: DenyLevel) -> Severity {
    match deny {
        DenyLevel::Errors => Severity::Error,
        DenyLevel::Warnings => Severity::Warning,
        DenyLevel::Notes => Severity::Note,
    }
}
