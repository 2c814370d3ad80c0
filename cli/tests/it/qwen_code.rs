//! `build`, `nearby`, `explain`, `lint` and `check` with `--agent qwen-code` end to end, all
//! through the generic profile paths: the JSON report with every file's fate and the
//! settings with their files, Qwen's wording unavailable (a placeholder, a warning,
//! `wording.from: "unavailable"`) or refused from an installation with other words, what a
//! read attaches, Qwen in `explain --agent all` and in CG012, and a scenario pinning its
//! view. What Qwen Code sends is pinned by the recorded cases in `tests/agents/qwen-code/`;
//! this module checks the binary's own surface.

use crate::agents::{build_report, check_blocks, run, snapshot_then_drift, tree};
use crate::support::{Run, ctxgraph};

const FILES: &[(&str, &str)] = &[
    ("home/.qwen/QWEN.md", "Global rules.\n"),
    ("home/.qwen/settings.json", "// the user's\n{\"general\": {\"outputLanguage\": \"fr\"}}\n"),
    ("home/.qwen/rules/g.md", "Global rule.\n"),
    ("repo/QWEN.md", "Root rules.\n@docs/style.md\n@missing.md\n`@docs/style.md` in code.\n"),
    ("repo/docs/style.md", "Style.\n"),
    ("repo/AGENTS.md", "Agents root.\n"),
    ("repo/GEMINI.md", "Gemini only.\n"),
    ("repo/.qwen/QWEN.local.md", "Local rules.\n"),
    ("repo/.qwen/rules/all.md", "<!-- a note -->\nAlways.\n"),
    ("repo/.qwen/rules/ts.md", "---\npaths: \"src/**/*.ts\"\n---\nTypeScript rule.\n"),
    ("repo/.qwen/rules/blank.md", "---\ndescription: nothing\n---\n<!-- only a comment -->\n"),
    ("repo/pkg/QWEN.md", " \n"),
    ("repo/pkg/deep/QWEN.md", "Deep, never sent.\n"),
    ("repo/pkg/deep/x.rs", "fn x() {}\n"),
    ("repo/src/a.ts", "export {}\n"),
];

#[test]
fn json_lists_blocks_settings_and_what_is_left_out() {
    let (_dir, root) = tree(FILES);
    let (report, text) = build_report(&root, "repo/pkg", "qwen-code");
    insta::assert_snapshot!("qwen_code_json", serde_json::to_string_pretty(&report).expect("JSON"));

    // The walk from the folder above the git root, QWEN.md before AGENTS.md, the
    // output-language file, the local file, then the rules (QW1, QW3, QW4, QW9).
    let order = [
        "--- Context from: ../../home/.qwen/QWEN.md ---\nGlobal rules.\n",
        "--- Context from: ../QWEN.md ---\nRoot rules.\n<!-- Imported from: docs/style.md -->\nStyle.\n",
        "--- Context from: ../AGENTS.md ---\nAgents root.\n",
        "--- Context from: ../../home/.qwen/output-language.md ---\n",
        "--- Context from: ../.qwen/QWEN.local.md ---\nLocal rules.\n",
        "--- Rule from: ../home/.qwen/rules/g.md ---\nGlobal rule.\n",
        "--- Rule from: .qwen/rules/all.md ---\nAlways.\n",
    ];
    let at: Vec<usize> = order
        .iter()
        .map(|part| text.stdout.find(part).unwrap_or_else(|| panic!("{part:?} in\n{}", text.stdout)))
        .collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "{}", text.stdout);
    for absent in ["Gemini only.", "Deep, never sent.", "TypeScript rule."] {
        assert!(!text.stdout.contains(absent), "{absent}: {}", text.stdout);
    }
    // A missing import stays as written (QW7).
    assert!(text.stdout.contains("\n@missing.md\n"), "{}", text.stdout);

    // No installation on PATH: Qwen's French output-language text is a placeholder.
    assert_eq!(report["wording"]["from"], "unavailable", "{report:#}");
    assert!(
        text.stderr.starts_with("warning: Qwen Code's own wording is unavailable (no Qwen Code installation"),
        "{}",
        text.stderr
    );
    assert!(text.stdout.contains("<output-language file for French: "), "{}", text.stdout);
    let settings = report["settings"].as_array().expect("settings");
    let language = settings.iter().find(|s| s["name"] == "general.outputLanguage").expect("the language");
    assert_eq!(
        (&language["value"], &language["from"]),
        (&"fr".into(), &"[TMP]/home/.qwen/settings.json".into())
    );
}

