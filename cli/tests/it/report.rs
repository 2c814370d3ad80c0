//! `ctxgraph report`: the page's data (the JSON it embeds) as an insta snapshot, and the
//! page itself in a real headless Chromium with the network disabled: every block of
//! `build --format json` of every agent in the registry is on it with its tokens, nothing
//! was requested, no script failed, it fits its size budget and 390 px, and the keyboard
//! moves between blocks. Screenshots at 1280 and 390 px land in the target directory.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;
use ctxgraph_db::tokens::TokenCounter as _;
use ctxgraph_engine::O200k;
use ctxgraph_engine::PROFILES;
use ctxgraph_test_support::sandbox::{fresh_dir, with_sandbox};
use serde_json::{Value, json};

use crate::support::{Run, ctxgraph, git_repo};

/// Token counts depend on the paths in the blocks: one fixed place.
const SANDBOX: &str = "/tmp/ctxgraph-report";

/// A repository with a rule file for each agent, one nested directory, and a file only
/// Claude Code reads.
fn lay_out(root: &Path) -> PathBuf {
    let repo = root.join("repo");
    for base in ["home", "config/opencode", "managed"] {
        std::fs::create_dir_all(root.join(base)).expect("base dirs");
    }
    let files = [
        ("AGENTS.md", "# Project\n\nUse pnpm. Run `pnpm test` before committing.\n"),
        ("CLAUDE.md", "# Claude\n\n@AGENTS.md\n\nPrefer small commits.\n"),
        ("GEMINI.md", "# Gemini\n\nAnswer in British English.\n"),
        (".github/copilot-instructions.md", "Write tests <first> & keep \"quotes\".\n"),
        ("packages/api/AGENTS.md", "# API\n\nHandlers return typed errors.\n"),
        ("packages/api/src/index.ts", "export {};\n"),
    ];
    for (path, text) in files {
        let path = repo.join(path);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("dirs");
        std::fs::write(path, text).expect("write fixture");
    }
    git_repo(&repo);
    repo
}

fn report(root: &Path, cwd: &Path, out: &Path) -> Run {
    let output = ctxgraph(root)
        .args(["report", "--offline", "--no-mcp", "-o"])
        .arg(out)
        .arg("--cwd")
        .arg(cwd)
        .output()
        .expect("run ctxgraph report");
    Run::scrubbed(root, output)
}

