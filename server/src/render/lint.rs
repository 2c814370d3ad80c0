//! `lint` findings as text and JSON.

use std::fmt::Write;

use ctxgraph_engine::{Finding, Severity};
use schemars::JsonSchema;
use serde::Serialize;

/// rustc-style: `warning[CG001 shadowed-rule-file]: message`, the location, the hint.
pub fn text(findings: &[Finding]) -> String {
    let mut out = String::new();
    for finding in findings {
        let _ = writeln!(
            out,
            "{}[{} {}]: {}",
            severity(finding.severity),
            finding.code.id(),
            finding.code.name(),
            finding.message
        );
        if let Some(location) = &finding.location {
            let mut at = location.uri.clone();
            if let Some(line) = location.line {
                let _ = write!(at, ":{line}");
                if let Some(column) = location.column {
                    let _ = write!(at, ":{column}");
                }
            }
            let _ = writeln!(out, "  --> {at}");
        }
        let _ = writeln!(out, "  = hint: {}\n", finding.hint);
    }
    let count = |s: Severity| findings.iter().filter(|f| f.severity == s).count();
    let _ = writeln!(
        out,
        "{} finding{}: {} error{}, {} warning{}",
        findings.len(),
        plural(findings.len()),
        count(Severity::Error),
        plural(count(Severity::Error)),
        count(Severity::Warning),
        plural(count(Severity::Warning)),
    );
    out
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn severity(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Note => "note",
    }
}

/// `lint`'s findings as JSON: each with its code's name.
#[derive(Serialize, JsonSchema)]
pub struct JsonReport<'a> {
    /// Every finding, in the order lint found them.
    findings: Vec<JsonFinding<'a>>,
}

/// One finding, with its code's name beside its fields.
#[derive(Serialize, JsonSchema)]
struct JsonFinding<'a> {
    /// The code's name (`shadowed-rule-file` …).
    name: &'static str,
    #[serde(flatten)]
    finding: &'a Finding,
}

impl<'a> JsonReport<'a> {
    /// The findings' JSON shape, each with its code's name beside it.
    pub fn new(findings: &'a [Finding]) -> Self {
        JsonReport {
            findings: findings
                .iter()
                .map(|finding| JsonFinding { name: finding.code.name(), finding })
                .collect(),
        }
    }
}
