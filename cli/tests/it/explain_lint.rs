//! `explain` and `lint`, data-driven: each `fixtures/<case>/` holds a `case.toml` and a
//! `tree/` laid out in a temp dir (`repo/`, `home/`, `config/opencode/`, …); the binary
//! runs once per format and the outputs, exit codes included, are one insta snapshot.
//! Every SARIF log is also validated against the official SARIF 2.1.0 schema.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use ctxgraph_test_support::sandbox::{fresh_dir, with_sandbox};
use ctxgraph_test_support::tree::{DiskWriter, copy_tree_without_keep};
use serde::Deserialize;

use crate::support::ctxgraph;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    /// What the case shows; printed at the top of the snapshot.
    description: String,
    /// The subcommand and its arguments; `{ROOT}` is the temp dir. `--cwd` and
    /// `--format` are added.
    args: Vec<String>,
    /// `--cwd`, relative to the temp dir.
    cwd: String,
    /// The formats to run.
    formats: Vec<String>,
    /// Directories that get a `.git` as `git init` lays it out (fixtures cannot contain `.git`).
    #[serde(default)]
    git: Vec<String>,
    /// `[target, link]` pairs, link relative to the temp dir.
    #[serde(default)]
    symlinks: Vec<(String, String)>,
    /// Variables for the run; `{ROOT}` in a value is the temp dir.
    #[serde(default)]
    env: BTreeMap<String, String>,
}

/// Where cases run: one fixed path, because token counts depend on the paths in the rule
/// blocks (see `ctxgraph_test_support::sandbox`).
const SANDBOX: &str = "/tmp/ctxgraph-explain-lint";

/// The SARIF 2.1.0 schema (OASIS errata 01), vendored from oasis-tcs/sarif-spec.
pub fn sarif_validator() -> jsonschema::Validator {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sarif-schema-2.1.0.json"),
    )
    .expect("schema file");
    let schema: serde_json::Value = serde_json::from_str(&text).expect("schema is JSON");
    jsonschema::draft4::new(&schema).expect("schema compiles")
}

fn run_case(dir: &Path) -> String {
    let case: Case = toml::from_str(&std::fs::read_to_string(dir.join("case.toml")).expect("case.toml"))
        .unwrap_or_else(|err| panic!("{}: {err}", dir.display()));
    let root = fresh_dir(&Path::new(SANDBOX).join("case"));
    for base in ["home", "config/opencode", "managed"] {
        std::fs::create_dir_all(root.join(base)).expect("base dirs");
    }
    copy_tree_without_keep(&dir.join("tree"), &root, &mut DiskWriter);
    for repo in &case.git {
        let git = root.join(repo).join(".git");
        for dir in ["objects", "refs"] {
            std::fs::create_dir_all(git.join(dir)).expect(".git");
        }
        std::fs::write(git.join("HEAD"), "ref: refs/heads/main\n").expect("HEAD");
    }
    for (target, link) in &case.symlinks {
        let link = root.join(link);
        std::fs::create_dir_all(link.parent().expect("parent")).expect("link parent");
        std::os::unix::fs::symlink(target, link).expect("symlink");
    }
    let root_text = root.to_string_lossy().into_owned();
    let mut out = format!("{}\n", case.description);
    for format in &case.formats {
        let mut args: Vec<String> = case.args.iter().map(|a| a.replace("{ROOT}", &root_text)).collect();
        args.extend(["--cwd".to_owned(), root.join(&case.cwd).to_string_lossy().into_owned()]);
        args.extend(["--format".to_owned(), format.clone()]);
        let output = ctxgraph(&root)
            .args(&args)
            .current_dir(Some(root.join(&case.cwd)).filter(|d| d.is_dir()).unwrap_or_else(|| root.clone()))
            // Remote URLs in fixtures must never reach the network: cache only.
            .env("CTXGRAPH_OFFLINE", "1")
            // MCP servers in fixtures are the fixture server, named {env:CTXGRAPH_MCP_FIXTURE}.
            .env(
                "CTXGRAPH_MCP_FIXTURE",
                Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/oracle/mcp_server.py"),
            )
            .envs(case.env.iter().map(|(k, v)| (k, v.replace("{ROOT}", &root_text))))
            .output()
            .expect("run ctxgraph");
        let stdout = String::from_utf8(output.stdout).expect("UTF-8 output");
        if format == "sarif" {
            let log: serde_json::Value = serde_json::from_str(&stdout).expect("SARIF is JSON");
            let validator = sarif_validator();
            let errors: Vec<String> =
                validator.iter_errors(&log).map(|e| format!("{e} at {}", e.instance_path())).collect();
            assert!(errors.is_empty(), "{}: SARIF does not validate: {errors:#?}", dir.display());
        }
        if format == "json"
            && let Err(err) = serde_json::from_str::<serde_json::Value>(&stdout)
        {
            panic!("{}: --format json did not print JSON ({err})", dir.display());
        }
        let shown: Vec<String> =
            case.args.iter().cloned().chain(["--format".to_owned(), format.clone()]).collect();
        let _ = write!(
            out,
            "\n=== ctxgraph {} (exit {})\n{}{}",
            shown.join(" "),
            output.status.code().unwrap_or(-1),
            stdout.replace(&root_text, "[TMP]"),
            String::from_utf8_lossy(&output.stderr).replace(&root_text, "[TMP]"),
        );
    }
    out
}

#[test]
fn fixtures_match_snapshots() {
    // The environment block holds today's date, so its token count (and the total's) can
    // change from day to day; its byte count cannot (the date has a fixed width).
    let mut settings = insta::Settings::clone_current();
    settings.add_filter(r"(environment block \(B2\)  \d+ bytes, )\d+ tokens", "$1[N] tokens");
    settings.add_filter(r"(system prompt .* \d+ bytes, )\d+ tokens", "$1[N] tokens");
    settings.add_filter(r#"("(?:total|environment)": \{\s+"bytes": \d+,\s+"tokens": )\d+"#, "$1[N]");
    settings.add_filter(r"(the system prompt from .* is )\d+ tokens", "$1[N] tokens");
    let _guard = settings.bind_to_scope();
    // A loop rather than insta::glob!: glob! collects snapshot failures in a process-wide
    // stack, so while it runs, a failing snapshot of any other test in this binary (they run
    // on parallel threads) is counted as this glob's and that test passes.
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&fixtures)
        .expect("fixtures")
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|dir| dir.join("case.toml").is_file())
        .collect();
    dirs.sort();
    let cases = dirs.len();
    let mut failures = Vec::new();
    with_sandbox(Path::new(SANDBOX), |_| {
        for dir in &dirs {
            let name = dir.file_name().expect("name").to_string_lossy().into_owned();
            let checked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                insta::assert_snapshot!(name.clone(), run_case(dir));
            }));
            if checked.is_err() {
                failures.push(name);
            }
        }
    });
    assert!(failures.is_empty(), "fixtures whose output differs from the snapshot: {failures:?}");
    assert!(cases >= 25, "expected the explain/lint fixtures, found {cases}");
}

#[test]
fn the_schema_rejects_a_broken_log() {
    // Guards the validation above against a schema that accepts anything.
    let broken = serde_json::json!({ "version": "2.1.0", "runs": [{ "results": [] }] });
    assert!(!sarif_validator().is_valid(&broken));
}