#[test]
fn an_installation_with_other_words_is_not_used() {
    let (_dir, root) = tree(FILES);
    // A package of the right name whose output-language templates are other words.
    std::fs::create_dir_all(root.join("qwen/chunks")).expect("package dir");
    std::fs::write(
        root.join("qwen/package.json"),
        r#"{"name": "@qwen-code/qwen-code", "version": "0.24.4"}"#,
    )
    .expect("write");
    std::fs::write(
        root.join("qwen/cli.js"),
        "function generateOutputLanguageFileContent(language) { if (x) return `Other ${language}.`; return `Other.`; }\n",
    )
    .expect("write");
    let package = root.join("qwen");
    let package = package.to_str().expect("utf-8");
    let flag =
        run(&root, "repo", &["build", "--agent", "qwen-code", "--agent-path", package, "--format", "json"]);
    assert_eq!(flag.code, 0, "{}", flag.stderr);
    let report: serde_json::Value = serde_json::from_str(&flag.stdout).expect("JSON");
    let reason = report["wording"]["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("no output-language templates matching Qwen Code 0.24.4"), "{report:#}");
    assert!(!flag.stdout.contains("Other"), "{}", flag.stdout);

    // The same through the variable, as `qwen` on PATH would be found.
    let output = ctxgraph(&root)
        .args(["build", "--agent", "qwen-code"])
        .env("CTXGRAPH_QWEN_CODE", package)
        .current_dir(root.join("repo"))
        .output()
        .expect("run");
    let by_var = Run::scrubbed(&root, output);
    assert!(by_var.stderr.contains("[TMP]/qwen: no output-language templates"), "{}", by_var.stderr);
}

#[test]
fn nearby_prints_the_paths_rules_a_read_attaches() {
    let (_dir, root) = tree(FILES);
    let read = run(&root, "repo/pkg", &["nearby", "--agent", "qwen-code", "../src/a.ts"]);
    assert_eq!(read.code, 0, "{}", read.stderr);
    assert_eq!(
        read.stdout,
        "\n\n<system-reminder>\n--- Rule from: .qwen/rules/ts.md ---\nTypeScript rule.\n\
         --- End of Rule from: .qwen/rules/ts.md ---\n</system-reminder>"
    );
    let json = run(&root, "repo/pkg", &["nearby", "--agent", "qwen-code", "../src/a.ts", "--format", "json"]);
    let mut report: serde_json::Value = serde_json::from_str(&json.stdout).expect("JSON");
    check_blocks(&mut report, &read.raw_stdout);
    assert_eq!(report["blocks"][0]["placement"], "tool_result", "{report:#}");
    assert_eq!(report["blocks"][0]["rule"], "QW10", "{report:#}");

    // A file below the working directory: its QWEN.md is never attached (QW11), and the
    // paths: rule does not match it.
    let deep = run(&root, "repo/pkg", &["nearby", "--agent", "qwen-code", "deep/x.rs", "--format", "json"]);
    assert_eq!(deep.code, 0, "{}", deep.stderr);
    let report: serde_json::Value = serde_json::from_str(&deep.stdout).expect("JSON");
    insta::assert_snapshot!("qwen_code_nearby_json", serde_json::to_string_pretty(&report).expect("JSON"));
    let text = run(&root, "repo/pkg", &["nearby", "--agent", "qwen-code", "deep/x.rs"]);
    assert_eq!((text.code, text.stdout.as_str()), (0, ""), "{}", text.stderr);

    let outside =
        run(&root, "repo", &["nearby", "--agent", "qwen-code", "../home/.qwen/QWEN.md", "--format", "json"]);
    let report: serde_json::Value = serde_json::from_str(&outside.stdout).expect("JSON");
    assert!(report["note"].as_str().is_some_and(|n| n.contains("Qwen attaches nothing")), "{report:#}");
    let missing = run(&root, "repo/pkg", &["nearby", "--agent", "qwen-code", "nope.ts"]);
    assert_eq!(missing.code, 2, "{}", missing.stderr);
}

#[test]
fn explain_gives_every_file_qwen_considered_its_reason() {
    let (_dir, root) = tree(FILES);
    let all = run(&root, "repo/pkg", &["explain", "--agent", "qwen-code"]);
    assert_eq!(all.code, 0, "{}", all.stderr);
    insta::assert_snapshot!("qwen_code_explain", all.stdout);

    let mut out = String::new();
    for file in [
        "../.qwen/rules/ts.md",
        "deep/QWEN.md",
        "../GEMINI.md",
        "../docs/style.md",
        "../../elsewhere/QWEN.md",
    ] {
        let one = run(&root, "repo/pkg", &["explain", "--agent", "qwen-code", file]);
        assert_eq!(one.code, 0, "{file}: {}", one.stderr);
        out.push_str(&one.stdout);
    }
    insta::assert_snapshot!("qwen_code_explain_files", out);

    // Side by side, Qwen Code is one of the agents.
    let side = run(&root, "repo/pkg", &["explain", "--agent", "all", "../QWEN.md", "--format", "json"]);
    let report: serde_json::Value = serde_json::from_str(&side.stdout).expect("JSON");
    let agents: Vec<&str> =
        report["agents"].as_array().expect("agents").iter().filter_map(|a| a["agent"].as_str()).collect();
    assert_eq!(agents, ctxgraph_db::agent::Agent::ALL.map(ctxgraph_db::agent::Agent::name), "{report:#}");
    assert_eq!(report["agents"][5]["status"], "sent", "{report:#}");
    let text = run(&root, "repo/pkg", &["explain", "--agent", "all", "../.qwen/rules/ts.md"]);
    assert!(text.stdout.contains("  qwen-code    on read (the read_file result)\n"), "{}", text.stdout);
}

#[test]
fn lint_all_counts_qwen_among_the_agents() {
    let (_dir, root) = tree(&[
        ("repo/AGENTS.md", "Shared rules.\n"),
        ("repo/QWEN.md", "Only Qwen reads this.\n"),
        ("repo/CLAUDE.md", "Shared rules.\n"),
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
    assert_eq!(single.len(), 1, "{report:#}");
    assert!(single[0].starts_with("[TMP]/repo/QWEN.md is sent only by qwen-code; "), "{single:?}");
    let alone = run(&root, "repo", &["lint", "--agent", "qwen-code"]);
    assert_eq!(alone.code, 0, "{}", alone.stderr);
    assert!(!alone.stdout.contains("CG0"), "no check of Qwen's own yet: {}", alone.stdout);
}

#[test]
fn a_broken_settings_file_exits_2_naming_the_position() {
    let (_dir, root) = tree(&[("home/.qwen/settings.json", "{\n  \"context\": {\"fileName\": }\n}\n")]);
    let broken = run(&root, "repo", &["build", "--agent", "qwen-code"]);
    assert_eq!(broken.code, 2, "{}", broken.stderr);
    assert!(broken.stderr.contains("[TMP]/home/.qwen/settings.json:2:"), "{}", broken.stderr);
    let usage = run(&root, "repo", &["build", "--agent", "qwen-code", "-c", "x=1"]);
    assert_eq!(usage.code, 2, "{}", usage.stderr);
}

/// `check` pins what Qwen sees, its own text as a fingerprint, reads included.
#[test]
fn check_pins_the_qwen_code_context() {
    let (_dir, root) = tree(&[
        ("repo/ci/home/.qwen/QWEN.md", "Global rules.\n"),
        ("repo/QWEN.md", "Root rules.\n"),
        ("repo/.qwen/rules/ts.md", "---\npaths: [\"**/*.ts\"]\n---\nTypeScript rule.\n"),
        ("repo/src/x.ts", "x\n"),
        (
            "repo/ctxgraph.toml",
            "[scenario.qwen]\nagent = \"qwen-code\"\nhome = \"ci/home\"\nreads = [\"src/x.ts\"]\n",
        ),
    ]);
    let snap = snapshot_then_drift(&root, "qwen", ("repo/QWEN.md", "Root rules, edited.\n"));
    assert!(snap.contains("\nprofile: qwen-code-0.24.4\n"), "{snap}");
    assert!(snap.contains("--- Context from: ci/home/.qwen/QWEN.md ---\nGlobal rules.\n"), "{snap}");
    // Qwen's own output-language text (auto) is its fingerprint, never its words.
    assert!(
        snap.contains("<prose:blake3=793b5cce51f21f42a2e97b71adf8e676df18b473d9033cf43052b964b7859b41>"),
        "{snap}"
    );
    assert!(snap.contains("--- Rule from: .qwen/rules/ts.md ---\nTypeScript rule.\n"), "{snap}");
}
