//! F1–F5: opencode's filesystem primitives, as queries over `File` inputs and
//! directory listings, so each walk and each glob re-runs only when what it looked at
//! changed.
//!
//! The glob walk is written here on `globset` matchers rather than taken from `ignore` or
//! `glob`: those read the disk themselves, and every directory this walk lists has to be
//! a `dir_listing` query so that salsa knows exactly which directories a glob depends on.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use globset::GlobBuilder;

use ctxgraph_db::db::Db;
use ctxgraph_db::files::{File, dir_listing};
use ctxgraph_db::system::{EntryKind, FileKind};

/// The directories an upward walk visits (F2): from `start` up to and including `stop`
/// (exact string equality), or to the root if `stop` is never met.
pub fn walk_up(start: &Path, stop: &Path) -> Vec<PathBuf> {
    let mut levels = Vec::new();
    for dir in start.ancestors() {
        levels.push(dir.to_path_buf());
        if dir == stop {
            break;
        }
    }
    levels
}

/// A walk could not tell whether a path exists (`ELOOP`, `EACCES`): opencode's `exists`
/// throws, and callers treat the whole walk as failed.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Inaccessible(pub PathBuf);

/// F2 `findUp(target, start, stop)`: every `level/target` that exists, nearest first.
#[salsa::tracked(returns(ref))]
pub fn find_up(
    db: &dyn Db,
    target: String,
    start: PathBuf,
    stop: PathBuf,
) -> Result<Vec<PathBuf>, Inaccessible> {
    up(db, vec![target], start, stop).clone()
}

/// F3 `up({targets, start, stop})`: per directory, then target order.
#[salsa::tracked(returns(ref))]
pub fn up(
    db: &dyn Db,
    targets: Vec<String>,
    start: PathBuf,
    stop: PathBuf,
) -> Result<Vec<PathBuf>, Inaccessible> {
    let mut found = Vec::new();
    for level in walk_up(&start, &stop) {
        for target in &targets {
            let candidate = level.join(target);
            match db.files().get(db, &candidate).kind(db) {
                FileKind::Missing => {}
                FileKind::Inaccessible => return Err(Inaccessible(candidate)),
                FileKind::File | FileKind::Directory | FileKind::Other => found.push(candidate),
            }
        }
    }
    Ok(found)
}

/// F4 `glob(pattern, {cwd, absolute: true, include: "file", dot})`: absolute paths of the
/// non-directory entries under `cwd` that match the minimatch `pattern`.
///
/// Order: node-glob's walk order, which follows the file system's listing: one directory's
/// matches come in *reverse* listing order (captured on tmpfs and ext4, where the listing is
/// newest first and hash order), so they are kept so here; matches in sibling directories of
/// a `**` arrive in an order that varies from run to run ([`GlobOrder::Race`]), kept here in
/// the same walk order. Each match is its `File` input's own path (`Arc`): the lists of every
/// level of every working directory's walk share them.
#[salsa::tracked(returns(ref))]
pub fn glob(db: &dyn Db, cwd: PathBuf, pattern: String, dot: bool) -> Arc<[Arc<Path>]> {
    // node-glob resolves `..` in its cwd lexically and returns resolved paths.
    let cwd = ctxgraph_db::path::normalize(&cwd);
    // `system_paths` refuses an entry with too many expansions before globbing it.
    let Ok(alternatives) = expand_braces(&pattern) else { return Arc::from([]) };
    let mut matches = Vec::new();
    for expanded in alternatives {
        let raw: Vec<String> = expanded.split('/').filter(|s| !s.is_empty()).map(str::to_owned).collect();
        if raw.is_empty() {
            continue;
        }
        let segments: Vec<Segment> = raw.iter().map(|s| Segment::parse(s)).collect();
        let start = if expanded.starts_with('/') { PathBuf::from("/") } else { cwd.clone() };
        let mut walker = GlobWalk { db, dot, raw: &raw, segments: &segments, out: &mut matches };
        walker.visit(&start, 0);
    }
    // The first occurrence of a path stays where it was found (brace alternatives and `**`
    // can find one file twice).
    let mut seen = std::collections::HashSet::new();
    let mut matches: Vec<Arc<Path>> =
        matches.into_iter().filter(|file| seen.insert(*file)).map(|file| Arc::clone(file.path(db))).collect();
    // node-glob walks all of a pattern's brace alternatives at once: matches in one
    // directory, literal names included (`{a,b}.md`, X-brace), come in its reverse listing
    // order, not in the alternatives' order.
    if glob_order(&matches) == GlobOrder::ReverseListing
        && let Some(dir) = matches[0].parent()
    {
        let listing = dir_listing(db, db.files().get(db, dir));
        let place = |m: &Arc<Path>| {
            let name = m.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            listing.iter().position(|e| e.name == name)
        };
        matches.sort_by_key(|m| std::cmp::Reverse(place(m)));
    }
    matches.into()
}

