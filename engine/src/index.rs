//! A sorted index of the `File` inputs, maintained incrementally.
//!
//! The `Files` table is a hash map (queries create inputs from many places); the engine
//! needs "every known path at or below this directory" once per directory event. Listing
//! and sorting the whole table for that is O(n log n) per event; this index is fed only
//! the inputs created since it last looked and answers a subtree with one range scan.

use std::borrow::Borrow;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;
use std::path::Path;
use std::sync::Arc;

use ctxgraph_db::Db;
use ctxgraph_db::files::File;

#[derive(Debug, Default)]
pub struct PathIndex {
    /// How many of `Files`'s inputs (in creation order) are indexed.
    seen: usize,
    /// Keyed by the `Files` table's own allocation of each path.
    paths: BTreeMap<Arc<Path>, File>,
}

impl PathIndex {
    /// Indexes the inputs created since the last call.
    pub fn catch_up(&mut self, db: &dyn Db) {
        let new = db.files().created_since(self.seen);
        self.seen += new.len();
        self.paths.extend(new.into_iter().map(|file| (file.path(db).clone(), file)));
    }

    /// Every indexed path at or below `dir`, in path order.
    pub fn subtree<'a>(&'a self, dir: &'a Path) -> impl Iterator<Item = (&'a Arc<Path>, &'a File)> + 'a {
        subtree(&self.paths, dir)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&Arc<Path>, &File)> {
        self.paths.iter()
    }
}

/// The entries of a path-keyed map at or below `dir`. `Path`'s order compares component by
/// component, so a subtree is one contiguous range starting at `dir`.
pub fn subtree<'a, K, V>(map: &'a BTreeMap<K, V>, dir: &'a Path) -> impl Iterator<Item = (&'a K, &'a V)> + 'a
where
    K: Borrow<Path> + Ord,
{
    map.range::<Path, _>((Bound::Included(dir), Bound::Unbounded))
        .take_while(move |(path, _)| (*path).borrow().starts_with(dir))
}

/// [`subtree`] for a set of paths.
pub fn subtree_of_set<'a, K>(set: &'a BTreeSet<K>, dir: &'a Path) -> impl Iterator<Item = &'a K> + 'a
where
    K: Borrow<Path> + Ord,
{
    set.range::<Path, _>((Bound::Included(dir), Bound::Unbounded))
        .take_while(move |path| (*path).borrow().starts_with(dir))
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::path::PathBuf;

    #[test]
    fn a_subtree_is_one_contiguous_range() {
        let map: BTreeMap<PathBuf, usize> =
            ["/a", "/a/b", "/a/b/c", "/a/b.md", "/a/b0", "/a/b/c/d", "/a/ba/x"]
                .iter()
                .map(|p| (PathBuf::from(p), 0))
                .collect();
        let below: Vec<_> = subtree(&map, Path::new("/a/b")).map(|(p, _)| p.to_str().unwrap()).collect();
        assert_eq!(below, ["/a/b", "/a/b/c", "/a/b/c/d"]);
    }
}
