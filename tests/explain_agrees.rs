//! `explain` agrees with `build`: the sources `explain` reports as loaded are exactly the
//! blocks of the system prompt, in the same order and at the same positions, on every
//! conformance case and from every directory of the example monorepo.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ctxgraph_db::Workspace;
use ctxgraph_engine::{Engine, EngineError, HostEnv, OsSystem};
use ctxgraph_tests::{cases, memory_engine};

/// Compares the two answers for one workspace; `Err` when the prompt cannot be built
/// (then `explain` must refuse too).
fn agree(engine: &Engine, ws: Workspace, label: &str) -> Result<(), EngineError> {
    let prompt = match engine.system_prompt(ws, None) {
        Ok(prompt) => prompt,
        Err(err) => {
            assert!(engine.explain(ws).is_err(), "{label}: build refused ({err}) but explain answered");
            return Err(err);
        }
    };
    let built: Vec<(usize, String)> = prompt
        .layout(ctxgraph_opencode::prompt::Section::System)
        .blocks
        .iter()
        .enumerate()
        .filter_map(|(position, placed)| Some((position + 1, placed.source.as_deref()?.to_owned())))
        .collect();
    let explanation = engine.explain(ws)?;
    let explained: Vec<(usize, String)> = explanation
        .items
        .iter()
        .filter_map(|item| Some((item.loaded.as_ref()?.position, item.source.label())))
        .collect();
    assert_eq!(explained, built, "{label}: explain's loaded items differ from build's blocks");
    for item in &explanation.items {
        assert_eq!(item.loaded.is_some(), item.reasons.is_empty(), "{label}: {item:?}");
    }
    Ok(())
}

#[test]
fn on_every_conformance_case() {
    // The fixtures are recorded on main (tests/conformance); a checkout without them has
    // nothing to compare here, and the conformance suite itself fails loudly.
    if !Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance").is_dir() {
        return;
    }
    let mut built = 0;
    for case in cases() {
        let Ok((engine, ws)) = memory_engine(&case) else { continue };
        built += usize::from(agree(&engine, ws, &case.id).is_ok());
    }
    assert!(built > 0, "no conformance case built a prompt");
}

#[test]
fn from_every_directory_of_the_example_monorepo() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/monorepo");
    let example = std::fs::canonicalize(example).expect("examples/monorepo");
    let scratch = tempfile::tempdir().expect("temp dir");
    let home = scratch.path().to_path_buf();
    let vars = BTreeMap::from([
        ("HOME".to_owned(), home.to_string_lossy().into_owned()),
        ("XDG_CONFIG_HOME".to_owned(), home.join("config").to_string_lossy().into_owned()),
    ]);
    let env = HostEnv { vars, home, platform: "linux".to_owned(), date: "Sun Nov 29 2026".to_owned() };
    let mut engine = Engine::new(Arc::new(OsSystem), env);
    let mut dirs: Vec<PathBuf> = vec![example.clone()];
    let mut index = 0;
    while let Some(dir) = dirs.get(index).cloned() {
        index += 1;
        for entry in std::fs::read_dir(&dir).expect("read dir").map(|e| e.expect("entry")) {
            if entry.file_type().expect("file type").is_dir() {
                dirs.push(entry.path());
            }
        }
    }
    assert!(dirs.len() >= 8, "expected the example's directories, found {}", dirs.len());
    for dir in &dirs {
        let ws = engine.open(dir).expect("open");
        agree(&engine, ws, &dir.display().to_string()).expect("the example builds");
    }
}
