//! `build`, `nearby`, `explain`, `lint` and `check` with `--agent kilo` end to end, through
//! the generic profile paths: the JSON report with every file's fate, what a read attaches,
//! Kilo in `explain --agent all` and in CG012, and a scenario pinning its view. What Kilo
//! Code sends is pinned by the recorded cases in `tests/agents/kilo/`; this module checks
//! the binary's own surface.

use crate::agents::{build_report, check_blocks, run, snapshot_then_drift, tree};

/// The CLI tests set `XDG_CONFIG_HOME` to `[TMP]/config`: Kilo's global folder is
/// `config/kilo` there (KI1).
const FILES: &[(&str, &str)] = &[
    ("config/kilo/AGENTS.md", "Global rules.\n"),
    ("home/.claude/CLAUDE.md", "Shadowed by the global AGENTS.md.\n"),
    ("home/.kilo/rules/g.md", "Home rule.\n"),
    ("repo/AGENTS.md", "Root rules.\n"),
    ("repo/CLAUDE.md", "Not sent: AGENTS.md wins the name.\n"),
    ("repo/.kilo/rules/r.md", "Root rule: not sent from pkg/.\n"),
    ("repo/pkg/AGENTS.md", "Pkg rules with [{file:../docs/inc.md}].\n"),
    ("repo/docs/inc.md", "  included  \n"),
    ("repo/pkg/.kilocode/rules/a.md", "Pkg rule a.\n"),
    ("repo/pkg/.kilocode/rules/b.md", "Pkg rule b names {env:HOME}.\n"),
    ("repo/pkg/.kilocode/rules/c.txt", "not a rule\n"),
    ("repo/pkg/.kilocoderules", "Legacy rules.\n"),
    ("repo/pkg/deep/CLAUDE.md", "Deep rules, on read.\n"),
    ("repo/pkg/deep/x.rs", "fn x() {}\n"),
];

#[test]
fn json_lists_blocks_and_what_is_left_out() {
    let (_dir, root) = tree(FILES);
    let (report, text) = build_report(&root, "repo/pkg", "kilo");
    insta::assert_snapshot!("kilo_json", serde_json::to_string_pretty(&report).expect("JSON"));
    assert_eq!(
        text.stdout,
        "Instructions from: [TMP]/config/kilo/AGENTS.md\nGlobal rules.\n\n\
         Instructions from: [TMP]/repo/pkg/AGENTS.md\nPkg rules with [included].\n\n\
         Instructions from: [TMP]/repo/AGENTS.md\nRoot rules.\n\n\
         Instructions from: [TMP]/home/.kilo/rules/g.md\nHome rule.\n\n\
         Instructions from: [TMP]/repo/pkg/.kilocode/rules/a.md\nPkg rule a.\n\n\
         Instructions from: [TMP]/repo/pkg/.kilocoderules\nLegacy rules.\n"
    );
    assert_eq!(report["wording"]["from"], "none", "{report:#}");
    let fates: Vec<(&str, &str)> = report["left_out"]
        .as_array()
        .expect("left_out")
        .iter()
        .map(|l| (l["fate"].as_str().unwrap_or_default(), l["rule"].as_str().unwrap_or_default()))
        .collect();
    assert_eq!(
        fates,
        [("refused", "KI9"), ("shadowed", "KI1"), ("shadowed", "KI2"), ("not_markdown", "KI4")],
        "{report:#}"
    );
    // KI12: a folder of one rule has no order to depend on (a_rule_folder_as_listed_…).
    assert!(report["blocks"].as_array().expect("blocks").iter().all(|b| b["listed"].is_null()), "{report:#}");
    assert_eq!(report["blocks"][1]["inlines"][0], "[TMP]/repo/docs/inc.md", "{report:#}");
}

