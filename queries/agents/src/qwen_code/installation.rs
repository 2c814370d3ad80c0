//! QW3: finding Qwen Code's local installation and reading its wording (the templates of the
//! output-language file) from its bundle (the recognition itself is
//! [`Wording::from_bundle`]).
//!
//! Where to look, first found wins: `--agent-path PATH`, `$CTXGRAPH_QWEN_CODE`, then `qwen`
//! on `$PATH`. A path may be the package directory (`…/@qwen-code/qwen-code`), a file in it
//! (`cli-entry.js`), or the link npm puts in `bin`. The package is only read, never run.

use ctxgraph_db::profile::InstallationSearch;

use super::Wording;
use super::language::RECORDED_VERSION;
use crate::installation::{self, Lookup};

/// How Qwen Code's installation is named.
pub const LOOKUP: Lookup =
    Lookup { title: "Qwen Code", flag: "--agent-path", env: "CTXGRAPH_QWEN_CODE", binary: "qwen" };

/// Qwen Code's wording from the installation `search` finds;
/// placeholders when there is none, or it does not match.
pub fn wording(search: &InstallationSearch<'_>) -> Wording {
    let fs = search.fs;
    let start = match LOOKUP.start(search) {
        Ok(start) => start,
        Err(reason) => return Wording::unavailable(reason),
    };
    let Some(package) = installation::npm_package_dir(fs, &start, "@qwen-code/qwen-code") else {
        return Wording::unavailable(format!(
            "{}: no @qwen-code/qwen-code package found there",
            start.display()
        ));
    };
    let version = installation::package_version(fs, &package);
    let mut chunks = installation::entries_starting_with(fs, &package.join("chunks"), "");
    chunks.push(package.join("cli.js"));
    chunks.sort();
    for chunk in chunks.iter().filter(|p| p.extension().is_some_and(|e| e == "js")) {
        let Ok(bytes) = fs.read(chunk) else { continue };
        if let Some(wording) = Wording::from_bundle(&bytes, chunk, version.as_deref()) {
            return wording;
        }
    }
    Wording::unavailable(format!(
        "{}: no output-language templates matching Qwen Code {RECORDED_VERSION}'s fingerprints",
        package.display(),
    ))
}
