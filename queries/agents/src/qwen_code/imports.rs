//! QW7/QW8: `@imports` in Qwen Code's context files. The tree format is Gemini CLI's walk
//! ([`crate::gemini::imports::expand_tree`]) in Qwen's [`DIALECT`]; the flat format is
//! Qwen's own (it lists a file again deeper down when it is reached by a shorter chain
//! later, and stops at the depth limit).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::gemini::imports::{
    self, Dialect, Expanded, Import, MAX_DEPTH, Outcome, find_imports, read_text, within_root,
};
use ctxgraph_db::db::Db;
use ctxgraph_db::js::js_trim;

/// QW7: what Qwen does differently from Gemini: Markdown code regions, a missing file left
/// as written, the context file itself already in the chain.
pub const DIALECT: Dialect =
    Dialect { code_regions: super::markdown::code_regions, keep_missing: true, file_in_chain: true };

/// QW7: `content` (the text of `file`) with its imports inlined.
pub fn tree(db: &dyn Db, file: &Path, content: &str, root: &Path) -> Expanded {
    imports::expand_tree(db, file, content, root, DIALECT)
}

/// QW8: `content` (the text of `file`) as Qwen's flat list: the file under its own path,
/// then each file it reaches (a file's imports taken last to first, depth first), each
/// listed once, trimmed, between `--- File: … ---` lines; files that cannot be read, code,
/// URLs and paths outside `root` are skipped silently.
pub fn flat(db: &dyn Db, file: &Path, content: &str, root: &Path) -> Expanded {
    let mut cx = Flat { db, root, listed: Vec::new(), depth_of: HashMap::new(), imports: Vec::new() };
    let base = file.parent().unwrap_or(Path::new("/")).to_path_buf();
    cx.visit(content.to_owned(), &base, ctxgraph_db::path::normalize(file), 0);
    let text = cx.listed.iter().map(|(path, text)| flat_entry(path, text)).collect::<Vec<_>>().join("\n\n");
    Expanded { text, imports: cx.imports }
}

/// QW8: one file of a flat list.
pub fn flat_entry(path: &Path, text: &str) -> String {
    let p = path.display();
    format!("--- File: {p} ---\n{}\n--- End of File: {p} ---", js_trim(text))
}

struct Flat<'a> {
    db: &'a dyn Db,
    root: &'a Path,
    listed: Vec<(PathBuf, String)>,
    /// The shallowest depth each file was expanded at.
    depth_of: HashMap<PathBuf, usize>,
    imports: Vec<Import>,
}

impl Flat<'_> {
    fn visit(&mut self, content: String, base: &Path, path: PathBuf, depth: usize) {
        match self.depth_of.get(&path) {
            Some(&seen) if seen <= depth => return,
            Some(_) => {}
            None => self.listed.push((path.clone(), content.clone())),
        }
        self.depth_of.insert(path.clone(), depth);
        if depth >= MAX_DEPTH {
            return;
        }
        let code = super::markdown::code_regions(&content);
        for found in find_imports(&content).into_iter().rev() {
            let resolved = ctxgraph_db::path::resolve(base, found.path);
            let outcome = if code.iter().any(|&(s, e)| found.start >= s && found.start < e) {
                Outcome::InCode
            } else if !within_root(found.path, &resolved, self.root) {
                Outcome::OutsideProject { root: self.root.to_path_buf() }
            } else if self.depth_of.get(&resolved).is_some_and(|&seen| seen <= depth + 1) {
                Outcome::Skipped
            } else {
                match read_text(self.db, &resolved) {
                    Err(_) => Outcome::Skipped,
                    Ok(text) => {
                        let dir = resolved.parent().unwrap_or(Path::new("/")).to_path_buf();
                        self.visit(text, &dir, resolved.clone(), depth + 1);
                        Outcome::Inlined
                    }
                }
            };
            self.imports.push(Import {
                importer: path.clone(),
                path: found.path.to_owned(),
                resolved,
                depth: depth + 1,
                outcome,
            });
        }
    }
}
