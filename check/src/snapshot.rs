//! The snapshot file: a short header, then the body, byte for byte.
//!
//! ```text
//! ---
//! ctxgraph-snapshot: 1
//! scenario: api
//! ctxgraph: 0.1.0
//! profile: opencode-1.18.33
//! section: system
//! model: anthropic/claude-sonnet-4-5
//! bytes: 812
//! tokens: 203 (o200k_base)
//! blake3: 5e1f…(64 hex digits)
//! block: 1a2b3c4d5e6f7a8b environment
//! block: 9c8d7e6f5a4b3c2d <repo>/AGENTS.md
//! ---
//! <body: everything after the line above, to the end of the file>
//! ```
//!
//! The body has no terminator of its own; `bytes` and `blake3` make any change to it
//! detectable, including a final newline an editor added. The `block` lines let `check`
//! say which sources changed without re-running the old build.

use std::io;
use std::path::{Path, PathBuf};

use ctxgraph_engine::atomic::{self, Access};

use crate::render::{BlockEntry, Rendered};
use crate::scenarios::Scenario;
use ctxgraph_db::hash::content_hash;

const FORMAT_VERSION: &str = "1";
const FENCE: &str = "---";

/// `<dir>/<name>.snap`.
pub fn snap_path(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{name}.snap"))
}

/// `<dir>/<name>.snap.new`: a result waiting for `check --accept`.
pub fn pending_path(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{name}.snap.new"))
}

/// The file for a fresh result.
pub fn encode(scenario: &Scenario, rendered: &Rendered) -> String {
    let body = &rendered.body;
    let mut header = vec![
        format!("ctxgraph-snapshot: {FORMAT_VERSION}"),
        format!("scenario: {}", scenario.name),
        format!("ctxgraph: {}", env!("CARGO_PKG_VERSION")),
        format!("profile: {}", crate::profile(scenario.agent)),
        format!("section: {}", scenario.section_name()),
    ];
    if let Some(model) = &scenario.model {
        header.push(format!("model: {}", one_line(model)));
    }
    header.push(format!("bytes: {}", body.len()));
    header.push(format!("tokens: {} (o200k_base)", crate::count_tokens(body)));
    header.push(format!("blake3: {}", content_hash(body)));
    for block in &rendered.blocks {
        header.push(format!("block: {} {}", block.hash, one_line(&block.id)));
    }
    let mut out = String::with_capacity(body.len() + 64 * header.len());
    out.push_str(FENCE);
    out.push('\n');
    for line in header {
        out.push_str(&line);
        out.push('\n');
    }
    out.push_str(FENCE);
    out.push('\n');
    out.push_str(body);
    out
}

/// Header values are single lines; a path with a newline in it is written escaped.
fn one_line(text: &str) -> String {
    if text.contains(['\n', '\r']) { text.escape_debug().to_string() } else { text.to_owned() }
}

/// A snapshot read back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stored {
    /// The pinned prompt text, as it was built.
    pub body: String,
    /// The header's block table: each block's id and content hash, in prompt order.
    pub blocks: Vec<BlockEntry>,
    /// Lines before the body: body line `n` is file line `header_lines + n`.
    pub header_lines: usize,
    /// `false` when the body is not the one the header's `blake3` was computed from.
    pub intact: bool,
}

/// Why a snapshot file cannot be read as one.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// The header is missing or broken; the text says which part.
    #[error("not a ctxgraph snapshot: {0}")]
    Malformed(&'static str),
}

/// Reads a snapshot file's text back into its header and body.
pub fn decode(text: &str) -> Result<Stored, SnapshotError> {
    let rest =
        text.strip_prefix("---\n").ok_or(SnapshotError::Malformed("it does not start with a `---` line"))?;
    let mut blocks = Vec::new();
    let mut recorded_hash = None;
    let mut offset = 0;
    let mut header_lines = 1;
    loop {
        let Some(end) = rest[offset..].find('\n') else {
            return Err(SnapshotError::Malformed("the header has no closing `---` line"));
        };
        let line = &rest[offset..offset + end];
        offset += end + 1;
        header_lines += 1;
        if line == FENCE {
            break;
        }
        let Some((key, value)) = line.split_once(": ") else {
            return Err(SnapshotError::Malformed("a header line is not `key: value`"));
        };
        match key {
            "blake3" => recorded_hash = Some(value.to_owned()),
            "block" => {
                let (hash, id) =
                    value.split_once(' ').ok_or(SnapshotError::Malformed("a block line has no id"))?;
                blocks.push(BlockEntry { id: id.to_owned(), hash: hash.to_owned(), reason: None });
            }
            // The other fields are for readers; the body is what is compared.
            _ => {}
        }
    }
    let body = rest[offset..].to_owned();
    let recorded_hash = recorded_hash.ok_or(SnapshotError::Malformed("the header has no blake3 line"))?;
    let intact = content_hash(&body) == recorded_hash;
    Ok(Stored { body, blocks, header_lines, intact })
}

/// Writes a snapshot file whole or not at all (a reader sees the old file or the new
/// one), with the permissions the umask gives any file the user creates: snapshots are
/// committed and read by other tools.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    atomic::write(path, bytes, Access::Umask)
}

/// Removes a file that may not exist.
pub fn remove_if_present(path: &Path) -> io::Result<()> {
    match std::fs::remove_file(path) {
        Err(err) if err.kind() != io::ErrorKind::NotFound => Err(err),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn scenario() -> Scenario {
        Scenario {
            name: "api".into(),
            cwd: "/r".into(),
            reads: Vec::new(),
            section: ctxgraph_db::profile::Section::Rules,
            model: Some("p/m".parse().expect("model")),
            home: None,
            config_dir: None,
            env: BTreeMap::new(),
            date: "Thu Jan 01 2026".into(),
            platform: "linux",
            fetch_remote: false,
            mcp: false,
            agent: ctxgraph_db::agent::Agent::default(),
            opencode_agent: "build".into(),
        }
    }

    #[test]
    fn bodies_round_trip_exactly() {
        for body in ["", "a", "a\n", "a\n---\nb\n\n", "x\r\n"] {
            let rendered = Rendered {
                body: body.to_owned(),
                blocks: vec![BlockEntry { id: "<repo>/A B.md".into(), hash: "0123".into(), reason: None }],
            };
            let stored = decode(&encode(&scenario(), &rendered)).expect("decodes");
            assert_eq!(stored.body, body);
            assert!(stored.intact);
            assert_eq!(stored.blocks, rendered.blocks);
            let file = encode(&scenario(), &rendered);
            assert_eq!(file.lines().nth(stored.header_lines), body.lines().next());
        }
    }

    #[test]
    fn a_final_newline_added_later_is_detected() {
        let rendered = Rendered { body: "text".into(), blocks: Vec::new() };
        let edited = encode(&scenario(), &rendered) + "\n";
        let stored = decode(&edited).expect("decodes");
        assert_eq!(stored.body, "text\n");
        assert!(!stored.intact);
    }

    #[test]
    fn malformed_files_are_errors() {
        for text in ["", "body", "---\nblake3: x\n", "---\nno colon\n---\n", "---\nscenario: a\n---\n"] {
            assert!(decode(text).is_err(), "{text:?}");
        }
    }
}