/// The page's embedded data, parsed back.
fn embedded_data(html: &str) -> Value {
    let start =
        html.find(r#"<script type="application/json" id="ctxgraph-data">"#).expect("the data element");
    let rest = &html[start..];
    let body = &rest[rest.find('>').expect("tag end") + 1..rest.find("</script>").expect("element end")];
    serde_json::from_str(body).expect("the data is JSON")
}

#[test]
fn the_page_data_snapshot() {
    with_sandbox(Path::new(SANDBOX), |sandbox| {
        let root = fresh_dir(&sandbox.join("data"));
        let repo = lay_out(&root);
        let out = root.join("out/report.html");
        let run = report(&root, &repo, &out);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let html = std::fs::read_to_string(&out).expect("the page was written");
        let mut data = embedded_data(&html);
        // The environment block holds today's date: its hash and tokens (and its agent's
        // total) change from day to day; its length cannot, so `bytes` stays pinned.
        let iso_date = regex::Regex::new(r"\b\d{4}-\d{2}-\d{2}\b").expect("a pattern");
        for agent in data["agents"].as_array_mut().expect("agents") {
            let mut dated = false;
            for block in agent["blocks"].as_array_mut().expect("blocks") {
                if block["kind"] == "environment" {
                    block["tokens"] = json!("[N]");
                    block["hash"] = json!("[the environment's hash, dated]");
                    block["first_lines"] = json!("[the environment, dated]");
                    dated = true;
                }
                // A block an agent dates itself (pi's `Current date: …`, PI9).
                let today = block["first_lines"]
                    .as_str()
                    .and_then(|lines| iso_date.find(lines))
                    .map(|m| m.as_str().to_owned());
                if let Some(today) = today {
                    block["tokens"] = json!("[N]");
                    block["hash"] = json!("[the block's hash, dated]");
                    let lines = block["first_lines"].as_str().unwrap_or_default().replace(&today, "[DATE]");
                    block["first_lines"] = json!(lines);
                    dated = true;
                }
            }
            if dated {
                agent["tokens"] = json!("[N]");
                agent["framing_tokens"] = json!("[N]");
            }
        }
        let text =
            serde_json::to_string_pretty(&data).expect("JSON").replace(&*root.to_string_lossy(), "[TMP]");
        insta::assert_snapshot!(text);
    });
}

/// With opencode's installation, opencode's budget is its whole system message (what
/// `build --section message` prints, model prompt first), the blocks it is made of kinded as
/// any agent's are.
#[test]
fn with_the_installation_opencode_s_budget_is_its_whole_message() {
    let root = tempfile::tempdir().expect("tempdir");
    let repo = lay_out(root.path());
    let opencode = ctxgraph_test_support::opencode::installed();
    let out = root.path().join("report.html");
    let run = |args: &[&str]| {
        ctxgraph(root.path())
            .args(args)
            .arg("--cwd")
            .arg(&repo)
            .env("CTXGRAPH_OPENCODE", &opencode)
            .output()
            .expect("run ctxgraph")
    };
    let report =
        run(&["report", "--offline", "--no-mcp", "--agent", "opencode", "-o", &out.to_string_lossy()]);
    assert!(report.status.success(), "{}", String::from_utf8_lossy(&report.stderr));
    let data = embedded_data(&std::fs::read_to_string(&out).expect("the page"));
    let budget = &data["agents"][0];
    assert_eq!(budget["scope"], "`build --agent opencode --section message`", "{budget}");
    let message = run(&["build", "--offline", "--no-mcp", "--section", "message"]);
    assert!(message.status.success(), "{}", String::from_utf8_lossy(&message.stderr));
    assert_eq!(budget["bytes"], json!(message.stdout.len()), "{budget}");
    let kinds: Vec<&str> =
        budget["blocks"].as_array().expect("blocks").iter().filter_map(|b| b["kind"].as_str()).collect();
    assert_eq!(kinds.first(), Some(&"prompt"), "{kinds:?}");
    assert!(kinds.contains(&"environment") && kinds.contains(&"rule_file"), "{kinds:?}");
}

#[test]
fn writing_the_page_is_whole_or_nothing() {
    let root = tempfile::tempdir().expect("tempdir");
    let repo = lay_out(root.path());
    // A directory where the page should go: the write fails and leaves nothing behind.
    let taken = root.path().join("taken");
    let out = taken.join("index.html");
    std::fs::create_dir_all(out.join("inside")).expect("dir");
    let run = report(root.path(), &repo, &taken);
    assert_ne!(run.code, 0, "{}", run.stdout);
    let leftovers: Vec<_> = std::fs::read_dir(&taken)
        .expect("list")
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with(ctxgraph_engine::atomic::TEMP_PREFIX))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// `-o DIR` for an existing directory writes `DIR/index.html`; `-o missing/` (a directory
/// by its slash, not there) is a usage error that writes nothing.
#[test]
fn a_directory_gets_an_index_page() {
    let root = tempfile::tempdir().expect("tempdir");
    let repo = lay_out(root.path());
    let dir = root.path().join("site");
    std::fs::create_dir_all(&dir).expect("dir");
    let slashed = PathBuf::from(format!("{}/", dir.display()));
    let run = report(root.path(), &repo, &slashed);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let html = std::fs::read_to_string(dir.join("index.html")).expect("index.html");
    assert!(html.starts_with("<!doctype html>"));
    let missing = PathBuf::from(format!("{}/", root.path().join("missing").display()));
    let run = report(root.path(), &repo, &missing);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("no such directory"), "{}", run.stderr);
    assert!(!root.path().join("missing").exists());
}

/// The report of `repo` to stdout, for `agent` (`all`): the page and its data.
fn page_of(root: &Path, repo: &Path, agent: &str) -> (String, Value) {
    let output = ctxgraph(root)
        .args(["report", "--offline", "--no-mcp", "--agent", agent, "--cwd"])
        .arg(repo)
        .output()
        .expect("report to stdout");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let html = String::from_utf8(output.stdout).expect("UTF-8");
    let data = embedded_data(&html);
    (html, data)
}

/// A map row's fates: (agent, status).
type Fates = Vec<(String, String)>;

/// Every map row: its directory's place, its path and its fates by agent.
fn map_rows(data: &Value) -> Vec<(String, String, Fates)> {
    let mut rows = Vec::new();
    for dir in data["map"].as_array().expect("map") {
        for file in dir["files"].as_array().expect("files") {
            let fates = file["fates"].as_array().expect("fates").iter();
            let fates = fates.map(|f| {
                (
                    f["agent"].as_str().unwrap_or_default().to_owned(),
                    f["status"].as_str().unwrap_or_default().to_owned(),
                )
            });
            rows.push((
                dir["place"].as_str().unwrap_or_default().to_owned(),
                file["path"].as_str().unwrap_or_default().to_owned(),
                fates.collect(),
            ));
        }
    }
    rows
}

