//! CP16: Copilot's own words around the rule files (the table's introduction and header,
//! the sentence naming an attached file) belong to GitHub. They are never copied into this
//! repository: they are read from the local installation's native runtime and accepted only
//! when their blake3 hash and length match this table, or marked unavailable.

use std::sync::LazyLock;

use ctxgraph_db::profile::WordingSource;
use regex::bytes::Regex;

/// One prose string's fingerprint: figures, not text.
#[derive(Clone, Copy, Debug)]
struct Fingerprint {
    blake3: &'static str,
    len: usize,
}

/// The fingerprints of one Copilot release.
struct Release {
    version: &'static str,
    /// The table's introduction and header, its lines joined by newlines.
    table_intro: Fingerprint,
    /// The lengths of those lines: the runtime stores them one after the other, unjoined,
    /// right after the escaped opening of an imported block.
    table_lines: &'static [usize],
    /// The sentence before and after an attached file's name.
    read_before: Fingerprint,
    read_after: Fingerprint,
}

const RELEASES: &[Release] = &[Release {
    version: "1.0.102",
    table_intro: Fingerprint {
        blake3: "299d969f5fc57c9bf3e469259b7491706fd7b3517b213e8de5af438da8f8bec9",
        len: 498,
    },
    table_lines: &[90, 86, 93, 73, 76, 37, 37],
    read_before: Fingerprint {
        blake3: "0451ee219af5d75d68997fb386437b682efee023eec966dfc363a4341cee77f7",
        len: 25,
    },
    read_after: Fingerprint {
        blake3: "b7ca4216b78c917e5f5c348411de8070f68868893484e5ebac1833710b9a6db6",
        len: 41,
    },
}];

/// The Copilot release the recorded cases come from.
pub const RECORDED_VERSION: &str = "1.0.102";

/// The runtime's string table holds the escaped opening of an imported block right before
/// the table's lines (a format fact, the marker CP9 escapes on reads).
const TABLE_ANCHOR: &str = "&lt;imported_custom_instruction";

/// The strings Copilot puts around the rule files.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Prose {
    /// CP7: before the table's first row (introduction and header).
    pub table_intro: String,
    /// CP11: before an attached file's name.
    pub read_before: String,
    /// CP11: after it.
    pub read_after: String,
    /// Where they came from.
    pub source: WordingSource,
}

impl Prose {
    /// Whether the text holds placeholders rather than Copilot's words.
    pub fn is_unavailable(&self) -> bool {
        matches!(self.source, WordingSource::Unavailable { .. })
    }

    /// Placeholders, with the reason they are used.
    pub fn unavailable(reason: impl Into<String>) -> Prose {
        Prose {
            table_intro: "<table introduction and header: Copilot's wording unavailable>".to_owned(),
            read_before: "<before the file name: Copilot's wording unavailable> ".to_owned(),
            read_after: " <after the file name: Copilot's wording unavailable>".to_owned(),
            source: WordingSource::Unavailable { reason: reason.into() },
        }
    }

    /// Each string as `<prose:blake3=HASH>` from the table: what
    /// `tests/oracle/record-agents.sh` writes into recorded fixtures in place of Copilot's
    /// words.
    ///
    /// # Panics
    ///
    /// Never: [`RECORDED_VERSION`] is in the table (a unit test checks it).
    pub fn fingerprints() -> Prose {
        let release =
            RELEASES.iter().find(|r| r.version == RECORDED_VERSION).expect("recorded version in table");
        let token = |f: &Fingerprint| format!("<prose:blake3={}>", f.blake3);
        Prose {
            table_intro: token(&release.table_intro),
            read_before: token(&release.read_before),
            read_after: token(&release.read_after),
            source: WordingSource::Fingerprints,
        }
    }

    /// Finds the strings in the bytes of Copilot's native runtime (`runtime.node`), all at
    /// once: [`Scan`] in one chunk.
    ///
    /// # Errors
    ///
    /// Why nothing matched: the version is not in the table, or no wording matches it.
    pub fn from_runtime(
        bytes: &[u8],
        path: &std::path::Path,
        version: Option<&str>,
    ) -> Result<Prose, String> {
        let mut scan = Scan::new(version)?;
        scan.feed(bytes);
        scan.finish(path)
    }
}

/// CP16: a search of Copilot's native runtime for its wording, fed in chunks (the runtime
/// is 145 MB inside a compressed archive). Each string is found by the shape around it and
/// kept only when it matches a release's fingerprints.
pub struct Scan {
    releases: Vec<Candidate>,
}

