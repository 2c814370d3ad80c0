//! GM4: `@path` imports in a context file, inlined the way Gemini CLI 0.61.0 does it, and
//! the way Qwen Code (a descendant of Gemini CLI) does it: the tree walk is one, what differs
//! between the two is a [`Dialect`].
//!
//! Written by hand: the rules are Gemini's own (which `@` starts an import, which backtick
//! runs hide one, the project-root check, the cycle and depth limits, the error comments),
//! and no crate implements them.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;

use ctxgraph_db::db::Db;
use ctxgraph_db::files::file_bytes;
use ctxgraph_db::system::FileKind;

use super::settings::ImportFormat;

/// GM4: imports nest at most this deep; a file reached at this depth is inlined as it is.
pub const MAX_DEPTH: usize = 5;

/// What an agent descended from Gemini CLI does differently with `@imports`.
#[derive(Clone, Copy, Debug)]
pub struct Dialect {
    /// The byte ranges of a file's text whose `@` is code, not an import.
    pub code_regions: fn(&str) -> Vec<(usize, usize)>,
    /// A file that does not exist leaves its `@path` as written (Qwen Code) instead of a
    /// failure comment (Gemini).
    pub keep_missing: bool,
    /// The context file itself counts as being inlined already (Qwen Code), so importing
    /// it is a cycle at once; in Gemini it is inlined once first.
    pub file_in_chain: bool,
}

/// Gemini CLI 0.61.0's imports (GM4).
pub const GEMINI: Dialect = Dialect { code_regions: code_spans, keep_missing: false, file_in_chain: false };

/// What became of one `@path` in a context file.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case", tag = "outcome")]
pub enum Outcome {
    /// Replaced by the file's (processed) text between the import markers.
    Inlined,
    /// Inside a backtick span: left as written.
    InCode,
    /// A URL or a path outside the project root: replaced by a failure comment.
    OutsideProject {
        /// The root it had to stay in.
        root: PathBuf,
    },
    /// The file is already being inlined further up this chain: a cycle.
    AlreadyProcessed,
    /// Qwen Code: the file does not exist, and the `@path` stays as written.
    Missing,
    /// The file could not be read; the comment carries node's error message.
    Failed {
        /// node's message.
        message: String,
    },
    /// Flat format: the file was already listed, or could not be read (left out silently).
    Skipped,
    /// In a file inlined at the depth limit: not processed, left as written.
    DepthLimit,
}

impl Outcome {
    /// What happened to the import, in words (a lint message's reason, a hover).
    pub fn describe(&self) -> String {
        match self {
            Outcome::Inlined => "inlined".to_owned(),
            Outcome::InCode => "inside a code span, left as written".to_owned(),
            Outcome::OutsideProject { root } => {
                format!("it leaves the project root {} or is a URL", ctxgraph_db::path::display(root))
            }
            Outcome::AlreadyProcessed => "it is an import cycle".to_owned(),
            Outcome::Missing => "there is no such file, so it is left as written".to_owned(),
            Outcome::Failed { message } => message.clone(),
            Outcome::Skipped => "already listed, or unreadable: left out".to_owned(),
            Outcome::DepthLimit => format!("imports nest at most {MAX_DEPTH} deep"),
        }
    }
}

/// One `@path` and its fate.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Import {
    /// The file the `@path` is written in.
    pub importer: PathBuf,
    /// The path as written after `@`.
    pub path: String,
    /// `path` resolved against the importer's directory.
    pub resolved: PathBuf,
    /// 1 for an import in the context file itself.
    pub depth: usize,
    /// What happened to it.
    #[serde(flatten)]
    pub outcome: Outcome,
}

impl Import {
    /// Whether the imported text is in the context.
    pub fn is_inlined(&self) -> bool {
        self.outcome == Outcome::Inlined
    }
}

/// The processed text of one context file and every `@path` met on the way.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Expanded {
    /// The text with imports inlined (not yet trimmed).
    pub text: String,
    /// Every import, in the order it was met (depth first).
    pub imports: Vec<Import>,
}

/// Node's `readFile(p, "utf-8")`: lossy, and a byte order mark stays in the text.
pub fn read_text(db: &dyn Db, path: &Path) -> Result<String, String> {
    let file = db.files().get(db, path);
    let display = path.display();
    match file.kind(db) {
        FileKind::Missing => return Err(format!("ENOENT: no such file or directory, access '{display}'")),
        FileKind::Directory => return Err("EISDIR: illegal operation on a directory, read".to_owned()),
        _ => {}
    }
    match file_bytes(db, file) {
        Ok(bytes) => Ok(String::from_utf8_lossy(bytes).into_owned()),
        Err(ctxgraph_db::files::ReadFailure::PermissionDenied) => {
            Err(format!("EACCES: permission denied, open '{display}'"))
        }
        Err(err) => Err(format!("{err}, open '{display}'")),
    }
}

