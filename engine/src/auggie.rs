//! AU7: finding Auggie's local installation and reading its own rule from its bundle
//! (`augment.mjs`). I/O, so it lives in the engine; the recognition itself is
//! [`Prose::from_bundle`](ctxgraph_agents::auggie::Prose::from_bundle).
//!
//! Where to look, first found wins: `--agent-path PATH`, `$CTXGRAPH_AUGGIE`, then `auggie` on
//! `$PATH`. The package is only read, never run.

use std::fs;
use std::path::Path;

use ctxgraph_agents::auggie::Prose;

/// The environment variable naming the installation.
pub const AUGGIE_ENV: &str = "CTXGRAPH_AUGGIE";

/// Auggie's own rule from the installation at `explicit`, or found through `vars`; a
/// placeholder when there is none, or it does not match.
pub fn auggie_prose(explicit: Option<&Path>, vars: &std::collections::BTreeMap<String, String>) -> Prose {
    let dir = match crate::wording::npm_package(
        explicit,
        vars,
        ("Auggie", AUGGIE_ENV, "auggie", "@augmentcode/auggie"),
    ) {
        Ok(dir) => dir,
        Err(why) => return Prose::unavailable(why),
    };
    let version = fs::read_to_string(dir.join("package.json"))
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .and_then(|json| json.get("version")?.as_str().map(str::to_owned));
    let bundle = dir.join("augment.mjs");
    match fs::read(&bundle) {
        Ok(bytes) => Prose::from_bundle(&bytes, &bundle, version.as_deref())
            .unwrap_or_else(|why| Prose::unavailable(format!("{}: {why}", bundle.display()))),
        Err(err) => Prose::unavailable(format!("{}: {err}", bundle.display())),
    }
}
