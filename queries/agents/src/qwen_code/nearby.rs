//! QW10/QW11: what Qwen Code appends to a `read_file` result (and to any tool result that
//! names a file): the held-back rules whose `paths:` match the file, each once per session,
//! in one `<system-reminder>`. Context files near the file are never attached.

use std::path::{Path, PathBuf};

use globset::GlobBuilder;
use serde::Serialize;

use ctxgraph_db::db::{Db, Workspace};
use ctxgraph_db::files::real_path;

use super::{QwenError, RuleFate, qwen_context};

/// What a read of one file attaches.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct ReadContext {
    /// The file read.
    pub target: PathBuf,
    /// The paths (relative to the root) the rules' globs were matched against: the path as
    /// read, then its real path when that differs. Empty when the file is outside the root.
    pub matched_as: Vec<String>,
    /// The rules attached, in rule order: their source files.
    pub attached: Vec<PathBuf>,
    /// Each attached rule's block, in order.
    pub blocks: Vec<String>,
    /// Exactly what is appended to the tool's result, or `None`.
    pub text: Option<String>,
    /// QW11: context files in the folders from the file's up to the root that Qwen did not
    /// send at start-up: a read never attaches them (Gemini's would).
    pub unattached_context: Vec<PathBuf>,
}

/// QW10: what reading `target` (absolute) attaches in `ws`, right after start-up.
#[salsa::tracked(returns(ref))]
pub fn qwen_read_context(db: &dyn Db, ws: Workspace, target: PathBuf) -> Result<ReadContext, QwenError> {
    let ctx = qwen_context(db, ws).as_ref().map_err(Clone::clone)?;
    let mut read = ReadContext {
        target: target.clone(),
        matched_as: Vec::new(),
        attached: Vec::new(),
        blocks: Vec::new(),
        text: None,
        unattached_context: Vec::new(),
    };
    let Some(relative) = inside(&ctx.root, &target) else { return Ok(read) };
    for dir in target.ancestors().skip(1).take_while(|dir| dir.starts_with(&ctx.root)) {
        for name in &ctx.settings.filenames {
            let path = dir.join(name);
            if !ctx.docs.iter().any(|d| d.source == path)
                && db.files().get(db, &path).kind(db) == ctxgraph_db::system::FileKind::File
            {
                read.unattached_context.push(path);
            }
        }
    }
    read.matched_as.push(relative.clone());
    let resolved = real_path(db, &target);
    if resolved != target
        && let Some(real_relative) = inside(&real_path(db, &ctx.root), &resolved)
        && real_relative != relative
    {
        read.matched_as.push(real_relative);
    }
    for rule in ctx.rules.iter().filter(|r| r.fate == RuleFate::OnRead) {
        let globs = rule.paths.as_deref().unwrap_or_default();
        if globs.iter().any(|glob| read.matched_as.iter().any(|path| matches(glob, path))) {
            read.attached.push(rule.source.clone());
            read.blocks.push(rule.text.clone());
        }
    }
    if !read.blocks.is_empty() {
        read.text = Some(format!("\n\n<system-reminder>\n{}\n</system-reminder>", read.blocks.join("\n\n")));
    }
    Ok(read)
}

/// `target` relative to `root`, `None` when it is outside (or the root itself).
fn inside(root: &Path, target: &Path) -> Option<String> {
    let relative = ctxgraph_db::path::relative(root, target);
    (!relative.is_empty() && relative != ".." && !relative.starts_with("../")).then_some(relative)
}

/// A `paths:` glob against a root-relative path, dot files included (`*` stays inside one
/// path segment, `**` crosses them).
pub fn matches(glob: &str, path: &str) -> bool {
    GlobBuilder::new(glob)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .is_ok_and(|g| g.compile_matcher().is_match(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_like_qwen() {
        assert!(matches("src/**/*.ts", "src/a.ts"));
        assert!(matches("**/*.yml", ".github/ci.yml"));
        assert!(!matches("*.yml", ".github/ci.yml"));
        assert!(!matches("*.md", "docs/x.md"));
        assert!(matches("sub/**", "sub/deeper/file.txt"));
    }
}
