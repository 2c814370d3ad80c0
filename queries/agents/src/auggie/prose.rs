//! AU7: the rule Auggie adds itself in a non-interactive run (`non-interactive-prompt.md`,
//! first in `rules`) is Auggie's wording. It is never copied into this repository: it is
//! found in the installation's bundle (`augment.mjs`, a template literal) by its blake3 hash
//! and length, or marked unavailable.

use std::path::Path;

use crate::claude_code::prose::ProseSource;

/// The release the recorded cases come from, and its rule's fingerprint.
pub const RECORDED_VERSION: &str = "0.36.0";
const BLAKE3: &str = "77e1b49744ede8a384a92f22603583eafdcdce49ef1fbc736532904b42d88909";
const LEN: usize = 317;

/// The name the request gives Auggie's own rule.
pub const RULE_PATH: &str = "non-interactive-prompt.md";

/// Auggie's own rule text.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Prose {
    /// The rule's content.
    pub non_interactive: String,
    /// Where it came from.
    pub source: ProseSource,
}

impl Prose {
    /// A placeholder, with the reason it is used.
    pub fn unavailable(reason: impl Into<String>) -> Prose {
        Prose {
            non_interactive: "<Auggie's non-interactive rule: unavailable>".to_owned(),
            source: ProseSource::Unavailable { reason: reason.into() },
        }
    }

    /// The rule as `<prose:blake3=HASH>`, what recorded fixtures keep.
    pub fn fingerprints() -> Prose {
        Prose { non_interactive: format!("<prose:blake3={BLAKE3}>"), source: ProseSource::Fingerprints }
    }

    /// The rule among the bundle's template literals (its bytes), the one whose length and
    /// hash are the table's.
    ///
    /// # Errors
    ///
    /// Why nothing matched.
    pub fn from_bundle(bytes: &[u8], path: &Path, version: Option<&str>) -> Result<Prose, String> {
        if version != Some(RECORDED_VERSION) {
            return Err(format!("Auggie {version:?}'s wording is not known (known: {RECORDED_VERSION})"));
        }
        let found = bytes.iter().enumerate().filter(|(_, b)| **b == b'`').find_map(|(at, _)| {
            let literal = bytes.get(at + 1..at + 1 + LEN)?;
            (bytes.get(at + 1 + LEN) == Some(&b'`') && blake3::hash(literal).to_hex().as_str() == BLAKE3)
                .then(|| String::from_utf8_lossy(literal).into_owned())
        });
        let text = found.ok_or("no literal matching Auggie's non-interactive rule")?;
        Ok(Prose {
            non_interactive: text,
            source: ProseSource::Installation {
                path: path.to_path_buf(),
                version: RECORDED_VERSION.to_owned(),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_literal_that_does_not_match_is_refused() {
        let bundle = format!("x=`{}`;", "a".repeat(LEN));
        let err =
            Prose::from_bundle(bundle.as_bytes(), Path::new("/a.mjs"), Some(RECORDED_VERSION)).unwrap_err();
        assert!(err.contains("no literal"), "{err}");
        assert!(
            Prose::from_bundle(b"", Path::new("/a.mjs"), Some("0.1.0")).unwrap_err().contains("not known")
        );
    }
}