/// How the order of one glob call's matches is decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GlobOrder {
    /// At most one match: no order to decide.
    Single,
    /// All in one directory: that directory's reverse listing order, the same on every run
    /// on this disk, another on a disk that lists in another order.
    ReverseListing,
    /// In several directories: node-glob reads them concurrently and returns what arrives
    /// first, an order that changed between runs of the same binary on the same files.
    Race,
}

/// How `matches` (one [`glob`] call's answer) came to be in their order.
pub fn glob_order(matches: &[Arc<Path>]) -> GlobOrder {
    let mut parents = matches.iter().map(|m| m.parent());
    let Some(first) = parents.next() else { return GlobOrder::Single };
    if matches.len() == 1 {
        GlobOrder::Single
    } else if parents.all(|p| p == first) {
        GlobOrder::ReverseListing
    } else {
        GlobOrder::Race
    }
}

/// The key of one `**` walk: the pattern's segments from that `**` on, and whether that
/// `**` was the pattern's first segment (symlinked directories are entered only when not).
/// Interned, so that each directory's walk is keyed by a small id rather than a copy of
/// the segments, and the segments are compiled once per pattern ([`compiled_rest`]).
#[salsa::interned(debug)]
struct GlobStarRest<'db> {
    #[returns(ref)]
    segments: Vec<String>,
    leading: bool,
}

/// What one `**` walk found at and below one directory, in walk order: the matches of the
/// rest of the pattern with `**` standing for no directory (or descending no further),
/// then each child directory's list. Each directory holds its whole subtree's list, so a
/// `glob` at any level of an upward walk reads one memo instead of re-walking the subtree
/// (one new file used to cost every level a walk of the tree below it); matches are kept
/// as `File` ids, four bytes per match per ancestor. A boxed slice rather than an `Arc`:
/// most directories match nothing, and an empty box, unlike an empty `Arc`, allocates
/// nothing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct BelowDir {
    matches: Box<[File]>,
}

/// `**` followed by `rest` below `dir`, one query per directory: a file added deep in the
/// tree re-runs the walks on its path, and the same subtree walked from several `globUp`
/// levels (or several working directories) is walked once. Keyed by the directory's
/// `File` input rather than its path, so that salsa's key for each of a tree's thousands of
/// walks is a few bytes instead of one more copy of the path.
#[salsa::tracked(returns(ref))]
fn glob_below<'db>(db: &'db dyn Db, dir: File, rest: GlobStarRest<'db>, dot: bool) -> BelowDir {
    let segments = &compiled_rest(db, rest).0;
    let files = db.files();
    let dir_path = dir.path(db);
    let mut here = Vec::new();
    let mut walker = GlobWalk { db, dot, raw: rest.segments(db), segments, out: &mut here };
    // Zero directories: the rest of the pattern right here.
    walker.visit(dir_path, 1);
    let mut below_children: Vec<&'db [File]> = Vec::new();
    for entry in dir_listing(db, dir).iter().rev() {
        if entry.name.starts_with('.') && !dot {
            continue;
        }
        let child = dir_path.join(&entry.name);
        let last = segments.len() == 1;
        match entry.kind {
            EntryKind::Directory => {
                let child = files.get_listed(db, &child, EntryKind::Directory);
                let below = glob_below(db, child, rest, dot);
                if !below.matches.is_empty() {
                    below_children.push(&below.matches);
                }
            }
            // Symlinked directories (`follow: false`, pinned by the oracle on a `loop -> .`
            // link): entered once, and only when `**` is not the first segment, and `**`
            // does not descend any further inside them.
            EntryKind::Symlink
                if !rest.leading(db) && files.get(db, &child).kind(db) == FileKind::Directory =>
            {
                walker.visit(&child, 1);
            }
            // A trailing `**` also matches the files below it.
            _ if last => walker.visit(&child, 1),
            _ => {}
        }
    }
    let matches = here.iter().copied().chain(below_children.into_iter().flatten().copied());
    BelowDir { matches: matches.collect() }
}

/// The segments of a `**` walk, compiled once per pattern rather than once per directory
/// the walk enters (a 100k-file tree has 8k of them).
#[salsa::tracked(returns(ref))]
fn compiled_rest<'db>(db: &'db dyn Db, rest: GlobStarRest<'db>) -> CompiledRest {
    CompiledRest(rest.segments(db).iter().map(|s| Segment::parse(s)).collect())
}

