//! `session rules` on arbitrary bytes, as a Claude Code transcript and as an opencode export:
//! either an answer whose totals are its steps' sums, or an error naming the record (a line
//! inside the input), never a panic.

#![no_main]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ctxgraph_db::system::MemorySystem;
use ctxgraph_engine::{Agent, Engine, EngineError, HostEnv};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let fs = MemorySystem::new();
    fs.write_file("/w/session", data.to_vec());
    let env = HostEnv {
        vars: Default::default(),
        home: PathBuf::from("/w/home"),
        platform: "linux".into(),
        date: "Sun Nov 29 2026".into(),
    };
    let mut engine = Engine::new(Arc::new(fs), env);
    let Ok(ws) = engine.open(Path::new("/w")) else { return };
    for agent in [Agent::ClaudeCode, Agent::Opencode] {
        match engine.session_costs(ws, agent, Path::new("/w/session")) {
            Ok(costs) => {
                let total: u64 = costs.total.iter().map(|f| f.bytes).sum();
                let steps: u64 = costs.steps.iter().flat_map(|s| &s.files).map(|f| f.bytes).sum();
                assert_eq!(total, steps);
            }
            Err(EngineError::SessionFile(err)) => {
                let lines = data.iter().filter(|&&b| b == b'\n').count() + 1;
                assert!(err.line.is_none_or(|line| line <= lines), "{err}");
            }
            Err(_) => {}
        }
    }
});
