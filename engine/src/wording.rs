//! Each agent's own sentences (preambles, labels), read from the user's installation: I/O,
//! so it lives here; each profile recognises and verifies its own words by their hashes.
//! One line per agent that has words of its own in what it sends.

use std::any::Any;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use ctxgraph_db::agent::Agent;

/// The wording `agent`'s profile takes in [`Request::wording`](ctxgraph_db::profile::Request),
/// loaded from `explicit` or the installation `vars` name; `None` for an agent whose text has
/// no sentence of its own.
pub fn load(
    agent: Agent,
    explicit: Option<&Path>,
    vars: &BTreeMap<String, String>,
) -> Option<Arc<dyn Any + Send + Sync>> {
    match agent {
        Agent::ClaudeCode => Some(Arc::new(crate::claude_code::claude_code_prose(explicit, vars))),
        Agent::Copilot => Some(Arc::new(crate::copilot::copilot_prose(explicit, vars))),
        Agent::QwenCode => Some(Arc::new(crate::qwen_code::qwen_code_wording(explicit, vars))),
        Agent::Aider => Some(Arc::new(crate::aider::aider_wording(explicit, vars))),
        Agent::Pi => Some(Arc::new(crate::pi::pi_wording(explicit, vars))),
        Agent::Auggie => Some(Arc::new(crate::auggie::auggie_prose(explicit, vars))),
        Agent::Opencode | Agent::Codex | Agent::Gemini | Agent::Kilo | Agent::Cline | Agent::Continue => None,
    }
}

/// The folder of the npm package `package` an agent's wording is read from: `explicit`
/// (`--agent-path`), else `$ENV` (`env`), else `bin` on `$PATH`; a path may be the package
/// folder, a file in it, or the link npm puts in `bin` (symlinks followed, up to three
/// folders up). Why not, in words naming `title`, when there is none.
pub(crate) fn npm_package(
    explicit: Option<&Path>,
    vars: &BTreeMap<String, String>,
    (title, env, bin, package): (&str, &str, &str, &str),
) -> Result<std::path::PathBuf, String> {
    let start = explicit
        .map(Path::to_path_buf)
        .or_else(|| vars.get(env).filter(|v| !v.is_empty()).map(std::path::PathBuf::from))
        .or_else(|| std::env::split_paths(vars.get("PATH")?).map(|dir| dir.join(bin)).find(|c| c.is_file()))
        .ok_or_else(|| {
            format!("no {title} installation (give --agent-path PATH, set {env}, or put `{bin}` on PATH)")
        })?;
    let not_found = || format!("{}: no {package} package found there", start.display());
    let real = std::fs::canonicalize(&start).map_err(|_| not_found())?;
    let dirs: Vec<&Path> =
        if real.is_dir() { vec![&real] } else { real.ancestors().skip(1).take(3).collect() };
    let named = format!("\"{package}\"");
    dirs.into_iter()
        .find(|dir| std::fs::read_to_string(dir.join("package.json")).is_ok_and(|text| text.contains(&named)))
        .map(Path::to_path_buf)
        .ok_or_else(not_found)
}
