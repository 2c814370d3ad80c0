//! `build`, `nearby`, `explain`, `lint` and `check` with `--agent cline` end to end, through
//! the generic profile paths: the `# Rules` section in title order, the JSON report with every
//! file's fate, nothing attached on reads, Cline in `explain --agent all` and in CG012, and a
//! scenario pinning its view. What Cline sends is pinned by the recorded cases in
//! `tests/agents/cline/`; this module checks the binary's own surface.

use crate::agents::{build_report, run, snapshot_then_drift, tree};

const FILES: &[(&str, &str)] = &[
    ("home/.agents/AGENTS.md", "Global agents.\n"),
    ("home/.cline/rules/style.md", "Home style wins the title.\n"),
    ("home/Documents/Cline/Rules/off.md", "---\nenabled: false\n---\nNever sent.\n"),
    ("repo/AGENTS.md", "Root agents, not the workspace's.\n"),
    ("repo/pkg/AGENTS.md", "Workspace agents.\n@docs/x.md\n"),
    ("repo/pkg/.clinerules/Style.md", "Replaced by the home file.\n"),
    ("repo/pkg/.clinerules/named.md", "---\nname: Zed Title\npaths: [\"src/**\"]\n---\n\n  Named rule.  \n"),
    ("repo/pkg/.clinerules/data.json", "{}\n"),
    ("repo/pkg/.clinerules/deep/inner.md", "Nested, never read.\n"),
    ("repo/pkg/.cline/rules/alpha.txt", "Alpha rule.\n"),
    ("repo/pkg/.cline/rules/broken.md", "---\nname: [\n---\nBroken.\n"),
    ("repo/pkg/CLAUDE.md", "Claude only.\n"),
    ("repo/pkg/src/a.ts", "export {}\n"),
];

