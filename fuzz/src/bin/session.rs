//! Session exports (`opencode export` JSON) on arbitrary bytes: parsing either fails with a
//! position inside the input or yields a session whose compaction plan, summary request and
//! next-call history compute without a panic.

#![no_main]

use std::path::PathBuf;
use std::sync::Arc;

use ctxgraph_db::system::MemorySystem;
use ctxgraph_engine::{Engine, HostEnv};
use ctxgraph_opencode::config::schema::Compaction;
use ctxgraph_opencode::session::compaction::{
    DEFAULT_SUMMARY_TEMPLATE, ModelLimit, PlanParams, summary_request,
};
use ctxgraph_opencode::session::convert::TargetModel;
use ctxgraph_opencode::session::export::parse_export;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let export = match parse_export(data) {
        Ok(export) => export,
        Err(err) => {
            assert!(err.offset <= data.len());
            return;
        }
    };
    let env = HostEnv {
        vars: Default::default(),
        home: PathBuf::from("/h"),
        platform: "linux".into(),
        date: "Sun Nov 29 2026".into(),
    };
    let mut engine = Engine::new(Arc::new(MemorySystem::default()), env);
    let session = engine.open_session(export);
    // Small limits and budgets so tails, splits and pruning all happen on small inputs.
    let params = PlanParams {
        limit: ModelLimit { context: 400, input: None, output: 100 },
        compaction: Compaction {
            prune: Some(true),
            preserve_recent_tokens: Some(20),
            ..Compaction::default()
        },
        target: TargetModel { provider_id: "p".into(), model_id: "m".into() },
    };
    let plan = engine.compaction_plan(session, params);
    let _ = summary_request(DEFAULT_SUMMARY_TEMPLATE, plan);
    let _ = engine.next_messages(session);
});
