//! CP11/CP12: what Copilot adds after the result of a `view`: first every conditional file
//! whose patterns match the file viewed, then the rule files of each directory between the
//! file and the working directory, nearest first, each in a `<system_reminder>`.

use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobMatcher};
use serde::Serialize;

use super::{
    Fate, Kind, Level, Placement, Prose, REPO_FILE, RuleFile, copilot_context, display_from, find_name,
    folder_file, imports, imports_apply, read, walk_folder, xml_escape,
};
use ctxgraph_db::db::{Db, Workspace};
use ctxgraph_db::files::real_path;
use ctxgraph_db::path;

/// What a view of one file brings along.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct CopilotRead {
    /// The file viewed.
    pub target: PathBuf,
    /// CP11: why the view itself is refused (nothing is attached then).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
    /// Every file looked at, in order; the sent ones are attached.
    pub files: Vec<RuleFile>,
}

impl CopilotRead {
    /// The files attached, in order.
    pub fn sent(&self) -> impl Iterator<Item = &RuleFile> {
        self.files.iter().filter(|f| f.fate == Fate::Sent)
    }

    /// CP11: the user message Copilot adds after the tool result: each attached file as a
    /// `<system_reminder>`, each after a newline; `None` when nothing is attached.
    pub fn text(&self, prose: &Prose) -> Option<String> {
        let mut text = String::new();
        for file in self.sent() {
            text.push('\n');
            text.push_str(&reminder(file, prose));
        }
        (!text.is_empty()).then_some(text)
    }
}

/// CP11: one attached file: Copilot's sentence around its name, a blank line, its text
/// XML-escaped.
pub fn reminder(file: &RuleFile, prose: &Prose) -> String {
    format!(
        "<system_reminder>\n{}{}{}\n\n{}\n</system_reminder>",
        prose.read_before, file.named, prose.read_after, file.text
    )
}

/// CP11, CP12: what a view of `target` (absolute) attaches right after start-up.
#[salsa::tracked(returns(ref))]
pub fn copilot_read(db: &dyn Db, ws: Workspace, target: PathBuf) -> CopilotRead {
    let ctx = copilot_context(db, ws);
    let mut read = CopilotRead { target: target.clone(), refused: None, files: Vec::new() };
    if !target.starts_with(&ctx.cwd) {
        read.refused = Some(format!(
            "{} is outside the working directory {}: in prompt mode no one can approve the path, so the view fails and nothing is attached (CP11)",
            target.display(),
            ctx.cwd.display()
        ));
        return read;
    }
    let relative = target.strip_prefix(&ctx.root).map_or_else(|_| path::display(&target), path::display);
    // The start-up's table rows whose patterns match.
    for row in ctx.files.iter().filter(|f| f.fate == Fate::Listed) {
        let mut file = row.clone();
        file.placement = Placement::Read;
        if matches(&row.patterns, &relative) {
            file.fate = Fate::Sent;
            file.text = xml_escape(&row.content);
        } else {
            file.fate = Fate::NotMatched;
            file.text.clear();
        }
        read.files.push(file);
    }
    // Each directory from the file's up to the working directory (excluded), nearest first.
    let dir = target.parent().unwrap_or(&target);
    for dir in dir.ancestors().take_while(|d| *d != ctx.cwd && d.starts_with(&ctx.cwd)) {
        nested_dir(db, dir, &ctx.root, &relative, &mut read.files);
    }
    attach_once(db, &mut read.files);
    read
}

/// CP4 on a view: a whole file whose real path was attached before it (a `CLAUDE.md`
/// linked to the `AGENTS.md` beside it) is attached once; two regular files with equal
/// text are both attached.
fn attach_once(db: &dyn Db, files: &mut [RuleFile]) {
    let mut attached: Vec<(PathBuf, PathBuf)> = Vec::new();
    for file in files.iter_mut().filter(|f| f.fate == Fate::Sent && f.placement == Placement::Read) {
        if !matches!(file.kind, Kind::Model | Kind::RepoFile) {
            continue;
        }
        let real = real_path(db, &file.source);
        if let Some((_, of)) = attached.iter().find(|(seen, _)| *seen == real) {
            file.fate = Fate::SameFile { of: of.clone() };
            file.text.clear();
        } else {
            attached.push((real, file.source.clone()));
        }
    }
}