/// The headlines above the tables, one string each.
fn glance(html: &str) -> Vec<String> {
    let Some(start) = html.find("<ul class=\"glance\">") else { return Vec::new() };
    let list = &html[start..start + html[start..].find("</ul>").expect("end of the list")];
    list.split("<li>").skip(1).map(|item| item.replace("</li>", "")).collect()
}

#[test]
fn the_map_holds_every_rule_file_and_nothing_else() {
    use std::os::unix::ffi::OsStrExt;
    let root = tempfile::tempdir().expect("tempdir");
    let repo = lay_out(root.path());
    for (path, text) in [
        ("pkg/GEMINI.md", "# Package\n\nNested rules.\n"),
        (".continue/rules/style.md", "---\nalwaysApply: true\n---\nTwo spaces.\n"),
        ("AGENTS.md", "# Project\n\nUse pnpm. Ask @alice before a release.\n"),
    ] {
        std::fs::create_dir_all(repo.join(path).parent().expect("parent")).expect("dirs");
        std::fs::write(repo.join(path), text).expect("write");
    }
    let odd = repo.join(".continue/rules").join(std::ffi::OsStr::from_bytes(b"zqnonutf\xe9.md"));
    std::fs::write(odd, "A rule no agent can open.\n").expect("write");
    let (html, data) = page_of(root.path(), &repo, "all");
    let rows = map_rows(&data);
    let fate = |path: &str, agent: &str| {
        let row = rows.iter().find(|r| r.1 == path).unwrap_or_else(|| panic!("no row {path}: {rows:?}"));
        row.2.iter().find(|f| f.0 == agent).map(|f| f.1.clone()).expect("the agent's fate")
    };
    // A nested rule file no agent sends at start, attached when the model reads below it.
    assert_eq!(fate("pkg/GEMINI.md", "gemini"), "on_read");
    // Copilot attaches its own folders' files on a view, not another agent's `rules`.
    assert_eq!(fate(".continue/rules/style.md", "continue"), "sent");
    assert_eq!(fate(".continue/rules/style.md", "copilot"), "not_sent");
    // A mention is not a file.
    assert!(!rows.iter().any(|r| r.1.contains("alice")), "{rows:?}");
    // A name that is not UTF-8, escaped; no agent opens it.
    assert_eq!(fate(".continue/rules/zqnonutf\\xe9.md", "continue"), "not_sent");
    assert!(html.contains("zqnonutf\\xe9.md"));
    // Each agent's scope in its own name.
    assert_eq!(html.matches("build --agent NAME").count(), 0);
    assert!(html.contains("what `build --agent codex` prints"));
}

#[test]
fn the_headlines_count_rule_files_of_agents_that_send_them() {
    let root = tempfile::tempdir().expect("tempdir");
    // No rule file at all: opencode's environment block is no reason to head a line.
    let repo = root.path().join("bare");
    std::fs::create_dir_all(&repo).expect("dir");
    git_repo(&repo);
    let (html, _) = page_of(root.path(), &repo, "all");
    assert!(glance(&html).iter().all(|line| !line.contains("sends the most")), "{:?}", glance(&html));

    // A short AGENTS.md and a longer GEMINI.md: opencode's total, its environment
    // included, is the largest; the most rule text is another agent's.
    let repo = lay_out(root.path());
    std::fs::remove_file(repo.join("CLAUDE.md")).expect("rm");
    std::fs::write(repo.join("AGENTS.md"), "Use pnpm.\n").expect("write");
    let (html, data) = page_of(root.path(), &repo, "all");
    let agents = data["agents"].as_array().expect("agents");
    let rule_tokens = |agent: &Value| -> u64 {
        let blocks = agent["blocks"].as_array().expect("blocks").iter();
        let from_here = blocks.filter(|b| b["kind"] == "rule_file" && b.get("from_home").is_none());
        from_here.filter_map(|b| b["tokens"].as_u64()).sum()
    };
    let top = agents.iter().max_by_key(|a| rule_tokens(a)).expect("an agent");
    let total = agents.iter().max_by_key(|a| a["tokens"].as_u64()).expect("an agent");
    assert_ne!(top["agent"], total["agent"], "the fixture separates the two");
    let lines = glance(&html);
    let expected = format!(
        "<strong>{}</strong> sends the most rule text from here: ",
        top["title"].as_str().expect("title")
    );
    assert!(lines[0].starts_with(&expected), "{lines:?}");

    // A home file ties with the project's: the project's heads the line, the home file
    // is named as one.
    let home = root.path().join("home/.gemini");
    std::fs::create_dir_all(&home).expect("home");
    std::fs::write(home.join("GEMINI.md"), "Home rules.\n").expect("write");
    let (html, data) = page_of(root.path(), &repo, "gemini");
    let places: Vec<String> = map_rows(&data).into_iter().map(|r| format!("{} {}", r.0, r.1)).collect();
    assert!(places.iter().any(|p| p.starts_with("home ") && p.ends_with("/.gemini/GEMINI.md")), "{places:?}");
    let lines = glance(&html);
    assert!(
        lines.iter().any(|l| l.starts_with("of the project's rule files, <code>GEMINI.md</code> reaches")),
        "{lines:?}"
    );
    assert!(
        lines.iter().any(|l| l.starts_with("from the home folder") && l.contains(".gemini/GEMINI.md")),
        "{lines:?}"
    );
}

