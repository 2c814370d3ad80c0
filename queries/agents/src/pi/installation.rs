//! PI10: finding pi's local installation and reading the files its wording is put together
//! from (the recognition itself is [`Wording::from_package`]).
//!
//! Where to look, first found wins: `--agent-path PATH`, `$CTXGRAPH_PI`, then `pi` on
//! `$PATH`. A path may be the package directory (`…/@mariozechner/pi-coding-agent`), a file
//! in it (`dist/cli.js`), or the link npm puts in `bin`. The package is only read, never run.

use ctxgraph_db::profile::InstallationSearch;

use super::Wording;
use super::wording::{PackageFiles, RECORDED_VERSION, SKILLS_JS, SYSTEM_PROMPT_JS, tool_files};
use crate::installation::{self, Lookup};

/// How pi's installation is named.
pub const LOOKUP: Lookup = Lookup { title: "pi", flag: "--agent-path", env: "CTXGRAPH_PI", binary: "pi" };

/// pi's wording from the installation `search` finds; placeholders when there is none, or
/// it does not match.
pub fn wording(search: &InstallationSearch<'_>) -> Wording {
    let fs = search.fs;
    let start = match LOOKUP.start(search) {
        Ok(start) => start,
        Err(reason) => return Wording::unavailable(reason),
    };
    let Some(dir) = installation::npm_package_dir(fs, &start, "@mariozechner/pi-coding-agent") else {
        return Wording::unavailable(format!(
            "{}: no @mariozechner/pi-coding-agent package found there",
            start.display()
        ));
    };
    let read =
        |rel: &str| fs.read(&dir.join(rel)).map_err(|err| format!("{}: {err}", dir.join(rel).display()));
    let files = (|| -> Result<PackageFiles, String> {
        Ok(PackageFiles {
            version: installation::package_version(fs, &dir),
            system_prompt_js: read(SYSTEM_PROMPT_JS)?,
            skills_js: read(SKILLS_JS)?,
            tools_js: tool_files().map(|rel| read(&rel)).collect::<Result<_, _>>()?,
            dir: dir.clone(),
        })
    })();
    files.and_then(|files| Wording::from_package(&files)).unwrap_or_else(|why| {
        Wording::unavailable(format!("{}: {why} (pi {RECORDED_VERSION}'s is known)", dir.display()))
    })
}
