//! `ctxgraph config`: an agent's settings, grouped by where they come from, or one value
//! explained.

use std::fmt::Write as _;
use std::process::ExitCode;

use anstyle::{AnsiColor, Style};
use ctxgraph_engine::answers::settings::{
    LayerStatus, SettingKind, SettingNode, SettingOrigin, SettingsReport,
};
use serde::Serialize;
use serde_json::Value;

use crate::args::{ConfigArgs, Format};
use crate::error::CliError;
use crate::output::{write_stdout, write_verbatim};

pub fn run(args: ConfigArgs) -> Result<ExitCode, CliError> {
    let (engine, ws, _) = super::open_configured(args.cwd.clone(), &args.remote, args.agent)?;
    let report = engine.settings_report(ws, args.agent)?;
    let secrets = args.show_secrets;
    // Without --show-secrets, masked where the agent's own printout masks (the answer
    // `serve`'s `config` method and MCP's `context_config` give too), in text as in JSON;
    // then the one redaction every output goes through.
    let shown = |path: &[String], value: Value| {
        if secrets { value } else { report.masked_at(path).cloned().unwrap_or(value) }
    };
    let out = match (&args.explain, args.format) {
        (None, Format::Json) => crate::render::json(&ctxgraph_server::ops::config_reply(&report, secrets))?,
        (None, Format::Text) => layers(&report, &shown, &Palette::for_stdout()),
        (Some(path), format) => {
            let segments: Vec<&str> = path.split('.').filter(|s| !s.is_empty()).collect();
            let Some(node) = report.tree.lookup(&segments) else {
                return Err(CliError::NoSuchKey(path.clone()));
            };
            let shown = |sub: &[String], value: Value| {
                let full: Vec<String> =
                    segments.iter().map(|s| (*s).to_owned()).chain(sub.iter().cloned()).collect();
                shown(&full, value)
            };
            match format {
                Format::Json => crate::render::json(&explain_json(path, node, secrets, &shown))?,
                Format::Text => explain_text(path, node, secrets, &shown, &Palette::for_stdout()),
            }
        }
    };
    if secrets {
        write_verbatim(out.as_bytes())?;
    } else {
        write_stdout(out.as_bytes())?;
    }
    Ok(ExitCode::SUCCESS)
}

/// How a value is shown: given its path from the root and its rendering, what to print.
type Shown<'a> = dyn Fn(&[String], Value) -> Value + 'a;

/// Styles, or none when stdout is not a terminal or `NO_COLOR` is set.
struct Palette {
    header: Style,
    key: Style,
    dim: Style,
    warn: Style,
}

impl Palette {
    fn for_stdout() -> Self {
        if !crate::output::stdout_colored() {
            return Palette {
                header: Style::new(),
                key: Style::new(),
                dim: Style::new(),
                warn: Style::new(),
            };
        }
        Palette {
            header: Style::new().bold(),
            key: AnsiColor::Cyan.on_default(),
            dim: Style::new().dimmed(),
            warn: AnsiColor::Yellow.on_default(),
        }
    }
}

fn paint(style: Style, text: &str) -> String {
    format!("{style}{text}{style:#}")
}

/// Where an origin points: `path:line:col`, a URL, or a variable name, plus the
/// substitution it came through.
fn describe(origin: &SettingOrigin) -> String {
    let mut text = origin.source.name.clone();
    if let Some((line, column)) = origin.at {
        let _ = write!(text, ":{line}:{column}");
    }
    if !origin.via.is_empty() {
        let _ = write!(text, " via {}", origin.via.join(", "));
    }
    text
}

