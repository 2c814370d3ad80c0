//! `build --agent NAME` and `nearby FILE --agent NAME` for every agent but opencode (whose
//! sections, model line and sessions have commands of their own): the profile's
//! [`Layout`](ctxgraph_db::profile::Layout) or [`ReadLayout`], printed as its exact text
//! or as the one JSON shape every agent shares (`docs/profiles/README.md`).

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use ctxgraph_db::agent::Agent;
use ctxgraph_db::profile::{Block, Layout, LeftOut, ReadLayout, Request, Setting, WordingSource};
use ctxgraph_engine::HostEnv;
use serde::Serialize;

use crate::args::{BuildArgs, Format, InstallationArgs, NearbyArgs, SectionArg};
use crate::error::CliError;
use crate::output::{eprintln_styled, write_verbatim};

/// The request for `agent`: its `-c` settings and its own wording from the installation.
pub(super) fn request(
    agent: Agent,
    settings: &[String],
    installation: &InstallationArgs,
    env: &HostEnv,
) -> Result<Request, CliError> {
    let settings = settings
        .iter()
        .map(|setting| {
            setting
                .split_once('=')
                .map(|(key, value)| (key.trim().to_owned(), value.trim().to_owned()))
                .ok_or_else(|| CliError::Usage(format!("-c {setting}: expected KEY=VALUE")))
        })
        .collect::<Result<_, _>>()?;
    let wording = ctxgraph_engine::wording::load(agent, installation.path.as_deref(), &env.vars);
    Ok(Request { settings, wording: wording.map(|w| w as Arc<_>) })
}

fn warn_unavailable(agent: Agent, wording: &WordingSource) {
    if let WordingSource::Unavailable { reason } = wording {
        eprintln_styled(&format!(
            "warning: {}'s own wording is unavailable ({reason}); the text holds marked placeholders",
            ctxgraph_engine::profiles::profile(agent).title()
        ));
    }
}

/// The text prints a set's blocks in one order the agent does not keep (Aider's read-only
/// files): say so, since the bytes alone cannot.
fn warn_unordered(blocks: &[Block]) {
    let set: Vec<&Block> = blocks.iter().filter(|b| b.unordered).collect();
    if let Some(first) = set.first() {
        let why = first.unstable.as_deref().unwrap_or("the agent keeps them in no stable order");
        eprintln_styled(&format!("warning: these {} blocks come in no stable order: {why}", set.len()));
    }
}

pub fn build(args: BuildArgs) -> Result<ExitCode, CliError> {
    let agent = args.agent;
    if args.model.is_some() || !matches!(args.section, SectionArg::System) {
        return Err(CliError::Usage(format!(
            "--model and --section describe opencode's system text; {agent} has neither"
        )));
    }
    let env = HostEnv::from_process();
    let request = request(agent, &args.agent_config, &args.installation, &env)?;
    let (engine, ws) = super::open_with(env, args.cwd)?;
    let layout = engine.agent_layout(ws, agent, &request)?;
    warn_unavailable(agent, &layout.wording);
    if let Some(note) = &layout.note {
        eprintln_styled(&format!("warning: {note}"));
    }
    warn_unordered(&layout.blocks);
    match args.format {
        Format::Text => write_verbatim(layout.text.as_bytes())?,
        Format::Json => write_json(&LayoutView::new(&layout))?,
    }
    Ok(ExitCode::SUCCESS)
}

pub fn nearby(args: NearbyArgs) -> Result<ExitCode, CliError> {
    let agent = args.agent;
    if args.session.is_some() {
        return Err(CliError::Usage(format!(
            "--session reads an opencode export; {agent} sessions are not modelled"
        )));
    }
    let env = HostEnv::from_process();
    let request = request(agent, &[], &args.installation, &env)?;
    let (engine, ws) = super::open_with(env, args.cwd)?;
    let Some(read) = engine.agent_read(ws, agent, &args.file, &request)? else {
        return Err(CliError::Usage(format!("{agent} attaches nothing to a file it reads")));
    };
    warn_unavailable(agent, &read.wording);
    match args.format {
        Format::Text => write_verbatim(read.text.as_bytes())?,
        Format::Json => write_json(&ReadView::new(&read))?,
    }
    Ok(ExitCode::SUCCESS)
}

fn write_json(value: &impl Serialize) -> Result<(), CliError> {
    crate::output::write_json(value, &["text"])
}

/// A block with its bytes: what `--format json` lists.
#[derive(Serialize)]
pub struct BlockView<'a> {
    #[serde(flatten)]
    block: &'a Block,
    bytes: usize,
    text: &'a str,
}

fn blocks<'a>(text: &'a str, blocks: &'a [Block]) -> Vec<BlockView<'a>> {
    blocks
        .iter()
        .map(|block| BlockView { block, bytes: block.range.len(), text: &text[block.range.clone()] })
        .collect()
}

/// `build --agent NAME --format json`.
#[derive(Serialize)]
pub struct LayoutView<'a> {
    agent: &'static str,
    release: &'static str,
    cwd: &'a Path,
    #[serde(skip_serializing_if = "Option::is_none")]
    root: Option<&'a Path>,
    /// Bytes of the whole text (0: the agent sends none).
    bytes: usize,
    hash: Option<String>,
    wording: &'a WordingSource,
    settings: &'a [Setting],
    blocks: Vec<BlockView<'a>>,
    left_out: &'a [LeftOut],
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<&'a str>,
}

impl<'a> LayoutView<'a> {
    pub fn new(layout: &'a Layout) -> Self {
        LayoutView {
            agent: layout.agent,
            release: layout.release,
            cwd: &layout.cwd,
            root: layout.root.as_deref(),
            bytes: layout.text.len(),
            hash: layout.hash.map(|h| h.to_string()),
            wording: &layout.wording,
            settings: &layout.settings,
            blocks: blocks(&layout.text, &layout.blocks),
            left_out: &layout.left_out,
            note: layout.note.as_deref(),
        }
    }
}

/// `nearby FILE --agent NAME --format json`.
#[derive(Serialize)]
pub struct ReadView<'a> {
    agent: &'static str,
    file: &'a Path,
    bytes: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<&'a str>,
    wording: &'a WordingSource,
    blocks: Vec<BlockView<'a>>,
    left_out: &'a [LeftOut],
}

impl<'a> ReadView<'a> {
    pub fn new(read: &'a ReadLayout) -> Self {
        ReadView {
            agent: read.agent,
            file: &read.file,
            bytes: read.text.len(),
            note: read.note.as_deref(),
            wording: &read.wording,
            blocks: blocks(&read.text, &read.blocks),
            left_out: &read.left_out,
        }
    }
}
