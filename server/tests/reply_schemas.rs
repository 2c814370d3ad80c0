//! Real replies against the schemas docs/protocol.md shows: a JSON-RPC server in this
//! process, over a temporary repository and an opencode export, answers `build`, `nearby`,
//! `explain`, `lint`, `session/compact`, `session/explain` and `memory/remember`, and each
//! answer must validate against its method's reply schema as the page prints it. The reply
//! schemas close every object (`ClosedObjects`), so a field a reply writes and its type's
//! schema does not describe fails here, while `protocol_doc` keeps the page equal to the
//! types.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ctxgraph_engine::HostEnv;
use ctxgraph_engine::{Engine, OsSystem};
use ctxgraph_server::rpc::Server;
use serde_json::{Value, json};

/// Each method's reply schemas as the page prints them, in order: `Reply:`, then each `Or:`.
fn page_replies() -> BTreeMap<String, Vec<Value>> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/protocol.md");
    let page = std::fs::read_to_string(path).expect("docs/protocol.md");
    let mut replies = BTreeMap::new();
    for section in page.split("\n## `").skip(1) {
        let method = section.split('`').next().expect("a heading").to_owned();
        let schemas: Vec<Value> = section
            .split("\nReply:\n")
            .nth(1)
            .map(|after| after.split("```json\n").skip(1))
            .into_iter()
            .flatten()
            .map(|block| {
                let json = block.split("\n```").next().expect("a closed block");
                serde_json::from_str(json)
                    .unwrap_or_else(|e| panic!("{method}: a schema that is not JSON: {e}"))
            })
            .collect();
        replies.insert(method, schemas);
    }
    replies
}

/// The temporary repository: `repo/` a git worktree with rule files, `repo/pkg` the working
/// directory; `proj/` the directory the export's session ran in; `home/` the host's home.
struct Tree {
    dir: tempfile::TempDir,
}

impl Tree {
    fn new() -> Self {
        let tree = Tree { dir: tempfile::tempdir().expect("temp dir") };
        for git in ["repo/.git", "proj/.git"] {
            tree.write(&format!("{git}/HEAD"), "ref: refs/heads/main\n");
            std::fs::create_dir_all(tree.path(git).join("objects")).expect("objects");
            std::fs::create_dir_all(tree.path(git).join("refs")).expect("refs");
        }
        tree.write("repo/AGENTS.md", "root rules");
        tree.write("repo/pkg/AGENTS.md", "pkg rules");
        tree.write("repo/pkg/src/main.rs", "fn main() {}");
        tree.write("repo/pkg/src/AGENTS.md", "src rules");
        std::fs::create_dir_all(tree.path("home")).expect("home");
        tree
    }

    fn path(&self, relative: &str) -> PathBuf {
        std::fs::canonicalize(self.dir.path()).expect("canonical temp dir").join(relative)
    }

    fn write(&self, relative: &str, text: &str) {
        let path = self.path(relative);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("parent dir");
        std::fs::write(path, text).expect("write");
    }

    /// The session fixture `case` (tests/session/): its files written under `proj/`, its
    /// export with `<PROJ>` made that directory.
    fn session(&self, case: &str) -> Value {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/session").join(case);
        let read = |name: &str| std::fs::read_to_string(dir.join(name)).expect("fixture");
        let described: Value = serde_json::from_str(&read("case.json")).expect("case.json");
        for (file, text) in described["files"].as_object().expect("files") {
            self.write(&format!("proj/{file}"), text.as_str().expect("a file's text"));
        }
        let proj = self.path("proj").display().to_string();
        serde_json::from_str(&read("export.json").replace("<PROJ>", &proj)).expect("export.json")
    }
}

/// One request to the server; its `result`, which must be there.
fn call(server: &mut Server, method: &str, params: Value) -> Value {
    let request = json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params });
    let line = server.handle_line(&request.to_string()).line.expect("a request is answered");
    let mut reply: Value = serde_json::from_str(&line).expect("a reply is JSON");
    match reply.get_mut("result") {
        Some(result) => result.take(),
        None => panic!("{method} {params}: not a result: {line}"),
    }
}

