//! AI9: Aider's own sentences in the read-only message (the two lines before the files)
//! belong to Aider. They are never copied into this repository: they are read from the
//! local installation's `aider/coders/base_prompts.py` and accepted only when their blake3
//! hash and length match this table, or marked unavailable.

use std::path::Path;

use ctxgraph_db::profile::WordingSource;

/// One release's fingerprint of the sentences: figures, not text.
struct Release {
    version: &'static str,
    blake3: &'static str,
    len: usize,
}

const RELEASES: &[Release] = &[Release {
    version: "0.86.2",
    blake3: "9a42cbc6ea5b46b5d517695e07c6f02ba0ed51a78e87418ea29be7a9486dbd75",
    len: 85,
}];

/// The Aider release the recorded cases come from.
pub const RECORDED_VERSION: &str = "0.86.2";

/// The file of the package that holds the sentences.
pub const PROMPTS_FILE: &str = "coders/base_prompts.py";

/// Aider's sentences before the read-only files.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Wording {
    /// AI4: the opening of the read-only message, its final newline included.
    pub read_only_prefix: String,
    /// Where it came from.
    pub source: WordingSource,
}

impl Wording {
    /// Whether the text holds a placeholder rather than Aider's words.
    pub fn is_unavailable(&self) -> bool {
        matches!(self.source, WordingSource::Unavailable { .. })
    }

    /// A placeholder, with the reason it is used.
    pub fn unavailable(reason: impl Into<String>) -> Wording {
        Wording {
            read_only_prefix: "<read-only files introduction: Aider's wording unavailable>\n".to_owned(),
            source: WordingSource::Unavailable { reason: reason.into() },
        }
    }

    /// The sentences as `<prose:blake3=HASH>`: what `tests/oracle/record-agents.sh` writes
    /// into recorded fixtures in place of Aider's words.
    ///
    /// # Panics
    ///
    /// Never: [`RECORDED_VERSION`] is in the table (a unit test checks it).
    pub fn fingerprints() -> Wording {
        let release = RELEASES.iter().find(|r| r.version == RECORDED_VERSION).expect("recorded version");
        Wording {
            read_only_prefix: format!("<prose:blake3={}>", release.blake3),
            source: WordingSource::Fingerprints,
        }
    }

    /// The sentences among the triple-quoted string literals of `base_prompts.py` (its
    /// bytes), the one whose length and hash are the table's for `version`.
    ///
    /// # Errors
    ///
    /// Why nothing matched: the version is not in the table, or no literal matches.
    pub fn from_prompts(bytes: &[u8], path: &Path, version: Option<&str>) -> Result<Wording, String> {
        let version = version.ok_or("no version found beside it")?;
        let release = RELEASES
            .iter()
            .find(|r| r.version == version)
            .ok_or_else(|| format!("Aider {version}'s wording is not known (known: {RECORDED_VERSION})"))?;
        let text = std::str::from_utf8(bytes).map_err(|_| "not UTF-8")?;
        let found = text
            .split(r#"""""#)
            .skip(1)
            .step_by(2)
            .find(|literal| {
                literal.len() == release.len
                    && blake3::hash(literal.as_bytes()).to_hex().as_str() == release.blake3
            })
            .ok_or_else(|| format!("no string matching Aider {version}'s read-only introduction"))?;
        Ok(Wording {
            read_only_prefix: found.to_owned(),
            source: WordingSource::Installation { path: path.to_path_buf(), version: version.to_owned() },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recorded_release_is_in_the_table() {
        assert!(Wording::fingerprints().read_only_prefix.starts_with("<prose:blake3=9a42"));
    }

    #[test]
    fn a_literal_that_does_not_match_is_refused() {
        let file = "x = \"\"\"Some other text.\n\"\"\"\n";
        let err = Wording::from_prompts(file.as_bytes(), Path::new("/p.py"), Some("0.86.2")).unwrap_err();
        assert!(err.contains("no string matching"), "{err}");
        let err = Wording::from_prompts(file.as_bytes(), Path::new("/p.py"), Some("0.1.0")).unwrap_err();
        assert!(err.contains("not known"), "{err}");
    }
}