/// [`Segment`]s compared by their source: a compiled matcher has no equality of its own.
struct CompiledRest(Vec<Segment>);

impl PartialEq for CompiledRest {
    fn eq(&self, other: &Self) -> bool {
        self.0.len() == other.0.len() && self.0.iter().zip(&other.0).all(|(a, b)| a.source() == b.source())
    }
}

/// Every match of `**` + `rest` below `dir`, from the per-directory walk.
fn collect_below<'db>(db: &'db dyn Db, dir: &Path, rest: GlobStarRest<'db>, dot: bool, out: &mut Vec<File>) {
    let below = glob_below(db, db.files().get(db, dir), rest, dot);
    out.extend(below.matches.iter().copied());
}

/// F5 `globUp(pattern, start, stop)`: `glob` with `dot: true` at every level of the walk,
/// nearest level first. Each level is its own query.
pub fn glob_up(db: &dyn Db, pattern: &str, start: &Path, stop: &Path) -> Vec<(PathBuf, Arc<[Arc<Path>]>)> {
    walk_up(start, stop)
        .into_iter()
        .map(|level| {
            let matches = glob(db, level.clone(), pattern.to_owned(), true).clone();
            (level, matches)
        })
        .collect()
}

enum Segment {
    Here,
    Parent,
    GlobStar,
    Literal(String),
    Pattern { source: String, matcher: globset::GlobMatcher },
}

impl Segment {
    /// What the segment was parsed from, as far as matching goes.
    fn source(&self) -> (u8, &str) {
        match self {
            Segment::Here => (0, ""),
            Segment::Parent => (1, ""),
            Segment::GlobStar => (2, ""),
            Segment::Literal(name) => (3, name),
            Segment::Pattern { source, .. } => (4, source),
        }
    }

    fn parse(raw: &str) -> Segment {
        match raw {
            "." => Segment::Here,
            ".." => Segment::Parent,
            "**" => Segment::GlobStar,
            _ if !raw.contains(['*', '?', '[']) => Segment::Literal(unescape(raw)),
            _ => match GlobBuilder::new(raw).literal_separator(true).backslash_escape(true).build() {
                Ok(glob) => Segment::Pattern { source: raw.to_owned(), matcher: glob.compile_matcher() },
                // minimatch treats an unparsable class like `[` as a literal character.
                Err(_) => Segment::Literal(unescape(raw)),
            },
        }
    }
}

fn unescape(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.extend(chars.next()),
            _ => out.push(c),
        }
    }
    out
}

struct GlobWalk<'a> {
    db: &'a dyn Db,
    dot: bool,
    /// The segments as written, for the keys of `**` walks.
    raw: &'a [String],
    segments: &'a [Segment],
    /// The matches, as their inputs.
    out: &'a mut Vec<File>,
}

impl GlobWalk<'_> {
    /// Matches `segments[index..]` below `dir`.
    fn visit(&mut self, dir: &Path, index: usize) {
        let Some(segment) = self.segments.get(index) else {
            let file = self.db.files().get(self.db, dir);
            if matches!(file.kind(self.db), FileKind::File | FileKind::Other) {
                self.out.push(file);
            }
            return;
        };
        match segment {
            Segment::Here => self.visit(dir, index + 1),
            Segment::Parent => {
                let parent = dir.parent().unwrap_or(dir).to_path_buf();
                self.visit(&parent, index + 1);
            }
            Segment::Literal(name) => self.visit(&dir.join(name), index + 1),
            Segment::Pattern { source, matcher } => {
                // node-glob processes a directory's entries last listed first.
                for entry in self.listing(dir).iter().rev() {
                    if self.dot_allows(&entry.name, source) && matcher.is_match(&entry.name) {
                        let child = dir.join(&entry.name);
                        self.db.files().get_listed(self.db, &child, entry.kind);
                        self.visit(&child, index + 1);
                    }
                }
            }
            // Zero directories, or one more, never a dot directory unless `dot`: its own
            // query per directory (`glob_below`).
            Segment::GlobStar => {
                let rest = GlobStarRest::new(self.db, self.raw[index..].to_vec(), index == 0);
                collect_below(self.db, dir, rest, self.dot, self.out);
            }
        }
    }

    fn listing(&self, dir: &Path) -> std::sync::Arc<[ctxgraph_db::system::DirEntry]> {
        dir_listing(self.db, self.db.files().get(self.db, dir)).clone()
    }

    /// minimatch: without `dot`, a leading `.` must be matched by a literal `.`.
    fn dot_allows(&self, name: &str, pattern: &str) -> bool {
        self.dot || !name.starts_with('.') || pattern.starts_with('.')
    }
}

