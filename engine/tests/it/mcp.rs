//! MCP servers (issue #11, spec B4): the connector against the fixture server
//! (`tests/oracle/mcp_server.py`, over stdio and over streamable HTTP on 127.0.0.1) in every
//! mode, the block and each server's fate, and reconnection only for changed configs.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ctxgraph_db::Workspace;
use ctxgraph_db::agent::Agent;
use ctxgraph_db::mcp::McpState;
use ctxgraph_engine::HostEnv;
use ctxgraph_engine::mcp::McpConnector;
use ctxgraph_engine::{ChangeEvent, Engine, OsSystem};
use ctxgraph_opencode::mcp::{mcp_block, mcp_facts};
use ctxgraph_test_support::tree::{DiskWriter, git_worktree};
use serde_json::{Value, json};

fn server_script() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/oracle/mcp_server.py");
    path.canonicalize().expect("tests/oracle/mcp_server.py").display().to_string()
}

/// A local server entry running the fixture with `args`.
fn local(args: &[&str]) -> Value {
    let mut command = vec!["python3".to_owned(), server_script()];
    command.extend(args.iter().map(|a| (*a).to_owned()));
    json!({ "type": "local", "command": command, "timeout": 20_000 })
}

/// The fixture serving streamable HTTP on 127.0.0.1, stopped (and reaped) on drop.
struct HttpServer {
    child: Child,
    port: u16,
}

impl HttpServer {
    fn start(dir: &Path, args: &[&str]) -> HttpServer {
        let port_file = dir.join(format!("port-{}", std::process::id()));
        let child = Command::new("python3")
            .arg(server_script())
            .args(["--http", port_file.to_str().expect("utf-8"), "--max-seconds", "60"])
            .args(args)
            .stdin(Stdio::null())
            .spawn()
            .expect("python3");
        let started = Instant::now();
        let port = loop {
            if let Ok(text) = std::fs::read_to_string(&port_file) {
                break text.trim().parse().expect("port");
            }
            assert!(started.elapsed() < Duration::from_secs(20), "the HTTP fixture did not start");
            std::thread::sleep(Duration::from_millis(20));
        };
        std::fs::remove_file(&port_file).expect("port file");
        HttpServer { child, port }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A port on 127.0.0.1 nothing listens on.
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("addr").port()
}

struct World {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl World {
    fn new() -> World {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("canonical").join("repo");
        std::fs::create_dir_all(&root).expect("repo");
        git_worktree(&root, &mut DiskWriter);
        World { _dir: dir, root }
    }

    fn write_config(&self, config: &Value) {
        std::fs::write(self.root.join("opencode.json"), serde_json::to_string_pretty(config).unwrap())
            .unwrap();
    }

