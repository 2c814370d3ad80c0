//! The scenarios file (`ctxgraph.toml`) and the `.snap` format, both committed to
//! repositories and so untrusted: no panic, no hang. The input is split at the first NUL:
//! the scenarios text, then a snapshot file, which is decoded and diffed against a fixed
//! current build.

#![no_main]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use ctxgraph_check::render::{BlockEntry, Rendered};
use ctxgraph_check::scenarios::{Anchor, parse};
use ctxgraph_check::snapshot::decode;
use libfuzzer_sys::fuzz_target;

/// An empty repository: scenario paths resolve against it (and must stay inside it).
fn repo() -> &'static Path {
    static REPO: OnceLock<PathBuf> = OnceLock::new();
    REPO.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("ctxgraph-fuzz-scenarios-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("packages/api")).expect("fuzz repository");
        std::fs::canonicalize(dir).expect("canonical")
    })
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (scenarios, snap) = text.split_once('\0').unwrap_or((&text, ""));
    let repo = repo();
    let file = repo.join("ctxgraph.toml");
    let _ = parse(scenarios, &Anchor { file: &file, base: repo, repo });
    if let Ok(stored) = decode(snap) {
        let current = Rendered {
            body: "Here is some useful information\n<env>\n</env>\nInstructions from: <repo>/AGENTS.md\n# Rules\n"
                .to_owned(),
            blocks: vec![BlockEntry { id: "<repo>/AGENTS.md".to_owned(), hash: "0123".to_owned(), reason: None }],
        };
        let _ = ctxgraph_check::compare::compare(&stored, &current, ("snapshot", "current"));
    }
});
