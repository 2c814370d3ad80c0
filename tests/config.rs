//! Config fixtures (`tests/config/<ID>`): ctxgraph's merged config against what the real
//! opencode 1.18.33 printed for `opencode debug config` (`oracle.out`, written only by
//! `tests/oracle/record-config.sh`), plus a snapshot of ctxgraph's own provenance for
//! every value.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

use ctxgraph_engine::{Engine, OsSystem};
use ctxgraph_opencode::config::schema::redact_like_debug_config;
use ctxgraph_opencode::config::{MergedConfig, Provenance};
use ctxgraph_tests::lay_out_config_case;
use serde::Deserialize;

#[derive(Deserialize)]
struct Case {
    description: String,
    covers: Vec<String>,
    #[serde(default = "dot")]
    cwd: String,
    #[serde(default = "yes")]
    git: bool,
    #[serde(default)]
    env: BTreeMap<String, String>,
}

fn dot() -> String {
    ".".to_owned()
}

fn yes() -> bool {
    true
}

struct Oracle {
    exit: i32,
    stdout: String,
    stderr: String,
}

fn oracle(dir: &Path) -> Oracle {
    let text = std::fs::read_to_string(dir.join("oracle.out"))
        .expect("oracle.out; run tests/oracle/record-config.sh");
    let (head, rest) = text.split_once("\n--- stdout\n").expect("oracle.out layout");
    let (stdout, stderr) = rest.split_once("--- stderr\n").expect("oracle.out layout");
    let exit = head.trim_start_matches("exit: ").parse().expect("exit code");
    Oracle { exit, stdout: stdout.to_owned(), stderr: stderr.to_owned() }
}

/// Lays the case out as `record-config.sh` does and loads its config.
fn load(dir: &Path, case: &Case, run: &Path) -> Result<MergedConfig, String> {
    let env = lay_out_config_case(dir, run, case.git, &case.env);
    let mut engine = Engine::new(Arc::new(OsSystem), env);
    let ws = engine.open(&run.join("proj").join(&case.cwd)).map_err(|e| e.to_string())?;
    engine.merged_config(ws).map_err(|e| e.to_string())
}

fn describe(origin: &Provenance) -> String {
    let mut text = format!("{:?} {}", origin.source.kind, origin.source.name);
    if let Some(at) = origin.at {
        let _ = write!(text, ":{}:{}", at.line, at.column);
    }
    if !origin.via.is_empty() {
        let _ = write!(text, " via {}", origin.via.join(", "));
    }
    text
}

/// ctxgraph's provenance of every value in effect, one line per leaf.
fn provenance(config: &MergedConfig) -> String {
    let mut out = String::new();
    for (path, node) in config.tree.leaves() {
        let _ = write!(
            out,
            "{} = {}\n    set by {}\n",
            path.join("."),
            node.render(false),
            describe(&node.origin)
        );
        for old in &node.overridden {
            let _ = writeln!(out, "    overrode {} from {}", old.value, describe(&old.origin));
        }
    }
    for layer in &config.layers {
        let _ = writeln!(
            out,
            "layer {:?} {}: {:?} dropped {:?}",
            layer.source.kind, layer.source.name, layer.status, layer.dropped_keys
        );
    }
    out
}

#[test]
fn config_fixtures_match_the_oracle() {
    let mut failures = Vec::new();
    let mut count = 0;
    insta::glob!("config", "*/case.toml", |case_file: &Path| {
        count += 1;
        let dir = case_file.parent().expect("case dir");
        let id = dir.file_name().and_then(|n| n.to_str()).expect("id").to_owned();
        // One snapshot per fixture, named after its directory (not glob!'s `@path` suffix).
        let mut settings = insta::Settings::clone_current();
        settings.remove_snapshot_suffix();
        let _guard = settings.bind_to_scope();
        let case: Case = toml::from_str(&std::fs::read_to_string(dir.join("case.toml")).expect("case.toml"))
            .expect("case.toml parses");
        assert!(!case.description.is_empty() && !case.covers.is_empty(), "{id}: describe the case");
        let expected = oracle(dir);
        let temp = tempfile::tempdir().expect("temp");
        let run = std::fs::canonicalize(temp.path()).expect("canonical");
        let normalise = |text: &str| text.replace(&*run.to_string_lossy(), "<RUN>");
        match (load(dir, &case, &run), expected.exit) {
            (Ok(config), 0) => {
                let printed = redact_like_debug_config(&config.tree.render(true));
                let ours = serde_json::to_string_pretty(&printed).expect("json") + "\n";
                if normalise(&ours) != expected.stdout {
                    failures.push(format!(
                        "{id}: ctxgraph printed\n{}\nopencode printed\n{}",
                        normalise(&ours),
                        expected.stdout
                    ));
                }
                insta::assert_snapshot!(format!("config__{id}"), normalise(&provenance(&config)));
            }
            (Err(err), code) if code != 0 => {
                insta::assert_snapshot!(
                    format!("config__{id}"),
                    format!("ctxgraph: {}\nopencode: {}", normalise(&err), expected.stderr)
                );
            }
            (Ok(config), _) => failures.push(format!(
                "{id}: opencode failed ({}), ctxgraph loaded {}",
                expected.stderr,
                config.value()
            )),
            (Err(err), _) => {
                failures.push(format!("{id}: opencode loaded the config, ctxgraph failed: {err}"));
            }
        }
    });
    assert!(count >= 20, "expected the config fixtures, found {count}");
    assert!(failures.is_empty(), "{} of {count} fixtures differ:\n{}", failures.len(), failures.join("\n\n"));
}
