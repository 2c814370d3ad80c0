//! `ctxgraph hook`: the entry that makes an agent lint its own rule files as it edits them
//! (printed, or merged into the agent's settings), `hook run`, which the agent runs after a
//! tool call, and `hook files-regex`, the profiles' file lists as one pattern for
//! `.pre-commit-hooks.yaml`. docs/hooks.md describes each agent's mechanism.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use ctxgraph_db::agent::Agent;
use ctxgraph_db::lint::{Budget, Finding};
use ctxgraph_db::path;
use ctxgraph_db::profile::{HookAnswer, HookFormat, Request, Status};
use ctxgraph_engine::PROFILES;
use ctxgraph_engine::atomic::{self, Access};
use ctxgraph_engine::profiles::profile;
use ctxgraph_engine::remote::FetchOptions;
use ctxgraph_engine::{EngineError, HostEnv, Policy};
use serde_json::{Map, Value, json};

use crate::args::{FilesRegexArgs, HookArgs, HookCommand, HookRunArgs};
use crate::error::CliError;
use crate::output::write_stdout;
use crate::render;

pub fn run(args: HookArgs) -> Result<ExitCode, CliError> {
    match args.command {
        Some(HookCommand::Run(run)) => run_hook(run),
        Some(HookCommand::FilesRegex(regex)) => files_regex(regex),
        None if args.install => install(args.agent, args.cwd),
        None => {
            let out = render::json(&entry_settings(args.agent, supported(args.agent)?))?;
            write_stdout(out.as_bytes())?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The agent's hook format ([`Profile::hook`](ctxgraph_db::profile::Profile::hook)); an
/// agent without one is described in docs/hooks.md.
fn supported(agent: Agent) -> Result<&'static HookFormat, CliError> {
    profile(agent).hook().ok_or_else(|| {
        CliError::Usage(format!(
            "ctxgraph has no hook for {agent} yet (docs/hooks.md says what it offers); \
             its pre-commit hook and `ctxgraph lint --agent {agent}` check the same files"
        ))
    })
}

/// The command an agent's hook entry runs.
fn hook_command(agent: Agent) -> String {
    format!("ctxgraph hook run --agent {agent}")
}

/// The hook entry, as the agent's settings file holds it.
fn hook_entry(agent: Agent, format: &HookFormat) -> Value {
    json!({
        "matcher": format.matcher,
        "hooks": [{ "type": "command", "command": hook_command(agent) }]
    })
}

/// A whole settings file holding only the entry: what `ctxgraph hook` prints.
fn entry_settings(agent: Agent, format: &HookFormat) -> Value {
    json!({ "hooks": { format.event: [hook_entry(agent, format)] } })
}

/// `hook --install`: the entry merged into the agent's project settings under `cwd`.
fn install(agent: Agent, cwd: Option<PathBuf>) -> Result<ExitCode, CliError> {
    let format = supported(agent)?;
    let dir = match cwd {
        Some(dir) => dir,
        None => current_dir()?,
    };
    let file = dir.join(format.settings);
    let mut settings = match std::fs::read(&file) {
        Ok(bytes) => serde_json::from_slice::<Value>(&bytes).map_err(|err| {
            CliError::Usage(format!("{}: not JSON ({err}); nothing was changed", file.display()))
        })?,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Value::Object(Map::new()),
        Err(source) => return Err(CliError::ReadInput { path: file, source }),
    };
    let message = if merge_entry(&mut settings, agent, format).map_err(|at| {
        CliError::Usage(format!(
            "{}: {at} is not what {} reads there; nothing was changed",
            file.display(),
            profile(agent).title()
        ))
    })? {
        let mut bytes = serde_json::to_vec_pretty(&settings).map_err(|e| CliError::Output(e.into()))?;
        bytes.push(b'\n');
        atomic::write(&file, &bytes, Access::Umask).map_err(CliError::Output)?;
        format!("added the {} hook ({}) to {}\n", format.event, hook_command(agent), file.display())
    } else {
        format!("{} already runs {}\n", file.display(), hook_command(agent))
    };
    write_stdout(message.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

/// Adds the entry to `settings.hooks.<event>` unless an entry there already runs the
/// command; every other key and hook is kept as it was. `Ok(false)`: already there. `Err`:
/// the member (named) that is not the object or array the agent's settings have there.
fn merge_entry(settings: &mut Value, agent: Agent, format: &HookFormat) -> Result<bool, String> {
    let command = hook_command(agent);
    let root = settings.as_object_mut().ok_or("the file's top level")?;
    let hooks = root.entry("hooks").or_insert_with(|| Value::Object(Map::new()));
    let hooks = hooks.as_object_mut().ok_or("`hooks`")?;
    let event = hooks.entry(format.event).or_insert_with(|| Value::Array(Vec::new()));
    let event = event.as_array_mut().ok_or_else(|| format!("`hooks.{}`", format.event))?;
    let runs_ours = |entry: &Value| {
        entry["hooks"]
            .as_array()
            .is_some_and(|hooks| hooks.iter().any(|h| h["command"].as_str() == Some(command.as_str())))
    };
    if event.iter().any(runs_ours) {
        return Ok(false);
    }
    event.push(hook_entry(agent, format));
    Ok(true)
}

fn current_dir() -> Result<PathBuf, CliError> {
    Ok(std::env::current_dir()
        .map_err(|err| EngineError::WorkingDirectory { path: PathBuf::from("."), reason: err.to_string() })?)
}

/// `hook files-regex`: every listed agent's [`About::files`](ctxgraph_db::profile::About::files).
fn files_regex(args: FilesRegexArgs) -> Result<ExitCode, CliError> {
    let out = format!("{}\n", files_pattern(args.agent.one(), args.with_scenarios));
    write_stdout(out.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

/// `check`'s inputs: the scenarios file and its snapshots.
const SCENARIO_FILES: &[&str] = &["ctxgraph.toml", ".ctxgraph/**"];

/// One agent's file globs, or every agent's, as one regular expression; with `scenarios`,
/// `check`'s inputs too.
fn files_pattern(agent: Option<Agent>, scenarios: bool) -> String {
    let globs = PROFILES
        .iter()
        .filter(|p| agent.is_none_or(|a| p.agent() == a))
        .flat_map(|p| p.about().files.iter().copied());
    let extra = if scenarios { SCENARIO_FILES } else { &[] };
    ctxgraph_db::project_files::regex(globs.chain(extra.iter().copied()))
}

/// What Claude Code hands a `PostToolUse` hook on stdin, the parts read here.
struct ToolCall {
    /// `tool_input.file_path`: the file the call wrote; `None` for a call that names none.
    file: Option<PathBuf>,
    /// `cwd`: where the session runs.
    cwd: Option<PathBuf>,
}

fn parse_tool_call(bytes: &[u8]) -> Result<ToolCall, CliError> {
    let bad = |why: String| {
        CliError::Usage(format!(
            "hook run: stdin is not the agent's after-tool hook input (JSON with tool_input): {why}"
        ))
    };
    let value: Value = serde_json::from_slice(bytes).map_err(|err| bad(err.to_string()))?;
    if !value.is_object() {
        return Err(bad("not a JSON object".to_owned()));
    }
    let text = |v: &Value| v.as_str().filter(|s| !s.is_empty()).map(PathBuf::from);
    Ok(ToolCall { file: text(&value["tool_input"]["file_path"]), cwd: text(&value["cwd"]) })
}

/// `hook run`: the findings in the file the tool call wrote, in the agent's answer format.
fn run_hook(args: HookRunArgs) -> Result<ExitCode, CliError> {
    let format = supported(args.agent)?;
    let input = super::read_input_bytes(Path::new("-"))
        .map_err(|source| CliError::ReadInput { path: PathBuf::from("<stdin>"), source })?;
    let call = parse_tool_call(&input)?;
    let Some(file) = call.file else { return Ok(ExitCode::SUCCESS) };
    let env = HostEnv::from_process();
    // Nothing is fetched: the hook answers on what the edit changed, within the tool call.
    let fetch =
        FetchOptions { offline: true, cache_dir: Some(env.remote_cache_dir()), ..FetchOptions::default() };
    let cwd = match call.cwd {
        Some(cwd) => cwd,
        None => current_dir()?,
    };
    let file = path::resolve(&cwd, &file);
    let (mut engine, ws) = super::open_with(env, Some(cwd))?;
    // What the agent's rules wait on (nothing, for most: another agent's broken config is
    // not this hook's concern).
    let policy = Policy { fetch, remote: true, mcp: false };
    super::prepare_agent(&mut engine, ws, args.agent, ctxgraph_db::profile::Section::Rules, &policy)?;
    if !is_agent_file(&engine, ws, args.agent, &file)? {
        return Ok(ExitCode::SUCCESS);
    }
    let deny = super::lint::lowest_denied(args.deny);
    let uri = path::display(&file);
    let found: Vec<Finding> = super::lint::findings(&engine, ws, Some(args.agent), Budget::default())?
        .into_iter()
        .filter(|f| f.severity >= deny && f.location.as_ref().is_some_and(|l| l.uri == uri))
        .collect();
    if found.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    // A settings file (CG025's `.claude/settings.json`) is read, not sent.
    let role = if engine.reads_settings_from(ws, args.agent, &file) {
        "reads its settings from"
    } else {
        "sends to the model"
    };
    let reason = format!(
        "ctxgraph lint --agent {} found {} problem{} in {uri}, which {} {role}. Fix the file:\n\n{}",
        args.agent,
        found.len(),
        if found.len() == 1 { "" } else { "s" },
        profile(args.agent).title(),
        render::lint::text(&found).trim_end()
    );
    let mut out = serde_json::to_string(&answer(format, reason)).map_err(|e| CliError::Output(e.into()))?;
    out.push('\n');
    std::io::stdout().lock().write_all(out.as_bytes()).map_err(CliError::Output)?;
    Ok(ExitCode::SUCCESS)
}

/// The findings as the agent's hook answer ([`HookAnswer`]).
fn answer(format: &HookFormat, reason: String) -> Value {
    match format.answer {
        HookAnswer::Block => json!({ "decision": "block", "reason": reason }),
        HookAnswer::AdditionalContext { event_name: Some(event) } => {
            json!({ "hookSpecificOutput": { "hookEventName": event, "additionalContext": reason } })
        }
        HookAnswer::AdditionalContext { event_name: None } => {
            json!({ "hookSpecificOutput": { "additionalContext": reason } })
        }
    }
}

/// Whether `file` is one the agent reads: named by its profile's file globs (relative to
/// the root its discovery stops at, else the working directory), or given a fate other than
/// "not sent" (a file a setting names).
fn is_agent_file(
    engine: &ctxgraph_engine::Engine,
    ws: ctxgraph_db::Workspace,
    agent: Agent,
    file: &Path,
) -> Result<bool, CliError> {
    let layout = engine.agent_layout(ws, agent, &Request::default())?;
    let root = layout.root.clone().unwrap_or_else(|| layout.cwd.clone());
    if let Ok(relative) = file.strip_prefix(&root) {
        let pattern = files_pattern(Some(agent), false);
        let matcher = regex::Regex::new(&pattern).map_err(|err| CliError::Usage(err.to_string()))?;
        if matcher.is_match(&relative.to_string_lossy()) {
            return Ok(true);
        }
    }
    Ok(layout.considered().iter().any(|f| f == file)
        || engine.file_fate(ws, agent, file).status != Status::NotSent)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claude_code() -> (Agent, &'static HookFormat) {
        let agent: Agent = "claude-code".parse().expect("an agent");
        (agent, profile(agent).hook().expect("Claude Code has a hook"))
    }

    #[test]
    fn merging_keeps_every_other_key_and_hook_and_is_idempotent() {
        let mut settings = json!({
            "model": "x",
            "hooks": {
                "PreToolUse": [{ "matcher": "Bash", "hooks": [{ "type": "command", "command": "a" }] }],
                "PostToolUse": [{ "matcher": "Write", "hooks": [{ "type": "command", "command": "b" }] }]
            }
        });
        let (agent, format) = claude_code();
        assert_eq!(merge_entry(&mut settings, agent, format), Ok(true));
        let once = settings.clone();
        assert_eq!(merge_entry(&mut settings, agent, format), Ok(false));
        assert_eq!(settings, once);
        assert_eq!(settings["model"], "x");
        assert_eq!(settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"], "a");
        let post = settings["hooks"]["PostToolUse"].as_array().unwrap();
        assert_eq!(post.len(), 2);
        assert_eq!(post[0]["hooks"][0]["command"], "b");
        assert_eq!(post[1], hook_entry(agent, format));
    }

    #[test]
    fn a_settings_shape_claude_code_would_not_read_is_refused_by_name() {
        let (agent, format) = claude_code();
        let merge = |mut v: Value| merge_entry(&mut v, agent, format);
        assert_eq!(merge(json!([])), Err("the file's top level".to_owned()));
        assert_eq!(merge(json!({"hooks": []})), Err("`hooks`".to_owned()));
        assert_eq!(merge(json!({"hooks": {"PostToolUse": {}}})), Err("`hooks.PostToolUse`".to_owned()));
    }
}
