//! `lint --format sarif`: a SARIF 2.1.0 log (OASIS, errata 01), as read by GitHub code
//! scanning and SARIF viewers. Validated against the official schema in the CLI tests.
//!
//! Built as plain JSON rather than with `serde-sarif`: lint uses a dozen of SARIF's
//! hundreds of types, and the schema test, not a type library, is what keeps them valid.

use ctxgraph_db::lint::{Code, Finding, Severity};
use percent_encoding::{AsciiSet, CONTROLS, utf8_percent_encode};
use serde_json::{Value, json};

/// Characters escaped in a `file://` path: everything a URI reference may not hold
/// literally (`/` stays, it separates segments).
const PATH: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'[')
    .add(b']')
    .add(b'\\')
    .add(b'^')
    .add(b'`')
    .add(b'{')
    .add(b'|')
    .add(b'}');

pub fn log(findings: &[Finding]) -> Value {
    let rules: Vec<Value> = Code::ALL
        .iter()
        .map(|code| {
            json!({
                "id": code.id(),
                "name": code.name(),
                "shortDescription": { "text": code.summary() },
                "helpUri": help_uri(code.id()),
                "defaultConfiguration": { "level": level(code.severity()) },
            })
        })
        .collect();
    let results: Vec<Value> = findings.iter().map(result).collect();
    json!({
        "$schema": "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {
                "driver": {
                    "name": "ctxgraph",
                    "version": env!("CARGO_PKG_VERSION"),
                    "informationUri": env!("CARGO_PKG_REPOSITORY"),
                    "rules": rules,
                }
            },
            "results": results,
        }]
    })
}

/// Where a code is documented: `docs/lint.md` in the repository, at the code's anchor.
fn help_uri(id: &str) -> String {
    format!("{}/blob/main/docs/lint.md#{}", env!("CARGO_PKG_REPOSITORY"), id.to_lowercase())
}

fn result(finding: &Finding) -> Value {
    let mut result = json!({
        "ruleId": finding.code.id(),
        "ruleIndex": Code::ALL.iter().position(|c| *c == finding.code).unwrap_or(0),
        "level": level(finding.severity),
        "message": { "text": format!("{} (hint: {})", finding.message, finding.hint) },
    });
    if let Some(location) = &finding.location {
        let mut physical = json!({ "artifactLocation": { "uri": uri(&location.uri) } });
        if let Some(line) = location.line {
            let mut region = json!({ "startLine": line });
            if let Some(column) = location.column {
                region["startColumn"] = json!(column);
            }
            physical["region"] = region;
        }
        result["locations"] = json!([{ "physicalLocation": physical }]);
    }
    result
}

/// Absolute paths become `file://` URIs; URLs stay as they are.
fn uri(location: &str) -> String {
    if location.starts_with('/') {
        format!("file://{}", utf8_percent_encode(location, PATH))
    } else {
        location.to_owned()
    }
}

fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Note => "note",
    }
}
