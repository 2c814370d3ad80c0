//! What the server answers, computed from a read-only engine and an open document's text.
//! Nothing here mutates the engine: the main loop sets the overlays first, and these run on
//! a [`Snapshot`](ctxgraph_engine::Snapshot) on a worker thread.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use ctxgraph_engine::PROFILES;
use ctxgraph_engine::answers::explain::{EntryExpansion, Reason};
use ctxgraph_engine::answers::profile::{Request, Status};
use ctxgraph_engine::answers::settings::SettingKind;
use ctxgraph_engine::{Agent, Budget, Code, Engine, EngineError, Finding, Severity, Workspace};
use lsp_types::{
    CodeDescription, CodeLens, Command, Diagnostic, DiagnosticSeverity, DocumentLink, Hover, HoverContents,
    Location, MarkupContent, MarkupKind, NumberOrString, Position, Range, Uri,
};

use crate::references::{Reference, key_range, reference_at, references, resolve_import};
use crate::text::{Column, finding_range, range_of};
use crate::uri::{path_to_uri, repository_doc};

/// An open document: its path and the editor's text.
#[derive(Clone, Copy, Debug)]
pub struct Open<'a> {
    /// Absolute.
    pub path: &'a Path,
    /// What the editor holds, saved or not.
    pub text: &'a str,
}

const SOURCE: &str = "ctxgraph";

