//! `ctxgraph check --format github`: workflow-command annotations on the snapshot and on
//! the rule files that changed, the diffs in collapsible log groups, and a markdown
//! summary for `$GITHUB_STEP_SUMMARY` (printed when that is not set).

use std::fmt::Write as _;
use std::io::Write as _;

use ctxgraph_check::{CheckReport, Project, Status};
use ctxgraph_db::secrets;

use super::check_text::{Paint, text, token_delta};
use crate::error::CliError;
use crate::output::write_stdout;

pub fn emit(project: &Project, report: &CheckReport, ci: bool) -> Result<(), CliError> {
    let mut out = String::new();
    for s in report.scenarios.iter().filter(|s| s.failed) {
        let title = format!("ctxgraph check: {}", s.name);
        let (line, message) = match (&s.status, &s.change) {
            (Status::Changed, Some(change)) => {
                let sources: Vec<String> =
                    change.sources.iter().map(|c| format!("{} {}", c.kind.as_str(), c.source)).collect();
                let why =
                    if sources.is_empty() { String::new() } else { format!(": {}", sources.join(", ")) };
                (Some(change.line), format!("The prompt changed ({}){why}", token_delta(change)))
            }
            (Status::Missing, _) => {
                (None, format!("No snapshot: run `ctxgraph snapshot {}` and commit {}", s.name, s.snapshot))
            }
            _ => (None, s.note.clone().or_else(|| s.error.clone()).unwrap_or_else(|| "failed".to_owned())),
        };
        let line = line.map(|l| format!(",line={l}")).unwrap_or_default();
        let _ = writeln!(
            out,
            "::error file={}{line},title={}::{}",
            property(&s.snapshot),
            property(&title),
            data(&message)
        );
        for change in s.change.iter().flat_map(|c| &c.sources) {
            if let Some(file) = change.repo_file() {
                let message = format!("{} in the prompt of scenario {}", change.kind.as_str(), s.name);
                let _ = writeln!(
                    out,
                    "::warning file={},title={}::{}",
                    property(file),
                    property(&title),
                    data(&message)
                );
            }
        }
    }
    // The whole text report, in a group, for the log. A CI log and a job summary are read
    // by everyone who can see the pull request: a secret in a rule file's diff is masked
    // (the table every output shares), as lint reports it without its value.
    let _ = writeln!(out, "::group::ctxgraph check");
    out.push_str(&inert(&secrets::redact(&text(project, report, ci, Paint { on: false })).0));
    let _ = writeln!(out, "::endgroup::");

    let summary = secrets::redact(&markdown(project, report)).0.into_owned();
    match std::env::var_os("GITHUB_STEP_SUMMARY").filter(|v| !v.is_empty()) {
        Some(path) => {
            let mut file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .map_err(CliError::Output)?;
            file.write_all(summary.as_bytes()).map_err(CliError::Output)?;
        }
        None => out.push_str(&inert(&summary)),
    }
    write_stdout(out.as_bytes())
}

/// Free text for the log (paths, diffs, rule text) with workflow commands switched off
/// around it, so that a line of it starting with `::` is printed, not run. This is
/// GitHub's documented way to echo untrusted text: `::stop-commands::TOKEN` … `::TOKEN::`.
/// The token is the text's blake3: deterministic, and no text can contain its own hash.
fn inert(text: &str) -> String {
    if text.is_empty() {
        return String::new();
    }
    let token = blake3::hash(text.as_bytes()).to_hex();
    let newline = if text.ends_with('\n') { "" } else { "\n" };
    format!("::stop-commands::{token}\n{text}{newline}::{token}::\n")
}

fn markdown(project: &Project, report: &CheckReport) -> String {
    let failed = report.scenarios.iter().filter(|s| s.failed).count();
    let mut md = String::new();
    let _ = writeln!(
        md,
        "## ctxgraph check: {}\n\n`{}`\n\n| scenario | result | tokens |\n|---|---|---|",
        if failed == 0 {
            "all prompts match".to_owned()
        } else {
            format!("{failed} of {} failed", report.scenarios.len())
        },
        project.relative(&project.file)
    );
    for s in &report.scenarios {
        let result = match s.status {
            Status::Match => "✅ unchanged",
            Status::Changed => "❌ changed",
            Status::Missing if s.failed => "❌ no snapshot",
            Status::Missing => "🆕 no snapshot yet",
            Status::Invalid => "❌ invalid snapshot",
            Status::Error => "❌ cannot be built",
        };
        let tokens = match (&s.change, s.tokens) {
            (Some(c), _) => format!("{} → {} ({})", c.tokens_before, c.tokens_after, token_delta(c)),
            (None, Some(t)) => t.to_string(),
            (None, None) => String::new(),
        };
        let _ = writeln!(md, "| {} | {result} | {tokens} |", s.name);
    }
    for s in report.scenarios.iter().filter(|s| s.failed) {
        let _ = writeln!(md, "\n### {}\n", s.name);
        if let Some(text) = s.note.as_ref().or(s.error.as_ref()) {
            let _ = writeln!(md, "{text}\n");
        }
        let Some(change) = &s.change else { continue };
        for source in &change.sources {
            let reason = source.reason.as_ref().map(|r| format!(" — {r}")).unwrap_or_default();
            let _ = writeln!(md, "- {} `{}`{reason}", source.kind.as_str(), source.source);
        }
        let fence = if change.diff.contains("```") { "~~~~" } else { "```" };
        let _ = writeln!(
            md,
            "\n<details><summary>diff</summary>\n\n{fence}diff\n{}{fence}\n\n</details>",
            change.diff
        );
    }
    md
}

/// Workflow-command data: `%`, CR and LF escaped.
fn data(text: &str) -> String {
    text.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

/// Workflow-command property values: as data, plus `:` and `,`.
fn property(text: &str) -> String {
    data(text).replace(':', "%3A").replace(',', "%2C")
}
