//! N1–N6: the rule files the read tool attaches when the model reads a file, in a fresh
//! session (no claims, no earlier reads; `session::reads` adds those), and what the read
//! tool does with them for the file's type.

use std::path::{Path, PathBuf};

use crate::config::ConfigError;
use crate::flags::flags;
use crate::instructions::{render_block, rule_names, rule_text, system_paths};
use crate::prompt::BuildError;
use ctxgraph_db::db::{Db, Workspace};
use ctxgraph_db::files::{File, file_bytes};
use ctxgraph_db::path;

/// Why a directory's rule file was not attached.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Skip {
    /// It is the file being read.
    IsTarget,
    /// Already in the system prompt.
    InSystemPrompt,
    /// Read as empty (missing content, unreadable, a directory).
    Empty,
}

/// A rule file found above a file the agent read (N2), attached or skipped.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct NearbyRule {
    /// The rule file.
    pub path: PathBuf,
    /// `Instructions from: <path>\n<content>`, or `None` when skipped.
    pub block: Option<String>,
    /// Why it was not attached, when it was not.
    pub skipped: Option<Skip>,
    /// N4.1: the existence checks the walk has made when it finds this file, counted from
    /// the target's directory: one per rule name tried in each directory (all of them where
    /// none exists), this directory's included.
    pub checks: usize,
}

/// The rules the read tool attaches to one file read (N1–N5).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Nearby {
    /// What the read tool makes of the file.
    pub kind: ReadKind,
    /// One per visited directory that has a rule file, nearest first.
    pub rules: Vec<NearbyRule>,
}

impl Nearby {
    /// A directory: the read tool lists it and attaches nothing (N1).
    pub fn directory() -> Self {
        Nearby { kind: ReadKind::Directory, rules: Vec::new() }
    }

    /// N5/N6: what the read tool appends after `\n\n`, or `None` when nothing is shown.
    pub fn reminder(&self) -> Option<String> {
        reminder(self.kind, self.rules.iter().filter_map(|r| r.block.as_deref()))
    }
}

/// N5/N6: the `<system-reminder>` of a read: only text files show one.
pub fn reminder<'a>(kind: ReadKind, blocks: impl Iterator<Item = &'a str>) -> Option<String> {
    let blocks: Vec<&str> = blocks.collect();
    (kind == ReadKind::Text && !blocks.is_empty())
        .then(|| format!("<system-reminder>\n{}\n</system-reminder>", blocks.join("\n\n")))
}

/// What opencode's read tool does with a regular file, decided after the nearby rules
/// are resolved (and claimed).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ReadKind {
    /// Numbered lines, and the reminder.
    Text,
    /// jpeg/png/gif/webp (N6): an attachment; the rules count as loaded, no reminder.
    Image,
    /// N6: as an image.
    Pdf,
    /// The read fails (`Cannot read binary file`): nothing is shown and, the tool part not
    /// being completed, nothing counts as loaded.
    Binary,
    /// Listed, never resolved (N1).
    Directory,
}

impl ReadKind {
    /// The rules are recorded in `metadata.loaded`.
    pub fn records_loaded(self) -> bool {
        matches!(self, ReadKind::Text | ReadKind::Image | ReadKind::Pdf)
    }
}

/// How many leading bytes the read tool samples (its magic-number and binary checks).
const SAMPLE_BYTES: usize = 4096;

/// Extensions the read tool refuses as binary whatever their content.
const BINARY_EXTENSIONS: &[&str] = &[
    "zip", "tar", "gz", "exe", "dll", "so", "class", "jar", "war", "7z", "doc", "docx", "xls", "xlsx", "ppt",
    "pptx", "odt", "ods", "odp", "bin", "dat", "obj", "o", "a", "lib", "wasm", "pyc", "pyo",
];