/// KI12: a rule folder's files come in the order this disk lists them (whatever that is
/// here: tmpfs lists newest first, ext4 by a seeded hash), and every surface says the order
/// is the disk's: the JSON marks the blocks `listed`, `lint` warns CG022, `explain` names the
/// folder.
#[test]
fn a_rule_folder_as_listed_is_named_on_every_surface() {
    let (_dir, root) = tree(&[
        ("repo/.kilo/rules/alpha.md", "Rule alpha.\n"),
        ("repo/.kilo/rules/delta.md", "Rule delta.\n"),
        ("repo/.kilo/rules/bravo.md", "Rule bravo.\n"),
        ("repo/.kilo/rules/charlie.md", "Rule charlie.\n"),
    ]);
    let listed: Vec<String> = std::fs::read_dir(root.join("repo/.kilo/rules"))
        .expect("the folder")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    let (report, text) = build_report(&root, "repo", "kilo");
    let sent: Vec<&str> = text
        .stdout
        .lines()
        .filter_map(|l| l.strip_prefix("Instructions from: [TMP]/repo/.kilo/rules/"))
        .collect();
    assert_eq!(sent, listed, "{}", text.stdout);
    for block in report["blocks"].as_array().expect("blocks") {
        assert_eq!(block["listed"]["order"], "as_listed", "{block:#}");
        assert_eq!(block["listed"]["dir"], "[TMP]/repo/.kilo/rules", "{block:#}");
    }
    let lint = run(&root, "repo", &["lint", "--agent", "kilo", "--format", "json"]);
    let report: serde_json::Value = serde_json::from_str(&lint.stdout).expect("JSON");
    let findings: Vec<&serde_json::Value> =
        report["findings"].as_array().expect("findings").iter().filter(|f| f["code"] == "CG022").collect();
    assert_eq!(findings.len(), 1, "{report:#}");
    assert!(
        findings[0]["message"].as_str().is_some_and(|m| m.contains(
            "sends 4 rule files of [TMP]/repo/.kilo/rules in the order the file system lists them"
        )),
        "{report:#}"
    );
    let explain = run(&root, "repo", &["explain", "--agent", "kilo", ".kilo/rules/alpha.md"]);
    assert!(
        explain.stdout.contains("is the order the file system lists them in, which kilo keeps"),
        "{}",
        explain.stdout
    );
}

#[test]
fn nearby_attaches_the_folders_first_name() {
    let (_dir, root) = tree(FILES);
    let read = run(&root, "repo/pkg", &["nearby", "--agent", "kilo", "deep/x.rs"]);
    assert_eq!(read.code, 0, "{}", read.stderr);
    assert_eq!(
        read.stdout,
        "\n\n<system-reminder>\nInstructions from: [TMP]/repo/pkg/deep/CLAUDE.md\nDeep rules, on read.\n\n</system-reminder>"
    );
    let json = run(&root, "repo/pkg", &["nearby", "--agent", "kilo", "deep/x.rs", "--format", "json"]);
    let mut report: serde_json::Value = serde_json::from_str(&json.stdout).expect("JSON");
    check_blocks(&mut report, &read.raw_stdout);
    assert_eq!(report["blocks"][0]["placement"], "tool_result", "{report:#}");
    assert_eq!(report["blocks"][0]["rule"], "KI10", "{report:#}");

    // Reading the rule file itself attaches nothing, and says why.
    let own = run(&root, "repo/pkg", &["nearby", "--agent", "kilo", "deep/CLAUDE.md", "--format", "json"]);
    let report: serde_json::Value = serde_json::from_str(&own.stdout).expect("JSON");
    assert_eq!(report["left_out"][0]["fate"], "is_target", "{report:#}");
    // Outside the working directory: nothing, with a note.
    let outside =
        run(&root, "repo/pkg", &["nearby", "--agent", "kilo", "../docs/inc.md", "--format", "json"]);
    let report: serde_json::Value = serde_json::from_str(&outside.stdout).expect("JSON");
    assert!(report["note"].as_str().is_some_and(|n| n.contains("attaches nothing")), "{report:#}");
}

