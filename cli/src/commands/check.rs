//! `ctxgraph check`: the report for people (text, in `check_text.rs`) and machines (JSON);
//! GitHub's format is in `github.rs`. The comparison itself is `ctxgraph_check::Project::check`.

use std::fmt::Write as _;
use std::process::ExitCode;

use ctxgraph_check::{CheckReport, Project, ScenarioReport};
use serde::Serialize;

use super::check_text::{Paint, text};
use super::github;
use super::snapshot::scenarios_file;
use crate::args::{CheckArgs, CheckFormat};
use crate::error::{CliError, EXIT_INPUT};
use crate::output::{stdout_colored, write_stdout};

pub fn run(args: CheckArgs) -> Result<ExitCode, CliError> {
    let project = Project::load(&scenarios_file(&args.scenarios)?)?;
    if args.accept {
        let accepted = project.accept(&args.names)?;
        let mut out = String::new();
        for a in &accepted {
            let _ = writeln!(out, "accepted {} ({})", a.name, a.path);
        }
        if accepted.is_empty() {
            out.push_str("no pending snapshots (.snap.new) to accept\n");
        }
        write_stdout(out.as_bytes())?;
        return Ok(ExitCode::SUCCESS);
    }
    let ci = is_ci(std::env::var("CI").ok().as_deref());
    let report = project.check(&args.names, ci)?;
    match args.format {
        CheckFormat::Text => {
            let paint = Paint { on: stdout_colored() };
            write_stdout(text(&project, &report, ci, paint).as_bytes())?;
        }
        CheckFormat::Json => {
            let json = JsonReport { passed: report.passed(), ci, scenarios: &report.scenarios };
            let mut out = serde_json::to_string_pretty(&json).map_err(|e| CliError::Output(e.into()))?;
            out.push('\n');
            write_stdout(out.as_bytes())?;
        }
        CheckFormat::Github => github::emit(&project, &report, ci)?,
        CheckFormat::Html => {
            let code = exit_code(&report);
            write_stdout(super::report::changes_page(&project, report).as_bytes())?;
            return Ok(code);
        }
    }
    Ok(exit_code(&report))
}

/// `CI` set to anything but empty, `false` or `0` (the convention CI providers and insta
/// share).
fn is_ci(value: Option<&str>) -> bool {
    value.is_some_and(|v| !matches!(v.trim(), "" | "0") && !v.trim().eq_ignore_ascii_case("false"))
}

pub fn exit_code(report: &CheckReport) -> ExitCode {
    if report.has_errors() {
        ExitCode::from(EXIT_INPUT)
    } else if report.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

#[derive(Serialize)]
struct JsonReport<'a> {
    passed: bool,
    ci: bool,
    scenarios: &'a [ScenarioReport],
}

#[cfg(test)]
mod tests {
    use super::is_ci;

    #[test]
    fn ci_values() {
        for (value, expected) in [
            (None, false),
            (Some(""), false),
            (Some("0"), false),
            (Some("false"), false),
            (Some("FALSE"), false),
        ] {
            assert_eq!(is_ci(value), expected, "{value:?}");
        }
        for value in ["true", "1", "yes", "woodpecker"] {
            assert!(is_ci(Some(value)), "{value:?}");
        }
    }
}