    fn engine(&self) -> (Engine, Workspace) {
        let mut host = HostEnv::fixed(self.root.join("home"));
        // The fixture server is found on the PATH, as opencode would find it.
        host.vars.insert("PATH".to_owned(), std::env::var("PATH").unwrap_or_default());
        let mut engine = Engine::new(Arc::new(OsSystem), host);
        let ws = engine.open(&self.root).expect("workspace");
        (engine, ws)
    }
}

/// The block, then each server's fate and tools, with ports scrubbed.
fn render(engine: &Engine, ws: Workspace, ports: &[u16]) -> String {
    let db = engine.db();
    let mut out = match mcp_block(db, ws, "build".to_owned()) {
        Some(block) => block.text.to_string(),
        None => "(no MCP block)".to_owned(),
    };
    out.push_str("\n--- servers\n");
    for fact in mcp_facts(db, ws, "build".to_owned()).as_ref().expect("facts") {
        let _ = write!(out, "{}: {}", fact.config.name, fact.fate.describe());
        if !fact.tools.is_empty() {
            let _ = write!(out, " [tools: {}]", fact.tools.join(", "));
        }
        out.push('\n');
    }
    for port in ports {
        out = out.replace(&port.to_string(), "<PORT>");
    }
    out
}

#[test]
fn every_kind_of_server_and_failure() {
    let world = World::new();
    let http = HttpServer::start(
        &world.root,
        &["--instructions", "remote rules", "--require-header", "X-Token=s3cret"],
    );
    let closed = closed_port();
    world.write_config(&json!({ "mcp": {
        "docs": local(&["--instructions", "  Search the docs first.\\n\\n  Indented line\\n\\nLast.  ", "--tools", "search,fetch"]),
        "Beta": local(&["--instructions", "beta rules"]),
        "quiet": local(&["--tools", "x"]),
        "blank": local(&["--instructions", " \\n "]),
        "crash": local(&["--mode", "crash"]),
        "hang": { "type": "local", "command": ["python3", server_script(), "--mode", "hang"], "timeout": 300 },
        // Lines that are not JSON-RPC are skipped (as opencode's SDK skips them): the
        // server never answers, so it times out.
        "garbage": { "type": "local", "command": ["python3", server_script(), "--mode", "garbage"], "timeout": 1_000 },
        "error": local(&["--mode", "error"]),
        // A 64 MiB line is over rmcp's 16 MiB line cap: dropped, then the same timeout.
        "huge": { "type": "local", "command": ["python3", server_script(), "--mode", "huge"], "timeout": 3_000 },
        "missing": { "type": "local", "command": ["/nonexistent/ctxgraph-mcp-server"] },
        "off": { "type": "local", "enabled": false, "command": ["python3", server_script()] },
        "untyped": { "command": ["python3", server_script()] },
        "remote": { "type": "remote", "url": http.url(), "headers": { "X-Token": "s3cret" } },
        "remote-no-token": { "type": "remote", "url": http.url(), "timeout": 5_000 },
        "remote-closed": { "type": "remote", "url": format!("http://127.0.0.1:{closed}/mcp"), "timeout": 5_000 },
        "remote-bad-url": { "type": "remote", "url": "not a url" },
    }}));
    let (mut engine, ws) = world.engine();
    let before = render(&engine, ws, &[]);
    assert!(
        before.starts_with("(no MCP block)"),
        "nothing is connected before the engine connects:\n{before}"
    );

    let connector = McpConnector::new().expect("connector");
    let connected = engine.fetch_agent_mcp(ws, Agent::Opencode, &connector).expect("connect");
    assert_eq!(connected.len(), 14, "every enabled, typed server is asked once: {connected:?}");
    insta::assert_snapshot!(render(&engine, ws, &[http.port, closed]));
}

#[test]
fn only_new_or_changed_server_configs_are_asked_again() {
    let world = World::new();
    let mut config = json!({ "mcp": {
        "a": local(&["--instructions", "first a"]),
        "b": local(&["--instructions", "b"]),
    }});
    world.write_config(&config);
    let (mut engine, ws) = world.engine();
    let connector = McpConnector::new().expect("connector");
    let names = |results: Vec<(String, McpState)>| results.into_iter().map(|(n, _)| n).collect::<Vec<_>>();
    assert_eq!(names(engine.fetch_agent_mcp(ws, Agent::Opencode, &connector).unwrap()), ["a", "b"]);
    assert_eq!(
        names(engine.fetch_agent_mcp(ws, Agent::Opencode, &connector).unwrap()),
        Vec::<String>::new(),
        "answers are kept"
    );

    config["mcp"]["a"] = local(&["--instructions", "second a"]);
    config["mcp"]["c"] = local(&["--instructions", "c"]);
    world.write_config(&config);
    engine.apply_changes(&[ChangeEvent::Modified(world.root.join("opencode.json"))]);
    assert_eq!(
        names(engine.fetch_agent_mcp(ws, Agent::Opencode, &connector).unwrap()),
        ["a", "c"],
        "b's config did not change"
    );
    let block = mcp_block(engine.db(), ws, "build".to_owned()).clone().expect("block").text;
    assert_eq!(
        &*block,
        "<mcp_instructions>\n  <server name=\"a\">\n    second a\n  </server>\n  <server name=\"b\">\n    b\n  </server>\n  <server name=\"c\">\n    c\n  </server>\n</mcp_instructions>"
    );
}

#[test]
fn a_config_edit_that_keeps_the_servers_does_not_recompute_the_mcp_block() {
    let world = World::new();
    let mut config = json!({ "mcp": { "a": local(&["--instructions", "a rules"]) } });
    world.write_config(&config);
    let (mut engine, ws) = world.engine();
    engine.fetch_agent_mcp(ws, Agent::Opencode, &McpConnector::new().expect("connector")).expect("connect");
    let block = |engine: &Engine| mcp_block(engine.db(), ws, "build".to_owned()).clone();
    let first = block(&engine).expect("block");

    // Another key of the same file: the config is parsed and merged again, the server list
    // comes out equal, and nothing after it runs.
    config["share"] = json!("disabled");
    world.write_config(&config);
    engine.apply_changes(&[ChangeEvent::Modified(world.root.join("opencode.json"))]);
    let before = engine.db().executions().totals();
    assert_eq!(block(&engine), Some(first), "same block");
    let after = engine.db().executions().totals();
    let ran = |query: &str| after.get(query).copied().unwrap_or(0) - before.get(query).copied().unwrap_or(0);
    assert_eq!(ran("merged_config"), 1, "the edit is seen: {after:?}");
    assert_eq!((ran("mcp_servers"), ran("mcp_facts"), ran("mcp_block")), (1, 0, 0), "{after:?}");
    assert!(engine.pending_agent_mcp(ws, Agent::Opencode).is_empty(), "the server is not asked again");
}