#[test]
fn explain_gives_every_file_kilo_considered_its_reason() {
    let (_dir, root) = tree(FILES);
    let all = run(&root, "repo/pkg", &["explain", "--agent", "kilo"]);
    assert_eq!(all.code, 0, "{}", all.stderr);
    insta::assert_snapshot!("kilo_explain", all.stdout);

    let mut out = String::new();
    for file in
        ["../CLAUDE.md", "deep/CLAUDE.md", "../docs/inc.md", ".kilocode/rules/b.md", "../.kilo/rules/r.md"]
    {
        let one = run(&root, "repo/pkg", &["explain", "--agent", "kilo", file]);
        assert_eq!(one.code, 0, "{file}: {}", one.stderr);
        out.push_str(&one.stdout);
    }
    insta::assert_snapshot!("kilo_explain_files", out);

    let side = run(&root, "repo/pkg", &["explain", "--agent", "all", "../AGENTS.md", "--format", "json"]);
    let report: serde_json::Value = serde_json::from_str(&side.stdout).expect("JSON");
    let kilo = report["agents"].as_array().expect("agents").iter().find(|a| a["agent"] == "kilo");
    assert_eq!(kilo.map(|k| k["status"].clone()), Some("sent".into()), "{report:#}");
    let text = run(&root, "repo/pkg", &["explain", "--agent", "all", "deep/CLAUDE.md"]);
    assert!(text.stdout.contains("  kilo         on read (the read tool's result)\n"), "{}", text.stdout);
}

/// KI13: a config file Kilo skips whole is not silent in `explain`: the file itself, and a
/// rule file only it names, each say why, under KI13; `kilo.json`'s entry is sent.
#[test]
fn explain_names_a_config_file_kilo_skips() {
    let (_dir, root) = tree(&[
        ("repo/AGENTS.md", "Root rules.\n"),
        ("repo/kilo.json", "{\"instructions\": [\"docs/kept.md\"], \"unknownKey\": 1}\n"),
        (
            "repo/opencode.json",
            "{\"instructions\": [\"docs/lost.md\"], \"mcp\": {\"x\": {\"command\": \"npx\"}}}\n",
        ),
        ("repo/docs/kept.md", "Kept.\n"),
        ("repo/docs/lost.md", "Lost.\n"),
    ]);
    let built = run(&root, "repo", &["build", "--agent", "kilo"]);
    assert!(built.stdout.contains("Kept.") && !built.stdout.contains("Lost."), "{}", built.stdout);
    for (file, words) in [
        ("opencode.json", ["not sent", "KI13", "mcp.x"]),
        ("docs/lost.md", ["not sent", "KI13", "opencode.json"]),
        ("docs/kept.md", ["sent", "KI13", "kilo.json"]),
    ] {
        let one = run(&root, "repo", &["explain", "--agent", "kilo", file]);
        assert_eq!(one.code, 0, "{file}: {}", one.stderr);
        for word in words {
            assert!(one.stdout.contains(word), "{file}: {word} not in {}", one.stdout);
        }
    }
}

#[test]
fn lint_all_counts_kilo_among_the_agents() {
    let (_dir, root) =
        tree(&[("repo/AGENTS.md", "Shared rules.\n"), ("repo/.kilocoderules", "Only Kilo.\n")]);
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
    assert_eq!(single.len(), 1, "{report:#}");
    assert!(single[0].starts_with("[TMP]/repo/.kilocoderules is sent only by kilo; "), "{single:?}");
    let alone = run(&root, "repo", &["lint", "--agent", "kilo"]);
    assert_eq!(alone.code, 0, "{}", alone.stderr);
    assert!(!alone.stdout.contains("CG0"), "no check of Kilo's own yet: {}", alone.stdout);
}

/// `check` pins what Kilo sees, reads included.
#[test]
fn check_pins_the_kilo_context() {
    let (_dir, root) = tree(&[
        ("repo/ci/home/.kilo/rules/g.md", "Home rule.\n"),
        ("repo/AGENTS.md", "Root rules.\n"),
        ("repo/src/AGENTS.md", "Src rules.\n"),
        ("repo/src/x.ts", "x\n"),
        (
            "repo/ctxgraph.toml",
            "[scenario.kilo]\nagent = \"kilo\"\nhome = \"ci/home\"\nreads = [\"src/x.ts\"]\n",
        ),
    ]);
    let snap = snapshot_then_drift(&root, "kilo", ("repo/AGENTS.md", "Root rules, edited.\n"));
    assert!(snap.contains("\nprofile: kilo-7.7.7\n"), "{snap}");
    assert!(snap.contains("Instructions from: <repo>/AGENTS.md\nRoot rules.\n"), "{snap}");
    assert!(snap.contains("Instructions from: <home>/.kilo/rules/g.md\nHome rule.\n"), "{snap}");
    assert!(snap.contains("Instructions from: <repo>/src/AGENTS.md\nSrc rules.\n"), "{snap}");
}
