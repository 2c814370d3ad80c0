//! `ctxgraph build`.

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use ctxgraph_engine::remote::{FetchOptions, Fetcher};
use ctxgraph_engine::{BlockSpan, Engine, HostEnv, Rendered};
use ctxgraph_queries::Workspace;
use ctxgraph_queries::opencode::instructions::SystemPaths;
use ctxgraph_queries::opencode::prompt::{Prompt, Section};
use ctxgraph_queries::remote::{FetchFailure, LoadedFrom, RemoteState};
use serde::Serialize;

use crate::args::{BuildArgs, Format, RemoteArgs, SectionArg};
use crate::error::CliError;
use crate::output::write_stdout;

pub fn run(args: BuildArgs) -> Result<ExitCode, CliError> {
    let env = HostEnv::from_process();
    let options = fetch_options(&args.remote, &env);
    let (mut engine, ws) = super::open_with(env, args.cwd)?;
    super::load_remote_config(&mut engine, ws, &options)?;
    load_remote(&mut engine, ws, options)?;
    let prompt = engine.system_prompt(ws, args.model)?;
    let section = match args.section {
        SectionArg::System => Section::System,
        SectionArg::Environment => Section::Environment,
        SectionArg::Instructions => Section::Instructions,
    };
    match args.format {
        Format::Text => write_stdout(prompt.layout(section).text.as_bytes())?,
        Format::Json => {
            let paths = engine.system_paths(ws)?;
            let report = Report::new(&engine, &prompt, section, &paths);
            let mut json = serde_json::to_string_pretty(&report).map_err(|e| CliError::Output(e.into()))?;
            json.push('\n');
            write_stdout(json.as_bytes())?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub(super) fn fetch_options(args: &RemoteArgs, env: &HostEnv) -> FetchOptions {
    FetchOptions {
        header_timeout: Duration::from_millis(args.remote_timeout_ms),
        body_timeout: Duration::from_millis(args.remote_body_timeout_ms),
        max_body_bytes: args.remote_max_bytes,
        offline: args.offline,
        strict: args.strict,
        cache_dir: Some(env.remote_cache_dir()),
        ..FetchOptions::default()
    }
}

/// Fetches the workspace's remote instructions, warning on stderr for each one that is
/// missing or stale; with `--strict` a missing one is an error.
fn load_remote(engine: &mut Engine, ws: Workspace, options: FetchOptions) -> Result<(), CliError> {
    if engine.remote_urls(ws)?.is_empty() {
        return Ok(());
    }
    let strict = options.strict;
    let fetcher = Fetcher::new(options).map_err(ctxgraph_engine::EngineError::from)?;
    let mut failed = Vec::new();
    let mut stderr = std::io::stderr().lock();
    for (url, state) in engine.fetch_remote(ws, &fetcher)? {
        match state {
            RemoteState::Failed(failure) => {
                let consequence = match failure {
                    FetchFailure::PinMismatch { .. } => {
                        "no block for it (opencode does not check pins and would include the body)"
                    }
                    FetchFailure::Offline => "no block for it (opencode would fetch it)",
                    _ => "no block for it (opencode drops it too)",
                };
                let _ = writeln!(stderr, "warning: {url}: {failure}; {consequence}");
                failed.push(url);
            }
            RemoteState::Loaded { from: LoadedFrom::Cache { because: Some(failure) }, .. } => {
                let _ = writeln!(
                    stderr,
                    "warning: {url}: {failure}; using the last cached copy (opencode would drop it; --strict to do the same)"
                );
            }
            RemoteState::Loaded { .. } | RemoteState::Pending => {}
        }
    }
    if strict && !failed.is_empty() {
        return Err(CliError::RemoteStrict(failed));
    }
    Ok(())
}

#[derive(Serialize)]
struct Report {
    section: &'static str,
    bytes: usize,
    hash: String,
    blocks: Vec<BlockReport>,
    /// Every `instructions` URL, in config order, and what became of it.
    remote: Vec<RemoteReport>,
}

#[derive(Serialize)]
struct BlockReport {
    #[serde(flatten)]
    span: BlockSpan,
    rule: &'static str,
    reason: String,
}

#[derive(Serialize)]
struct RemoteReport {
    url: String,
    config: String,
    /// `loaded`, `failed` or `pending`.
    state: &'static str,
    /// For loaded documents: `network`, `revalidated` or `cache`.
    #[serde(skip_serializing_if = "Option::is_none")]
    from: Option<&'static str>,
    /// Why it failed, or why a cached copy was used.
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    code: Option<&'static str>,
}

impl Report {
    fn new(engine: &Engine, prompt: &Prompt, section: Section, paths: &SystemPaths) -> Self {
        let rendered = Rendered::new(prompt, section);
        let layout = prompt.layout(section);
        let blocks = layout
            .spans
            .iter()
            .zip(rendered.blocks)
            .map(|((index, _), span)| {
                let block = &prompt.blocks[*index];
                let reason = match (block.candidate.and_then(|c| paths.candidates.get(c)), block.remote) {
                    (Some(candidate), _) => candidate.origin.describe(),
                    (None, Some(remote)) => format!(
                        "I9: remote instructions entry from {}",
                        paths.remote.get(remote).map_or_else(String::new, |r| r.source.name())
                    ),
                    (None, None) => "B2: the environment block opencode recomputes on every step".to_owned(),
                };
                BlockReport { span, rule: block.rule, reason }
            })
            .collect();
        let remote = paths
            .remote
            .iter()
            .map(|entry| {
                let (state, from, failure) = match engine.remote_state(&entry.url) {
                    RemoteState::Pending => ("pending", None, None),
                    RemoteState::Failed(failure) => ("failed", None, Some(failure)),
                    RemoteState::Loaded { from, .. } => match from {
                        LoadedFrom::Network => ("loaded", Some("network"), None),
                        LoadedFrom::Revalidated => ("loaded", Some("revalidated"), None),
                        LoadedFrom::Cache { because } => ("loaded", Some("cache"), because),
                    },
                };
                RemoteReport {
                    url: entry.url.clone(),
                    config: entry.source.name(),
                    state,
                    from,
                    code: failure.as_ref().map(|f| f.code()),
                    reason: failure.map(|f| f.to_string()),
                }
            })
            .collect();
        Report {
            section: match section {
                Section::System => "system",
                Section::Environment => "environment",
                Section::Instructions => "instructions",
            },
            bytes: rendered.text.len(),
            hash: rendered.hash,
            blocks,
            remote,
        }
    }
}
