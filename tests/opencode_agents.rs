//! Agent fixtures (`tests/opencode-agents/<ID>`): ctxgraph's agents and permission rulesets
//! (G1–G6) against what the real opencode 1.18.33 printed for `opencode debug agent NAME`
//! (`oracle.out`, written only by `CONFIG_CASES=tests/opencode-agents
//! tests/oracle/record-config.sh`, which hashes prompts and drops built-in descriptions).

use std::collections::BTreeMap;
use std::path::Path;

use ctxgraph_engine::Engine;
use ctxgraph_opencode::agents::{Agent, AgentPrompt};
use ctxgraph_tests::{both_backends, lay_out_config_case, recorded_cases};
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Deserialize)]
struct Case {
    description: String,
    covers: Vec<String>,
    agent: String,
    #[serde(default = "dot")]
    cwd: String,
    #[serde(default = "yes")]
    git: bool,
    #[serde(default)]
    env: BTreeMap<String, String>,
}

fn dot() -> String {
    ".".to_owned()
}

fn yes() -> bool {
    true
}

fn hashed(text: &str) -> Value {
    json!({ "blake3": blake3::hash(text.as_bytes()).to_hex().to_string(), "bytes": text.len() })
}

/// `opencode debug agent`'s JSON for `agent`, with the recording's hashing applied and the
/// `tools` map computed over the tool names opencode listed (G6).
fn debug_agent(agent: &Agent, tools: &serde_json::Map<String, Value>, builtin_prompt: &Value) -> Value {
    let mut out = serde_json::Map::new();
    out.insert("name".into(), json!(agent.name));
    if let Some(description) = &agent.description {
        out.insert("description".into(), json!(description));
    }
    out.insert("options".into(), agent.settings.get("options").cloned().unwrap_or_else(|| json!({})));
    out.insert("permission".into(), serde_json::to_value(&agent.permission).expect("json"));
    out.insert("mode".into(), json!(agent.mode));
    out.insert("native".into(), json!(agent.native));
    if let Some(hidden) = agent.hidden {
        out.insert("hidden".into(), json!(hidden));
    }
    match &agent.prompt {
        Some(AgentPrompt::Config { text, .. }) => {
            out.insert("prompt".into(), hashed(text));
        }
        // opencode's own prompt: checked against the installation's table elsewhere.
        Some(AgentPrompt::BuiltIn(_)) => {
            out.insert("prompt".into(), builtin_prompt.clone());
        }
        None => {}
    }
    if let Some((provider, model)) = agent.model.as_deref().and_then(|m| m.split_once('/')) {
        out.insert("model".into(), json!({ "providerID": provider, "modelID": model }));
    }
    for key in ["variant", "temperature", "topP", "color", "steps"] {
        if let Some(value) = agent.settings.get(key) {
            out.insert(key.into(), value.clone());
        }
    }
    let tools: serde_json::Map<String, Value> =
        tools.keys().map(|tool| (tool.clone(), json!(!agent.permission.is_tool_disabled(tool)))).collect();
    out.insert("tools".into(), Value::Object(tools));
    Value::Object(out)
}

#[test]
fn agent_fixtures_match_the_oracle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("opencode-agents");
    let mut failures = Vec::new();
    let cases = recorded_cases::<Case>(&root);
    let count = cases.len();
    for (id, dir, case) in cases {
        assert!(!case.description.is_empty() && !case.covers.is_empty(), "{id}: describe the case");
        let recorded = std::fs::read_to_string(dir.join("oracle.out")).expect("oracle.out");
        let (head, rest) = recorded.split_once("\n--- stdout\n").expect("oracle.out layout");
        let (stdout, _stderr) = rest.split_once("--- stderr\n").expect("oracle.out layout");
        let temp = tempfile::tempdir().expect("temp");
        let run = std::fs::canonicalize(temp.path()).expect("canonical");
        let env = lay_out_config_case(&dir, &run, case.git, &case.env);
        for (backend, system) in both_backends(&run) {
            let mut engine = Engine::new(system, env.clone());
            let ws = engine.open(&run.join("proj").join(&case.cwd)).expect("open");
            let agents = engine.agents(ws).expect("agents");
            let ours = agents.get(&case.agent);
            match (head, ours) {
                ("exit: 0", Some(agent)) => {
                    let expected: Value = serde_json::from_str(stdout).expect("oracle json");
                    let tools = expected["tools"].as_object().expect("tools").clone();
                    let got = debug_agent(agent, &tools, &expected["prompt"]);
                    let got = serde_json::to_string_pretty(&got)
                        .expect("json")
                        .replace(&*run.to_string_lossy(), "<RUN>");
                    let got: Value = serde_json::from_str(&got).expect("json");
                    if got != expected {
                        failures.push(format!(
                            "{id} ({backend}): ctxgraph\n{}\nopencode\n{}",
                            serde_json::to_string_pretty(&got).expect("json"),
                            stdout
                        ));
                    }
                }
                ("exit: 1", None) => {}
                (head, ours) => {
                    failures.push(format!(
                        "{id} ({backend}): opencode {head}, ctxgraph found the agent: {}",
                        ours.is_some()
                    ));
                }
            }
        }
    }
    assert!(count >= 8, "expected the agent fixtures, found {count}");
    assert!(failures.is_empty(), "{} of {count} fixtures differ:\n{}", failures.len(), failures.join("\n\n"));
}