/// Why `reply` does not fit `schema`, every error, or `None` when it fits.
fn misfit(schema: &Value, reply: &Value) -> Option<String> {
    let validator = jsonschema::draft202012::new(schema).expect("the page's schema compiles");
    let errors: Vec<String> =
        validator.iter_errors(reply).map(|error| format!("{} at {}", error, error.instance_path())).collect();
    (!errors.is_empty()).then(|| errors.join("\n"))
}

#[test]
fn every_reply_validates_against_the_schema_the_protocol_page_shows() {
    let replies = page_replies();
    let tree = Tree::new();
    let cwd = tree.path("repo/pkg").display().to_string();
    let proj = tree.path("proj").display().to_string();
    let engine = Engine::new(Arc::new(OsSystem), HostEnv::fixed(tree.path("home")));
    let mut server = Server::new(engine, None);

    let export = tree.session("s14_nearby_types");
    let opened = call(&mut server, "session/open", json!({ "export": export }));
    let session = opened["session"].as_str().expect("a session id").to_owned();
    let limits = json!({ "session": session, "cwd": proj, "context": 200_000, "output": 4000 });

    // (method, which of its replies (0 `Reply:`, 1 the first `Or:`), params, a part the
    // reply must hold): each chosen so that the optional parts are there to be checked too.
    let cases: Vec<(&str, usize, Value, &str)> = vec![
        ("build", 0, json!({ "cwd": cwd }), "/blocks/0"),
        ("build", 0, json!({ "cwd": cwd, "agent": "codex" }), "/blocks/0"),
        ("nearby", 0, json!({ "cwd": cwd, "file": "src/main.rs" }), "/blocks/0/rule"),
        ("nearby", 0, json!({ "cwd": proj, "file": "sub/a.txt", "session": session }), "/opencode/rules/0"),
        ("nearby", 0, json!({ "cwd": cwd, "file": "src/main.rs", "agent": "claude-code" }), "/wording"),
        ("nearby", 0, json!({ "cwd": cwd, "file": "src/main.rs", "agent": "codex" }), "/note"),
        ("explain", 0, json!({ "cwd": cwd }), "/items/0/via"),
        ("explain", 0, json!({ "cwd": cwd, "target": "AGENTS.md" }), "/target"),
        ("explain", 0, json!({ "cwd": cwd, "agent": "codex" }), "/0/agents/0/reason"),
        ("explain", 0, json!({ "cwd": cwd, "agent": "all", "target": "AGENTS.md" }), "/agents/9/reason"),
        ("lint", 0, json!({ "cwd": cwd, "agent": "all" }), "/findings"),
        (
            "lint",
            0,
            json!({ "cwd": cwd, "max_total_tokens": 1, "max_rule_tokens": 1 }),
            "/findings/1/location",
        ),
        ("session/compact", 0, limits.clone(), "/turns/0"),
        ("session/explain", 0, limits, "/reads/0/rules/0"),
        ("memory/remember", 0, json!({ "cwd": cwd, "text": "Use pnpm, not npm, in this repo" }), "/id"),
        ("memory/remember", 0, json!({ "cwd": cwd, "text": "Use pnpm, not npm, in this repo" }), "/id"),
    ];
    let mut failures = Vec::new();
    for (method, which, params, part) in cases {
        let schema = replies
            .get(method)
            .and_then(|schemas| schemas.get(which))
            .unwrap_or_else(|| panic!("docs/protocol.md shows no reply {which} for {method}"));
        let reply = call(&mut server, method, params.clone());
        assert!(
            reply.pointer(part).is_some_and(|value| !value.is_null()),
            "{method} {params}: no {part} in {reply}"
        );
        if let Some(why) = misfit(schema, &reply) {
            failures.push(format!("{method} {params}:\n{why}\nreply: {reply}"));
        }
    }
    assert!(failures.is_empty(), "replies that do not fit their schema:\n\n{}", failures.join("\n\n"));
}

/// The check above can fail: a reply that fits its schema stops fitting once it holds a
/// field the schema does not name (here `memory/remember`'s, whose objects are the branches
/// of a tagged enum).
#[test]
fn a_field_the_schema_does_not_name_is_refused() {
    let replies = page_replies();
    let remember = &replies["memory/remember"][0];
    let added = json!({ "result": "added", "id": "fct_1" });
    assert_eq!(misfit(remember, &added), None);
    let mut extra = added.clone();
    extra["score"] = json!(1);
    assert!(misfit(remember, &extra).is_some_and(|why| why.contains("score")), "{extra}");
}
