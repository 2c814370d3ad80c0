//! What every agent's answers share on the command line: its request (`-c` settings, its
//! own wording), its warnings, its JSON.

use std::sync::Arc;

use ctxgraph_db::agent::Agent;
use ctxgraph_db::profile::{Request, Section, WordingSource};
use ctxgraph_engine::HostEnv;
use serde::Serialize;

use crate::args::InstallationArgs;
use crate::error::CliError;
use crate::output::eprintln_styled;

/// `-c KEY=VALUE` settings as pairs.
pub(super) fn settings(settings: &[String]) -> Result<Vec<(String, String)>, CliError> {
    settings
        .iter()
        .map(|setting| {
            ctxgraph_server::protocol::split_setting(setting)
                .ok_or_else(|| CliError::Usage(format!("-c {setting}: expected KEY=VALUE")))
        })
        .collect()
}

/// The request for `agent`: its `-c` settings and its own wording from the installation.
pub(super) fn request(
    agent: Agent,
    section: Section,
    settings: &[String],
    installation: &InstallationArgs,
    env: &HostEnv,
) -> Result<Request, CliError> {
    let settings = self::settings(settings)?;
    let wording = ctxgraph_engine::wording::load(agent, installation.path.as_deref(), &env.vars);
    Ok(Request { section, settings, wording: wording.map(|w| w as Arc<_>) })
}

pub(super) fn warn_unavailable(agent: Agent, wording: &WordingSource) {
    if let WordingSource::Unavailable { reason } = wording {
        eprintln_styled(&format!(
            "warning: {}'s own wording is unavailable ({reason}); the text holds marked placeholders",
            ctxgraph_engine::profiles::profile(agent).title()
        ));
    }
}

/// A layout's or a read's JSON: every string redacted but the blocks' and the read's
/// `text`, the prompt text the agent sends.
pub(super) fn write_json(value: &impl Serialize) -> Result<(), CliError> {
    crate::output::write_json(value, &["text"])
}