/// One release's strings as far as they were found: the table's introduction, and the
/// words before and after an attached file's name.
type Candidate = (&'static Release, Option<Vec<u8>>, Option<(Vec<u8>, Vec<u8>)>);

impl Scan {
    /// A search for `version`'s wording (any known release when `None`).
    ///
    /// # Errors
    ///
    /// `version` is not in the table.
    pub fn new(version: Option<&str>) -> Result<Scan, String> {
        let releases: Vec<_> = RELEASES
            .iter()
            .filter(|r| version.is_none_or(|v| r.version == v))
            .map(|r| (r, None, None))
            .collect();
        if releases.is_empty() {
            return Err(format!(
                "Copilot CLI {} is not in ctxgraph's table (known: {})",
                version.unwrap_or("?"),
                RELEASES.iter().map(|r| r.version).collect::<Vec<_>>().join(", ")
            ));
        }
        Ok(Scan { releases })
    }

    /// Looks for the strings in one chunk (chunks should overlap by a few kilobytes).
    pub fn feed(&mut self, bytes: &[u8]) {
        // The read template: `<system_reminder>\n` + words + a placeholder (0xC0 and one
        // byte, never in UTF-8 text) + words + `\n\n` + a placeholder + `\n</system_reminder>`.
        static READ: LazyLock<Regex> = LazyLock::new(|| {
            Regex::new(r"(?s-u)<system_reminder>\n([^\xC0\x00]{1,200})\xC0.([^\xC0\x00]{1,200})\n\n\xC0.\n</system_reminder>")
                .expect("valid pattern")
        });
        static ANCHOR: LazyLock<Regex> =
            LazyLock::new(|| Regex::new(&regex::escape(TABLE_ANCHOR)).expect("valid pattern"));
        for (release, table, read) in &mut self.releases {
            if table.is_none() {
                *table = ANCHOR.find_iter(bytes).find_map(|m| {
                    let total: usize = release.table_lines.iter().sum();
                    let flat = bytes.get(m.end()..m.end() + total)?;
                    let mut lines = Vec::new();
                    let mut start = 0;
                    for len in release.table_lines {
                        lines.push(&flat[start..start + len]);
                        start += len;
                    }
                    let joined = lines.join(&b'\n');
                    fits(&release.table_intro, &joined).then_some(joined)
                });
            }
            if read.is_none() {
                *read = READ.captures_iter(bytes).find_map(|caps| {
                    (fits(&release.read_before, &caps[1]) && fits(&release.read_after, &caps[2]))
                        .then(|| (caps[1].to_vec(), caps[2].to_vec()))
                });
            }
        }
    }

    /// Whether every string of some release was found.
    pub fn is_done(&self) -> bool {
        self.releases.iter().any(|(_, table, read)| table.is_some() && read.is_some())
    }

    /// The wording found in `path`.
    ///
    /// # Errors
    ///
    /// Some string was not found (or did not match).
    pub fn finish(self, path: &std::path::Path) -> Result<Prose, String> {
        let versions: Vec<&str> = self.releases.iter().map(|(r, _, _)| r.version).collect();
        for (release, table, read) in self.releases {
            if let (Some(table), Some((before, after))) = (table, read) {
                let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
                return Ok(Prose {
                    table_intro: text(&table),
                    read_before: text(&before),
                    read_after: text(&after),
                    source: WordingSource::Installation {
                        path: path.to_path_buf(),
                        version: release.version.to_owned(),
                    },
                });
            }
        }
        Err(format!(
            "{}: no wording matching Copilot CLI {}'s fingerprints",
            path.display(),
            versions.join(" or ")
        ))
    }
}

fn fits(fingerprint: &Fingerprint, text: &[u8]) -> bool {
    text.len() == fingerprint.len && blake3::hash(text).to_hex().as_str() == fingerprint.blake3
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recorded_version_is_in_the_table() {
        let prose = Prose::fingerprints();
        assert!(prose.table_intro.starts_with("<prose:blake3=") && !prose.is_unavailable());
        let release = &RELEASES[0];
        // The lines and the newlines between them make up the whole introduction.
        assert_eq!(
            release.table_lines.iter().sum::<usize>() + release.table_lines.len() - 1,
            release.table_intro.len
        );
    }

    #[test]
    fn other_words_are_refused() {
        let bytes = b"&lt;imported_custom_instructionSome other words<system_reminder>\nX \xC0+. Y:\n\n\xC0\x13\n</system_reminder>";
        assert!(Prose::from_runtime(bytes, std::path::Path::new("/r"), None).is_err());
        let err = Prose::from_runtime(b"", std::path::Path::new("/r"), Some("9.9.9")).unwrap_err();
        assert!(err.contains("9.9.9"));
    }
}
