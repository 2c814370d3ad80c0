//! Remote org config (C3.1, R1–R4; CFG-28…CFG-36) fetched by the engine from servers on
//! 127.0.0.1 started here, then merged by the config queries.

use std::collections::{BTreeMap, HashMap};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use ctxgraph_engine::remote::{FetchOptions, Fetcher};
use ctxgraph_engine::{Engine, EngineError, HostEnv};
use ctxgraph_queries::opencode::config::{ConfigError, MergedConfig, SourceKind};
use ctxgraph_queries::opencode::prompt::BuildError;
use ctxgraph_queries::system::MemorySystem;
use serde_json::json;

/// Requests seen: path → the request's header lines, lower-cased.
type Seen = Arc<Mutex<Vec<(String, String)>>>;

/// Serves fixed replies by path (content type, body) and records every request. Stops
/// after 10 s or 50 connections.
fn serve(routes: Vec<(&'static str, &'static str, String)>) -> (u16, Seen) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
    listener.set_nonblocking(true).expect("nonblocking");
    let port = listener.local_addr().expect("addr").port();
    let seen: Seen = Arc::default();
    let log = Arc::clone(&seen);
    let routes: HashMap<&str, (&str, String)> = routes.into_iter().map(|(p, t, b)| (p, (t, b))).collect();
    thread::spawn(move || {
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut served = 0;
        while Instant::now() < deadline && served < 50 {
            let Ok((mut stream, _)) = listener.accept() else {
                thread::sleep(Duration::from_millis(2));
                continue;
            };
            served += 1;
            stream.set_nonblocking(false).ok();
            stream.set_read_timeout(Some(Duration::from_secs(2))).ok();
            let mut request = Vec::new();
            let mut buf = [0u8; 1024];
            while !request.windows(4).any(|w| w == b"\r\n\r\n") && request.len() < 16 * 1024 {
                match stream.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => request.extend_from_slice(&buf[..n]),
                }
            }
            let text = String::from_utf8_lossy(&request).to_string();
            let path = text.split_whitespace().nth(1).unwrap_or("/").to_owned();
            log.lock().unwrap().push((path.clone(), text.to_ascii_lowercase()));
            let (status, content_type, body) = match routes.get(path.as_str()) {
                Some((t, b)) => (200, *t, b.clone()),
                None => (404, "text/plain", "no".to_owned()),
            };
            let reply = format!(
                "HTTP/1.1 {status} X\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(reply.as_bytes());
        }
    });
    (port, seen)
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
    let vars = BTreeMap::from([
        ("HOME".to_owned(), "/home/u".to_owned()),
        ("USER".to_owned(), "u".to_owned()),
        // CFG-33: the process value loses to the auth token in config, and stays as is.
        ("TEST_TOKEN".to_owned(), "preexisting-token".to_owned()),
    ]);
    let env =
        HostEnv { vars, home: "/home/u".into(), platform: "linux".into(), date: "Sun Nov 29 2026".into() };
    let mut engine = Engine::new(Arc::new(fs), env);
    let ws = engine.open("/r".as_ref()).expect("workspace");
    let options = FetchOptions { header_timeout: Duration::from_millis(2000), ..FetchOptions::default() };
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
    let (port, seen) = serve(vec![("/.well-known/opencode", "application/json", wellknown.to_string())]);
    let project = json!({"mcp": {"jira": {"type": "remote", "url": "https://jira", "enabled": true}}, "username": "{env:TEST_TOKEN}"});
    let config = load(port, project).expect("config");
    let value = config.value();
    assert_eq!(value["mcp"]["jira"]["enabled"], json!(true));
    assert_eq!(value["model"], json!("org/model"));
    // R3/CFG-33: the auth token shadows the process variable in later layers.
    assert_eq!(value["username"], json!("test-token"));
    let first = &config.layers[0].source;
    assert_eq!(
        (first.kind, first.name.clone()),
        (SourceKind::WellKnown, format!("http://127.0.0.1:{port}/.well-known/opencode"))
    );
    let model = config.tree.get("model").expect("model");
    assert_eq!(model.origin.source.kind, SourceKind::WellKnown);
    let requests = seen.lock().unwrap().clone();
    assert_eq!(requests.len(), 1);
    assert!(requests[0].1.contains("accept: application/json"), "{}", requests[0].1);
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
    let (inner, inner_seen) = serve(vec![(
        "/test-token/opencode.json",
        "application/json",
        json!({"config": {"share": "disabled"}}).to_string(),
    )]);
    let (outer, _) = serve(vec![("/.well-known/opencode", "application/json", remote(inner))]);
    let config = load(outer, json!({})).expect("config");
    assert_eq!(config.value()["share"], json!("disabled"));
    let requests = inner_seen.lock().unwrap().clone();
    assert_eq!(requests.len(), 1, "{requests:?}");
    assert!(requests[0].1.contains("authorization: bearer test-token"), "{}", requests[0].1);
}

#[test]
fn a_login_page_is_the_r2_error() {
    // CFG-36: the error names the auth URL without the trailing slash.
    let (port, _) =
        serve(vec![("/.well-known/opencode", "text/html; charset=utf-8", "<p>sign in</p>".to_owned())]);
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
    let (port, _) =
        serve(vec![("/.well-known/opencode", "application/json", "  <!DOCTYPE html><html>".to_owned())]);
    assert!(matches!(config_error(load(port, json!({}))), ConfigError::RemoteAuth { .. }));
}

#[test]
fn unusable_remote_config_aborts_the_load() {
    // CFG-35: a remote config that is not an object; R1: a failed fetch.
    let (inner, _) = serve(vec![("/c.json", "application/json", "\"not an object\"".to_owned())]);
    let body = json!({"remote_config": {"url": format!("http://127.0.0.1:{inner}/c.json")}}).to_string();
    let (outer, _) = serve(vec![("/.well-known/opencode", "application/json", body)]);
    let err = config_error(load(outer, json!({})));
    assert!(err.to_string().ends_with("/c.json: expected object"), "{err}");
    let (missing, _) = serve(vec![]);
    let err = config_error(load(missing, json!({})));
    assert!(
        matches!(&err, ConfigError::Remote { message, .. } if message.contains("HTTP status 404")),
        "{err}"
    );
}