/// GM4: `content` (the text of `file`) with its imports processed. `root` is the project
/// root imports must stay inside.
pub fn expand(db: &dyn Db, file: &Path, content: &str, root: &Path, format: ImportFormat) -> Expanded {
    match format {
        ImportFormat::Tree => expand_tree(db, file, content, root, GEMINI),
        ImportFormat::Flat => {
            let mut imports = Vec::new();
            let base = file.parent().unwrap_or(Path::new("/"));
            let text = flat(db, content, file, base, root, &mut imports);
            Expanded { text, imports }
        }
    }
}

/// GM4 (tree format) in `dialect`: each import inlined where it stands, between markers.
pub fn expand_tree(db: &dyn Db, file: &Path, content: &str, root: &Path, dialect: Dialect) -> Expanded {
    let mut imports = Vec::new();
    let base = file.parent().unwrap_or(Path::new("/"));
    let chain = if dialect.file_in_chain { vec![file.to_path_buf()] } else { Vec::new() };
    let mut cx = Tree { db, root, dialect, imports: &mut imports };
    let text = cx.process(content, file, base, &chain, 0);
    Expanded { text, imports }
}

struct Tree<'a> {
    db: &'a dyn Db,
    root: &'a Path,
    dialect: Dialect,
    imports: &'a mut Vec<Import>,
}

impl Tree<'_> {
    /// `chain`: the files being inlined above this one (with [`Dialect::file_in_chain`]
    /// off, the context file itself is not in it, so a file importing itself is inlined once
    /// before the cycle is noticed).
    fn process(
        &mut self,
        content: &str,
        file: &Path,
        base: &Path,
        chain: &[PathBuf],
        depth: usize,
    ) -> String {
        if depth >= MAX_DEPTH {
            for found in find_imports(content) {
                let resolved = ctxgraph_db::path::resolve(base, found.path);
                self.record(file, found.path, resolved, depth + 1, Outcome::DepthLimit);
            }
            return content.to_owned();
        }
        let code = (self.dialect.code_regions)(content);
        let mut out = String::with_capacity(content.len());
        let mut last = 0;
        for found in find_imports(content) {
            out.push_str(&content[last..found.start]);
            last = found.end;
            let resolved = ctxgraph_db::path::resolve(base, found.path);
            let record = |this: &mut Self, outcome| {
                this.record(file, found.path, resolved.clone(), depth + 1, outcome);
            };
            if code.iter().any(|&(s, e)| found.start >= s && found.start < e) {
                out.push('@');
                out.push_str(found.path);
                record(self, Outcome::InCode);
                continue;
            }
            if !within_root(found.path, &resolved, self.root) {
                let _ = write!(out, "<!-- Import failed: {} - Path traversal attempt -->", found.path);
                record(self, Outcome::OutsideProject { root: self.root.to_path_buf() });
                continue;
            }
            if chain.contains(&resolved) {
                let _ = write!(out, "<!-- File already processed: {} -->", found.path);
                record(self, Outcome::AlreadyProcessed);
                continue;
            }
            let missing = self.db.files().get(self.db, &resolved).kind(self.db) == FileKind::Missing;
            match read_text(self.db, &resolved) {
                Err(_) if missing && self.dialect.keep_missing => {
                    out.push('@');
                    out.push_str(found.path);
                    record(self, Outcome::Missing);
                }
                Err(message) => {
                    let _ = write!(out, "<!-- Import failed: {} - {message} -->", found.path);
                    record(self, Outcome::Failed { message });
                }
                Ok(text) => {
                    record(self, Outcome::Inlined);
                    let mut chain = chain.to_vec();
                    chain.push(resolved.clone());
                    let dir = resolved.parent().unwrap_or(Path::new("/")).to_path_buf();
                    let inner = self.process(&text, &resolved, &dir, &chain, depth + 1);
                    let _ = write!(
                        out,
                        "<!-- Imported from: {p} -->\n{inner}\n<!-- End of import from: {p} -->",
                        p = found.path
                    );
                }
            }
        }
        out.push_str(&content[last..]);
        out
    }

    fn record(&mut self, importer: &Path, path: &str, resolved: PathBuf, depth: usize, outcome: Outcome) {
        self.imports.push(Import {
            importer: importer.to_path_buf(),
            path: path.to_owned(),
            resolved,
            depth,
            outcome,
        });
    }
}

