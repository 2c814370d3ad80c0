//! CC14: `claudeMdExcludes`, the user's way to keep rule files out of the block. Claude Code
//! reads the list from `~/.claude/settings.json`, the working directory's
//! `.claude/settings.json` and its `.claude/settings.local.json`, and drops every rule file,
//! import or nested file (on a Read) whose absolute path a pattern matches: a glob (`*` stays
//! within a folder, `**` crosses folders) or an absolute path.

use std::path::{Path, PathBuf};

use globset::{Glob, GlobBuilder, GlobMatcher};
use serde::Serialize;

use ctxgraph_db::db::{Db, Workspace};

/// The settings key.
pub const EXCLUDES_KEY: &str = "claudeMdExcludes";

/// One pattern, and the settings file that gave it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Exclude {
    /// As written.
    pub pattern: String,
    /// The settings file.
    pub settings: PathBuf,
}

/// Every pattern in force, in the order the settings files were read.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Excludes {
    patterns: Vec<Exclude>,
}

impl Excludes {
    /// The patterns compiled, once per walk (a pattern that is not a glob matches nothing).
    pub fn matcher(&self) -> ExcludeMatcher<'_> {
        let globs = self
            .patterns
            .iter()
            .filter_map(|exclude| {
                let glob: Glob = GlobBuilder::new(&exclude.pattern).literal_separator(true).build().ok()?;
                Some((glob.compile_matcher(), exclude))
            })
            .collect();
        ExcludeMatcher { globs }
    }
}

/// [`Excludes`] ready to match paths.
#[derive(Debug)]
pub struct ExcludeMatcher<'a> {
    globs: Vec<(GlobMatcher, &'a Exclude)>,
}

impl ExcludeMatcher<'_> {
    /// The first pattern that matches `path` (absolute).
    pub fn matching(&self, path: &Path) -> Option<&Exclude> {
        self.globs.iter().find(|(glob, _)| glob.is_match(path)).map(|(_, exclude)| *exclude)
    }
}

/// CC14: the patterns of `ws`'s settings files. A file that is missing, not JSON, or whose
/// key is not a list of strings gives none.
#[salsa::tracked(returns(ref))]
pub fn claude_md_excludes(db: &dyn Db, ws: Workspace) -> Excludes {
    let mut patterns = Vec::new();
    for (list, settings) in super::settings::values(db, ws, EXCLUDES_KEY) {
        let Some(list) = list.as_array() else { continue };
        for pattern in list.iter().filter_map(serde_json::Value::as_str) {
            patterns.push(Exclude { pattern: pattern.to_owned(), settings: settings.clone() });
        }
    }
    Excludes { patterns }
}

impl Excludes {
    /// The patterns, in the order the settings files were read, each with its file.
    pub fn patterns(&self) -> &[Exclude] {
        &self.patterns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn excludes(patterns: &[&str]) -> Excludes {
        Excludes {
            patterns: patterns
                .iter()
                .map(|p| Exclude { pattern: (*p).to_owned(), settings: PathBuf::from("/s.json") })
                .collect(),
        }
    }

    #[test]
    fn globs_match_absolute_paths_and_a_star_stays_in_its_folder() {
        let excludes = excludes(&["**/rules/x.md", "/p/CLAUDE.local.md", "/p/*.md"]);
        let set = excludes.matcher();
        assert_eq!(
            set.matching(Path::new("/home/u/p/.claude/rules/x.md")).map(|e| e.pattern.as_str()),
            Some("**/rules/x.md")
        );
        assert!(set.matching(Path::new("/p/CLAUDE.local.md")).is_some());
        assert!(set.matching(Path::new("/p/CLAUDE.md")).is_some());
        assert!(set.matching(Path::new("/p/sub/CLAUDE.md")).is_none());
        assert!(set.matching(Path::new("/p/.claude/rules/y.md")).is_none());
    }
}
