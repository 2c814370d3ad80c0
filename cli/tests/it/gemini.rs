//! `build`, `nearby` and `check` with `--agent gemini` end to end: the JSON report, what a
//! read attaches, a broken settings file (exit 2), and a scenario pinning Gemini's view. What
//! Gemini CLI sends is pinned by the recorded cases in `tests/agents/gemini/`; this module
//! checks the binary's own surface.

use crate::agents::{build_report, run, snapshot_then_drift, tree};

const FILES: &[(&str, &str)] = &[
    ("home/.gemini/GEMINI.md", "Global rules.\n"),
    ("repo/GEMINI.md", "Root rules.\n@docs/style.md\n@missing.md\n`@docs/style.md` in code.\n"),
    ("repo/docs/style.md", "Style.\n"),
    ("repo/pkg/GEMINI.md", " \n"),
    ("repo/pkg/deep/GEMINI.md", "Deep rules, attached on reads.\n"),
    ("repo/pkg/deep/main.rs", "fn main() {}\n"),
];

#[test]
fn json_lists_blocks_in_send_order_with_their_imports() {
    let (_dir, root) = tree(FILES);
    let (report, text) = build_report(&root, "repo/pkg", "gemini");
    insta::assert_snapshot!("gemini_json", serde_json::to_string_pretty(&report).expect("JSON"));
    assert!(
        text.stdout.starts_with("<loaded_context>\n--- Context from: [TMP]/home/.gemini/GEMINI.md ---\n")
    );
    assert!(!text.stdout.contains("Deep rules"), "{}", text.stdout);
}

#[test]
fn nearby_prints_what_a_read_attaches() {
    let (_dir, root) = tree(FILES);
    let read = run(&root, "repo/pkg", &["nearby", "--agent", "gemini", "deep/main.rs"]);
    assert_eq!(read.code, 0, "{}", read.stderr);
    assert_eq!(
        read.stdout,
        "\n\n--- Newly Discovered Project Context ---\n--- Context from: [TMP]/repo/pkg/deep/GEMINI.md ---\n\
         Deep rules, attached on reads.\n--- End of Context from: [TMP]/repo/pkg/deep/GEMINI.md ---\n\
         --- End Project Context ---"
    );
    let json = run(&root, "repo/pkg", &["nearby", "--agent", "gemini", "deep/main.rs", "--format", "json"]);
    let report: serde_json::Value = serde_json::from_str(&json.stdout).expect("JSON");
    assert_eq!(report["blocks"][0]["placement"], "tool_result");
    assert_eq!(report["blocks"][0]["rule"], "GM8");
    let already: Vec<&serde_json::Value> = report["left_out"]
        .as_array()
        .expect("left_out")
        .iter()
        .filter(|left| left["fate"] == "already_loaded")
        .map(|left| &left["source"])
        .collect();
    assert_eq!(
        already,
        ["[TMP]/repo/GEMINI.md", "[TMP]/repo/pkg/GEMINI.md"],
        "the empty pkg/GEMINI.md counts as loaded (GM7): {report:#}"
    );

    let nothing = run(&root, "repo/pkg", &["nearby", "--agent", "gemini", "../GEMINI.md"]);
    assert_eq!((nothing.code, nothing.stdout.as_str()), (0, ""), "{}", nothing.stderr);
    let missing = run(&root, "repo/pkg", &["nearby", "--agent", "gemini", "nope.rs"]);
    assert_eq!(missing.code, 2, "{}", missing.stderr);
}

#[test]
fn a_broken_settings_file_exits_2_naming_the_position() {
    let (_dir, root) = tree(&[("repo/.gemini/settings.json", "{\n  \"context\": {\"fileName\": }\n}\n")]);
    let broken = run(&root, "repo", &["build", "--agent", "gemini"]);
    assert_eq!(broken.code, 2, "{}", broken.stderr);
    assert!(broken.stderr.contains("[TMP]/repo/.gemini/settings.json:2:"), "{}", broken.stderr);

    let (_dir, root) = tree(&[("home/.gemini/settings.json", "{\"context\": {\"fileName\": 3}}")]);
    let typed = run(&root, "repo", &["build", "--agent", "gemini"]);
    assert_eq!(typed.code, 2, "{}", typed.stderr);
    assert!(typed.stderr.contains("context.fileName must be"), "{}", typed.stderr);

    let usage = run(&root, "repo", &["build", "--agent", "gemini", "-c", "x=1"]);
    assert_eq!(usage.code, 2, "{}", usage.stderr);
}

/// `check` pins what Gemini sees, reads included.
#[test]
fn check_pins_the_gemini_context() {
    let (_dir, root) = tree(&[
        ("repo/ci/home/.gemini/GEMINI.md", "Global rules.\n"),
        ("repo/GEMINI.md", "Root rules.\n"),
        ("repo/pkg/GEMINI.md", "Pkg rules.\n"),
        ("repo/pkg/x.rs", "x\n"),
        (
            "repo/ctxgraph.toml",
            "[scenario.gemini]\nagent = \"gemini\"\nhome = \"ci/home\"\nreads = [\"pkg/x.rs\"]\n",
        ),
    ]);
    let snap = snapshot_then_drift(&root, "gemini", ("repo/pkg/GEMINI.md", "Pkg rules, edited.\n"));
    assert!(snap.contains("\nprofile: gemini-cli-0.61.0\n"), "{snap}");
    assert!(snap.contains("--- Context from: <home>/.gemini/GEMINI.md ---\nGlobal rules.\n"), "{snap}");
    assert!(
        snap.contains("--- read <repo>/pkg/x.rs ---\n\n\n--- Newly Discovered Project Context ---\n"),
        "{snap}"
    );
}
