//! QW3: finding Qwen Code's local installation and reading its wording (the templates of the
//! output-language file) from its bundle. I/O, so it lives in the engine; the recognition
//! itself is [`Wording::from_bundle`](ctxgraph_agents::qwen_code::Wording::from_bundle).
//!
//! Where to look, first found wins: `--agent-path PATH`, `$CTXGRAPH_QWEN_CODE`, then `qwen`
//! on `$PATH`. A path may be the package directory (`…/@qwen-code/qwen-code`), a file in it
//! (`cli-entry.js`), or the link npm puts in `bin`. The package is only read, never run.

use std::fs;
use std::path::{Path, PathBuf};

use ctxgraph_agents::qwen_code::Wording;

/// The environment variable naming the installation.
pub const QWEN_CODE_ENV: &str = "CTXGRAPH_QWEN_CODE";

/// Qwen Code's wording from the installation at `explicit`, or found through `vars`
/// (`CTXGRAPH_QWEN_CODE`, `PATH`); placeholders when there is none, or it does not match.
pub fn qwen_code_wording(
    explicit: Option<&Path>,
    vars: &std::collections::BTreeMap<String, String>,
) -> Wording {
    let package = match crate::wording::npm_package(
        explicit,
        vars,
        ("Qwen Code", QWEN_CODE_ENV, "qwen", "@qwen-code/qwen-code"),
    ) {
        Ok(dir) => dir,
        Err(why) => return Wording::unavailable(why),
    };
    let version = fs::read_to_string(package.join("package.json"))
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .and_then(|json| json.get("version")?.as_str().map(str::to_owned));
    let mut chunks: Vec<PathBuf> = fs::read_dir(package.join("chunks"))
        .map(|entries| entries.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    chunks.push(package.join("cli.js"));
    chunks.sort();
    for chunk in chunks.iter().filter(|p| p.extension().is_some_and(|e| e == "js")) {
        let Ok(bytes) = fs::read(chunk) else { continue };
        if let Some(wording) = Wording::from_bundle(&bytes, chunk, version.as_deref()) {
            return wording;
        }
    }
    Wording::unavailable(format!(
        "{}: no output-language templates matching Qwen Code {}'s fingerprints",
        package.display(),
        ctxgraph_agents::qwen_code::language::RECORDED_VERSION
    ))
}