/// Every open document's diagnostics in `ws`, in `docs` order: the lint findings located
/// in it, and the config errors that point into it.
pub fn diagnostics(engine: &Engine, ws: Workspace, docs: &[Open<'_>]) -> Vec<Vec<Diagnostic>> {
    let (findings, errors) = lint_everything(engine, ws);
    docs.iter()
        .map(|doc| {
            let name = doc.path.to_string_lossy();
            let mut found: Vec<Diagnostic> = findings
                .iter()
                .filter(|f| f.location.as_ref().is_some_and(|l| l.uri == name))
                .map(|f| finding_diagnostic(*doc, f))
                .collect();
            for (refusing, error) in &errors {
                found.extend(error_diagnostics(*doc, error, refusing));
            }
            if doc.path.file_name().is_some_and(|n| n == "ctxgraph.toml") {
                found.extend(scenarios_diagnostics(*doc));
            }
            found
        })
        .collect()
}

/// Every agent's findings with the cross-agent ones; when one agent cannot answer (its
/// config is broken), each agent's own, and the errors of those that could not, each with
/// the agents it stops.
fn lint_everything(engine: &Engine, ws: Workspace) -> (Vec<Finding>, Vec<(Vec<&'static str>, EngineError)>) {
    let budget = Budget::default();
    if let Ok(findings) = engine.agents_lint(ws, None, budget) {
        return (findings, Vec::new());
    }
    let mut findings = Vec::new();
    let mut errors: Vec<(Vec<&'static str>, EngineError)> = Vec::new();
    for profile in PROFILES {
        match engine.agents_lint(ws, Some(profile.agent()), budget) {
            Ok(found) => findings.extend(found),
            Err(error) => {
                // Two agents reading one broken file say so once, naming both.
                let agent = profile.agent().name();
                match errors.iter_mut().find(|(_, seen)| seen.to_string() == error.to_string()) {
                    Some((agents, _)) => agents.push(agent),
                    None => errors.push((vec![agent], error)),
                }
            }
        }
    }
    (findings, errors)
}

/// Why an open document is not analysed: its text is over `limit` bytes.
pub fn oversized_message(limit: usize) -> String {
    format!(
        "over the limit of {} MiB for an open document ({limit} bytes): ctxgraph lsp does not analyse it until it is smaller",
        limit / (1024 * 1024)
    )
}

/// The one diagnostic of an open document over `limit` bytes.
pub fn oversized_diagnostic(limit: usize) -> Diagnostic {
    Diagnostic {
        range: Range::new(Position::new(0, 0), Position::new(0, 0)),
        severity: Some(DiagnosticSeverity::WARNING),
        source: Some(SOURCE.to_owned()),
        message: format!("This document is {}.", oversized_message(limit)),
        ..Diagnostic::default()
    }
}

fn severity(severity: Severity) -> DiagnosticSeverity {
    match severity {
        Severity::Error => DiagnosticSeverity::ERROR,
        Severity::Warning => DiagnosticSeverity::WARNING,
        Severity::Note => DiagnosticSeverity::INFORMATION,
    }
}

/// Where an `@import` finding points in `doc`: the import it names. Gemini's import records
/// carry no position, so the finding has none; the `@path` its message quotes is found
/// among the document's own references.
fn import_range(doc: Open<'_>, finding: &Finding) -> Option<Range> {
    references(doc.path, doc.text).into_iter().find_map(|reference| match reference {
        Reference::Import { range, path } if finding.message.contains(&format!("`@{path}` in ")) => {
            Some(range_of(doc.text, range.start, range.end))
        }
        _ => None,
    })
}

fn finding_diagnostic(doc: Open<'_>, finding: &Finding) -> Diagnostic {
    let (line, column) = finding.location.as_ref().map_or((None, None), |l| (l.line, l.column));
    let id = finding.code.id();
    let at_import = (line.is_none() && finding.code == Code::GeminiImportFailed)
        .then(|| import_range(doc, finding))
        .flatten();
    Diagnostic {
        range: at_import.unwrap_or_else(|| finding_range(doc.text, line, column, Column::Chars)),
        severity: Some(severity(finding.severity)),
        code: Some(NumberOrString::String(id.to_owned())),
        code_description: repository_doc(&format!("docs/lint.md#{}", id.to_lowercase()))
            .map(|href| CodeDescription { href }),
        source: Some(SOURCE.to_owned()),
        message: format!("{} ({})\n{}", finding.message, finding.code.name(), finding.hint),
        ..Diagnostic::default()
    }
}

fn config_diagnostic(range: Range, message: String) -> Diagnostic {
    Diagnostic {
        range,
        severity: Some(DiagnosticSeverity::ERROR),
        code: Some(NumberOrString::String("config".to_owned())),
        code_description: repository_doc("docs/opencode/config.md").map(|href| CodeDescription { href }),
        source: Some(SOURCE.to_owned()),
        message,
        ..Diagnostic::default()
    }
}

/// An error that stops the agents `refusing` from building, where it points into `doc`: at its place
/// when the agent's reader knows it ([`EngineError::fault`]), at each key a schema refused,
/// else over the whole file its message names.
fn error_diagnostics(doc: Open<'_>, error: &EngineError, refusing: &[&str]) -> Vec<Diagnostic> {
    let whole_file = || finding_range(doc.text, None, None, Column::Chars);
    let named_here = || error.to_string().contains(&*doc.path.to_string_lossy());
    let Some(fault) = error.fault().filter(|fault| fault.source.as_deref().map(Path::new) == Some(doc.path))
    else {
        return if named_here() {
            vec![config_diagnostic(whole_file(), error.to_string())]
        } else {
            Vec::new()
        };
    };
    let verb = if refusing.len() == 1 { "refuses" } else { "refuse" };
    if !fault.issues.is_empty() {
        return fault
            .issues
            .iter()
            .map(|issue| {
                let range = key_range(doc.text, &issue.path)
                    .map_or_else(whole_file, |key| range_of(doc.text, key.start, key.end));
                let at = if issue.path.is_empty() {
                    String::new()
                } else {
                    format!(" at {}", issue.path.join("."))
                };
                config_diagnostic(
                    range,
                    format!("{}{at} ({} {verb} this config)", issue.message, refusing.join(" and ")),
                )
            })
            .collect();
    }
    let range = match &fault.at {
        Some(at) => finding_range(doc.text, Some(at.line), Some(at.column), at.unit),
        None => whole_file(),
    };
    vec![config_diagnostic(range, error.to_string())]
}

/// `ctxgraph.toml`: what `ctxgraph check` would refuse, at its place.
fn scenarios_diagnostics(doc: Open<'_>) -> Vec<Diagnostic> {
    use ctxgraph_check::scenarios::{Anchor, parse};
    let Some(base) = doc.path.parent().and_then(|dir| std::fs::canonicalize(dir).ok()) else {
        return Vec::new();
    };
    let repo = ctxgraph_check::worktree_root(&base);
    match parse(doc.text, &Anchor { file: doc.path, base: &base, repo: &repo }) {
        Ok(_) => Vec::new(),
        Err(ctxgraph_check::ScenariosError::Invalid { message, at, .. }) => {
            let range = finding_range(doc.text, Some(at.line), Some(at.column), Column::Chars);
            vec![Diagnostic {
                range,
                severity: Some(DiagnosticSeverity::ERROR),
                code: Some(NumberOrString::String("scenarios".to_owned())),
                code_description: repository_doc("README.md").map(|href| CodeDescription { href }),
                source: Some(SOURCE.to_owned()),
                message,
                ..Diagnostic::default()
            }]
        }
        Err(other) => {
            vec![config_diagnostic(finding_range(doc.text, None, None, Column::Chars), other.to_string())]
        }
    }
}

/// `path` as the lenses print it: relative to the working directory when below it.
fn short(path: &Path, base: &Path) -> String {
    match path.strip_prefix(base) {
        Ok(rel) if !rel.as_os_str().is_empty() => rel.to_string_lossy().into_owned(),
        Ok(_) => ".".to_owned(),
        Err(_) => path.to_string_lossy().into_owned(),
    }
}

/// A lens on line 1. Its command runs nothing (clients that display lenses need one with a
/// title); its arguments carry the whole answer, every agent's verdict, for a client that
/// shows more than the title.
fn lens(title: String, details: &[(String, String)]) -> CodeLens {
    let details: Vec<serde_json::Value> = details
        .iter()
        .map(|(agent, verdict)| serde_json::json!({ "agent": agent, "verdict": verdict }))
        .collect();
    let command =
        Command { title, command: String::new(), arguments: Some(vec![serde_json::Value::Array(details)]) };
    CodeLens {
        range: Range::new(Position::new(0, 0), Position::new(0, 0)),
        command: Some(command),
        data: None,
    }
}

/// Agents named in a lens title before the rest are counted.
const NAMED_AGENTS: usize = 3;

/// The agents' verdicts grouped, one group per verdict in first-seen order:
/// `verdict: agent, agent · verdict: agent, agent, agent +2`. Ten agents side by side
/// would be ten lenses stacked on one line; grouped, they are one.
fn grouped(verdicts: &[(String, String)]) -> String {
    let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
    for (agent, verdict) in verdicts {
        match groups.iter_mut().find(|(v, _)| v == verdict) {
            Some((_, agents)) => agents.push(agent.as_str()),
            None => groups.push((verdict.as_str(), vec![agent.as_str()])),
        }
    }
    let parts: Vec<String> = groups
        .iter()
        .map(|(verdict, agents)| {
            let named = agents.iter().take(NAMED_AGENTS).copied().collect::<Vec<_>>().join(", ");
            let more = agents.len().saturating_sub(NAMED_AGENTS);
            let more = if more > 0 { format!(" +{more}") } else { String::new() };
            format!("{verdict}: {named}{more}")
        })
        .collect();
    parts.join(" · ")
}

/// The working directories between `root` and `file`'s directory, `root` first: where an
/// agent started would see the file through its upward walk.
pub fn working_directories(root: &Path, file: &Path) -> Vec<PathBuf> {
    let Some(dir) = file.parent() else { return vec![root.to_path_buf()] };
    let Ok(below) = dir.strip_prefix(root) else { return vec![root.to_path_buf()] };
    let mut dirs = vec![root.to_path_buf()];
    let mut at = root.to_path_buf();
    for part in below.components() {
        at.push(part);
        dirs.push(at.clone());
    }
    dirs
}

/// Line 1's lenses, the agents grouped by verdict: for a rule file, from how many of the
/// working directories `chain` (see [`working_directories`]) it is in the system prompt and
/// what each agent does with it there; for any file, what each agent attaches when its model
/// reads `file` (started in `ws`). Three lenses at most, one on a file that is no rule file.
pub fn code_lenses(engine: &Engine, ws: Workspace, chain: &[Workspace], file: &Path) -> Vec<CodeLens> {
    let root = engine.cwd(ws).to_path_buf();
    let mut lenses = Vec::new();
    // Per agent, per status label: in how many of the working directories.
    let mut statuses: Vec<(&'static str, BTreeMap<&'static str, usize>)> = Vec::new();
    let mut in_prompt = 0;
    for &dir in chain {
        let fates = engine.file_fates(dir, file);
        let mut sent_here = false;
        for fate in &fates {
            use ctxgraph_engine::answers::profile::Status;
            sent_here |= matches!(fate.status, Status::Sent | Status::Cut | Status::Inlined);
            let index = statuses.iter().position(|(agent, _)| *agent == fate.agent).unwrap_or_else(|| {
                statuses.push((fate.agent, BTreeMap::new()));
                statuses.len() - 1
            });
            *statuses[index].1.entry(fate.status.label()).or_default() += 1;
        }
        in_prompt += usize::from(sent_here);
    }
    let rule_file = statuses.iter().any(|(_, counts)| counts.keys().any(|label| *label != "not sent"));
    if rule_file {
        let n = chain.len();
        let per_agent: Vec<(String, String)> = statuses
            .iter()
            .map(|(agent, counts)| {
                let counts: Vec<String> =
                    counts.iter().map(|(label, k)| format!("{label} {k}/{n}")).collect();
                ((*agent).to_owned(), counts.join(", "))
            })
            .collect();
        lenses.push(lens(
            format!("rule file: in the system prompt from {in_prompt} of {n} working directories (. down to its own)"),
            &per_agent,
        ));
        lenses.push(lens(grouped(&per_agent), &per_agent));
    }
    let mut reads: Vec<(String, String)> = Vec::new();
    for profile in PROFILES {
        let agent = profile.agent();
        let verdict = match engine.agent_read(ws, agent, file, &Request::default()) {
            // An agent that never attaches on reads says so in its note; one line for them all.
            Ok(read) if read.blocks.is_empty() && !profile.attaches_on_read() => {
                "attaches nothing".to_owned()
            }
            Ok(read) if read.blocks.is_empty() => {
                format!("attaches nothing{}", read.note.map(|n| format!(" ({n})")).unwrap_or_default())
            }
            Ok(read) => {
                let attached: Vec<String> = read
                    .blocks
                    .iter()
                    .map(|block| {
                        let tokens =
                            read.text.get(block.range.clone()).map_or(0, |text| engine.count_tokens(text));
                        let what =
                            block.source.path().map_or_else(|| block.source.display(), |p| short(p, &root));
                        format!("{what} ({tokens} tokens)")
                    })
                    .collect();
                format!("attaches {}", attached.join(", "))
            }
            Err(error) => error.to_string(),
        };
        reads.push((agent.to_string(), verdict));
    }
    lenses.push(lens(format!("on read, {}", grouped(&reads)), &reads));
    lenses
}

/// Hover on an `instructions` entry (what it matches at each level), an `@import` (the
/// file it resolves to, and what Gemini CLI does with it), or a key of a settings file an
/// agent reads (whether its value is in effect, and if not what replaced it).
pub fn hover(engine: &Engine, ws: Workspace, doc: Open<'_>, offset: usize) -> Option<Hover> {
    let Some(reference) = reference_at(doc.path, doc.text, offset) else {
        return settings_hover(engine, ws, doc, offset);
    };
    let range = Some(range_of(doc.text, reference.range().start, reference.range().end));
    let root = engine.cwd(ws).to_path_buf();
    let mut text = String::new();
    match &reference {
        Reference::Instruction { entry, .. } => {
            let _ = writeln!(text, "**instructions** `{entry}`\n");
            let base = doc.path.parent().unwrap_or(&root);
            match engine.explain_target(ws, entry, base) {
                Ok(explained) if explained.entries.is_empty() => {
                    let _ = writeln!(text, "not in the merged `instructions` from `{}`", root.display());
                }
                Ok(explained) => {
                    for report in &explained.entries {
                        match &report.expansion {
                            EntryExpansion::Glob { mode, pattern, levels, .. } => {
                                let _ = writeln!(text, "`{pattern}` ({mode}), from {}:\n", report.config);
                                for level in levels {
                                    let matches: Vec<String> = level
                                        .matches
                                        .iter()
                                        .map(|m| format!("`{}`", short(m, &root)))
                                        .collect();
                                    let listed = if matches.is_empty() {
                                        "nothing".to_owned()
                                    } else {
                                        matches.join(", ")
                                    };
                                    let _ = writeln!(text, "- in `{}`: {listed}", short(&level.dir, &root));
                                }
                            }
                            EntryExpansion::Remote { status } => {
                                let reason = Reason::Remote { status: status.clone() };
                                let _ =
                                    writeln!(text, "a URL, from {}: {}", report.config, reason.describe());
                            }
                        }
                    }
                }
                Err(error) => {
                    let _ = writeln!(text, "{error}");
                }
            }
        }
        Reference::Import { path, .. } => {
            let resolved = resolve_import(doc.path, path, &home(engine));
            let exists = resolved.is_file();
            let _ = writeln!(
                text,
                "**@{path}** → `{}`{}\n",
                resolved.display(),
                if exists { "" } else { " (no such file)" }
            );
            // What each agent that reads this file does with the file its `@` names (inlined,
            // or why not: GM4, CC4–CC8, CP9–CP10, …), as `explain --agent NAME FILE` says it.
            let readers = engine.file_fates(ws, doc.path).into_iter().filter(|f| f.status != Status::NotSent);
            for reader in readers {
                let Ok(agent) = reader.agent.parse::<Agent>() else { continue };
                let fate = engine.file_fate(ws, agent, &resolved);
                let _ = writeln!(text, "{}: {}: {}", fate.agent, fate.status.label(), fate.reason);
            }
        }
    }
    Some(Hover {
        contents: HoverContents::Markup(MarkupContent { kind: MarkupKind::Markdown, value: text }),
        range,
    })
}

/// The key under the cursor in a settings file, for each agent that reads this file and
/// models the key (`config --agent NAME --explain KEY`): its value in effect and the place
/// that set it, saying whether that is this file or which later one replaced this file's
/// value. Values are the masked ones `config` shows.
fn settings_hover(engine: &Engine, ws: Workspace, doc: Open<'_>, offset: usize) -> Option<Hover> {
    let (path, range) = crate::references::key_at(doc.text, offset)?;
    let here = ctxgraph_engine::answers::display(doc.path);
    let segments: Vec<&str> = path.iter().map(String::as_str).collect();
    let key = path.join(".");
    let mut text = String::new();
    for profile in PROFILES {
        // Only the agents that read this file build their whole report (opencode's is the
        // whole merged config).
        if !engine.reads_settings_from(ws, profile.agent(), doc.path) {
            continue;
        }
        let Ok(report) = engine.settings_report(ws, profile.agent()) else { continue };
        let Some(node) = report.tree.lookup(&segments) else { continue };
        if matches!(node.kind, SettingKind::Object(_)) {
            continue;
        }
        let value = report.masked_at(&path).cloned().unwrap_or_else(|| node.render(false));
        let value = serde_json::to_string(&value).unwrap_or_default();
        let from = &node.origin.source;
        let verdict = if from.name == here {
            "in effect, from this file".to_owned()
        } else if node.replaced.iter().any(|old| old.origin.source.name == here) {
            format!("this file's value is replaced by the {} `{}`", from.label, from.name)
        } else {
            format!("in effect, from the {} `{}`", from.label, from.name)
        };
        let _ = writeln!(text, "**{}** `{key}` = `{value}`: {verdict}\n", profile.title());
    }
    if text.is_empty() {
        return None;
    }
    Some(Hover {
        contents: HoverContents::Markup(MarkupContent { kind: MarkupKind::Markdown, value: text }),
        range: Some(range_of(doc.text, range.start, range.end)),
    })
}

fn home(engine: &Engine) -> PathBuf {
    engine.env_vars().get("HOME").map_or_else(|| PathBuf::from("/"), PathBuf::from)
}

/// The files a reference names: every match of an `instructions` entry (in load order), or
/// the file an `@import` resolves to when it exists.
fn targets(engine: &Engine, ws: Workspace, doc: Open<'_>, reference: &Reference) -> Vec<PathBuf> {
    match reference {
        Reference::Instruction { entry, .. } => {
            let base = doc.path.parent().unwrap_or(engine.cwd(ws));
            let Ok(explained) = engine.explain_target(ws, entry, base) else { return Vec::new() };
            let mut files = Vec::new();
            for report in explained.entries {
                if let EntryExpansion::Glob { levels, .. } = report.expansion {
                    files.extend(levels.into_iter().flat_map(|level| level.matches));
                }
            }
            files.dedup();
            files
        }
        Reference::Import { path, .. } => {
            let resolved = resolve_import(doc.path, path, &home(engine));
            if resolved.is_file() { vec![resolved] } else { Vec::new() }
        }
    }
}

/// Go to definition: the files the reference under the cursor names.
pub fn definition(engine: &Engine, ws: Workspace, doc: Open<'_>, offset: usize) -> Vec<Location> {
    let Some(reference) = reference_at(doc.path, doc.text, offset) else { return Vec::new() };
    let start = Range::new(Position::new(0, 0), Position::new(0, 0));
    targets(engine, ws, doc, &reference)
        .into_iter()
        .filter_map(|file| Some(Location { uri: path_to_uri(&file)?, range: start }))
        .collect()
}

/// A link on each reference to its first file, the others named in the tooltip.
pub fn document_links(engine: &Engine, ws: Workspace, doc: Open<'_>) -> Vec<DocumentLink> {
    let root = engine.cwd(ws).to_path_buf();
    references(doc.path, doc.text)
        .into_iter()
        .filter_map(|reference| {
            let files = targets(engine, ws, doc, &reference);
            let target: Uri = path_to_uri(files.first()?)?;
            let tooltip = (files.len() > 1).then(|| {
                let names: Vec<String> = files.iter().map(|f| short(f, &root)).collect();
                format!("{} files: {}", files.len(), names.join(", "))
            });
            let range = range_of(doc.text, reference.range().start, reference.range().end);
            Some(DocumentLink { range, target: Some(target), tooltip, data: None })
        })
        .collect()
}