/// The read tool's classification: the MIME type sniffed from magic numbers, else the one
/// its extension maps to; images (jpeg/png/gif/webp) and PDFs are attachments; then the
/// binary test (extension list, a NUL byte, or more than 30 % control bytes in the sample).
pub fn classify(path: &Path, bytes: &[u8]) -> ReadKind {
    let sample = &bytes[..bytes.len().min(SAMPLE_BYTES)];
    let extension = path.extension().map(|e| e.to_string_lossy().to_lowercase()).unwrap_or_default();
    let mime = sniff(sample).unwrap_or(match extension.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" | "jpe" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "pdf" => "application/pdf",
        _ => "",
    });
    match mime {
        "image/png" | "image/jpeg" | "image/gif" | "image/webp" => return ReadKind::Image,
        "application/pdf" => return ReadKind::Pdf,
        _ => {}
    }
    if BINARY_EXTENSIONS.contains(&extension.as_str()) {
        return ReadKind::Binary;
    }
    if sample.is_empty() {
        return ReadKind::Text;
    }
    if sample.contains(&0) {
        return ReadKind::Binary;
    }
    let control = sample.iter().filter(|&&b| b < 9 || (b > 13 && b < 32)).count();
    // More than 30% control bytes, compared in integers: the same verdict as the float ratio.
    if control * 10 > sample.len() * 3 { ReadKind::Binary } else { ReadKind::Text }
}

fn sniff(sample: &[u8]) -> Option<&'static str> {
    if sample.starts_with(&[137, 80, 78, 71, 13, 10, 26, 10]) {
        Some("image/png")
    } else if sample.starts_with(&[255, 216, 255]) {
        Some("image/jpeg")
    } else if sample.starts_with(b"GIF8") {
        Some("image/gif")
    } else if sample.starts_with(b"BM") {
        Some("image/bmp")
    } else if sample.starts_with(b"%PDF-") {
        Some("application/pdf")
    } else if sample.starts_with(b"RIFF") && sample.get(8..12) == Some(b"WEBP") {
        Some("image/webp")
    } else {
        None
    }
}

/// [`classify`] for a file through its input (an unreadable file classifies by its name).
#[salsa::tracked(returns(copy))]
pub fn read_kind(db: &dyn Db, file: File) -> ReadKind {
    match file_bytes(db, file) {
        Ok(bytes) => classify(file.path(db), bytes),
        Err(_) => classify(file.path(db), &[]),
    }
}

/// N3 for a read of `target` (resolved against `D`).
#[salsa::tracked(returns(ref))]
pub fn nearby_rules(db: &dyn Db, ws: Workspace, target: PathBuf) -> Result<Nearby, BuildError> {
    let flags = flags(db, ws.host(db)).as_ref().map_err(|e| ConfigError::Flag(e.clone()))?;
    let system = system_paths(db, ws).as_ref().map_err(|e| BuildError::Config(e.clone()))?;
    let root = ws.cwd(db);
    let target = path::resolve(root, &target);
    let names = rule_names(flags.disable_claude_code_prompt.is_some());
    let root_text = path::display(root);
    let mut rules = Vec::new();
    let mut checks = 0;
    let mut dir = target.parent().map(Path::to_path_buf);
    // N3: a plain string-prefix test, so a sibling `D2` of `D` sharing its prefix is walked.
    while let Some(cur) = dir.take().filter(|cur| path::display(cur).starts_with(&root_text) && cur != root) {
        let found = names
            .iter()
            .map(|name| cur.join(name))
            .position(|candidate| db.files().get(db, &candidate).kind(db).exists());
        checks += found.map_or(names.len(), |at| at + 1);
        if let Some(found) = found.map(|at| cur.join(names[at])) {
            let skipped = if found == target {
                Some(Skip::IsTarget)
            } else if system.contains(&found) {
                Some(Skip::InSystemPrompt)
            } else {
                None
            };
            let rule = if skipped.is_some() {
                NearbyRule { path: found, block: None, skipped, checks }
            } else {
                let text = rule_text(db, &found);
                if text.text().is_empty() {
                    NearbyRule { path: found, block: None, skipped: Some(Skip::Empty), checks }
                } else {
                    let block = render_block(&path::display(&found), text.text());
                    NearbyRule { path: found, block: Some(block), skipped: None, checks }
                }
            };
            rules.push(rule);
        }
        dir = cur.parent().map(Path::to_path_buf);
    }
    let kind = read_kind(db, db.files().get(db, &target));
    Ok(Nearby { kind, rules })
}
