//! What every agent's answers share on the command line: its request (`-c` settings, its
//! own wording), its warnings, its JSON.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use ctxgraph_db::agent::Agent;
use ctxgraph_db::profile::{Request, Section, WordingSource};
use ctxgraph_engine::{Engine, EngineError, HostEnv};
use serde::Serialize;

use crate::args::{InstallationArgs, TextArgs};
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

/// The request `text` names: its section, its `-c` settings then `extra` (opencode's named
/// options), and the agent's own wording loaded from its installation (`installation`, else
/// where `vars` say), checked against the profile before anything is fetched or started.
pub(super) fn text_request(
    engine: &mut Engine,
    text: &TextArgs,
    extra: Vec<(String, String)>,
    installation: Option<&Path>,
    vars: &BTreeMap<String, String>,
) -> Result<Request, CliError> {
    let (agent, section) = (text.agent, text.section.section());
    let settings = self::settings(&text.agent_config)?.into_iter().chain(extra).collect();
    let wording = engine.load_agent_installation(agent, section, installation, vars);
    let request = Request { section, settings, wording };
    ctxgraph_engine::profiles::profile(agent).check_settings(&request).map_err(EngineError::from)?;
    Ok(request)
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
