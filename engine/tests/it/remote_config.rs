//! Remote org config (C3.1, R1–R4; CFG-28…CFG-36) fetched by the engine from servers on
//! 127.0.0.1 started here, then merged by the config queries.

use std::sync::Arc;
use std::time::Duration;

use ctxgraph_db::system::MemorySystem;
use ctxgraph_engine::HostEnv;
use ctxgraph_engine::remote::{FetchOptions, Fetcher};
use ctxgraph_engine::{Engine, EngineError};
use ctxgraph_opencode::config::{ConfigError, MergedConfig, SourceKind};
use ctxgraph_opencode::prompt::BuildError;
use ctxgraph_test_support::http::{Reply, Server};
use serde_json::json;

/// Serves fixed replies by path (content type, body).
fn serve<const N: usize>(routes: [(&str, &str, String); N]) -> Server {
    Server::start(
        routes.map(|(path, content_type, body)| {
            (path, vec![Reply::ok(body).header("content-type", content_type)])
        }),
    )
}

/// A repo at /r whose auth store names `http://127.0.0.1:<port>/` (trailing slash:
/// CFG-29) with token `test-token` under `TEST_TOKEN`.
fn load(port: u16, project: serde_json::Value) -> Result<MergedConfig, EngineError> {
    let fs = MemorySystem::new();
    fs.init_git_repo("/r");
    fs.write_file("/r/opencode.json", project.to_string());
    let auth = json!({
        format!("http://127.0.0.1:{port}/"): {"type": "wellknown", "key": "TEST_TOKEN", "token": "test-token"},
        "anthropic": {"type": "api", "key": "sk-x"},
    });
    fs.write_file("/home/u/.local/share/opencode/auth.json", auth.to_string());
    let mut env = HostEnv::fixed("/home/u");
    env.vars.insert("USER".to_owned(), "u".to_owned());
    // CFG-33: the process value loses to the auth token in config, and stays as is.
    env.vars.insert("TEST_TOKEN".to_owned(), "preexisting-token".to_owned());
    let mut engine = Engine::new(Arc::new(fs), env);
    let ws = engine.open("/r".as_ref()).expect("workspace");
    let options = FetchOptions { header_timeout: Duration::from_secs(2), ..FetchOptions::default() };
    engine.fetch_config(ws, &Fetcher::new(options).expect("fetcher"))?;
    engine.merged_config(ws)
}

fn config_error(result: Result<MergedConfig, EngineError>) -> ConfigError {
    match result {
        Err(EngineError::Build(BuildError::Config(err))) => err,
        other => panic!("expected a config error, got {other:?}"),
    }
}

#[test]
fn wellknown_config_is_the_first_layer_and_project_config_overrides_it() {
    // CFG-28/29/30: fetched from `<origin>/.well-known/opencode` (no double slash).
    let wellknown = json!({"config": {"mcp": {"jira": {"type": "remote", "url": "https://jira", "enabled": false}}, "model": "org/model"}});
    let server = serve([("/.well-known/opencode", "application/json", wellknown.to_string())]);
    let port = server.port();
    let project = json!({"mcp": {"jira": {"type": "remote", "url": "https://jira", "enabled": true}}, "username": "{env:TEST_TOKEN}"});
    let config = load(port, project).expect("config");
    let value = config.value();
    assert_eq!(value["mcp"]["jira"]["enabled"], json!(true));
    assert_eq!(value["model"], json!("org/model"));
    // R3/CFG-33: the auth token shadows the process variable in later layers.
    assert_eq!(value["username"], json!("test-token"));
    let first = &config.layers[0].source;
    assert_eq!(
        (first.kind, first.name()),
        (SourceKind::WellKnown, format!("http://127.0.0.1:{port}/.well-known/opencode"))
    );
    let model = config.tree.get("model").expect("model");
    assert_eq!(model.origin.source.kind, SourceKind::WellKnown);
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert!(requests[0].head.contains("accept: application/json"), "{}", requests[0].head);
}

#[test]
fn remote_config_url_and_headers_are_substituted_with_the_auth_token() {
    // CFG-31/32/34: `config: null`, a `remote_config` with `{env:}` in URL and headers.
    // The well-known document names the second server, so that one starts first.
    let remote = |port: u16| {
        json!({"config": null, "remote_config": {
            "url": format!("http://127.0.0.1:{port}/{{env:TEST_TOKEN}}/opencode.json"),
            "headers": {"Authorization": "Bearer {env:TEST_TOKEN}"},
        }})
        .to_string()
    };
    let inner = serve([(
        "/test-token/opencode.json",
        "application/json",
        json!({"config": {"share": "disabled"}}).to_string(),
    )]);
    let outer = serve([("/.well-known/opencode", "application/json", remote(inner.port()))]);
    let config = load(outer.port(), json!({})).expect("config");
    assert_eq!(config.value()["share"], json!("disabled"));
    let requests = inner.requests();
    assert_eq!(requests.len(), 1, "{requests:?}");
    assert!(requests[0].head.contains("authorization: bearer test-token"), "{}", requests[0].head);
}

#[test]
fn a_login_page_is_the_r2_error() {
    // CFG-36: the error names the auth URL without the trailing slash.
    let server = serve([("/.well-known/opencode", "text/html; charset=utf-8", "<p>sign in</p>".to_owned())]);
    let port = server.port();
    let err = config_error(load(port, json!({})));
    assert_eq!(
        err,
        ConfigError::RemoteAuth {
            url: format!("http://127.0.0.1:{port}"),
            remote: format!("http://127.0.0.1:{port}/.well-known/opencode")
        }
    );
    let text = err.to_string().replace(&port.to_string(), "PORT");
    insta::assert_snapshot!(text);
    // Without a content type, a body that starts like HTML is a login page too.
    let html = serve([("/.well-known/opencode", "application/json", "  <!DOCTYPE html><html>".to_owned())]);
    assert!(matches!(config_error(load(html.port(), json!({}))), ConfigError::RemoteAuth { .. }));
}

#[test]
fn unusable_remote_config_aborts_the_load() {
    // CFG-35: a remote config that is not an object; R1: a failed fetch.
    let inner = serve([("/c.json", "application/json", "\"not an object\"".to_owned())]);
    let body = json!({"remote_config": {"url": inner.url("/c.json")}}).to_string();
    let outer = serve([("/.well-known/opencode", "application/json", body)]);
    let err = config_error(load(outer.port(), json!({})));
    assert!(err.to_string().ends_with("/c.json: expected object"), "{err}");
    let missing = serve([]);
    let err = config_error(load(missing.port(), json!({})));
    assert!(
        matches!(&err, ConfigError::Remote { message, .. } if message.contains("HTTP status 404")),
        "{err}"
    );
}
