//! A real client: Neovim's built-in LSP client, headless, driven by
//! `tests/data/neovim/lsp.lua` against `ctxgraph lsp` on examples/monorepo. It edits the
//! root AGENTS.md without saving and reads back the diagnostics and code lenses Neovim
//! received. Neovim is Debian's package, installed when missing; every wait is bounded (in
//! the script, and here on the process).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

const SECRET: &str = "AKIAQQQQQQQQQQQQQQQQ";

#[test]
fn neovim_shows_an_unsaved_mistake_and_what_every_agent_attaches() {
    let nvim = ctxgraph_test_support::debian::nvim();
    let monorepo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/monorepo");
    let monorepo = std::fs::canonicalize(&monorepo).expect("examples/monorepo");
    let agents = monorepo.join("AGENTS.md");
    let on_disk = std::fs::read(&agents).expect("read AGENTS.md");
    let temp = tempfile::tempdir().expect("tempdir");
    let result = temp.path().join("result.json");
    for dir in ["home", "config", "managed"] {
        std::fs::create_dir_all(temp.path().join(dir)).expect("mkdir");
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/neovim/lsp.lua");
    // Neovim and the server it starts see nothing of the machine (as every CLI test).
    let mut child = Command::new(&nvim)
        .args(["--headless", "--clean", "-u"])
        .arg(&script)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", temp.path().join("home"))
        .env("XDG_CONFIG_HOME", temp.path().join("config"))
        .env("XDG_STATE_HOME", temp.path().join("state"))
        .env("XDG_DATA_HOME", temp.path().join("data"))
        .env("OPENCODE_TEST_MANAGED_CONFIG_DIR", temp.path().join("managed"))
        .env("CTXGRAPH_OFFLINE", "1")
        .env("CTXGRAPH_NVIM_ROOT", &monorepo)
        .env("CTXGRAPH_NVIM_SERVER", env!("CARGO_BIN_EXE_ctxgraph"))
        .env("CTXGRAPH_NVIM_RESULT", &result)
        .env("CTXGRAPH_NVIM_SECRET", SECRET)
        .current_dir(&monorepo)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn nvim");
    let deadline = Instant::now() + Duration::from_secs(240);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break Some(status);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.is_some_and(|s| s.success()), "nvim did not finish: {status:?}");
    let seen: Value = serde_json::from_str(&std::fs::read_to_string(&result).expect("nvim wrote its result"))
        .expect("result is JSON");
    assert!(seen.get("error").is_none(), "{seen:#}");
    let steps: Vec<(&str, bool)> = seen["steps"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| (s["name"].as_str().unwrap_or_default(), s["ok"].as_bool().unwrap_or(false)))
        .collect();
    let names = [
        "client started",
        "initialized",
        "secret underlined",
        "rule file lenses",
        "finding gone",
        "source lenses",
    ];
    assert_eq!(steps, names.map(|n| (n, true)), "{seen:#}");

    assert_eq!(seen["modified"], Value::Bool(true), "the buffer was never saved");
    assert_eq!(std::fs::read(&agents).expect("read AGENTS.md"), on_disk, "nor written by anyone");
    let line = &seen["edited_line"];
    let secret = seen["diagnostics"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|d| d["code"] == "CG005")
        .unwrap_or_else(|| panic!("{seen:#}"));
    let prefix = "- deploy key: ".len();
    assert_eq!((&secret["lnum"], &secret["end_lnum"]), (line, line), "{secret}");
    assert_eq!(
        (secret["col"].as_u64(), secret["end_col"].as_u64()),
        (Some(prefix as u64), Some((prefix + SECRET.len()) as u64))
    );

    let agents_count = ctxgraph_engine::PROFILES.len();
    let rule: Vec<&str> =
        seen["rule_lenses"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    assert_eq!(
        rule.first().copied(),
        Some("rule file: in the system prompt from 1 of 1 working directories (. down to its own)"),
        "{rule:#?}"
    );
    // Grouped by verdict: what the agents do with it, and what they attach on reads.
    assert_eq!(rule.len(), 3, "{rule:#?}");
    let source: Vec<&str> =
        seen["source_lenses"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    assert_eq!(source.len(), 1, "{source:#?}");
    assert!(source[0].starts_with("on read, attaches packages/api/src/handlers/AGENTS.md ("), "{source:#?}");
    // Every agent is in the one lens, named or counted.
    let counted: usize = source[0]
        .split(" · ")
        .map(|group| {
            let agents = group.rsplit(": ").next().unwrap_or_default();
            let more = agents.rsplit_once(" +").and_then(|(_, n)| n.parse::<usize>().ok()).unwrap_or(0);
            agents.split(" +").next().unwrap_or_default().split(", ").count() + more
        })
        .sum();
    assert_eq!(counted, agents_count, "{source:#?}");
}