fn compact(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// The text report: every place in merge order with its status and the values in effect
/// that it set; then what the agent set itself.
fn layers(report: &SettingsReport, shown: &Shown<'_>, p: &Palette) -> String {
    // An empty root is no value: an agent with nothing set has no leaves.
    let leaves: Vec<_> = report.tree.leaves().into_iter().filter(|(path, _)| !path.is_empty()).collect();
    let mut out = String::new();
    if report.layers.is_empty() && leaves.is_empty() {
        let _ = writeln!(out, "no settings file shapes {}'s context as ctxgraph reproduces it", report.agent);
    }
    for layer in &report.layers {
        let source = &layer.source;
        let status = match &layer.status {
            LayerStatus::Loaded => String::new(),
            LayerStatus::Missing => " (not found)".to_owned(),
            LayerStatus::Empty => " (empty: {})".to_owned(),
            LayerStatus::Unavailable(reason) => format!(" ({reason})"),
        };
        let header = format!("{} {}{}", source.label, source.name, cited(source.rule));
        let _ = writeln!(out, "{}{}", paint(p.header, &header), paint(p.dim, &status));
        for key in &layer.dropped_keys {
            let rule = report.unknown_key_rule.unwrap_or_default();
            let note = format!("{key}: unknown key, dropped ({rule}; {} ignores it)", report.agent);
            let _ = writeln!(out, "  {}", paint(p.warn, &note));
        }
        for (path, node) in leaves.iter().filter(|(_, n)| n.origin.source == *source) {
            let _ = writeln!(out, "  {}", leaf_line(path, node, shown, p));
        }
    }
    let derived: Vec<String> = leaves
        .iter()
        .filter(|(_, node)| node.origin.source.derived)
        .map(|(path, node)| {
            format!(
                "  {}  {}",
                leaf_line(path, node, shown, p),
                paint(p.dim, &format!("({})", node.origin.source.name))
            )
        })
        .collect();
    if !derived.is_empty() {
        let rules = if report.derived_rules.is_empty() {
            String::new()
        } else {
            format!(" [{}]", report.derived_rules.join(", "))
        };
        let _ = writeln!(out, "{}", paint(p.header, &format!("set by {} itself{rules}", report.agent)));
        for line in derived {
            let _ = writeln!(out, "{line}");
        }
    }
    for warning in &report.warnings {
        let _ = writeln!(out, "{}", paint(p.warn, &format!("warning: {warning}")));
    }
    out
}

/// ` [RULE]`, or nothing for a place no rule puts in the chain.
fn cited(rule: &str) -> String {
    if rule.is_empty() { String::new() } else { format!(" [{rule}]") }
}

fn leaf_line(path: &[String], node: &SettingNode, shown: &Shown<'_>, p: &Palette) -> String {
    let mut line =
        format!("{} = {}", paint(p.key, &path.join(".")), compact(&shown(path, node.render(false))));
    if let Some((l, c)) = node.origin.at {
        let _ = write!(line, "  {}", paint(p.dim, &format!("{l}:{c}")));
    }
    if !node.origin.via.is_empty() {
        let _ = write!(line, "  {}", paint(p.dim, &format!("via {}", node.origin.via.join(", "))));
    }
    if !node.replaced.is_empty() {
        let earlier: Vec<String> = node.replaced.iter().map(|o| o.origin.source.name.clone()).collect();
        let _ = write!(line, "  {}", paint(p.dim, &format!("(overrides {})", earlier.join(", "))));
    }
    line
}

fn explain_text(path: &str, node: &SettingNode, secrets: bool, shown: &Shown<'_>, p: &Palette) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{} = {}", paint(p.key, path), compact(&shown(&[], node.render(secrets))));
    match &node.kind {
        SettingKind::Scalar(_) => {
            let _ = writeln!(out, "  set by {}{}", describe(&node.origin), cited(node.origin.source.rule));
        }
        SettingKind::Array(_) | SettingKind::Object(_) => {
            let _ = writeln!(out, "  created by {}", describe(&node.origin));
            for (sub, leaf) in node.leaves() {
                if sub.is_empty() {
                    continue;
                }
                let _ = writeln!(
                    out,
                    "  {} = {}  {}",
                    paint(p.key, &format!("{path}.{}", sub.join("."))),
                    compact(&shown(&sub, leaf.render(secrets))),
                    paint(p.dim, &format!("from {}", describe(&leaf.origin)))
                );
            }
        }
    }
    // A value opencode masks here is masked in the values it replaced too.
    let masked_here = shown(&[], Value::Null) == Value::String("***".to_owned());
    for old in node.replaced.iter().rev() {
        let shown = if masked_here {
            "\"***\"".to_owned()
        } else if secrets || old.origin.via.is_empty() {
            compact(&old.value)
        } else {
            "(substituted; --show-secrets)".to_owned()
        };
        let _ = writeln!(
            out,
            "  {} {} {}",
            paint(p.dim, "overrode"),
            shown,
            paint(p.dim, &format!("from {}", describe(&old.origin)))
        );
    }
    out
}

#[derive(Serialize)]
struct OriginReport {
    kind: &'static str,
    source: String,
    #[serde(skip_serializing_if = "str::is_empty")]
    rule: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    column: Option<usize>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    via: Vec<String>,
}

impl OriginReport {
    fn new(origin: &SettingOrigin) -> Self {
        OriginReport {
            kind: origin.source.kind,
            source: origin.source.name.clone(),
            rule: origin.source.rule,
            line: origin.at.map(|(line, _)| line),
            column: origin.at.map(|(_, column)| column),
            via: origin.via.clone(),
        }
    }
}

fn explain_json(path: &str, node: &SettingNode, secrets: bool, shown: &Shown<'_>) -> Value {
    let masked_here = shown(&[], Value::Null) == Value::String("***".to_owned());
    let hide = |value: &Value, origin: &SettingOrigin| {
        if masked_here {
            Value::String("***".to_owned())
        } else if secrets || origin.via.is_empty() {
            value.clone()
        } else {
            Value::String(origin.written.clone().unwrap_or_default())
        }
    };
    let leaves: Vec<Value> = node
        .leaves()
        .into_iter()
        .map(|(sub, leaf)| {
            serde_json::json!({
                "path": sub,
                "value": shown(&sub, leaf.render(secrets)),
                "origin": OriginReport::new(&leaf.origin),
            })
        })
        .collect();
    let overridden: Vec<Value> = node
        .replaced
        .iter()
        .map(|old| serde_json::json!({"value": hide(&old.value, &old.origin), "origin": OriginReport::new(&old.origin)}))
        .collect();
    serde_json::json!({
        "path": path,
        "value": shown(&[], node.render(secrets)),
        "origin": OriginReport::new(&node.origin),
        "leaves": leaves,
        "overridden": overridden,
    })
}