/// `build --agent NAME --format json` for every agent of the registry, each block with the
/// tokens of its text (opencode's JSON has ranges only: its text is `build`'s output).
fn every_block(root: &Path, cwd: &Path) -> Vec<(String, usize, usize, String, usize)> {
    let mut blocks = Vec::new();
    for profile in PROFILES {
        let agent = profile.agent().name();
        let run = |format: &str| {
            let output = ctxgraph(root)
                .args(["build", "--agent", agent, "--format", format, "--offline", "--cwd"])
                .arg(cwd)
                .output()
                .expect("run build");
            assert!(output.status.success(), "{agent}: {}", String::from_utf8_lossy(&output.stderr));
            output.stdout
        };
        let report: Value = serde_json::from_slice(&run("json")).expect("build JSON");
        let text = String::from_utf8(run("text")).expect("build text");
        for block in report["blocks"].as_array().expect("blocks") {
            let offset = |key: &str| usize::try_from(block[key].as_u64().expect("offset")).expect("usize");
            let (start, end) = (offset("start"), offset("end"));
            let body = block["text"].as_str().map_or_else(|| text[start..end].to_owned(), str::to_owned);
            let hash = block["hash"].as_str().expect("hash").to_owned();
            blocks.push((agent.to_owned(), start, end, hash, O200k.count(&body)));
        }
    }
    blocks
}

#[test]
fn the_page_in_a_real_browser() {
    let chromium = ctxgraph_test_support::debian::chromium();
    let shots = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-screenshots");
    std::fs::create_dir_all(&shots).expect("screenshot dir");
    let root = tempfile::tempdir().expect("tempdir");
    let fixture = lay_out(root.path());
    let monorepo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/monorepo");
    let monorepo = monorepo.canonicalize().expect("the example monorepo");
    for (name, cwd) in [("fixture", fixture), ("monorepo", monorepo)] {
        let page = root.path().join(format!("{name}.html"));
        let run = report(root.path(), &cwd, &page);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let expected = every_block(root.path(), &cwd);
        assert!(expected.iter().any(|b| b.0 != "opencode"), "{name}: other agents send blocks too");
        let mut browser = Browser::launch(&chromium, root.path());
        browser.check_page(name, &page, &expected, &shots);
    }
}

