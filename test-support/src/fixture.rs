//! A whole world in one string, so a test case is one literal.
//!
//! ```text
//! //- cwd: /repo/packages/api
//! //- git: /repo
//! //- env: OPENCODE_DISABLE_CLAUDE_CODE=1
//! //- /repo/AGENTS.md
//! Root rules.
//! //- /repo/CLAUDE.md -> AGENTS.md
//! //- /repo/packages/api/
//! ```
//!
//! A `//- /path` header starts a file whose text is every line up to the next header;
//! `//- /path -> target` is a symlink (relative targets resolve against the link's
//! directory); `//- /path/` is an empty directory. `cwd:` (default `/repo`), `git:` (a
//! directory that gets a `.git` git accepts: `HEAD`, `objects/`, `refs/`) and `env:` set up the run. Lines starting with `//!`
//! before the first header are metadata for the test that reads them (see [`Fixture::meta`]).
//! The text may be indented as a whole: the common indentation is removed first.
//!
//! The host the tests crate builds a fixture's engine under is fixed: `HOME=/home`, the
//! managed config dir redirected to `/managed`, platform `linux` (`HostEnv::fixed`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ctxgraph_db::system::MemorySystem;

use crate::tree::{MemoryWriter, TreeWriter, git_worktree};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Entry {
    File { path: PathBuf, text: String },
    Symlink { path: PathBuf, target: PathBuf },
    Dir { path: PathBuf },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fixture {
    pub cwd: PathBuf,
    pub git: Vec<PathBuf>,
    pub env: BTreeMap<String, String>,
    pub entries: Vec<Entry>,
    /// `//! key value` lines, in order.
    pub meta: Vec<(String, String)>,
}

impl Fixture {
    /// Parses a fixture; panics with the offending line on a malformed one (it is test code).
    pub fn parse(text: &str) -> Fixture {
        let text = trim_indent(text);
        let mut fixture = Fixture {
            cwd: PathBuf::from("/repo"),
            git: Vec::new(),
            env: BTreeMap::new(),
            entries: Vec::new(),
            meta: Vec::new(),
        };
        let mut open: Option<(PathBuf, Vec<&str>)> = None;
        for (index, line) in text.lines().enumerate() {
            let fail = |why: &str| -> ! { panic!("fixture line {}: {why}: {line:?}", index + 1) };
            let Some(header) = line.strip_prefix("//-") else {
                match &mut open {
                    Some((_, body)) => body.push(line),
                    None if fixture.entries.is_empty() && line.starts_with("//!") => {
                        let rest = line.trim_start_matches("//!").trim();
                        let (key, value) = rest.split_once(' ').unwrap_or((rest, ""));
                        fixture.meta.push((key.to_owned(), value.trim().to_owned()));
                    }
                    None if line.trim().is_empty() => {}
                    None => fail("text outside a file; start the file with `//- /path`"),
                }
                continue;
            };
            fixture.close(open.take());
            let header = header.trim();
            if let Some(cwd) = header.strip_prefix("cwd:") {
                fixture.cwd = absolute(cwd.trim()).unwrap_or_else(|| fail("cwd must be absolute"));
            } else if let Some(repo) = header.strip_prefix("git:") {
                fixture.git.push(absolute(repo.trim()).unwrap_or_else(|| fail("git dir must be absolute")));
            } else if let Some(var) = header.strip_prefix("env:") {
                let (name, value) =
                    var.trim().split_once('=').unwrap_or_else(|| fail("env wants NAME=value"));
                fixture.env.insert(name.to_owned(), value.to_owned());
            } else if let Some((path, target)) = header.split_once(" -> ") {
                let path = absolute(path.trim()).unwrap_or_else(|| fail("paths must be absolute"));
                fixture.entries.push(Entry::Symlink { path, target: PathBuf::from(target.trim()) });
            } else if let Some(dir) = header.strip_suffix('/') {
                let path = absolute(dir).unwrap_or_else(|| fail("paths must be absolute"));
                fixture.entries.push(Entry::Dir { path });
            } else {
                let path =
                    absolute(header).unwrap_or_else(|| fail("expected `/path`, `cwd:`, `git:` or `env:`"));
                open = Some((path, Vec::new()));
            }
        }
        fixture.close(open);
        fixture
    }

    fn close(&mut self, open: Option<(PathBuf, Vec<&str>)>) {
        if let Some((path, body)) = open {
            let mut text = body.join("\n");
            if !body.is_empty() {
                text.push('\n');
            }
            self.entries.push(Entry::File { path, text });
        }
    }

    /// The values of the `//! key value` lines with this key.
    pub fn meta(&self, key: &str) -> impl Iterator<Item = &str> {
        self.meta.iter().filter(move |(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    /// Writes the world (the host's directories, the git markers, then the entries in order)
    /// under `root` (`/` for memory; a temp dir on disk).
    pub fn write_to(&self, out: &mut dyn TreeWriter, root: &Path) {
        let at = |path: &Path| root.join(path.strip_prefix("/").unwrap_or(path));
        for dir in ["/home", "/managed", &*self.cwd.to_string_lossy()] {
            out.dir(&at(Path::new(dir)));
        }
        for repo in &self.git {
            git_worktree(&at(repo), out);
        }
        for entry in &self.entries {
            match entry {
                Entry::File { path, text } => out.file(&at(path), text.clone().into_bytes()),
                Entry::Symlink { path, target } => out.symlink(target, &at(path)),
                Entry::Dir { path } => out.dir(&at(path)),
            }
        }
    }

    /// The world in memory.
    pub fn memory_system(&self) -> MemorySystem {
        let system = MemorySystem::new();
        self.write_to(&mut MemoryWriter(&system), Path::new("/"));
        system
    }
}

fn absolute(path: &str) -> Option<PathBuf> {
    path.starts_with('/').then(|| PathBuf::from(path))
}

/// Removes the indentation every non-blank line shares, a leading newline and trailing
/// blank lines (the closing quote's indentation).
fn trim_indent(text: &str) -> String {
    let text = text.strip_prefix('\n').unwrap_or(text).trim_end_matches([' ', '\t']);
    let indent = text
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| line.len() - line.trim_start().len())
        .min()
        .unwrap_or(0);
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        out.push_str(line.get(indent..).unwrap_or("").trim_end_matches('\r'));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_kind_of_line() {
        let fixture = Fixture::parse(
            r"
            //! source github.com/example/repo
            //- cwd: /repo/sub
            //- git: /repo
            //- env: A=b=c
            //- /repo/AGENTS.md
            Root rules.

              indented
            //- /repo/CLAUDE.md -> AGENTS.md
            //- /repo/sub/
            //- /repo/empty.md
            ",
        );
        assert_eq!(fixture.cwd, PathBuf::from("/repo/sub"));
        assert_eq!(fixture.git, [PathBuf::from("/repo")]);
        assert_eq!(fixture.env["A"], "b=c");
        assert_eq!(fixture.meta("source").collect::<Vec<_>>(), ["github.com/example/repo"]);
        assert_eq!(
            fixture.entries,
            [
                Entry::File { path: "/repo/AGENTS.md".into(), text: "Root rules.\n\n  indented\n".into() },
                Entry::Symlink { path: "/repo/CLAUDE.md".into(), target: "AGENTS.md".into() },
                Entry::Dir { path: "/repo/sub".into() },
                Entry::File { path: "/repo/empty.md".into(), text: String::new() },
            ]
        );
    }

    #[test]
    #[should_panic(expected = "fixture line 1: text outside a file")]
    fn text_before_a_header_is_an_error() {
        Fixture::parse("stray\n//- /repo/AGENTS.md\n");
    }
}