/// CP12: one directory's files for a read: the repository file, AGENTS.md, CLAUDE.md,
/// .claude/CLAUDE.md, GEMINI.md, then the instruction folders (a conditional file only if
/// it matches).
fn nested_dir(db: &dyn Db, dir: &Path, root: &Path, relative: &str, out: &mut Vec<RuleFile>) {
    let named = [
        (dir.join(".github"), REPO_FILE, Kind::RepoFile),
        (dir.to_path_buf(), "AGENTS.md", Kind::Model),
        (dir.to_path_buf(), "CLAUDE.md", Kind::Model),
        (dir.join(".claude"), "CLAUDE.md", Kind::Model),
        (dir.to_path_buf(), "GEMINI.md", Kind::Model),
    ];
    for (dir, name, kind) in named {
        let Some(source) = find_name(db, &dir, name) else { continue };
        out.push(nested_whole_file(db, source, kind, root));
    }
    for (folder, kind) in [
        (dir.join(".github").join("instructions"), Kind::Instructions),
        (dir.join(".claude").join("rules"), Kind::Rule),
    ] {
        for source in walk_folder(db, &folder, kind) {
            let named = display_from(root, &real_path(db, &source));
            let mut file = folder_file(db, source, named, kind, Level::Nested);
            file.placement = Placement::Read;
            match file.fate {
                Fate::Listed if !matches(&file.patterns, relative) => {
                    file.fate = Fate::NotMatched;
                    file.text.clear();
                }
                Fate::Listed | Fate::Sent => {
                    file.fate = Fate::Sent;
                    file.text = xml_escape(&file.content);
                }
                _ => file.text.clear(),
            }
            out.push(file);
        }
    }
}

fn nested_whole_file(db: &dyn Db, source: PathBuf, kind: Kind, root: &Path) -> RuleFile {
    let mut file = RuleFile {
        named: display_from(root, &source),
        kind,
        level: Level::Nested,
        placement: Placement::Read,
        bytes: super::bytes_of(db, &source),
        content: String::new(),
        text: String::new(),
        patterns: Vec::new(),
        fate: Fate::Sent,
        imports: Vec::new(),
        source,
    };
    match read(db, &file.source) {
        Err(reason) => file.fate = Fate::Unreadable { reason },
        Ok(raw) => {
            let expanded = if kind == Kind::Model && imports_apply(&file.source) {
                imports::expand(db, &file.source, &raw, root)
            } else {
                imports::Expanded { text: raw, imports: Vec::new() }
            };
            file.text = xml_escape(&expanded.text);
            file.content = expanded.text;
            file.imports = expanded.imports;
        }
    }
    file
}

/// CP12: whether any pattern matches `relative` (the path from the git root): a pattern
/// without `/` matches the file's name, one with `/` the whole path; `*`, `?` and `[…]`
/// stay within a directory, `**` crosses them, `{a,b}` is either.
pub fn matches(patterns: &[String], relative: &str) -> bool {
    let name = relative.rsplit('/').next().unwrap_or(relative);
    patterns.iter().any(|pattern| {
        let Some(glob) = compile(pattern) else { return false };
        if pattern.contains('/') { glob.is_match(relative) } else { glob.is_match(name) }
    })
}

fn compile(pattern: &str) -> Option<GlobMatcher> {
    GlobBuilder::new(pattern).literal_separator(true).build().ok().map(|g| g.compile_matcher())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_against_the_path_from_the_root() {
        let m = |p: &str, path: &str| matches(&[p.to_owned()], path);
        assert!(m("*.ts", "src/lib/a.ts") && m("a.ts", "sub/x/y/a.ts") && m("**/y/*", "sub/x/y/a.ts"));
        assert!(
            m("sub/**", "sub/x/y/a.ts") && m("**/*.{ts,js}", "a/b.js") && m("sub/?/y/*.ts", "sub/x/y/a.ts")
        );
        assert!(!m("sub/x/*.ts", "sub/x/y/a.ts") && !m("y/a.ts", "sub/x/y/a.ts") && !m("SUB/**", "sub/x"));
    }
}
