//! CC10: Claude Code's own words in the block (the preamble sentence, the label after each
//! path) belong to Claude Code. They are never copied into this repository: they are read
//! from the local installation and accepted only when their blake3 hash and length match
//! this table, or marked unavailable.

use std::sync::LazyLock;

use ctxgraph_db::profile::WordingSource;
use regex::bytes::Regex;

use super::Kind;
use super::request_prose::RequestProse;

/// One prose string's fingerprint: figures, not text.
#[derive(Clone, Copy, Debug)]
struct Fingerprint {
    blake3: &'static str,
    len: usize,
}

/// The fingerprints of one Claude Code version.
struct Release {
    version: &'static str,
    preamble: Fingerprint,
    /// `(project, local, user, auto-memory)` labels, each with its leading space and
    /// parentheses.
    labels: [Fingerprint; 4],
}

const RELEASES: &[Release] = &[Release {
    version: "2.1.332",
    preamble: Fingerprint {
        blake3: "9cd750cd2a484c0af0152bbee01f0b7df8f8b7b1ed9c8ef7a4a70d8809b5ebea",
        len: 193,
    },
    labels: [
        Fingerprint { blake3: "d6183f2c5b695bf9601fe7ec9322bb9b122095d0085b161eee9c8656c92b1dcb", len: 50 },
        Fingerprint { blake3: "82a4491d8f817e7965648db5fa7c9e06f090a9b242f18293e387e8dfdc374c11", len: 54 },
        Fingerprint { blake3: "9dac420290bb54fbb487ded9f72447e22e5fe16b70990c6feb6d972875632748", len: 54 },
        Fingerprint { blake3: "50719a2a1c4bbf6c170aa7bc113e8526e9c549a14aa4f2e4450d934f5ca51219", len: 52 },
    ],
}];

pub use super::RECORDED_VERSION;

/// The strings Claude Code puts around the rule files.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Prose {
    /// The sentence before the first entry.
    pub preamble: String,
    /// After each path, by kind: project, local, user.
    labels: [String; 4],
    /// Where they came from.
    pub source: WordingSource,
    /// CC16: the texts of the whole first request.
    pub request: RequestProse,
}

impl Prose {
    /// The label written after a path of this kind.
    pub fn label(&self, kind: Kind) -> &str {
        &self.labels[label_index(kind)]
    }

    /// Whether the text holds placeholders rather than Claude Code's words.
    pub fn is_unavailable(&self) -> bool {
        matches!(self.source, WordingSource::Unavailable { .. })
    }

    /// Placeholders, with the reason they are used.
    pub fn unavailable(reason: impl Into<String>) -> Prose {
        let reason = reason.into();
        let label = |kind: &str| format!(" (<{kind} label: Claude Code's wording unavailable>)");
        Prose {
            preamble: "<preamble: Claude Code's wording unavailable>".to_owned(),
            labels: [label("project"), label("local"), label("user"), label("auto-memory")],
            request: RequestProse::unavailable(reason.clone()),
            source: WordingSource::Unavailable { reason },
        }
    }

    /// Each string as `<prose:blake3=HASH>` from the table: what `tests/oracle/record-agents.sh`
    /// writes into recorded fixtures in place of Claude Code's words.
    ///
    /// # Panics
    ///
    /// Never: [`RECORDED_VERSION`] is in the table (a unit test checks it).
    pub fn fingerprints() -> Prose {
        let release =
            RELEASES.iter().find(|r| r.version == RECORDED_VERSION).expect("recorded version in table");
        let token = |f: &Fingerprint| format!("<prose:blake3={}>", f.blake3);
        Prose {
            preamble: token(&release.preamble),
            labels: release.labels.each_ref().map(token),
            source: WordingSource::Fingerprints,
            request: RequestProse::fingerprints(),
        }
    }

