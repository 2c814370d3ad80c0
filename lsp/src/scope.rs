//! Which paths the server answers for: those inside the editor's workspace folders.
//!
//! A URI is the client's to write: `file:///repo/../outside/x` or `…/../../../../etc/hostname`
//! would otherwise send the server walking directories far from the repository (every
//! working directory from the root down to the file is opened). So every URI is resolved
//! lexically (`.` and `..` applied, as opencode resolves paths) and refused outside the
//! roots; and the directory it names is resolved against symlinks too, since a link inside
//! the workspace to a directory elsewhere would lead the same walk out of it.

use std::path::{Path, PathBuf};

use ctxgraph_engine::answers::normalize;
use lsp_types::Uri;

use crate::uri::uri_to_path;

/// The workspace folders, canonical.
#[derive(Clone, Debug)]
pub struct Scope {
    roots: Vec<PathBuf>,
}

/// A URI inside the workspace: its path (lexically resolved) and the deepest root holding it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InScope {
    pub path: PathBuf,
    pub root: PathBuf,
}

impl Scope {
    /// The folders `roots`, canonical; none given (a client that sends neither folders nor a
    /// `rootUri`) is the directory the server was started in.
    pub fn new(roots: Vec<PathBuf>, cwd: Option<PathBuf>) -> Scope {
        let roots = if roots.is_empty() { cwd.into_iter().collect() } else { roots };
        let roots =
            roots.into_iter().map(|root| std::fs::canonicalize(&root).unwrap_or(normalize(&root))).collect();
        Scope { roots }
    }

    /// The path `uri` names when it is inside a workspace folder, or why it is refused.
    pub fn resolve(&self, uri: &Uri) -> Result<InScope, String> {
        let raw = uri_to_path(uri).ok_or_else(|| format!("not a file URI: {}", uri.as_str()))?;
        let path = normalize(&raw);
        let outside = || {
            let roots: Vec<String> = self.roots.iter().map(|r| r.display().to_string()).collect();
            format!(
                "{} is outside the workspace folders ({}): ctxgraph lsp answers only for files inside them",
                path.display(),
                roots.join(", ")
            )
        };
        let root = self
            .roots
            .iter()
            .filter(|root| path.starts_with(root))
            .max_by_key(|root| root.components().count())
            .ok_or_else(outside)?;
        // The file's directory, through its symlinks: the part that exists must still be
        // below the root (the file itself may be a link, as agents follow one).
        if let Some(real) = path.parent().and_then(existing_ancestor_resolved)
            && !real.starts_with(root)
        {
            return Err(outside());
        }
        Ok(InScope { path, root: root.clone() })
    }

    /// Whether `uri` is inside the workspace (see [`Scope::resolve`]).
    pub fn contains(&self, uri: &Uri) -> Option<PathBuf> {
        self.resolve(uri).ok().map(|found| found.path)
    }
}

/// The deepest existing directory at or above `dir`, canonical.
fn existing_ancestor_resolved(dir: &Path) -> Option<PathBuf> {
    dir.ancestors().find_map(|at| std::fs::canonicalize(at).ok())
}

#[cfg(test)]
mod tests {
    use std::str::FromStr;

    use super::*;

    fn uri(text: &str) -> Uri {
        Uri::from_str(text).expect("uri")
    }

    #[test]
    fn a_uri_is_resolved_lexically_and_through_links_and_refused_outside_the_roots() {
        let temp = tempfile::tempdir().expect("tempdir");
        let base = std::fs::canonicalize(temp.path()).expect("canonical");
        let repo = base.join("repo");
        std::fs::create_dir_all(repo.join("docs")).expect("mkdir");
        std::fs::create_dir_all(base.join("outside")).expect("mkdir");
        std::os::unix::fs::symlink(base.join("outside"), repo.join("link")).expect("symlink");
        let scope = Scope::new(vec![repo.clone()], None);
        let at = |rest: &str| uri(&format!("file://{}{rest}", repo.display()));
        assert_eq!(
            scope.resolve(&at("/docs/../AGENTS.md")),
            Ok(InScope { path: repo.join("AGENTS.md"), root: repo.clone() })
        );
        assert_eq!(scope.contains(&at("/new/dir/file.md")), Some(repo.join("new/dir/file.md")));
        for escape in
            ["/../outside/x.md", "/%2e%2e/outside/x.md", "/../../../../etc/hostname", "/link/AGENTS.md"]
        {
            let refused = scope.resolve(&at(escape)).expect_err(escape);
            assert!(refused.contains("is outside the workspace folders"), "{refused}");
        }
        assert!(scope.resolve(&uri("https://example.invalid/x")).is_err());
        let started_here = Scope::new(Vec::new(), Some(repo.clone()));
        assert!(started_here.contains(&at("/AGENTS.md")).is_some());
    }
}
