//! `ctxgraph session …`, `nearby --session` and `explain --session` as a user runs them: exit
//! codes, errors that name the place, limits from the config, recorded sessions end to end.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fixture(case: &str, file: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/session").join(case).join(file);
    std::fs::read_to_string(path).expect("fixture")
}

/// Runs ctxgraph in `dir` with HOME and the XDG dirs inside it and the given config.
fn ctxgraph(dir: &Path, config: Option<&str>, args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ctxgraph"));
    command
        .args(args)
        .current_dir(dir)
        .env_clear()
        .env("HOME", dir.join("home"))
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .env("OPENCODE_TEST_MANAGED_CONFIG_DIR", dir.join("managed"));
    if let Some(config) = config {
        command.env("OPENCODE_CONFIG_CONTENT", config);
    }
    command.output().expect("run ctxgraph")
}

fn temp() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().canonicalize().expect("canonical");
    std::fs::create_dir_all(root.join("home")).expect("home");
    (dir, root)
}

const CONFIG: &str = r#"{"provider":{"fake":{"npm":"@ai-sdk/openai-compatible","models":{"fake-model":{"limit":{"context":30000,"output":4000}}}}}}"#;

#[test]
fn a_truncated_export_is_bad_input_at_a_position() {
    let (_guard, root) = temp();
    let text = fixture("s11_all_fit", "export.json");
    std::fs::write(root.join("cut.json"), &text[..text.len() / 2]).expect("write");
    let out = ctxgraph(&root, Some(CONFIG), &["session", "compact", "--session", "cut.json"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("cut.json: not an opencode session export: $.messages"), "{stderr}");
    assert!(stderr.contains(&format!("(byte {})", text.len() / 2)), "{stderr}");
}

#[test]
fn a_wrong_field_is_named_by_its_json_path() {
    let (_guard, root) = temp();
    let text = fixture("s11_all_fit", "export.json").replacen(r#""role": "user""#, r#""role": "robot""#, 1);
    std::fs::write(root.join("bad.json"), text).expect("write");
    let out = ctxgraph(&root, Some(CONFIG), &["session", "messages", "--session", "bad.json"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("$.messages[0].info.role"), "{stderr}");
    assert!(stderr.contains("unknown variant `robot`"), "{stderr}");
}

#[test]
fn no_known_limit_asks_for_the_flag() {
    let (_guard, root) = temp();
    std::fs::write(root.join("s.json"), fixture("s11_all_fit", "export.json")).expect("write");
    let out = ctxgraph(&root, None, &["session", "compact", "--session", "s.json"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("fake/fake-model") && stderr.contains("--context N"), "{stderr}");
    let out = ctxgraph(
        &root,
        None,
        &["session", "compact", "--session", "s.json", "--context", "30000", "--output", "4000"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
}

/// s11 cut just after its compaction marker: the plan's conversation is the recorded one,
/// with the limits read from the config.
#[test]
fn compact_prints_the_recorded_conversation() {
    let (_guard, root) = temp();
    let mut export: serde_json::Value =
        serde_json::from_str(&fixture("s11_all_fit", "export.json")).expect("json");
    let messages = export["messages"].as_array_mut().expect("messages");
    let marker = messages
        .iter()
        .position(|m| m["parts"].as_array().is_some_and(|p| p.iter().any(|p| p["type"] == "compaction")))
        .expect("marker");
    messages.truncate(marker + 1);
    std::fs::write(root.join("s.json"), export.to_string()).expect("write");
    let out =
        ctxgraph(&root, Some(CONFIG), &["session", "compact", "--session", "s.json", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let plan: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(plan["usable"], 26000);
    assert_eq!(plan["tail_start_id"], serde_json::Value::Null);
    assert_eq!(plan["conversation"], fixture("s11_all_fit", "compaction-1.txt"));
    let request = plan["request"].as_str().expect("request");
    assert!(
        request.contains(&format!(
            "<conversation>\n{}\n</conversation>",
            plan["conversation"].as_str().unwrap()
        ))
    );
}

#[test]
fn an_image_read_shows_no_reminder() {
    let (_guard, root) = temp();
    std::fs::create_dir_all(root.join("repo/.git")).expect("git");
    std::fs::create_dir_all(root.join("repo/sub")).expect("sub");
    std::fs::write(root.join("repo/sub/AGENTS.md"), "sub rule\n").expect("rule");
    std::fs::write(root.join("repo/sub/pic.png"), "not really a png\n").expect("png");
    std::fs::write(root.join("repo/sub/a.txt"), "a\n").expect("txt");
    let repo = root.join("repo");
    let out = ctxgraph(&repo, None, &["nearby", "sub/pic.png"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty(), "{}", String::from_utf8_lossy(&out.stdout));
    let out = ctxgraph(&repo, None, &["nearby", "sub/pic.png", "--format", "json"]);
    let read: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(read["opencode"]["kind"], "image");
    assert_eq!(read["opencode"]["loaded"][0], format!("{}/sub/AGENTS.md", repo.display()));
    // N6: listed as loaded, never shown; not "attached".
    assert_eq!(read["opencode"]["rules"][0]["state"], "loaded_not_shown");
    assert_eq!(read["text"], "");
    assert_eq!(read["blocks"], serde_json::json!([]));
    assert_eq!(read["left_out"][0]["fate"], "loaded_not_shown");
    assert_eq!(read["left_out"][0]["rule"], "N6");
    // A binary file: the read fails after claiming the rule, so nothing is loaded.
    std::fs::write(root.join("repo/sub/favicon.ico"), [0u8, 0, 1, 0, 1, 0, 16, 16]).expect("ico");
    let out = ctxgraph(&repo, None, &["nearby", "sub/favicon.ico", "--format", "json"]);
    let read: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(read["opencode"]["kind"], "binary");
    assert_eq!(read["opencode"]["rules"][0]["state"], "read_fails");
    assert_eq!(read["opencode"]["loaded"], serde_json::json!([]));
    assert_eq!(read["left_out"][0]["fate"], "read_fails");
    let out = ctxgraph(&repo, None, &["nearby", "sub/a.txt"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("sub rule"));
}

/// e02 (recorded) with every turn inside the budget: K8 keeps no tail, so no turn may be
/// called kept.
#[test]
fn compact_without_a_tail_calls_no_turn_kept() {
    let (_guard, root) = temp();
    std::fs::write(root.join("s.json"), fixture("e02_overflow_tail2", "export.json")).expect("write");
    let args = ["session", "compact", "--session", "s.json", "--context", "30000", "--output", "4000"];
    let out = ctxgraph(&root, None, &args);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let plan_part = text.split("--- compaction request ---").next().expect("plan");
    assert!(!plan_part.contains("kept"), "{plan_part}");
    assert!(plan_part.contains("no tail (every turn fits"), "{plan_part}");
    let out = ctxgraph(&root, None, &[&args[..], &["--format", "json"]].concat());
    let plan: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(plan["tail_start_id"], serde_json::Value::Null);
    let turns = plan["turns"].as_array().expect("turns");
    assert!(!turns.is_empty());
    assert!(turns.iter().all(|t| t["fits"] == true && t["kept"] == false), "{turns:?}");
}

/// e01 in a repository laid out like the recording: the JSON names the claim, the text
/// cites the rules, and what the command cannot do is bad input.
#[test]
fn explain_session_traces_reads_and_fates() {
    let (_guard, root) = temp();
    let repo = root.join("repo");
    for (file, text) in [
        ("sub/AGENTS.md", "sub rule\n"),
        ("sub/deep/AGENTS.md", "deep rule\n"),
        ("sub/a.txt", "a\n"),
        ("sub/deep/b.txt", "b\n"),
        ("sub/deep/c.txt", "c\n"),
    ] {
        let path = repo.join(file);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("dirs");
        std::fs::write(path, text).expect("write");
    }
    std::fs::create_dir_all(repo.join(".git")).expect("git");
    let export = fixture("e01_nearby_claims", "export.json").replace("<PROJ>", &repo.display().to_string());
    std::fs::write(root.join("s.json"), export).expect("write");
    let session = root.join("s.json").display().to_string();
    let base = ["explain", "--session", session.as_str(), "--context", "30000", "--output", "4000"];

    let out = ctxgraph(&repo, None, &[&base[..], &["--message", "msg_0002", "--format", "json"]].concat());
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(answer["messages"], 2, "the session up to msg_0002");
    let reads = answer["reads"].as_array().expect("reads");
    assert_eq!(reads.len(), 2);
    let lost = &reads[0]["rules"][1];
    assert_eq!(lost["state"], "claimed");
    assert_eq!(lost["by_part"], "prt_0004");
    assert_eq!(lost["rule"], "N4");
    assert_eq!(answer["next_step"]["compacts"]["trigger"], "no");

    let out = ctxgraph(&repo, None, &base);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("already attached it (N2)"), "{text}");
    assert!(text.contains("claimed it first"), "{text}");
    // sub/AGENTS.md: a.txt one check away, b.txt two checks and a claim: opencode's race.
    assert!(text.contains("which parallel read gets it is opencode's race (N4.1)"), "{text}");

    let out = ctxgraph(&repo, None, &[&base[..], &["--format", "dot"]].concat());
    assert_eq!(out.status.code(), Some(2));
    let out = ctxgraph(&repo, None, &[&base[..], &["--message", "msg_9999"]].concat());
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no message msg_9999"));
}

/// `session rules` for an agent whose sessions are not modelled, or a record that is not
/// there: bad input (exit 2) that says which, never an empty report.
#[test]
fn session_rules_refuses_an_agent_without_a_session_model_and_a_missing_record() {
    let (_guard, root) = temp();
    std::fs::write(root.join("s.jsonl"), "{}\n").expect("write");
    let out = ctxgraph(&root, None, &["session", "rules", "--agent", "aider", "--session", "s.jsonl"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("does not model Aider's sessions"), "{stderr}");
    let out = ctxgraph(&root, None, &["session", "rules", "--agent", "aider", "--session", "gone.jsonl"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("gone.jsonl: no such file"), "{stderr}");
}
