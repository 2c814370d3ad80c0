//! The references (B3) and MCP (B4) blocks of `tests/opencode-blocks/<ID>` against what the
//! real opencode 1.18.33 sent (`oracle.out`, written only by `tests/oracle/record-blocks.sh`).
//! The MCP servers are the fixture server, spawned for real by the engine's connector; the
//! sentence opencode opens the references block with is loaded from the installed opencode
//! (its own text) and compared by its blake3.

use std::collections::BTreeMap;
use std::path::Path;

use ctxgraph_engine::Engine;
use ctxgraph_engine::installation::Locate;
use ctxgraph_engine::mcp::McpConnector;
use ctxgraph_opencode::mcp::mcp_block;
use ctxgraph_opencode::references::references_block;
use ctxgraph_test_support::opencode;
use ctxgraph_tests::{both_backends, lay_out_config_case, normalize, recorded_cases};
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    description: String,
    covers: Vec<String>,
}

/// The recording's form of a block's first line: `<opencode-text blake3=… bytes=…>`.
fn hash_first_line(block: &str) -> String {
    let (head, rest) = block.split_once('\n').unwrap_or((block, ""));
    let marker =
        format!("<opencode-text blake3={} bytes={}>", blake3::hash(head.as_bytes()).to_hex(), head.len());
    if rest.is_empty() { marker } else { format!("{marker}\n{rest}") }
}

#[test]
fn references_and_mcp_blocks_match_the_oracle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("opencode-blocks");
    let fixture_server = Path::new(env!("CARGO_MANIFEST_DIR")).join("oracle/mcp_server.py");
    let connector = McpConnector::new().expect("connector");
    let mut failures = Vec::new();
    let cases = recorded_cases::<Case>(&root);
    let count = cases.len();
    for (id, dir, case) in cases {
        assert!(!case.description.is_empty() && !case.covers.is_empty(), "{id}: describe the case");
        let expected = std::fs::read_to_string(dir.join("oracle.out")).expect("oracle.out");
        let temp = tempfile::tempdir().expect("temp");
        let run = std::fs::canonicalize(temp.path()).expect("canonical");
        let mut env = lay_out_config_case(&dir, &run, true, &BTreeMap::new());
        env.vars.insert("CTXGRAPH_MCP_FIXTURE".to_owned(), fixture_server.display().to_string());
        env.vars.insert("PATH".to_owned(), std::env::var("PATH").unwrap_or_default());
        for (backend, system) in both_backends(&run) {
            let mut engine = Engine::new(system, env.clone());
            engine.load_installation(&Locate::Flag(opencode::installed()));
            let ws = engine.open(&run.join("proj")).expect("open");
            engine.fetch_agent_mcp(ws, ctxgraph_db::agent::Agent::Opencode, &connector).expect("connect");
            let references = references_block(engine.db(), ws)
                .as_ref()
                .map_or("(none)".to_owned(), |b| hash_first_line(&b.text));
            let mcp = mcp_block(engine.db(), ws, "build".to_owned())
                .as_ref()
                .map_or("(none)".to_owned(), |b| b.text.to_string());
            let got = normalize(&format!("=== references\n{references}\n=== mcp\n{mcp}\n"), &run);
            if got != expected {
                failures.push(format!("{id} ({backend}): ctxgraph\n{got}\nopencode\n{expected}"));
            }
        }
    }
    assert!(count >= 7, "the cases are missing");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
