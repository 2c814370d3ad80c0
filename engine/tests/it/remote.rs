//! Remote instructions (issue #4; spec I8, I9, R5; E-19…E-22) against scripted HTTP servers
//! on 127.0.0.1. Timeouts are short so the suite stays fast.

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use ctxgraph_db::remote::RemoteState;
use ctxgraph_db::system::MemorySystem;
use ctxgraph_engine::Engine;
use ctxgraph_engine::HostEnv;
use ctxgraph_engine::remote::{FetchOptions, Fetcher};
use ctxgraph_opencode::prompt::Section;
use ctxgraph_test_support::http::{Reply, Server};

fn ok(body: impl Into<Vec<u8>>) -> Reply {
    Reply::ok(body)
}

fn status(code: u16) -> Reply {
    Reply::status(code)
}

fn options() -> FetchOptions {
    FetchOptions {
        header_timeout: Duration::from_millis(600),
        body_timeout: Duration::from_millis(800),
        backoff_base: Duration::from_millis(20),
        max_body_bytes: 4096,
        ..FetchOptions::default()
    }
}

/// An engine over a repo whose config lists `urls`, with its instruction section after
/// fetching them.
fn build(urls: &[String], options: FetchOptions) -> (String, Vec<(String, RemoteState)>) {
    let fs = MemorySystem::new();
    fs.init_git_repo("/r");
    fs.write_file("/r/AGENTS.md", "local rule\n");
    fs.write_file("/r/opencode.json", serde_json::json!({ "instructions": urls }).to_string());
    let mut engine = Engine::new(Arc::new(fs), HostEnv::fixed("/home/u"));
    let ws = engine.open("/r".as_ref()).expect("workspace");
    let fetcher = Fetcher::new(options).expect("fetcher");
    let results = engine.fetch_remote(ws, &fetcher).expect("fetch");
    let text = engine.system_prompt(ws, None).expect("prompt").layout(Section::Instructions).text;
    (text, results)
}

/// The blocks and per-URL outcomes, with the port scrubbed, for snapshots.
fn render(server: &Server, (text, results): (String, Vec<(String, RemoteState)>)) -> String {
    let mut out = text;
    out.push_str("\n--- outcomes\n");
    for (url, state) in results {
        let state = match state {
            RemoteState::Loaded { from, .. } => format!("loaded ({from:?})"),
            RemoteState::Failed(failure) => format!("failed: {failure}"),
            RemoteState::Pending => "pending".to_owned(),
        };
        let _ = writeln!(out, "{url}: {state}");
    }
    out.replace(&server.port().to_string(), "PORT")
}

#[test]
fn ok_missing_and_duplicates() {
    let server = Server::start(vec![("/a.md", vec![ok("remote rule A\n")])]);
    let (a, missing) = (server.url("/a.md"), server.url("/missing.md"));
    // E-19: the same URL twice is fetched once here and emitted twice (I8 keeps duplicates).
    let result = build(&[a.clone(), missing, a], options());
    assert_eq!(server.hits("/a.md"), 1);
    insta::assert_snapshot!(render(&server, result));
}

#[test]
fn transient_errors_are_retried_twice() {
    // E-22: 503, 503, then 200 is loaded; 503 three times is dropped.
    let server = Server::start(vec![
        ("/flaky.md", vec![status(503), status(503), ok("third time\n")]),
        ("/down.md", vec![status(503)]),
    ]);
    let result = build(&[server.url("/flaky.md"), server.url("/down.md")], options());
    assert_eq!((server.hits("/flaky.md"), server.hits("/down.md")), (3, 3));
    insta::assert_snapshot!(render(&server, result));
}

#[test]
fn timeouts_cover_headers_then_body() {
    let late_headers = Reply { delay: Duration::from_millis(1500), ..ok("too late\n") };
    // E-21: headers arrive in time, the body trickles in within the body deadline.
    let slow_body = Reply { pieces: 3, gap: Duration::from_millis(100), ..ok("slow but whole\n") };
    let stalled_body = Reply { pieces: 2, gap: Duration::from_secs(2), ..ok("never finishes\n") };
    let server = Server::start(vec![
        ("/late.md", vec![late_headers]),
        ("/slow.md", vec![slow_body]),
        ("/stalled.md", vec![stalled_body]),
    ]);
    let urls = [server.url("/late.md"), server.url("/slow.md"), server.url("/stalled.md")];
    insta::assert_snapshot!(render(&server, build(&urls, options())));
}

