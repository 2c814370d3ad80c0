//! AU8: Auggie's built-in rule (`non-interactive-prompt.md`, the first entry of `rules`) is
//! Auggie's own text: read from the user's installation, in its bundle `augment.mjs`, and
//! accepted by its length and blake3 for the recorded release.
//!
//! Where to look, first found wins: `--agent-path PATH`, `$CTXGRAPH_AUGGIE`, then `auggie`
//! on `$PATH`. A path may be the package directory (`…/@augmentcode/auggie`), a file in it
//! (`augment.mjs`), or the link npm puts in `bin`. The package is only read, never run.

use std::collections::BTreeMap;
use std::path::Path;

use ctxgraph_db::installation::AssetRecord;
use ctxgraph_db::profile::{InstallationSearch, WordingSource};

use crate::installation::{self, Lookup};

/// How Auggie's installation is named.
pub const LOOKUP: Lookup =
    Lookup { title: "Auggie", flag: "--agent-path", env: "CTXGRAPH_AUGGIE", binary: "auggie" };

/// The release the recorded cases come from.
pub const RECORDED_VERSION: &str = "0.36.0";
/// The bundle that holds the text.
const BUNDLE: &str = "augment.mjs";
/// The built-in rule's text in the recorded release: its length in bytes and blake3.
const BUILTIN: (usize, &str) = (317, "77e1b49744ede8a384a92f22603583eafdcdce49ef1fbc736532904b42d88909");

/// Auggie's built-in rule text, and where it came from.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Wording {
    /// The rule's `content`.
    pub builtin: String,
    /// Where it came from.
    pub source: WordingSource,
}

impl Wording {
    /// A placeholder, with the reason it is used.
    pub fn unavailable(reason: impl Into<String>) -> Wording {
        Wording {
            builtin: format!("<{}: Auggie's built-in rule unavailable>", super::BUILTIN_RULE),
            source: WordingSource::Unavailable { reason: reason.into() },
        }
    }

    /// The text as `<prose:blake3=HASH>`: what recorded fixtures keep in its place.
    pub fn fingerprints() -> Wording {
        Wording { builtin: format!("<prose:blake3={}>", BUILTIN.1), source: WordingSource::Fingerprints }
    }

    /// Finds the text among the string literals of a bundle.
    pub fn from_bundle(bytes: &[u8], path: &Path, version: Option<&str>) -> Result<Wording, String> {
        let version = version.unwrap_or(RECORDED_VERSION);
        if version != RECORDED_VERSION {
            return Err(format!("Auggie {version}'s built-in rule is not known (known: {RECORDED_VERSION})"));
        }
        let table = BTreeMap::from([(
            super::BUILTIN_RULE.to_owned(),
            AssetRecord { bytes: BUILTIN.0, blake3: BUILTIN.1.to_owned() },
        )]);
        let found = ctxgraph_db::js_literals::extract(bytes, &table);
        let text = found
            .get(super::BUILTIN_RULE)
            .ok_or_else(|| format!("no string matching Auggie {version}'s built-in rule"))?;
        Ok(Wording {
            builtin: text.to_string(),
            source: WordingSource::Installation { path: path.to_path_buf(), version: version.to_owned() },
        })
    }
}

/// Auggie's wording from the installation `search` finds; a placeholder when there is
/// none, or it does not match.
pub fn wording(search: &InstallationSearch<'_>) -> Wording {
    let fs = search.fs;
    let start = match LOOKUP.start(search) {
        Ok(start) => start,
        Err(reason) => return Wording::unavailable(reason),
    };
    let Some(package) = installation::npm_package_dir(fs, &start, "@augmentcode/auggie") else {
        return Wording::unavailable(format!(
            "{}: no @augmentcode/auggie package found there",
            start.display()
        ));
    };
    let bundle = package.join(BUNDLE);
    match fs.read(&bundle) {
        Ok(bytes) => {
            Wording::from_bundle(&bytes, &bundle, installation::package_version(fs, &package).as_deref())
                .unwrap_or_else(|why| Wording::unavailable(format!("{}: {why}", bundle.display())))
        }
        Err(err) => Wording::unavailable(format!("{}: {err}", bundle.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bundle_without_the_text_is_refused_by_name() {
        let err = Wording::from_bundle(b"var a=`other`;", Path::new("/a.mjs"), None).unwrap_err();
        assert!(err.contains("no string matching"), "{err}");
        let err = Wording::from_bundle(b"", Path::new("/a.mjs"), Some("0.1.0")).unwrap_err();
        assert!(err.contains("not known"), "{err}");
    }
}
