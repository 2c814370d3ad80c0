//! docs/protocol.md is rendered from the protocol's types (`ctxgraph_server::protocol`):
//! this test renders it again and fails when the page and the types disagree.
//! `UPDATE_PROTOCOL_DOC=1 cargo test -p ctxgraph-server --test protocol_doc` writes it.

use std::fmt::Write as _;
use std::path::PathBuf;

use ctxgraph_server::protocol::{METHODS, Scope, reply_settings};
use schemars::generate::SchemaSettings;
use serde_json::{Value, json};

fn page_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/protocol.md")
}

/// A schema as the page shows it: pretty JSON without the `$schema` line every one has.
fn show(mut schema: Value) -> String {
    if let Value::Object(members) = &mut schema {
        members.remove("$schema");
    }
    serde_json::to_string_pretty(&schema).expect("a schema is JSON")
}

/// The schema of a request's `params` over JSON-RPC: the type's, with `cwd` (and the
/// memory methods' `session`) beside its fields.
fn rpc_params(mut schema: Value, scope: Scope) -> Value {
    let add = |schema: &mut Value, name: &str, property: Value, required: bool| {
        schema["properties"].as_object_mut().map(|p| p.insert(name.to_owned(), property));
        if required {
            match schema["required"].as_array_mut() {
                Some(list) => list.insert(0, json!(name)),
                None => schema["required"] = json!([name]),
            }
        }
    };
    if scope != Scope::None && schema.get("properties").is_none() {
        schema["properties"] = json!({});
    }
    if scope == Scope::WorkspaceAndSession {
        let session = json!({ "description": "The asking opencode session (docs/memory.md §3.1's session id).", "type": ["string", "null"] });
        add(&mut schema, "session", session, false);
    }
    if scope != Scope::None {
        add(&mut schema, "cwd", json!({ "description": "The working directory.", "type": "string" }), true);
    }
    schema
}

fn render() -> String {
    // A generator per schema: each one's `$defs` holds only the definitions it uses. A
    // request is read as serde reads it; a reply as `reply_settings` says.
    let generator = || SchemaSettings::draft2020_12().for_deserialize().into_generator();
    let reply_generator = || reply_settings().into_generator();
    let mut page = String::from(
        "# The host protocol\n\n\
         <!-- Generated from server/src/protocol.rs: edit the types' doc comments, then run\n     \
         `UPDATE_PROTOCOL_DOC=1 cargo test -p ctxgraph-server --test protocol_doc`. -->\n\n\
         `ctxgraph serve --stdio` answers JSON-RPC 2.0, one request per line and one response per line;\n\
         `ctxgraph mcp` serves the same operations as MCP tools over stdio. Each method below is one\n\
         function of `ctxgraph_server::ops::Host` that both servers call, so their answers agree: an MCP\n\
         tool answers the method's reply as JSON text (`context_build`, `context_explain`,\n\
         `context_lint` and `memory_recall` answer text for the model, or JSON with `format: \"json\"`).\n\
         Over MCP the workspace is the directory `ctxgraph mcp` serves and the session its `--session`,\n\
         so a tool's arguments are the method's without `cwd` (and the memory methods' `session`).\n\n\
         Every request line is answered. A line that is not JSON gets −32700; JSON that is not a request\n\
         −32600; an unknown method −32601; parameters that do not fit the method −32602; a request that\n\
         was well-formed but could not be answered (a bad config, a working directory that does not\n\
         exist, the memory store's lock) −32000, with the reason in the message.\n\n\
         | Method | MCP tool | Purpose |\n|---|---|---|\n",
    );
    let mut sections = String::new();
    for method in METHODS {
        let params = serde_json::to_value((method.params)(&mut generator())).expect("schema");
        let purpose = params["description"].as_str().unwrap_or_default().replace('\n', " ");
        let tool = method.tool.map_or_else(|| "—".to_owned(), |tool| format!("`{tool}`"));
        let first_sentence = purpose.split(". ").next().unwrap_or_default().trim_end_matches('.');
        let _ =
            writeln!(page, "| [`{}`](#{}) | {tool} | {first_sentence}. |", method.name, anchor(method.name));
        let _ = writeln!(sections, "\n## `{}`\n\n{purpose}\n", method.name);
        if let Some(tool) = method.tool {
            let _ = writeln!(sections, "MCP tool: `{tool}`.\n");
        }
        let params = rpc_params(params, method.scope);
        let _ = writeln!(sections, "Params:\n\n```json\n{}\n```\n", show(params));
        let reply = serde_json::to_value((method.reply)(&mut reply_generator())).expect("schema");
        let _ = writeln!(sections, "Reply:\n\n```json\n{}\n```", show(reply));
    }
    page.push_str(&sections);
    page
}

/// GitHub's heading anchor for `` `name` ``.
fn anchor(name: &str) -> String {
    name.chars().filter(|c| c.is_alphanumeric() || *c == '-' || *c == '_').collect()
}

#[test]
fn the_protocol_page_is_the_one_the_types_render() {
    let rendered = render();
    let path = page_path();
    if std::env::var_os("UPDATE_PROTOCOL_DOC").is_some() {
        std::fs::write(&path, &rendered).expect("write docs/protocol.md");
        return;
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        on_disk == rendered,
        "docs/protocol.md is not what the types in server/src/protocol.rs render; regenerate it with\n  \
         UPDATE_PROTOCOL_DOC=1 cargo test -p ctxgraph-server --test protocol_doc\nand review the diff"
    );
}