/// One headless Chromium, driven over the `DevTools` protocol on a loopback WebSocket. Plain
/// CDP: the test needs eight commands and three events, which a generated client crate
/// (and its build) would dwarf.
struct Browser {
    child: Child,
    socket: tungstenite::WebSocket<TcpStream>,
    next_id: u64,
    session: String,
    /// Every event received, in order.
    events: Vec<Value>,
    _profile: tempfile::TempDir,
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Browser {
    fn launch(chromium: &Path, scratch: &Path) -> Browser {
        let profile = tempfile::tempdir_in(scratch).expect("profile dir");
        let child = Command::new(chromium)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-extensions",
                "--hide-scrollbars",
                // Anything that still tried the network would meet a closed loopback port.
                "--proxy-server=127.0.0.1:9",
                "--remote-debugging-address=127.0.0.1",
                "--remote-debugging-port=0",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromium");
        // Chromium writes its port and browser endpoint here once it listens.
        let active = profile.path().join("DevToolsActivePort");
        let deadline = Instant::now() + Duration::from_secs(60);
        let (port, path) = loop {
            if let Ok(text) = std::fs::read_to_string(&active)
                && let Some((port, path)) = text.split_once('\n')
                && !path.trim().is_empty()
            {
                break (port.trim().parse::<u16>().expect("port"), path.trim().to_owned());
            }
            assert!(Instant::now() < deadline, "chromium did not open its DevTools port");
            std::thread::sleep(Duration::from_millis(100));
        };
        let stream = TcpStream::connect(("127.0.0.1", port)).expect("connect to DevTools");
        stream.set_read_timeout(Some(Duration::from_secs(30))).expect("timeout");
        let (socket, _) =
            tungstenite::client(format!("ws://127.0.0.1:{port}{path}"), stream).expect("DevTools handshake");
        let mut browser = Browser {
            child,
            socket,
            next_id: 0,
            session: String::new(),
            events: Vec::new(),
            _profile: profile,
        };
        let target = browser.call("Target.createTarget", json!({"url": "about:blank"}));
        let target = target["targetId"].as_str().expect("target id").to_owned();
        let attached = browser.call("Target.attachToTarget", json!({"targetId": target, "flatten": true}));
        attached["sessionId"].as_str().expect("session id").clone_into(&mut browser.session);
        for domain in ["Page.enable", "Runtime.enable", "Log.enable", "Network.enable"] {
            browser.call(domain, json!({}));
        }
        browser.call(
            "Network.emulateNetworkConditions",
            json!({"offline": true, "latency": 0, "downloadThroughput": 0, "uploadThroughput": 0}),
        );
        browser
    }

    /// Sends a command (to the page's session once attached) and returns its result; the
    /// events that arrive meanwhile are kept.
    fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut message = json!({"id": id, "method": method, "params": params});
        if !self.session.is_empty() {
            message["sessionId"] = json!(self.session);
        }
        self.socket.send(tungstenite::Message::text(message.to_string())).expect("send");
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            assert!(Instant::now() < deadline, "no answer to {method}");
            let frame = self.read_frame();
            let Ok(text) = frame.to_text() else { continue };
            let Ok(value) = serde_json::from_str::<Value>(text) else { continue };
            if value["id"] == id {
                assert!(value.get("error").is_none(), "{method}: {}", value["error"]);
                return value["result"].clone();
            }
            if value.get("method").is_some() {
                self.events.push(value);
            }
        }
    }

    /// The next frame. A socket with a read timeout is never restarted after a signal
    /// (signal(7), whatever `SA_RESTART` says), and tungstenite hands `EINTR` up: a
    /// child exiting elsewhere in this test process must not fail the read, so retry it.
    fn read_frame(&mut self) -> tungstenite::Message {
        for _ in 0..100 {
            match self.socket.read() {
                Err(tungstenite::Error::Io(e)) if e.kind() == std::io::ErrorKind::Interrupted => {}
                frame => return frame.expect("read from DevTools"),
            }
        }
        panic!("reading from DevTools was interrupted 100 times in a row");
    }

    fn wait_for_event(&mut self, method: &str, after: usize) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !self.events[after..].iter().any(|e| e["method"] == method) {
            assert!(Instant::now() < deadline, "no {method}");
            let frame = self.read_frame();
            if let Ok(value) = serde_json::from_str::<Value>(frame.to_text().unwrap_or_default())
                && value.get("method").is_some()
            {
                self.events.push(value);
            }
        }
    }

    fn eval(&mut self, expression: &str) -> Value {
        // Each expression in a function of its own: their `const`s would collide at the top.
        let wrapped = format!("(() => {{ {expression} }})()");
        let result = self.call("Runtime.evaluate", json!({"expression": wrapped, "returnByValue": true}));
        assert!(result.get("exceptionDetails").is_none(), "{expression}: {}", result["exceptionDetails"]);
        result["result"]["value"].clone()
    }

    fn width(&mut self, width: u32) {
        self.call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": false}),
        );
    }

    fn screenshot(&mut self, path: &Path) {
        let metrics = self.call("Page.getLayoutMetrics", json!({}));
        let width = metrics["cssContentSize"]["width"].as_f64().expect("width");
        let height = metrics["cssContentSize"]["height"].as_f64().expect("height").min(12_000.0);
        let shot = self.call(
            "Page.captureScreenshot",
            json!({"format": "png", "captureBeyondViewport": true,
                   "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1}}),
        );
        let png = base64::engine::general_purpose::STANDARD
            .decode(shot["data"].as_str().expect("screenshot data"))
            .expect("base64");
        assert!(png.starts_with(b"\x89PNG"), "a PNG");
        std::fs::write(path, png).expect("write screenshot");
    }

    fn check_page(
        &mut self,
        name: &str,
        page: &Path,
        expected: &[(String, usize, usize, String, usize)],
        shots: &Path,
    ) {
        let url = format!("file://{}", page.display());
        self.width(1280);
        let before = self.events.len();
        self.call("Page.navigate", json!({"url": url}));
        self.wait_for_event("Page.loadEventFired", before);
        assert_eq!(
            self.eval("return document.documentElement.getAttribute('data-ready')"),
            "1",
            "{name}: the script ran"
        );

        // Every block of every agent's `build --format json`, with its tokens, in the DOM.
        let rows = self.eval(
            "return Array.from(document.querySelectorAll('table.blocks tr[data-agent]')).map(r => [r.dataset.agent, \
             Number(r.dataset.start), Number(r.dataset.end), r.dataset.hash, r.querySelector('.tokens').textContent, \
             !!document.querySelector('.seg[href=\"#' + r.id + '\"]')])",
        );
        let rows = rows.as_array().expect("rows");
        for (agent, start, end, hash, tokens) in expected {
            let row = rows.iter().find(|r| r[0] == agent.as_str() && r[1] == *start && r[2] == *end);
            let Some(row) = row else { panic!("{name}: {agent}'s block {start}..{end} is not on the page") };
            assert_eq!(row[3], hash.as_str(), "{name}: {agent} {start}..{end} hash");
            assert_eq!(
                row[4].as_str().expect("tokens").replace(',', ""),
                tokens.to_string(),
                "{name}: {agent} tokens"
            );
            assert_eq!(row[5], true, "{name}: {agent} {start}..{end} has a segment in its bar");
        }
        assert_eq!(rows.len(), expected.len(), "{name}: no block beyond build's");

        // The keyboard: the first segment focused, → moves to the next, whose detail shows.
        let labels = self.eval(
            "const s = document.querySelectorAll('.seg'); if (s[0]) s[0].focus(); \
             return [document.activeElement === s[0], s.length, s[1] ? s[1].getAttribute('aria-label') : '']",
        );
        if labels[1].as_u64().expect("segments") > 1 {
            for kind in ["keyDown", "keyUp"] {
                self.call(
                    "Input.dispatchKeyEvent",
                    json!({"type": kind, "key": "ArrowRight", "code": "ArrowRight", "windowsVirtualKeyCode": 39}),
                );
            }
            let moved = self.eval(
                "const s = document.querySelectorAll('.seg'); return [document.activeElement === s[1], \
                 document.getElementById('detail').querySelector('h3').textContent]",
            );
            assert_eq!(moved[0], true, "{name}: → moved the focus to the next block");
            let label = labels[2].as_str().expect("label");
            let shown = moved[1].as_str().expect("detail title");
            assert!(
                label.starts_with(shown),
                "{name}: the detail shows the focused block ({shown} / {label})"
            );
        }

        // One tab stop per bar: Tab goes from agent to agent, the arrows within.
        let stops = self.eval(
            "return [document.querySelectorAll('.bar').length, \
             document.querySelectorAll('.seg:not([tabindex=\"-1\"])').length]",
        );
        assert_eq!(stops[0], stops[1], "{name}: tab stops per bar");

        // The size budget: the page's bytes against the text it shows.
        let shown = self.eval(
            "const b = document.body.cloneNode(true); b.querySelectorAll('script, style').forEach(e => e.remove()); \
             return new TextEncoder().encode(b.textContent).length",
        );
        let shown = shown.as_u64().expect("text bytes");
        let bytes = std::fs::metadata(page).expect("page").len();
        assert!(bytes <= 3 * shown + 150 * 1024, "{name}: {bytes} bytes for {shown} bytes of text");

        self.screenshot(&shots.join(format!("{name}-1280.png")));
        self.width(390);
        // Nothing sticks out of 390 px but what scrolls inside its own box (wide tables).
        let overflow = self.eval(
            "const wide = Array.from(document.querySelectorAll('body *')).filter(e => \
             e.getBoundingClientRect().right > 391 && !e.closest('.scroll, details:not([open])')); \
             return [document.documentElement.scrollWidth, wide.slice(0, 5).map(e => e.tagName + '.' + e.className)]",
        );
        assert!(overflow[0].as_u64() <= Some(390), "{name}: wider than 390 px: {overflow}");
        self.screenshot(&shots.join(format!("{name}-390.png")));

        // Nothing requested but the page itself; no script error, no CSP violation.
        let requests: Vec<&str> = self
            .events
            .iter()
            .filter(|e| e["method"] == "Network.requestWillBeSent")
            .filter_map(|e| e["params"]["request"]["url"].as_str())
            .filter(|u| *u != url)
            .collect();
        assert!(requests.is_empty(), "{name}: requests: {requests:?}");
        let errors: Vec<&Value> = self
            .events
            .iter()
            .filter(|e| {
                e["method"] == "Runtime.exceptionThrown"
                    || (e["method"] == "Log.entryAdded" && e["params"]["entry"]["level"] == "error")
                    || (e["method"] == "Runtime.consoleAPICalled" && e["params"]["type"] == "error")
            })
            .collect();
        assert!(errors.is_empty(), "{name}: script errors: {errors:?}");
    }
}

/// A scenario project whose rule file changed since its snapshot, for the Changes section.
fn changed_scenario(root: &Path, repo: &Path) -> PathBuf {
    let scenarios = repo.join("ctxgraph.toml");
    std::fs::write(&scenarios, "[scenario.root]\ncwd = \".\"\n").expect("scenarios");
    let output =
        ctxgraph(root).arg("snapshot").arg("--scenarios").arg(&scenarios).output().expect("snapshot");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    std::fs::write(repo.join("AGENTS.md"), "# Project\n\nUse npm now, and <never> yarn.\n").expect("edit");
    scenarios
}

#[test]
fn session_and_changes_in_a_real_browser() {
    let chromium = ctxgraph_test_support::debian::chromium();
    let shots = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-screenshots");
    std::fs::create_dir_all(&shots).expect("screenshot dir");
    let root = tempfile::tempdir().expect("tempdir");
    let root = root.path().canonicalize().expect("canonical");
    let repo = lay_out(&root);
    for (file, text) in [("sub/AGENTS.md", "sub rule\n"), ("sub/deep/AGENTS.md", "deep rule\n")] {
        std::fs::create_dir_all(repo.join(file).parent().expect("parent")).expect("dirs");
        std::fs::write(repo.join(file), text).expect("write");
    }
    for file in ["sub/a.txt", "sub/deep/b.txt", "sub/deep/c.txt"] {
        std::fs::write(repo.join(file), "text\n").expect("write");
    }
    let export = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/session/e01_nearby_claims/export.json"),
    )
    .expect("session fixture")
    .replace("<PROJ>", &repo.display().to_string());
    let session = root.join("session.json");
    std::fs::write(&session, export).expect("write session");
    let scenarios = changed_scenario(&root, &repo);
    // The model limits the session's plan reads, as in cli/tests/it/session.rs.
    let config = r#"{"provider":{"fake":{"npm":"@ai-sdk/openai-compatible","models":{"fake-model":{"limit":{"context":30000,"output":4000}}}}}}"#;

    let page = root.join("session.html");
    let output = ctxgraph(&root)
        .env("OPENCODE_CONFIG_CONTENT", config)
        .args(["report", "--offline", "--no-mcp", "-o"])
        .arg(&page)
        .arg("--cwd")
        .arg(&repo)
        .arg("--session")
        .arg(&session)
        .arg("--scenarios")
        .arg(&scenarios)
        .output()
        .expect("report");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let explained = ctxgraph(&root)
        .env("OPENCODE_CONFIG_CONTENT", config)
        .arg("explain")
        .arg("--session")
        .arg(&session)
        .args(["--format", "json", "--offline", "--cwd"])
        .arg(&repo)
        .current_dir(&repo)
        .output()
        .expect("explain --session");
    assert!(explained.status.success(), "{}", String::from_utf8_lossy(&explained.stderr));
    let explained: Value = serde_json::from_slice(&explained.stdout).expect("JSON");
    let checked = ctxgraph(&root)
        .env("CI", "true")
        .args(["check", "--format", "json", "--scenarios"])
        .arg(&scenarios)
        .output()
        .expect("check");
    let checked: Value = serde_json::from_slice(&checked.stdout).expect("check JSON");
    let change = &checked["scenarios"][0]["change"];
    let delta =
        change["tokens_after"].as_i64().expect("after") - change["tokens_before"].as_i64().expect("before");

    let expected = every_block(&root, &repo);
    let mut browser = Browser::launch(&chromium, &root);
    browser.check_page("session", &page, &expected, &shots);
    // The timeline: one entry per message, each with its fate; every read with its rules.
    let timeline = browser.eval(
        "return Array.from(document.querySelectorAll('.timeline > li')).map(li => li.querySelector('.badge').textContent)",
    );
    let history = explained["history"].as_array().expect("history");
    assert_eq!(timeline.as_array().expect("entries").len(), history.len(), "{timeline}");
    let reads = browser.eval("return document.querySelectorAll('.reads > li').length");
    assert_eq!(reads, explained["reads"].as_array().expect("reads").len());
    let diff = browser.eval(
        "const a = document.querySelector('#changes article'); return [a.querySelector('.badge').textContent, \
         a.querySelectorAll('.diff .add').length > 0, a.querySelectorAll('.diff .del').length > 0, \
         a.querySelector('.delta').textContent, a.querySelector('.diff').textContent.includes('<never>')]",
    );
    assert_eq!(diff[0], "Δ changed");
    assert_eq!(
        (diff[1].as_bool(), diff[2].as_bool(), diff[4].as_bool()),
        (Some(true), Some(true), Some(true)),
        "{diff}"
    );
    let sign = if delta == 0 { "±0".to_owned() } else { format!("{delta:+}") };
    assert!(diff[3].as_str().expect("delta").starts_with(&format!("{sign} tokens")), "{diff} / {delta}");
    drop(browser);

    // `check --format html`: the same section alone, its exit code check's.
    let output = ctxgraph(&root)
        .env("CI", "true")
        .args(["check", "--format", "html", "--scenarios"])
        .arg(&scenarios)
        .output()
        .expect("check --format html");
    assert_eq!(output.status.code(), Some(1), "a changed scenario fails the check");
    let page = root.join("check.html");
    std::fs::write(&page, &output.stdout).expect("write");
    let mut browser = Browser::launch(&chromium, &root);
    browser.check_page("check", &page, &[], &shots);
    assert_eq!(browser.eval("return document.querySelectorAll('#changes article .diff').length"), 1);
}