/// The most patterns one glob's braces may expand to. Each is globbed at every level of
/// the upward walk; real entries expand to a handful. opencode has no bound: `{a,b}` 22
/// times in one entry (4 M patterns) hangs it (README, deviations).
pub const MAX_BRACE_EXPANSIONS: usize = 1024;

/// A pattern whose braces expand to more than [`MAX_BRACE_EXPANSIONS`] patterns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TooManyExpansions;

/// minimatch's brace expansion: `a/{b,c{d,e}}.md` → `a/b.md`, `a/cd.md`, `a/ce.md`.
/// A brace group without a top-level comma stays literal. Stops as soon as the result
/// would exceed [`MAX_BRACE_EXPANSIONS`], so the work is bounded too.
pub fn expand_braces(pattern: &str) -> Result<Vec<String>, TooManyExpansions> {
    let mut out = Vec::new();
    expand_into(pattern, &mut out)?;
    Ok(out)
}

fn expand_into(pattern: &str, out: &mut Vec<String>) -> Result<(), TooManyExpansions> {
    let bytes = pattern.as_bytes();
    let mut depth = 0usize;
    let mut open = None;
    let mut commas = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 1,
            b'{' => {
                if depth == 0 {
                    open = Some(i);
                    commas.clear();
                }
                depth += 1;
            }
            b',' if depth == 1 => commas.push(i),
            b'}' if depth > 0 => {
                depth -= 1;
                if depth == 0
                    && let Some(start) = open
                {
                    if commas.is_empty() {
                        // `{x}`: literal; keep looking for a real group after it.
                        let mut rest = Vec::new();
                        expand_into(&pattern[i + 1..], &mut rest)?;
                        for r in rest {
                            push(out, format!("{}{r}", &pattern[..=i]))?;
                        }
                        return Ok(());
                    }
                    let prefix = &pattern[..start];
                    let suffix = &pattern[i + 1..];
                    let mut bounds = vec![start];
                    bounds.extend(&commas);
                    bounds.push(i);
                    for pair in bounds.windows(2) {
                        let alternative = &pattern[pair[0] + 1..pair[1]];
                        expand_into(&format!("{prefix}{alternative}{suffix}"), out)?;
                    }
                    return Ok(());
                }
            }
            _ => {}
        }
        i += 1;
    }
    push(out, pattern.to_owned())
}

