//! CX8: Codex's own sentence in the skills message, read from the user's installation and
//! recognised by its length and hash, never copied here.
//!
//! Codex is a native binary whose string literals sit back to back with no delimiter, so
//! the sentence is found by a rolling hash of every window of its length (Rabin–Karp), each
//! candidate confirmed by blake3. No crate searches a byte stream for a text known only by
//! its hash, hence the few lines below.
//!
//! Where to look, first found wins: `--agent-path PATH`, `$CTXGRAPH_CODEX`, then `codex`
//! on `$PATH`. A path may be the native binary, the npm launcher (`bin/codex.js`) or the
//! `@openai/codex` package: from those, the binary is in the platform package beside it
//! (`@openai/codex-<platform>/vendor/<target>/bin/codex`).

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use ctxgraph_db::profile::{InstallationSearch, WordingSource};
use ctxgraph_db::system::System;

use crate::installation::{self, Lookup, SystemFile};

/// How Codex's installation is named.
pub const LOOKUP: Lookup =
    Lookup { title: "Codex", flag: "--agent-path", env: "CTXGRAPH_CODEX", binary: "codex" };

/// A text of Codex's known by its length, its rolling hash ([`roll`]) and its blake3.
#[derive(Clone, Copy, Debug)]
struct Fingerprint {
    len: usize,
    roll: u64,
    blake3: &'static str,
}

/// The release whose texts the fingerprints are of.
const RELEASE: &str = "0.171.0";

/// The skills message's introduction in Codex 0.171.0 (recorded in case CX-11).
const SKILLS_INTRO: Fingerprint = Fingerprint {
    len: 261,
    roll: 0xb312_b4d6_7f1d_feb4,
    blake3: "2da20c55da4005fd288916c09a7c64dacb1111e6693923203cbe27061ec64105",
};

/// The rolling hash's base (the 64-bit FNV prime; any odd constant works).
const BASE: u64 = 0x0000_0100_0000_01b3;
/// Files smaller than this are launchers, not the binary.
const MIN_BINARY_BYTES: u64 = 1024 * 1024;
const WINDOW: usize = 16 * 1024 * 1024;

/// Codex's own words ctxgraph needs, with where they came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Wording {
    /// The sentence after `## Skills`.
    pub skills_intro: String,
    /// The installation it was read from, or why placeholders stand in.
    pub source: WordingSource,
}

impl Wording {
    /// Placeholders, with the reason.
    pub fn unavailable(reason: impl Into<String>) -> Wording {
        Wording {
            skills_intro: "<skills introduction: Codex's wording unavailable>".to_owned(),
            source: WordingSource::Unavailable { reason: reason.into() },
        }
    }

    /// Each text as `<prose:blake3=HASH>`, as recorded fixtures keep it.
    pub fn fingerprints() -> Wording {
        Wording {
            skills_intro: format!("<prose:blake3={}>", SKILLS_INTRO.blake3),
            source: WordingSource::Fingerprints,
        }
    }
}

/// Codex's wording from the installation `search` finds; placeholders when there is none,
/// or its texts do not match.
pub fn wording(search: &InstallationSearch<'_>) -> Wording {
    let fs = search.fs;
    let start = match LOOKUP.start(search) {
        Ok(start) => start,
        Err(reason) => return Wording::unavailable(reason),
    };
    let Some(binary) = find_binary(fs, &start) else {
        return Wording::unavailable(format!("{}: no Codex native binary found there", start.display()));
    };
    match find(fs, &binary, SKILLS_INTRO) {
        Ok(Some(intro)) => Wording {
            skills_intro: intro,
            source: WordingSource::Installation { path: binary.clone(), version: RELEASE.to_owned() },
        },
        Ok(None) => Wording::unavailable(format!(
            "{}: the skills introduction of Codex 0.171.0 is not in this binary (another release?)",
            binary.display()
        )),
        Err(err) => Wording::unavailable(format!("{}: {err}", binary.display())),
    }
}

/// The native binary a path leads to.
fn find_binary(fs: &dyn System, start: &Path) -> Option<PathBuf> {
    let real = fs.canonicalize(start).ok()?;
    let is_binary = |p: &Path| installation::is_file_of_at_least(fs, p, MIN_BINARY_BYTES);
    if is_binary(&real) {
        return Some(real);
    }
    let package = installation::npm_package_dir(fs, &real, "@openai/codex")?;
    let scope = package.parent()?;
    installation::entries_starting_with(fs, scope, "codex-")
        .into_iter()
        .flat_map(|platform| installation::entries_starting_with(fs, &platform.join("vendor"), ""))
        .map(|target| target.join("bin").join("codex"))
        .find(|p| is_binary(p))
}

/// `b0·B^(n-1) + … + b(n-1)` (mod 2^64).
fn roll(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0u64, |h, &b| h.wrapping_mul(BASE).wrapping_add(u64::from(b)))
}

/// The text of `print` in the file, when a window of its length has its hashes.
fn find(fs: &dyn System, path: &Path, print: Fingerprint) -> std::io::Result<Option<String>> {
    let len = print.len;
    let drop_factor = (1..len).fold(1u64, |p, _| p.wrapping_mul(BASE));
    let mut found = None;
    installation::scan_windows(SystemFile::open(fs, path), WINDOW, len - 1, |window| {
        if window.len() < len {
            return ControlFlow::Continue(());
        }
        let mut hash = roll(&window[..len]);
        for start in 0..=window.len() - len {
            if start > 0 {
                let out = u64::from(window[start - 1]);
                let incoming = u64::from(window[start + len - 1]);
                hash = hash
                    .wrapping_sub(out.wrapping_mul(drop_factor))
                    .wrapping_mul(BASE)
                    .wrapping_add(incoming);
            }
            let candidate = &window[start..start + len];
            if hash == print.roll && blake3::hash(candidate).to_hex().as_str() == print.blake3 {
                found = std::str::from_utf8(candidate).ok().map(str::to_owned);
                return ControlFlow::Break(());
            }
        }
        ControlFlow::Continue(())
    })?;
    Ok(found)
}

#[cfg(test)]
mod tests {
    use ctxgraph_db::system::MemorySystem;

    use super::*;

    #[test]
    fn a_text_is_found_by_its_hashes_across_a_window_boundary() {
        let text = b"a sentence of the agent's own, known here only by its hashes";
        let print = Fingerprint {
            len: text.len(),
            roll: roll(text),
            blake3: Box::leak(blake3::hash(text).to_hex().to_string().into_boxed_str()),
        };
        let fs = MemorySystem::new();
        let mut bytes = vec![b'x'; WINDOW + 100];
        let at = WINDOW - 20;
        bytes[at..at + text.len()].copy_from_slice(text);
        fs.write_file("/bin/codex", bytes);
        let found = find(&fs, Path::new("/bin/codex"), print).expect("read");
        assert_eq!(found.as_deref(), Some(std::str::from_utf8(text).expect("utf-8")));
        fs.write_file("/bin/other", vec![b'x'; 4096]);
        assert_eq!(find(&fs, Path::new("/bin/other"), print).expect("read"), None);
    }
}