#[test]
fn build_prints_the_rules_section_sorted_by_title() {
    let (_dir, root) = tree(FILES);
    let (report, text) = build_report(&root, "repo/pkg", "cline");
    assert_eq!(text.code, 0, "{}", text.stderr);
    assert_eq!(
        text.stdout,
        "# Rules\n## alpha\nAlpha rule.\n\n## Global AGENTS.md\nGlobal agents.\n\n\
         ## style\nHome style wins the title.\n\n## Workspace AGENTS.md\nWorkspace agents.\n@docs/x.md\n\n\
         ## Zed Title\nNamed rule."
    );
    assert_eq!(text.stderr, "", "Cline's section has no wording of its own to warn about");
    assert_eq!(report["wording"]["from"], "none", "{report:#}");
    assert_eq!(report["root"], "[TMP]/repo/pkg", "the workspace is the working directory: {report:#}");
    let fates: Vec<(String, String)> = report["left_out"]
        .as_array()
        .expect("left_out")
        .iter()
        .map(|l| {
            (
                l["source"].as_str().unwrap_or_default().to_owned(),
                l["fate"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        fates,
        [
            ("[TMP]/repo/pkg/.clinerules/Style.md".to_owned(), "shadowed".to_owned()),
            ("[TMP]/repo/pkg/.cline/rules/broken.md".to_owned(), "bad_front_matter".to_owned()),
            ("[TMP]/home/Documents/Cline/Rules/off.md".to_owned(), "disabled".to_owned()),
        ],
        "{report:#}"
    );
    insta::assert_snapshot!("cline_json", serde_json::to_string_pretty(&report).expect("JSON"));

    let (_dir, empty) = tree(&[("repo/README.md", "no rules\n")]);
    let nothing = run(&empty, "repo", &["build", "--agent", "cline"]);
    assert_eq!((nothing.code, nothing.stdout.as_str()), (0, ""), "{}", nothing.stderr);
}

#[test]
fn nearby_says_cline_attaches_nothing() {
    let (_dir, root) = tree(FILES);
    let read = run(&root, "repo/pkg", &["nearby", "--agent", "cline", "src/a.ts"]);
    // Attaching nothing is an answer, not an error: nothing printed, exit 0, and the JSON
    // says so.
    assert_eq!(read.code, 0, "{}", read.stderr);
    assert_eq!(read.stdout, "");
    let json = run(&root, "repo/pkg", &["nearby", "--agent", "cline", "src/a.ts", "--format", "json"]);
    assert_eq!(json.code, 0, "{}", json.stderr);
    let json: serde_json::Value = serde_json::from_str(&json.stdout).expect("JSON");
    assert_eq!(json["agent"], "cline");
    assert_eq!(json["text"], "");
    assert_eq!(json["blocks"], serde_json::json!([]));
    assert!(json["note"].as_str().is_some_and(|n| n.contains("Cline attaches nothing")), "{json}");
}

#[test]
fn explain_gives_every_file_cline_considered_its_reason() {
    let (_dir, root) = tree(FILES);
    let all = run(&root, "repo/pkg", &["explain", "--agent", "cline"]);
    assert_eq!(all.code, 0, "{}", all.stderr);
    insta::assert_snapshot!("cline_explain", all.stdout);

    let mut out = String::new();
    for file in
        [".clinerules/Style.md", "CLAUDE.md", "../AGENTS.md", ".clinerules/deep/inner.md", "AGENTS.md"]
    {
        let one = run(&root, "repo/pkg", &["explain", "--agent", "cline", file]);
        assert_eq!(one.code, 0, "{file}: {}", one.stderr);
        out.push_str(&one.stdout);
    }
    insta::assert_snapshot!("cline_explain_files", out);

    let side = run(&root, "repo/pkg", &["explain", "--agent", "all", "AGENTS.md", "--format", "json"]);
    let report: serde_json::Value = serde_json::from_str(&side.stdout).expect("JSON");
    let cline = report["agents"].as_array().expect("agents").iter().find(|a| a["agent"] == "cline");
    assert_eq!(cline.map(|c| &c["status"]), Some(&"sent".into()), "{report:#}");
    let root_file =
        run(&root, "repo/pkg", &["explain", "--agent", "all", "../AGENTS.md", "--format", "json"]);
    let report: serde_json::Value = serde_json::from_str(&root_file.stdout).expect("JSON");
    let cline = report["agents"].as_array().expect("agents").iter().find(|a| a["agent"] == "cline");
    assert_eq!(cline.map(|c| &c["status"]), Some(&"not_sent".into()), "{report:#}");
}

#[test]
fn lint_all_counts_cline_among_the_agents() {
    let (_dir, root) =
        tree(&[("repo/AGENTS.md", "Shared rules.\n"), ("repo/.clinerules", "Only Cline reads this.\n")]);
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
        single.iter().any(|m| m.starts_with("[TMP]/repo/.clinerules is sent only by cline; ")),
        "{report:#}"
    );
    let alone = run(&root, "repo", &["lint", "--agent", "cline"]);
    assert_eq!(alone.code, 0, "{}", alone.stderr);
    assert!(!alone.stdout.contains("CG0"), "no check of Cline's own yet: {}", alone.stdout);
}

/// `check` pins what Cline sees, its home rules from the scenario's home.
#[test]
fn check_pins_the_cline_rules() {
    let (_dir, root) = tree(&[
        ("repo/ci/home/.cline/rules/home.md", "Home rule.\n"),
        ("repo/.clinerules", "Root rules.\n"),
        ("repo/ctxgraph.toml", "[scenario.cline]\nagent = \"cline\"\nhome = \"ci/home\"\n"),
    ]);
    let snap = snapshot_then_drift(&root, "cline", ("repo/.clinerules", "Root rules, edited.\n"));
    assert!(snap.contains("\nprofile: cline-3.0.65\n"), "{snap}");
    assert!(snap.contains("# Rules\n## .clinerules\nRoot rules.\n\n## home\nHome rule."), "{snap}");
}