fn push(out: &mut Vec<String>, pattern: String) -> Result<(), TooManyExpansions> {
    if out.len() >= MAX_BRACE_EXPANSIONS {
        return Err(TooManyExpansions);
    }
    out.push(pattern);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ctxgraph_db::system::MemorySystem;
    use ctxgraph_db::testing::TestDb;

    const T: &str = "/t";

    fn db(files: &[&str]) -> TestDb {
        let fs = MemorySystem::new();
        fs.create_dir_all(T);
        for file in files {
            fs.write_file(Path::new(T).join(file), "x");
        }
        TestDb::new(fs)
    }

    fn at(relative: &str) -> PathBuf {
        Path::new(T).join(relative)
    }

    fn names(paths: &[impl AsRef<Path>]) -> Vec<String> {
        paths.iter().map(|p| p.as_ref().strip_prefix(T).unwrap().display().to_string()).collect()
    }

    // The FS-* cases are upstream's `packages/core/test/filesystem/filesystem.test.ts`
    // (docs/opencode/filesystem.md).

    #[test]
    fn fs_01_find_up_without_stop_reaches_the_root() {
        let db = db(&["target.txt"]);
        let found = find_up(&db, "target.txt".into(), at(""), PathBuf::from("/nowhere")).clone().unwrap();
        assert_eq!(found, [at("target.txt")]);
    }

    #[test]
    fn fs_02_find_up_from_below_the_stop() {
        let db = db(&["marker"]);
        let found = find_up(&db, "marker".into(), at("a/b"), at("")).clone().unwrap();
        assert_eq!(found, [at("marker")]);
    }

    #[test]
    fn fs_03_find_up_nothing() {
        let db = db(&[]);
        assert_eq!(
            find_up(&db, "nonexistent".into(), at(""), at("")).clone().unwrap(),
            Vec::<PathBuf>::new()
        );
    }

    #[test]
    fn fs_04_up_orders_by_directory_then_target() {
        let db = db(&["a.txt", "b.txt", "sub/a.txt"]);
        let found = up(&db, vec!["a.txt".into(), "b.txt".into()], at("sub"), at("")).clone().unwrap();
        assert_eq!(names(&found), ["sub/a.txt", "a.txt", "b.txt"]);
    }

    #[test]
    fn fs_05_and_06_glob_matches_files_in_cwd() {
        let db = db(&["a.ts", "b.ts", "c.json", "file.txt"]);
        assert_eq!(names(glob(&db, at(""), "*.ts".into(), false)), ["a.ts", "b.ts"]);
        assert_eq!(**glob(&db, at(""), "*.txt".into(), false), [Arc::from(at("file.txt"))]);
    }

    #[test]
    fn fs_07_globstar_crosses_directories_and_star_does_not() {
        let db = db(&["foo.ts", "foo.json", "src/a/b.ts"]);
        assert_eq!(names(glob(&db, at(""), "*.ts".into(), false)), ["foo.ts"]);
        assert_eq!(names(glob(&db, at(""), "src/**".into(), false)), ["src/a/b.ts"]);
        assert_eq!(names(glob(&db, at(""), "src/*".into(), false)), Vec::<String>::new());
    }

    /// F4: one directory's matches in its reverse listing order (`MemorySystem` lists newest
    /// first, so the reverse is creation order), brace alternatives included; matches in
    /// sibling folders are a race.
    #[test]
    fn one_directory_is_reverse_listed_and_sibling_folders_race() {
        let db = db(&["d/b.md", "d/c.md", "d/a.md", "x/one.md", "y/two.md"]);
        let star = glob(&db, at(""), "d/*.md".into(), false);
        assert_eq!(names(star), ["d/b.md", "d/c.md", "d/a.md"]);
        assert_eq!(glob_order(star), GlobOrder::ReverseListing);
        let braces = glob(&db, at(""), "d/{a,b}.md".into(), false);
        assert_eq!(names(braces), ["d/b.md", "d/a.md"]);
        assert_eq!(glob_order(glob(&db, at(""), "{x,y}/*.md".into(), false)), GlobOrder::Race);
        assert_eq!(glob_order(glob(&db, at(""), "**/one.md".into(), false)), GlobOrder::Single);
    }

    #[test]
    fn fs_08_glob_up_visits_every_level_nearest_first() {
        let db = db(&["root.md", "a/b/leaf.md"]);
        let levels = glob_up(&db, "*.md", &at("a/b"), &at(""));
        let found: Vec<Arc<Path>> = levels.into_iter().flat_map(|(_, hits)| hits.to_vec()).collect();
        assert_eq!(names(&found), ["a/b/leaf.md", "root.md"]);
    }

    #[test]
    fn dot_files_need_dot_or_a_literal_dot() {
        let db = db(&["rules/.hidden.md", "rules/a.md"]);
        assert_eq!(names(glob(&db, at(""), "rules/*.md".into(), false)), ["rules/a.md"]);
        assert_eq!(names(glob(&db, at(""), "rules/*.md".into(), true)), ["rules/.hidden.md", "rules/a.md"]);
        assert_eq!(names(glob(&db, at(""), "rules/.*.md".into(), false)), ["rules/.hidden.md"]);
    }

    #[test]
    fn braces_expand_like_minimatch() {
        assert_eq!(expand_braces("a/{b,c{d,e}}.md").unwrap(), ["a/b.md", "a/cd.md", "a/ce.md"]);
        assert_eq!(expand_braces("{x}/{a,b}").unwrap(), ["{x}/a", "{x}/b"]);
        assert_eq!(expand_braces("plain.md").unwrap(), ["plain.md"]);
    }

    #[test]
    fn brace_expansion_stops_at_its_bound() {
        // 2^10 = 1024 patterns is the most; one more group, or 22 of them, is refused
        // without expanding them all.
        let groups = |n: usize| "{a,b}".repeat(n) + ".md";
        assert_eq!(expand_braces(&groups(10)).map(|p| p.len()), Ok(MAX_BRACE_EXPANSIONS));
        assert_eq!(expand_braces(&groups(11)), Err(TooManyExpansions));
        assert_eq!(expand_braces(&groups(22)), Err(TooManyExpansions));
        assert_eq!(expand_braces(&format!("{{x}}/{}", groups(22))), Err(TooManyExpansions));
    }

    #[test]
    fn walk_stops_at_stop_or_root() {
        let levels = walk_up(Path::new("/r/a/b"), Path::new("/r"));
        assert_eq!(levels, [Path::new("/r/a/b"), Path::new("/r/a"), Path::new("/r")]);
        assert_eq!(walk_up(Path::new("/r/a"), Path::new("/elsewhere")).len(), 3);
    }
}
