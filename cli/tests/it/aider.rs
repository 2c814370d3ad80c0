//! `build`, `explain`, `lint` and `check` with `--agent aider` end to end, through the generic
//! profile paths: the read-only files from the nearest `.aider.conf.yml` and from `-c read=`,
//! their blocks marked unordered (a warning says so), Aider's wording unavailable without an
//! installation, each file's fate in `explain`, Aider in `explain --agent all` and CG012, a
//! broken configuration, and a scenario whose snapshot ignores the order files are named in.
//! What Aider sends is pinned by the recorded cases in `tests/agents/aider/`; this module
//! checks the binary's own surface.

use crate::agents::{build_report, run, snapshot_then_drift, tree};

const FILES: &[(&str, &str)] = &[
    ("home/.aider.conf.yml", "read: [~/GLOBAL.md]\n"),
    ("home/GLOBAL.md", "Global conventions.\n"),
    ("repo/.aider.conf.yml", "read: [../NOTES.md, missing.md]\n"),
    ("repo/NOTES.md", "Root notes.\n"),
    ("repo/pkg/.aider.conf.yml", "read:\n  - CONVENTIONS.md\n  - ../docs\n  - logo.png\n"),
    ("repo/pkg/CONVENTIONS.md", "Use tabs.\n"),
    ("repo/pkg/logo.png", "not really a png\n"),
    ("repo/docs/style.md", "```\nfenced\n```\n"),
    ("repo/AGENTS.md", "Never read by Aider.\n"),
];

#[test]
fn json_lists_the_set_of_files_and_what_is_left_out() {
    let (_dir, root) = tree(FILES);
    let (report, text) = build_report(&root, "repo/pkg", "aider");
    insta::assert_snapshot!("aider_json", serde_json::to_string_pretty(&report).expect("JSON"));
    // The working directory's file wins (AI3); a backtick fence in one file makes every
    // fence four backticks (AI8); the image is not in the text (AI6).
    assert!(text.stdout.contains("\npkg/CONVENTIONS.md\n````\nUse tabs.\n````\n"), "{}", text.stdout);
    assert!(text.stdout.contains("\ndocs/style.md\n````\n```\nfenced\n```\n````\n"), "{}", text.stdout);
    for absent in ["Root notes.", "Global conventions.", "Never read by Aider.", "logo.png"] {
        assert!(!text.stdout.contains(absent), "{absent}: {}", text.stdout);
    }
    assert!(text.stdout.starts_with("<read-only files introduction: Aider's wording unavailable>\n"));
    assert!(
        text.stderr.contains("warning: Aider's own wording is unavailable (no Aider installation"),
        "{}",
        text.stderr
    );
    assert!(
        text.stderr.contains("warning: these 2 blocks come in no stable order: Aider keeps"),
        "{}",
        text.stderr
    );
    let blocks = report["blocks"].as_array().expect("blocks");
    assert!(blocks.iter().all(|b| b["unordered"] == true && b["unstable"].is_string()), "{report:#}");
}

#[test]
fn the_command_line_list_comes_first_and_one_file_has_an_order() {
    let (_dir, root) = tree(FILES);
    let one =
        run(&root, "repo/pkg", &["build", "--agent", "aider", "-c", "read=../NOTES.md", "--format", "json"]);
    assert_eq!(one.code, 0, "{}", one.stderr);
    let report: serde_json::Value = serde_json::from_str(&one.stdout).expect("JSON");
    let blocks = report["blocks"].as_array().expect("blocks");
    assert_eq!(blocks.len(), 1, "{report:#}");
    assert_eq!(blocks[0]["text"], "\nNOTES.md\n```\nRoot notes.\n```\n", "{report:#}");
    assert!(blocks[0].get("unordered").is_none(), "{report:#}");
    assert_eq!(report["settings"][0]["value"], "../NOTES.md", "{report:#}");
    assert!(report["settings"][0].get("from").is_none(), "{report:#}");
    let shadowed: Vec<&str> = report["left_out"]
        .as_array()
        .expect("left_out")
        .iter()
        .filter(|l| l["fate"] == "shadowed")
        .filter_map(|l| l["source"].as_str())
        .collect();
    assert_eq!(
        shadowed,
        ["[TMP]/repo/pkg/.aider.conf.yml", "[TMP]/repo/.aider.conf.yml", "[TMP]/home/.aider.conf.yml"]
    );
    let text = run(&root, "repo/pkg", &["build", "--agent", "aider", "-c", "read=../NOTES.md"]);
    assert!(!text.stderr.contains("no stable order"), "{}", text.stderr);
    let unknown = run(&root, "repo", &["build", "--agent", "aider", "-c", "file=x"]);
    assert_eq!(unknown.code, 2, "{}", unknown.stderr);
    assert!(unknown.stderr.contains("(known: read)"), "{}", unknown.stderr);
}