#[test]
fn one_agent_shows_only_that_agent() {
    let root = tempfile::tempdir().expect("tempdir");
    let repo = lay_out(root.path());
    let output = ctxgraph(root.path())
        .args(["report", "--offline", "--no-mcp", "--agent", "gemini", "--cwd"])
        .arg(&repo)
        .output()
        .expect("report to stdout");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let data = embedded_data(&String::from_utf8(output.stdout).expect("UTF-8"));
    let agents: Vec<&str> =
        data["agents"].as_array().expect("agents").iter().filter_map(|a| a["agent"].as_str()).collect();
    assert_eq!(agents, ["gemini"]);
    let gemini = &data["agents"][0]["blocks"];
    assert_eq!(gemini[0]["label"], "GEMINI.md", "{gemini}");
    let files: Vec<&Value> = data["map"]
        .as_array()
        .expect("map")
        .iter()
        .flat_map(|d| d["files"].as_array().expect("files"))
        .collect();
    assert!(!files.is_empty());
    for file in files {
        let fates: Vec<&str> =
            file["fates"].as_array().expect("fates").iter().filter_map(|f| f["agent"].as_str()).collect();
        assert_eq!(fates, ["gemini"], "{file}");
    }
}

/// `report --agent claude-code --session TRANSCRIPT`: the page carries what each rule-like
/// file cost per request of the recorded session (one recorded from Claude Code 2.1.332),
/// the same answer `session rules` gives; an agent whose sessions are not modelled is
/// refused with exit 2.
#[test]
fn a_recorded_session_of_any_agent_is_on_the_page() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    let repo = lay_out(root);
    let transcript = root.join("t.jsonl");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/agents/claude-code/sessions/parallel-nested/transcript.jsonl"),
        &transcript,
    )
    .expect("copy the transcript");
    let page = root.join("costs.html");
    let run = |args: &[&std::ffi::OsStr]| ctxgraph(root).args(args).output().expect("run ctxgraph");
    let out = run(&[
        "report".as_ref(),
        "--cwd".as_ref(),
        repo.as_os_str(),
        "--agent".as_ref(),
        "claude-code".as_ref(),
        "--session".as_ref(),
        transcript.as_os_str(),
        "-o".as_ref(),
        page.as_os_str(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let html = std::fs::read_to_string(&page).expect("the page");
    assert!(html.contains("<h2 id=\"costs-h\">Rule files over Claude Code's session"), "no section");
    assert!(html.contains("href=\"#costs\""), "not in the page's navigation");
    let rules = run(&[
        "session".as_ref(),
        "rules".as_ref(),
        "--cwd".as_ref(),
        repo.as_os_str(),
        "--agent".as_ref(),
        "claude-code".as_ref(),
        "--session".as_ref(),
        transcript.as_os_str(),
        "--format".as_ref(),
        "json".as_ref(),
    ]);
    assert_eq!(rules.status.code(), Some(0), "{}", String::from_utf8_lossy(&rules.stderr));
    let expected: Value = serde_json::from_slice(&rules.stdout).expect("session rules JSON");
    let data = embedded_data(&html);
    assert_eq!(data["session_costs"]["costs"], expected, "the page's costs are `session rules`'s");
    assert_eq!(data["session_costs"]["agent"], "claude-code");
    assert!(data.get("session").is_none(), "no opencode timeline for Claude Code's record");
    let steps = expected["steps"].as_array().map_or(0, Vec::len);
    assert!(steps > 1 && html.matches("<li><span class=\"big\">").count() >= steps, "a row per request");

    let refused = run(&[
        "report".as_ref(),
        "--cwd".as_ref(),
        repo.as_os_str(),
        "--agent".as_ref(),
        "aider".as_ref(),
        "--session".as_ref(),
        transcript.as_os_str(),
        "-o".as_ref(),
        root.join("aider.html").as_os_str(),
    ]);
    assert_eq!(refused.status.code(), Some(2), "{}", String::from_utf8_lossy(&refused.stderr));
    assert!(!root.join("aider.html").exists(), "no page for a refused session");
}
