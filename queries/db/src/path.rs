//! Paths the way node's `path` module spells them.
//!
//! opencode compares paths as strings after `path.resolve` / `path.join`: lexical
//! normalisation only (`.`, `..`, repeated separators), never symlink resolution (I2, I6a).
//! Matching its output byte for byte means doing exactly that, not `canonicalize`.

use std::path::{Component, Path, PathBuf};

/// `path.resolve(base, path)`: absolute and lexically normalised.
pub fn resolve(base: &Path, path: impl AsRef<Path>) -> PathBuf {
    let path = path.as_ref();
    if path.is_absolute() { normalize(path) } else { normalize(&base.join(path)) }
}

/// Lexical normalisation of an absolute path: drops `.`, applies `..` (never above `/`),
/// collapses separators, drops a trailing separator.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for component in path.components() {
        match component {
            Component::Prefix(prefix) => out = PathBuf::from(prefix.as_os_str()),
            Component::RootDir | Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(name) => out.push(name),
        }
    }
    out
}

/// The string opencode prints for a path (its paths are JS strings; a non-UTF-8 name can
/// only come out lossily).
pub fn display(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// `path.relative(from, to)` for two absolute paths: the `..` steps up from `from` to
/// their common ancestor, then down to `to`; `""` when they are the same path.
pub fn relative(from: &Path, to: &Path) -> String {
    let from = normalize(from);
    let to = normalize(to);
    let from: Vec<_> = from.components().skip(1).collect();
    let to: Vec<_> = to.components().skip(1).collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<String> = vec!["..".to_owned(); from.len() - common];
    parts.extend(to[common..].iter().map(|c| c.as_os_str().to_string_lossy().into_owned()));
    parts.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_like_node() {
        assert_eq!(resolve(Path::new("/r/pkg"), "../docs//a.md"), Path::new("/r/docs/a.md"));
        assert_eq!(resolve(Path::new("/r"), "/x/./y/../z/"), Path::new("/x/z"));
        assert_eq!(resolve(Path::new("/"), "../../a"), Path::new("/a"));
        assert_eq!(normalize(Path::new("/")), Path::new("/"));
        assert_eq!(relative(Path::new("/r/pkg"), Path::new("/r/docs/a.md")), "../docs/a.md");
        assert_eq!(relative(Path::new("/r"), Path::new("/r")), "");
        assert_eq!(relative(Path::new("/"), Path::new("/x/y")), "x/y");
    }
}