    /// Finds the strings in a Claude Code bundle (the native binary's embedded JavaScript,
    /// or the npm package's `cli.js`) by the shape of the code around them, and keeps them
    /// only when they match a release's fingerprints. `version` (from the package's
    /// `package.json`), when known, picks the release; otherwise any release may match.
    pub fn from_bundle(bundle: &[u8], path: &std::path::Path, version: Option<&str>) -> Prose {
        // The label function (`switch(kind){case"Project":return" (…)";…}`) follows the
        // preamble's `var`; both are code shapes, not Claude Code's words.
        static ANCHOR: LazyLock<Regex> =
            LazyLock::new(|| Regex::new(r#"\{case"Project":return""#).expect("valid pattern"));
        static SHAPE: LazyLock<Regex> = LazyLock::new(|| {
            Regex::new(
                r#"="([^"\\]*)";function [\w$]+\([\w$]+\)\{switch\([\w$]+\)\{((?:case"\w+":return"[^"\\]*";?)+)\}"#,
            )
            .expect("valid pattern")
        });
        static CASE: LazyLock<Regex> =
            LazyLock::new(|| Regex::new(r#"case"(\w+)":return"([^"\\]*)""#).expect("valid pattern"));
        let releases: Vec<&Release> =
            RELEASES.iter().filter(|r| version.is_none_or(|v| r.version == v)).collect();
        if releases.is_empty() {
            return Prose::unavailable(format!(
                "Claude Code {} is not in ctxgraph's table (known: {})",
                version.unwrap_or("?"),
                RELEASES.iter().map(|r| r.version).collect::<Vec<_>>().join(", ")
            ));
        }
        for anchor in ANCHOR.find_iter(bundle) {
            let window =
                &bundle[anchor.start().saturating_sub(4096)..(anchor.end() + 2048).min(bundle.len())];
            let Some(caps) = SHAPE.captures_iter(window).last() else { continue };
            let preamble = &caps[1];
            let mut by_kind = std::collections::HashMap::new();
            for case in CASE.captures_iter(&caps[2]) {
                by_kind.insert(case[1].to_vec(), case[2].to_vec());
            }
            let labels = [&b"Project"[..], b"Local", b"User", b"AutoMem"]
                .map(|k| by_kind.get(k).cloned().unwrap_or_default());
            for release in &releases {
                let matches = fits(&release.preamble, preamble)
                    && release.labels.iter().zip(&labels).all(|(f, text)| fits(f, text));
                if matches {
                    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
                    return Prose {
                        preamble: text(preamble),
                        labels: labels.each_ref().map(|l| text(l)),
                        source: WordingSource::Installation {
                            path: path.to_path_buf(),
                            version: release.version.to_owned(),
                        },
                        request: RequestProse::not_read(),
                    };
                }
            }
        }
        Prose::unavailable(format!(
            "{}: no preamble and labels matching Claude Code {}'s fingerprints",
            path.display(),
            releases.iter().map(|r| r.version).collect::<Vec<_>>().join(" or ")
        ))
    }
}

fn fits(fingerprint: &Fingerprint, text: &[u8]) -> bool {
    text.len() == fingerprint.len && blake3::hash(text).to_hex().as_str() == fingerprint.blake3
}

fn label_index(kind: Kind) -> usize {
    match kind {
        Kind::Project => 0,
        Kind::Local => 1,
        Kind::User => 2,
        Kind::AutoMemory => 3,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recorded_version_is_in_the_table() {
        let prose = Prose::fingerprints();
        assert!(prose.preamble.starts_with("<prose:blake3=") && !prose.is_unavailable());
    }

    #[test]
    fn a_bundle_with_other_words_is_refused() {
        let bundle = br#"xx;var ku="Some other sentence.";function wu(e){switch(e){case"Project":return" (p)";case"Local":return" (l)";case"User":return" (u)"}}"#;
        let prose = Prose::from_bundle(bundle, std::path::Path::new("/b"), None);
        assert!(prose.is_unavailable(), "{prose:?}");
        let prose = Prose::from_bundle(b"nothing here", std::path::Path::new("/b"), Some("9.9.9"));
        assert!(
            matches!(prose.source, WordingSource::Unavailable { ref reason } if reason.contains("9.9.9"))
        );
    }
}