#[test]
fn body_cap_is_enforced_while_streaming() {
    let big = vec![b'x'; 10_000];
    let server = Server::start(vec![("/big.md", vec![Reply { pieces: 10, ..ok(big) }])]);
    insta::assert_snapshot!(render(&server, build(&[server.url("/big.md")], options())));
}

#[test]
fn redirects_are_bounded_and_stay_on_http() {
    let to = |location: String| Reply {
        status: 302,
        headers: vec![("location".to_owned(), location)],
        ..Reply::default()
    };
    let server = Server::start(vec![("/final.md", vec![ok("after redirects\n")])]);
    let port = server.port();
    let chain = Server::start(vec![
        ("/r1", vec![to(format!("http://127.0.0.1:{port}/final.md"))]),
        ("/file", vec![to("file:///etc/passwd".to_owned())]),
        ("/loop", vec![to("/loop".to_owned())]),
    ]);
    let urls = [chain.url("/r1"), chain.url("/file"), chain.url("/loop")];
    let rendered = render(&chain, build(&urls, options())).replace(&port.to_string(), "PORT2");
    assert_eq!(chain.hits("/loop"), 6, "the first request and five redirects");
    insta::assert_snapshot!(rendered);
}

#[test]
fn bodies_decode_like_text_decoder() {
    let server = Server::start(vec![
        ("/bom.md", vec![ok(b"\xEF\xBB\xBFwith bom\n".to_vec())]),
        ("/bad.md", vec![ok(b"bad \xFF\xFE bytes\n".to_vec())]),
        ("/empty.md", vec![ok("")]),
    ]);
    let urls = [server.url("/bom.md"), server.url("/bad.md"), server.url("/empty.md")];
    insta::assert_snapshot!(render(&server, build(&urls, options())));
}

#[test]
fn twenty_urls_at_once_keep_config_order() {
    let routes: Vec<(String, Vec<Reply>)> = (0..20)
        .map(|i| {
            // Later URLs answer faster, so completion order is the reverse of config order.
            let delay = Duration::from_millis(5 * (20 - i));
            (format!("/r{i}.md"), vec![Reply { delay, ..ok(format!("rule {i}\n")) }])
        })
        .collect();
    let server = Server::start(routes.iter().map(|(p, r)| (p.as_str(), r.clone())));
    let urls: Vec<String> = (0..20).map(|i| server.url(&format!("/r{i}.md"))).collect();
    let (text, results) = build(&urls, options());
    assert!(results.iter().all(|(_, s)| matches!(s, RemoteState::Loaded { .. })));
    let order: Vec<usize> =
        (0..20).map(|i| text.find(&format!("rule {i}\n")).expect("block present")).collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "blocks follow config order");
}

#[test]
fn pins_match_or_reject() {
    let body = "pinned rule\n";
    let blake = blake3::hash(body.as_bytes()).to_hex().to_string();
    let sha = "c1c2b1b1f8b3a8e3f0f6f1d3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3";
    let server = Server::start(vec![("/p.md", vec![ok(body)])]);
    let urls =
        [format!("{}#blake3={blake}", server.url("/p.md")), format!("{}#sha256={sha}", server.url("/p.md"))];
    insta::assert_snapshot!(render(&server, build(&urls, options())).replace(&blake, "BLAKE3"));
}

#[test]
fn offline_uses_the_cache_and_fails_without_it() {
    let cache = tempfile::tempdir().expect("cache dir");
    let with_cache = |offline: bool, strict: bool| FetchOptions {
        offline,
        strict,
        cache_dir: Some(cache.path().to_path_buf()),
        ..options()
    };
    let server = Server::start(vec![
        ("/c.md", vec![Reply { headers: vec![("etag".into(), "\"v1\"".into())], ..ok("cached rule\n") }]),
        ("/gone.md", vec![ok("first version\n"), status(500)]),
    ]);
    let (c, gone, never) = (server.url("/c.md"), server.url("/gone.md"), server.url("/never.md"));
    let urls = [c.clone(), gone.clone(), never];
    let online = render(&server, build(&urls, with_cache(false, false)));
    let offline = render(&server, build(&urls, with_cache(true, false)));
    // Online again: c.md revalidates with its ETag (304); gone.md now fails and falls back
    // to the cached copy, unless strict.
    let revalidated = render(&server, build(&urls, with_cache(false, false)));
    let strict = render(&server, build(&urls, with_cache(false, true)));
    insta::assert_snapshot!(format!(
        "online:\n{online}\noffline:\n{offline}\nrevalidated:\n{revalidated}\nstrict:\n{strict}"
    ));
}
