//! `build`, `nearby`, `explain`, `lint` and `check` with `--agent continue` end to end, through
//! the generic profile paths: the userRules block (the agent file, then the always-applied
//! rules), the JSON report with every file's fate, nothing attached on reads, Continue in
//! `explain --agent all` and in CG012, and a scenario pinning its view. What Continue sends is
//! pinned by the recorded cases in `tests/agents/continue/`; this module checks the binary's
//! own surface.

use crate::agents::{build_report, run, snapshot_then_drift, tree};

const FILES: &[(&str, &str)] = &[
    ("home/.continue/rules/home.md", "Home rule.\n"),
    ("repo/AGENTS.md", "Root agents, not the working directory's.\n"),
    ("repo/pkg/AGENT.md", "Agent file.\n"),
    ("repo/pkg/CLAUDE.md", "Shadowed by AGENT.md.\n"),
    ("repo/pkg/.continue/rules/a.md", "---\nname: A\n---\n\nAlways.\n"),
    ("repo/pkg/.continue/rules/ts.md", "---\nglobs: \"**/*.ts\"\n---\nOnly for TypeScript.\n"),
    ("repo/pkg/.continue/rules/deep/b.md", "Deep rule.\n"),
    ("repo/pkg/.continue/rules/notes.txt", "Not a rule.\n"),
    ("repo/pkg/src/a.ts", "export {}\n"),
];

#[test]
fn build_prints_the_user_rules_block() {
    let (_dir, root) = tree(FILES);
    let (report, text) = build_report(&root, "repo/pkg", "continue");
    assert_eq!(text.code, 0, "{}", text.stderr);
    assert_eq!(
        text.stdout,
        "<context name=\"userRules\">\nAgent file.\n\n\nAlways.\n\nDeep rule.\n\n\nHome rule.\n\n</context>"
    );
    assert_eq!(text.stderr, "", "Continue's block has no wording of its own to warn about");
    assert_eq!(report["wording"]["from"], "none", "{report:#}");
    let fates: Vec<(&str, &str)> = report["left_out"]
        .as_array()
        .expect("left_out")
        .iter()
        .map(|l| (l["source"].as_str().unwrap_or_default(), l["fate"].as_str().unwrap_or_default()))
        .collect();
    assert_eq!(
        fates,
        [("[TMP]/repo/pkg/CLAUDE.md", "shadowed"), ("[TMP]/repo/pkg/.continue/rules/ts.md", "conditional")],
        "{report:#}"
    );
    insta::assert_snapshot!("continue_json", serde_json::to_string_pretty(&report).expect("JSON"));

    let (_dir, empty) = tree(&[("repo/AGENTS.md", ""), ("repo/AGENT.md", "never read\n")]);
    let nothing = run(&empty, "repo", &["build", "--agent", "continue"]);
    assert_eq!((nothing.code, nothing.stdout.as_str()), (0, ""), "{}", nothing.stderr);
}

#[test]
fn nearby_says_continue_attaches_nothing() {
    let (_dir, root) = tree(FILES);
    let read = run(&root, "repo/pkg", &["nearby", "--agent", "continue", "src/a.ts"]);
    // Attaching nothing is an answer, not an error: nothing printed, exit 0, and the JSON
    // says so.
    assert_eq!(read.code, 0, "{}", read.stderr);
    assert_eq!(read.stdout, "");
    let json = run(&root, "repo/pkg", &["nearby", "--agent", "continue", "src/a.ts", "--format", "json"]);
    assert_eq!(json.code, 0, "{}", json.stderr);
    let json: serde_json::Value = serde_json::from_str(&json.stdout).expect("JSON");
    assert_eq!(json["agent"], "continue");
    assert_eq!(json["text"], "");
    assert_eq!(json["blocks"], serde_json::json!([]));
    assert!(json["note"].as_str().is_some_and(|n| n.contains("Continue CLI attaches nothing")), "{json}");
}

#[test]
fn explain_gives_every_file_continue_considered_its_reason() {
    let (_dir, root) = tree(FILES);
    let mut out = String::new();
    for file in
        ["AGENT.md", "CLAUDE.md", ".continue/rules/ts.md", ".continue/rules/notes.txt", "../AGENTS.md"]
    {
        let one = run(&root, "repo/pkg", &["explain", "--agent", "continue", file]);
        assert_eq!(one.code, 0, "{file}: {}", one.stderr);
        out.push_str(&one.stdout);
    }
    insta::assert_snapshot!("continue_explain_files", out);

    let side = run(
        &root,
        "repo/pkg",
        &["explain", "--agent", "all", ".continue/rules/deep/b.md", "--format", "json"],
    );
    let report: serde_json::Value = serde_json::from_str(&side.stdout).expect("JSON");
    let continue_cli = report["agents"]
        .as_array()
        .expect("agents")
        .iter()
        .find(|a| a["agent"] == "continue")
        .unwrap_or_else(|| panic!("no continue in {report:#}"));
    assert_eq!(continue_cli["status"], "sent", "{report:#}");
}

#[test]
fn lint_all_counts_continue_among_the_agents() {
    let (_dir, root) =
        tree(&[("repo/AGENTS.md", "Shared rules.\n"), ("repo/.continue/rules/only.md", "Only Continue.\n")]);
    let all = run(&root, "repo", &["lint", "--agent", "all", "--format", "json"]);
    assert_eq!(all.code, 0, "{}", all.stderr);
    let report: serde_json::Value = serde_json::from_str(&all.stdout).expect("JSON");
    let single: Vec<&str> = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["code"] == "CG012")
        .filter_map(|f| f["message"].as_str())
        .collect();
    assert!(
        single.iter().any(|m| m.starts_with("[TMP]/repo/.continue/rules/only.md is sent only by continue; ")),
        "{report:#}"
    );
    let alone = run(&root, "repo", &["lint", "--agent", "continue"]);
    assert_eq!(alone.code, 0, "{}", alone.stderr);
    assert!(!alone.stdout.contains("CG0"), "no check of Continue's own yet: {}", alone.stdout);
}

/// `check` pins what Continue sees, its home rules from the scenario's home.
#[test]
fn check_pins_the_continue_rules() {
    let (_dir, root) = tree(&[
        ("repo/ci/home/.continue/rules/home.md", "Home rule.\n"),
        ("repo/AGENTS.md", "Root rules.\n"),
        ("repo/ctxgraph.toml", "[scenario.cn]\nagent = \"continue\"\nhome = \"ci/home\"\n"),
    ]);
    let snap = snapshot_then_drift(&root, "cn", ("repo/AGENTS.md", "Root rules, edited.\n"));
    assert!(snap.contains("\nprofile: continue-1.5.47\n"), "{snap}");
    assert!(
        snap.contains("<context name=\"userRules\">\nRoot rules.\n\n\nHome rule.\n\n</context>"),
        "{snap}"
    );
}
