//! `serve`'s line handler: each input line is one JSON-RPC line from an agent host, served
//! by one engine over an in-memory repository (so a `cwd` never reaches the real disk).
//! No panic, no hang, and every answer is one JSON line.

#![no_main]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use ctxgraph_db::system::MemorySystem;
use ctxgraph_server::rpc::Server;
use ctxgraph_engine::{Engine, HostEnv};
use libfuzzer_sys::fuzz_target;

fn server() -> Server {
    let system = MemorySystem::new();
    system.write_file("/repo/.git/HEAD", "ref: refs/heads/main\n");
    system.write_file("/repo/AGENTS.md", "# Rules\n");
    system.write_file("/repo/packages/api/AGENTS.md", "# API\n");
    system.write_file("/repo/packages/api/src/main.ts", "export {};\n");
    system.write_file("/repo/opencode.json", "{\"instructions\": [\"docs/*.md\", \"{a,b}/*.md\"]}\n");
    system.write_file("/repo/docs/style.md", "Style.\n");
    let env = HostEnv {
        vars: BTreeMap::new(),
        home: PathBuf::from("/home/u"),
        platform: "linux".to_owned(),
        date: "Sun Nov 29 2026".to_owned(),
    };
    Server::new(Engine::new(Arc::new(system), env), None)
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut server = server();
    // A few lines per input: enough for a build followed by requests that reuse its state.
    for line in text.lines().take(8) {
        let reply = server.handle_line(line);
        if let Some(answer) = &reply.line {
            assert!(!answer.contains('\n'), "a reply spans lines: {answer:?}");
            assert!(serde_json::from_str::<serde_json::Value>(answer).is_ok(), "not JSON: {answer:?}");
        }
        if reply.shutdown {
            break;
        }
    }
});