/// GM4 (flat format): the context file under its directory's name, then each file it reaches,
/// depth first with a file's imports taken last to first, each listed once, each trimmed,
/// between `--- File: … ---` lines.
fn flat(
    db: &dyn Db,
    content: &str,
    file: &Path,
    base: &Path,
    root: &Path,
    imports: &mut Vec<Import>,
) -> String {
    let mut cx = Flat { db, root, listed: Vec::new(), imports };
    // Gemini lists the context file itself under its directory's path.
    cx.visit(content.to_owned(), file, base, base.to_path_buf(), 0);
    cx.listed
        .iter()
        .map(|(path, text)| {
            let p = path.display();
            format!("--- File: {p} ---\n{}\n--- End of File: {p} ---", ctxgraph_db::js::js_trim(text))
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

struct Flat<'a> {
    db: &'a dyn Db,
    root: &'a Path,
    /// Each file once, in the order listed, under the path it is listed as.
    listed: Vec<(PathBuf, String)>,
    imports: &'a mut Vec<Import>,
}

impl Flat<'_> {
    fn visit(&mut self, content: String, file: &Path, base: &Path, listed_as: PathBuf, depth: usize) {
        if self.listed.iter().any(|(p, _)| *p == listed_as) {
            return;
        }
        self.listed.push((listed_as, content.clone()));
        let code = code_spans(&content);
        for found in find_imports(&content).into_iter().rev() {
            let resolved = ctxgraph_db::path::resolve(base, found.path);
            let outcome = if code.iter().any(|&(s, e)| found.start >= s && found.start < e) {
                Outcome::InCode
            } else if !within_root(found.path, &resolved, self.root) {
                Outcome::OutsideProject { root: self.root.to_path_buf() }
            } else if self.listed.iter().any(|(p, _)| *p == resolved) {
                Outcome::Skipped
            } else {
                match read_text(self.db, &resolved) {
                    Err(_) => Outcome::Skipped,
                    Ok(text) => {
                        self.record(file, found.path, resolved.clone(), depth + 1, Outcome::Inlined);
                        let dir = resolved.parent().unwrap_or(Path::new("/")).to_path_buf();
                        self.visit(text, &resolved, &dir, resolved.clone(), depth + 1);
                        continue;
                    }
                }
            };
            self.record(file, found.path, resolved, depth + 1, outcome);
        }
    }

    fn record(&mut self, importer: &Path, path: &str, resolved: PathBuf, depth: usize, outcome: Outcome) {
        self.imports.push(Import {
            importer: importer.to_path_buf(),
            path: path.to_owned(),
            resolved,
            depth,
            outcome,
        });
    }
}

/// GM4: URLs never import; a path must resolve inside the project root (lexically:
/// ctxgraph does not resolve symlinks here).
pub(crate) fn within_root(written: &str, resolved: &Path, root: &Path) -> bool {
    let url = ["file://", "http://", "https://"].iter().any(|scheme| written.starts_with(scheme));
    !url && resolved.starts_with(root)
}

/// One `@path` candidate: byte range of `@path` and the path.
pub(crate) struct Found<'a> {
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) path: &'a str,
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// GM4: an `@` at the start of the text or after a space, tab or line break, followed by a
/// path up to the next such character, starting with `.`, `/` or an ASCII letter.
pub(crate) fn find_imports(content: &str) -> Vec<Found<'_>> {
    let bytes = content.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    while let Some(at) = content[i..].find('@').map(|k| i + k) {
        if at > 0 && !is_space(bytes[at - 1]) {
            i = at + 1;
            continue;
        }
        let end = bytes[at + 1..].iter().position(|&b| is_space(b)).map_or(bytes.len(), |k| at + 1 + k);
        let path = &content[at + 1..end];
        if path.as_bytes().first().is_some_and(|&c| c == b'.' || c == b'/' || c.is_ascii_alphabetic()) {
            found.push(Found { start: at, end, path });
        }
        i = end + 1;
        if i >= bytes.len() {
            break;
        }
    }
    found
}

/// GM4: the spans of ``(`+)[\s\S]*?\1`` matched left to right, as a JavaScript regex with a
/// backreference finds them: at each backtick, the longest opening run that has a closing
/// run of the same length later, the nearest such closing run. (The `regex` crate has no
/// backreferences; this is the same search spelled out.)
fn code_spans(content: &str) -> Vec<(usize, usize)> {
    let bytes = content.as_bytes();
    let mut spans = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'`' {
            i += 1;
            continue;
        }
        let run = bytes[i..].iter().take_while(|&&b| b == b'`').count();
        let span = (1..=run).rev().find_map(|n| {
            let fence = &bytes[i..i + n];
            (i + n..=bytes.len().saturating_sub(n)).find(|&k| &bytes[k..k + n] == fence).map(|k| (i, k + n))
        });
        match span {
            Some((start, end)) => {
                spans.push((start, end));
                i = end;
            }
            None => i += 1,
        }
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(content: &str) -> Vec<&str> {
        find_imports(content).iter().map(|f| f.path).collect()
    }

    #[test]
    fn an_import_starts_after_whitespace_with_a_dot_slash_or_letter() {
        assert_eq!(paths("@a.md x@b.md\t@./c.md\n@/d @~/e @1 @ (@f)"), ["a.md", "./c.md", "/d"]);
    }

    #[test]
    fn code_spans_match_like_the_backreference_regex() {
        assert_eq!(code_spans("a `x` b"), [(2, 5)]);
        assert_eq!(code_spans("```\n@a\n```"), [(0, 10)]);
        // An unclosed triple fence still pairs its own backticks.
        assert_eq!(code_spans("```x"), [(0, 2)]);
        assert_eq!(code_spans("`` a ` b ``"), [(0, 11)]);
        assert_eq!(code_spans("no ticks"), []);
    }
}
