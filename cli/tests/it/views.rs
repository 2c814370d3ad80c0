//! Every agent's view end to end: `explain --agent codex|gemini|all` and
//! `lint --agent codex|gemini|all` on one repository that each agent reads differently.

use crate::agents::{run, tree};

const FILES: &[(&str, &str)] = &[
    ("home/.codex/config.toml", "project_doc_max_bytes = 20\n"),
    ("home/.gemini/GEMINI.md", "Gemini global.\n"),
    ("repo/AGENTS.md", "Agents root.\n"),
    ("repo/GEMINI.md", "Gemini root, drifted.\n@docs/x.md\n@../outside.md\n"),
    ("repo/docs/x.md", "Imported.\n"),
    ("repo/pkg/AGENTS.md", "Pkg agents.\n"),
    ("repo/pkg/AGENTS.override.md", "Pkg override, cut by the budget.\n"),
    ("repo/pkg/CLAUDE.md", "Claude only.\n"),
    ("repo/pkg/deep/GEMINI.md", "Deep, on reads.\n"),
];

#[test]
fn explain_all_shows_one_file_in_every_agent() {
    let (_dir, root) = tree(FILES);
    let mut out = String::new();
    for file in
        ["AGENTS.md", "AGENTS.override.md", "CLAUDE.md", "deep/GEMINI.md", "../docs/x.md", "../GEMINI.md"]
    {
        let run = run(&root, "repo/pkg", &["explain", "--agent", "all", file]);
        assert_eq!(run.code, 0, "{file}: {}", run.stderr);
        out.push_str(&run.stdout);
    }
    insta::assert_snapshot!("explain_all", out);

    let json = run(&root, "repo/pkg", &["explain", "--agent", "all", "deep/GEMINI.md", "--format", "json"]);
    let report: serde_json::Value = serde_json::from_str(&json.stdout).expect("JSON");
    let statuses: Vec<&str> = report["agents"]
        .as_array()
        .expect("agents")
        .iter()
        .map(|a| a["status"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(
        statuses,
        [
            "not_sent", "not_sent", "not_sent", "on_read", "on_read", "not_sent", "not_sent", "not_sent",
            "not_sent", "not_sent", "not_sent", "not_sent"
        ],
        "{report:#}"
    );

    let nofile = run(&root, "repo/pkg", &["explain", "--agent", "all"]);
    assert_eq!(nofile.code, 2, "{}", nofile.stderr);
}

#[test]
fn explain_one_agent_lists_every_file_it_considered() {
    let (_dir, root) = tree(FILES);
    let gemini = run(&root, "repo/pkg", &["explain", "--agent", "gemini"]);
    assert_eq!(gemini.code, 0, "{}", gemini.stderr);
    insta::assert_snapshot!("explain_gemini", gemini.stdout);
    let codex = run(&root, "repo/pkg", &["explain", "--agent", "codex"]);
    insta::assert_snapshot!("explain_codex", codex.stdout);
    let claude = run(&root, "repo/pkg", &["explain", "--agent", "claude-code", "CLAUDE.md"]);
    assert!(claude.stdout.contains("claude-code  sent"), "{}", claude.stdout);
}

#[test]
fn lint_across_agents() {
    let (_dir, root) = tree(FILES);
    let all = run(&root, "repo/pkg", &["lint", "--agent", "all"]);
    assert_eq!(all.code, 0, "warnings do not fail by default: {}", all.stderr);
    insta::assert_snapshot!("lint_all", all.stdout);
    let denied = run(&root, "repo/pkg", &["lint", "--agent", "codex", "--deny", "warnings"]);
    assert_eq!(denied.code, 1, "{}", denied.stdout);
    assert!(denied.stdout.contains("CG014") && !denied.stdout.contains("CG015"), "{}", denied.stdout);
    let gemini = run(&root, "repo/pkg", &["lint", "--agent", "gemini", "--format", "json"]);
    let report: serde_json::Value = serde_json::from_str(&gemini.stdout).expect("JSON");
    assert!(gemini.stdout.contains("CG015") && !gemini.stdout.contains("CG014"), "{report:#}");
    // opencode's lint alone is unchanged: none of the cross-agent codes.
    let opencode = run(&root, "repo/pkg", &["lint"]);
    assert!(!opencode.stdout.contains("CG01"), "{}", opencode.stdout);
}
