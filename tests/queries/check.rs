//! What the queries make of a one-string [`Fixture`], rendered compactly for inline insta
//! snapshots, so a test case is one call:
//! `insta::assert_snapshot!(check::lint(fixture), @"…")` (the cases are the sibling
//! modules; this module's own test shows both kinds of result).
//!
//! Each renders an error as `error: …` instead of panicking, so refusals are snapshots too.

use ctxgraph_db::Workspace;
use ctxgraph_db::lint::{Budget, Finding};
use ctxgraph_engine::{Engine, EngineError, HostEnv};
use ctxgraph_opencode::explain::{Reason, Stage};
use ctxgraph_opencode::prompt::Section;
use ctxgraph_test_support::fixture::Fixture;
use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

/// An engine over the fixture's world in memory, and the workspace of `cwd`. The host is
/// [`HostEnv::fixed`] at `/home`, the managed config dir redirected to `/managed`, with the
/// fixture's `env:` lines on top.
pub fn engine_at(fixture: &Fixture, cwd: &Path) -> (Engine, Workspace) {
    let mut host = HostEnv::fixed("/home");
    host.vars.insert("OPENCODE_TEST_MANAGED_CONFIG_DIR".to_owned(), "/managed".to_owned());
    host.vars.extend(fixture.env.clone());
    let mut engine = Engine::new(Arc::new(fixture.memory_system()), host);
    let ws = engine.open(cwd).unwrap_or_else(|err| panic!("open {}: {err}", cwd.display()));
    (engine, ws)
}

fn run(fixture: &str, render: impl FnOnce(&Engine, Workspace) -> Result<String, EngineError>) -> String {
    let fixture = Fixture::parse(fixture);
    let (engine, ws) = engine_at(&fixture, &fixture.cwd);
    render(&engine, ws).unwrap_or_else(|err| format!("error: {err}\n"))
}

/// The instruction blocks of the system prompt, as opencode would send them.
pub fn prompt(fixture: &str) -> String {
    run(fixture, |engine, ws| {
        let prompt = engine.system_prompt(ws, None)?;
        Ok(prompt.layout(Section::Instructions).text)
    })
}

/// One line per rule file or URL explain considered: what it is, its stage, and either
/// `loaded #position` or why not (reason summaries).
pub fn explain(fixture: &str) -> String {
    run(fixture, |engine, ws| {
        let explanation = engine.explain(ws)?;
        let mut out = String::new();
        for item in &explanation.items {
            let stage = match item.stage {
                Stage::Global => "global",
                Stage::Project => "project",
                Stage::Instructions => "instructions",
                Stage::Remote => "remote",
                Stage::Nearby => "nearby",
                Stage::None => "none",
            };
            let fate = match &item.loaded {
                Some(loaded) => format!("loaded #{}", loaded.position),
                None => item.reasons.iter().map(Reason::summary).collect::<Vec<_>>().join("; "),
            };
            let _ = writeln!(out, "{} [{stage}] {fate}", item.source.label());
        }
        Ok(out)
    })
}

/// `CODE path:line message` per finding, in lint's order, with the default budgets.
pub fn lint(fixture: &str) -> String {
    lint_with(fixture, Budget::default())
}

pub fn lint_with(fixture: &str, budget: Budget) -> String {
    run(fixture, |engine, ws| Ok(engine.lint(ws, budget)?.iter().map(finding_line).collect()))
}

/// One finding on one line.
pub fn finding_line(finding: &Finding) -> String {
    let at = match &finding.location {
        Some(location) => match location.line {
            Some(line) => format!("{}:{line}", location.uri),
            None => location.uri.clone(),
        },
        None => "-".to_owned(),
    };
    format!("{} {at} {}\n", finding.code.id(), finding.message)
}

#[cfg(test)]
mod tests {
    use super::{lint, prompt};

    #[test]
    fn a_case_is_one_call_and_a_refusal_is_a_value() {
        let findings = lint(
            "//- git: /repo\n//- /repo/AGENTS.md\nRoot rules.\n//- /repo/CLAUDE.md\nClaude-only rules.\n",
        );
        assert!(findings.starts_with("CG002 /repo/CLAUDE.md:1 "), "{findings}");
        assert_eq!(findings.lines().count(), 1, "{findings}");

        let refused = prompt("//- git: /repo\n//- /repo/opencode.json\n{ \"instructions\": [ }\n");
        assert!(refused.starts_with("error: /repo/opencode.json:1:"), "{refused}");
    }
}