#[test]
fn explain_says_which_list_named_a_file_and_that_the_order_is_not_stable() {
    let (_dir, root) = tree(FILES);
    let mut out = String::new();
    for file in ["CONVENTIONS.md", "logo.png", "../NOTES.md", "../AGENTS.md"] {
        let one = run(&root, "repo/pkg", &["explain", "--agent", "aider", file]);
        assert_eq!(one.code, 0, "{file}: {}", one.stderr);
        out.push_str(&one.stdout);
    }
    insta::assert_snapshot!("aider_explain_files", out);
    assert!(out.contains("in no stable order with the others (AI5)"), "{out}");

    let side = run(&root, "repo/pkg", &["explain", "--agent", "all", "CONVENTIONS.md", "--format", "json"]);
    let report: serde_json::Value = serde_json::from_str(&side.stdout).expect("JSON");
    let agents = report["agents"].as_array().expect("agents");
    let aider = agents.iter().find(|a| a["agent"] == "aider").expect("aider in explain --agent all");
    assert_eq!(aider["status"], "sent", "{report:#}");
    let order: Vec<&str> = agents.iter().filter_map(|a| a["agent"].as_str()).collect();
    assert_eq!(order, ctxgraph_db::agent::Agent::ALL.map(ctxgraph_db::agent::Agent::name), "{report:#}");
}

#[test]
fn lint_all_counts_aider_among_the_agents() {
    let (_dir, root) = tree(&[
        ("repo/AGENTS.md", "Shared rules.\n"),
        ("repo/CLAUDE.md", "Shared rules.\n"),
        ("repo/.aider.conf.yml", "read: CONVENTIONS.md\n"),
        ("repo/CONVENTIONS.md", "Only Aider reads this.\n"),
    ]);
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
        single.iter().any(|m| m.starts_with("[TMP]/repo/CONVENTIONS.md is sent only by aider; ")),
        "{single:?}"
    );
    let alone = run(&root, "repo", &["lint", "--agent", "aider"]);
    assert_eq!(alone.code, 0, "{}", alone.stderr);
    assert!(!alone.stdout.contains("CG0"), "no check of Aider's own yet: {}", alone.stdout);
}

#[test]
fn a_configuration_that_is_not_a_mapping_exits_2_naming_it() {
    let (_dir, root) = tree(&[("repo/.aider.conf.yml", "")]);
    let broken = run(&root, "repo", &["build", "--agent", "aider"]);
    assert_eq!(broken.code, 2, "{}", broken.stderr);
    assert!(
        broken.stderr.contains("[TMP]/repo/.aider.conf.yml: the config file doesn't appear"),
        "{}",
        broken.stderr
    );
}

/// `check` pins Aider's read-only message, its wording as a fingerprint, its files in an
/// order of ctxgraph's: naming them in another order leaves the snapshot as it is (AI5),
/// an edit of one of them does not.
#[test]
fn check_pins_the_set_without_its_order() {
    let (_dir, root) = tree(&[
        ("repo/.aider.conf.yml", "read: [b.md, a.md]\n"),
        ("repo/a.md", "A rules.\n"),
        ("repo/b.md", "B rules.\n"),
        ("repo/ctxgraph.toml", "[scenario.aider]\nagent = \"aider\"\n"),
    ]);
    let snapshot = run(&root, "repo", &["snapshot"]);
    assert_eq!(snapshot.code, 0, "{}", snapshot.stderr);
    let snap = std::fs::read_to_string(root.join("repo/.ctxgraph/snapshots/aider.snap")).expect("snapshot");
    assert!(snap.contains("\nprofile: aider-0.86.2\n"), "{snap}");
    assert!(
        snap.contains("<prose:blake3=9a42cbc6ea5b46b5d517695e07c6f02ba0ed51a78e87418ea29be7a9486dbd75>\na.md\n```\nA rules.\n```\n\nb.md\n```\nB rules.\n```\n"),
        "{snap}"
    );
    std::fs::write(root.join("repo/.aider.conf.yml"), "read: [a.md, b.md]\n").expect("write");
    let reordered = run(&root, "repo", &["check"]);
    assert_eq!(reordered.code, 0, "{}{}", reordered.stdout, reordered.stderr);
    snapshot_then_drift(&root, "aider", ("repo/b.md", "B rules, edited.\n"));
}
