//! PI10: finding pi's local installation and reading the files its wording is put together
//! from. I/O, so it lives in the engine; the recognition itself is
//! [`Wording::from_package`](ctxgraph_agents::pi::Wording::from_package).
//!
//! Where to look, first found wins: `--agent-path PATH`, `$CTXGRAPH_PI`, then `pi` on
//! `$PATH`. A path may be the package directory (`…/@mariozechner/pi-coding-agent`), a file
//! in it (`dist/cli.js`), or the link npm puts in `bin`. The package is only read, never run.

use std::fs;
use std::path::Path;

use ctxgraph_agents::pi::Wording;
use ctxgraph_agents::pi::wording::{PackageFiles, RECORDED_VERSION, SKILLS_JS, SYSTEM_PROMPT_JS, tool_files};

/// The environment variable naming the installation.
pub const PI_ENV: &str = "CTXGRAPH_PI";

/// pi's wording from the installation at `explicit`, or found through `vars` (`CTXGRAPH_PI`,
/// `PATH`); placeholders when there is none, or it does not match.
pub fn pi_wording(explicit: Option<&Path>, vars: &std::collections::BTreeMap<String, String>) -> Wording {
    let dir = match crate::wording::npm_package(
        explicit,
        vars,
        ("pi", PI_ENV, "pi", "@mariozechner/pi-coding-agent"),
    ) {
        Ok(dir) => dir,
        Err(why) => return Wording::unavailable(why),
    };
    let read =
        |rel: &str| fs::read(dir.join(rel)).map_err(|err| format!("{}: {err}", dir.join(rel).display()));
    let files = (|| -> Result<PackageFiles, String> {
        Ok(PackageFiles {
            version: fs::read_to_string(dir.join("package.json"))
                .ok()
                .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
                .and_then(|json| json.get("version")?.as_str().map(str::to_owned)),
            system_prompt_js: read(SYSTEM_PROMPT_JS)?,
            skills_js: read(SKILLS_JS)?,
            tools_js: tool_files().map(|rel| read(&rel)).collect::<Result<_, _>>()?,
            dir: dir.clone(),
        })
    })();
    match files.and_then(|files| Wording::from_package(&files)) {
        Ok(wording) => wording,
        Err(why) => {
            Wording::unavailable(format!("{}: {why} (pi {RECORDED_VERSION}'s is known)", dir.display()))
        }
    }
}
