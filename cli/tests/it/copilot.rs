//! `build`, `nearby` and `check` with `--agent copilot` end to end: the JSON report, the
//! placeholders and warning without an installation, the refusal note of a section over
//! Copilot's budget, what a view attaches, and a scenario pinning Copilot's section. What
//! Copilot CLI sends is pinned by the recorded cases in `tests/agents/copilot/`; this module
//! checks the binary's own surface.

use crate::agents::{build_report, run, snapshot_then_drift, tree};

const FILES: &[(&str, &str)] = &[
    ("home/.copilot/copilot-instructions.md", "User rules.\n"),
    ("repo/AGENTS.md", "Root rules.\n@docs/style.md\n@missing.md\n"),
    ("repo/docs/style.md", "Style.\n"),
    ("repo/CLAUDE.md", "Root rules.\n@docs/style.md\n@missing.md\n"),
    ("repo/.github/instructions/all.instructions.md", "Every file.\n"),
    ("repo/.github/instructions/ts.instructions.md", "---\napplyTo: \"**/*.ts\"\n---\nTypeScript & more.\n"),
    ("repo/pkg/AGENTS.md", "Pkg rules, attached on views.\n"),
    ("repo/pkg/a.ts", "export {};\n"),
];

#[test]
fn json_lists_blocks_and_what_was_left_out() {
    let (_dir, root) = tree(FILES);
    let (report, text) = build_report(&root, "repo", "copilot");
    assert!(
        text.stdout.starts_with("<custom_instruction>\nUser rules.\n\n</custom_instruction>\n\n"),
        "{}",
        text.stdout
    );
    assert!(
        text.stdout.contains("<imported_custom_instruction source=\"[TMP]/repo/docs/style.md\">\nStyle.\n")
    );
    assert!(!text.stdout.contains("Pkg rules"), "{}", text.stdout);
    // No installation on PATH: the table's introduction is a placeholder, and a warning says so.
    assert!(text.stdout.contains(
        "Copilot's wording unavailable>\n| **/*.ts | '.github/instructions/ts.instructions.md' |  |"
    ));
    assert!(text.stderr.contains("wording is unavailable"), "{}", text.stderr);
    let rules: Vec<&str> = report["blocks"]
        .as_array()
        .expect("blocks")
        .iter()
        .map(|b| b["rule"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(rules, ["CP2", "CP2", "CP5", "CP7"], "{report:#}");
    let fates: Vec<(&str, &str)> = report["left_out"]
        .as_array()
        .expect("left_out")
        .iter()
        .map(|l| (l["fate"].as_str().unwrap_or(""), l["source"].as_str().unwrap_or("")))
        .collect();
    assert!(fates.contains(&("duplicate", "[TMP]/repo/CLAUDE.md")), "{fates:?}");
    assert!(fates.contains(&("missing", "[TMP]/repo/missing.md")), "{fates:?}");
    assert_eq!(report["release"], "copilot-1.0.102");
    assert!(report.get("note").is_none());
}

#[test]
fn a_section_over_the_budget_gets_a_note_and_a_warning() {
    let big = "lorem ipsum dolor sit amet ".repeat(8_000);
    let (_dir, root) = tree(&[("repo/AGENTS.md", big.as_str())]);
    let json = run(&root, "repo", &["build", "--agent", "copilot", "--format", "json"]);
    assert_eq!(json.code, 0, "{}", json.stderr);
    let report: serde_json::Value = serde_json::from_str(&json.stdout).expect("JSON");
    assert!(report["note"].as_str().is_some_and(|n| n.contains("CP13")), "{report:#}");
    let text = run(&root, "repo", &["build", "--agent", "copilot"]);
    assert!(text.stderr.contains("Copilot would send nothing"), "{}", text.stderr);
}

#[test]
fn nearby_prints_what_a_view_attaches() {
    let (_dir, root) = tree(FILES);
    let read = run(&root, "repo", &["nearby", "--agent", "copilot", "pkg/a.ts"]);
    assert_eq!(read.code, 0, "{}", read.stderr);
    let reminders: Vec<&str> = read.stdout.split("<system_reminder>\n").skip(1).collect();
    assert_eq!(reminders.len(), 2, "{}", read.stdout);
    assert!(reminders[0].contains(".github/instructions/ts.instructions.md"), "{}", read.stdout);
    assert!(
        reminders[0].contains("applyTo: &quot;**/*.ts&quot;\n---\nTypeScript &amp; more.\n"),
        "{}",
        read.stdout
    );
    assert!(reminders[1].contains("pkg/AGENTS.md") && reminders[1].contains("Pkg rules"), "{}", read.stdout);

    let json = run(&root, "repo/pkg", &["nearby", "--agent", "copilot", "../AGENTS.md", "--format", "json"]);
    let report: serde_json::Value = serde_json::from_str(&json.stdout).expect("JSON");
    assert!(
        report["note"].as_str().is_some_and(|n| n.contains("outside the working directory")),
        "{report:#}"
    );
    assert_eq!(report["bytes"], 0);
}

/// `check` pins what Copilot sees, views included, with its wording as fingerprints.
#[test]
fn check_pins_the_copilot_section() {
    let (_dir, root) = tree(&[
        ("repo/AGENTS.md", "Root rules.\n"),
        ("repo/.github/instructions/ts.instructions.md", "---\napplyTo: \"**/*.ts\"\n---\nTS.\n"),
        ("repo/pkg/AGENTS.md", "Pkg rules.\n"),
        ("repo/pkg/x.ts", "x\n"),
        ("repo/ctxgraph.toml", "[scenario.copilot]\nagent = \"copilot\"\nreads = [\"pkg/x.ts\"]\n"),
    ]);
    let snap = snapshot_then_drift(&root, "copilot", ("repo/pkg/AGENTS.md", "Pkg rules, edited.\n"));
    assert!(snap.contains("\nprofile: copilot-1.0.102\n"), "{snap}");
    assert!(
        snap.contains("<custom_instruction>\nRoot rules.\n\n</custom_instruction>\n\n<prose:blake3="),
        "{snap}"
    );
    assert!(snap.contains("--- read <repo>/pkg/x.ts ---\n"), "{snap}");
}
