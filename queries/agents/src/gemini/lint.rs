//! `lint --agent gemini`: the `@import`s Gemini CLI does not inline (CG015, `docs/lint.md`),
//! read off its facts.

use super::{GeminiContext, Outcome};
use ctxgraph_db::lint::{Code, Finding};
use ctxgraph_db::path;

/// CG015: every `@import` in a file Gemini sends that it does not inline (a missing file, a
/// directory, a path outside the project, a cycle, the depth limit).
pub fn gemini_findings(ctx: &GeminiContext) -> Vec<Finding> {
    let mut findings = Vec::new();
    for doc in ctx.docs.iter().filter(|d| d.is_sent()) {
        for import in &doc.imports {
            let why = match &import.outcome {
                Outcome::Inlined | Outcome::InCode | Outcome::Skipped | Outcome::Missing => continue,
                failed => failed.describe(),
            };
            findings.push(Finding::about_file(
                Code::GeminiImportFailed,
                format!(
                    "Gemini CLI does not inline `@{}` in {}: {why}; the model sees an HTML comment instead (GM4)",
                    import.path,
                    path::display(&import.importer)
                ),
                &import.importer,
                "fix the path, or write the `@` inside backticks if it is not an import",
            ));
        }
    }
    findings
}

/// The folders a walk for nested context files looks in at most: beyond, no answer.
const WALK_FOLDERS: usize = 5_000;

/// Which of `names` a file below `root` bears (a read there attaches it), looked for in at
/// most [`WALK_FOLDERS`] folders (links to folders followed); `None` when the walk reached
/// that bound. `.git` and `node_modules` are not entered.
fn names_below<'a>(
    db: &dyn ctxgraph_db::Db,
    root: &std::path::Path,
    names: &[&'a str],
) -> Option<Vec<&'a str>> {
    use ctxgraph_db::system::EntryKind;
    let mut found: Vec<&str> = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    let mut folders = 0;
    while let Some(dir) = pending.pop() {
        if found.len() == names.len() {
            break;
        }
        folders += 1;
        if folders > WALK_FOLDERS {
            return None;
        }
        for entry in ctxgraph_db::files::dir_listing(db, db.files().get(db, &dir)).iter() {
            match entry.kind {
                EntryKind::Directory if !matches!(entry.name.as_str(), ".git" | "node_modules") => {
                    pending.push(dir.join(entry.name.as_str()));
                }
                EntryKind::Directory => {}
                // A link to a folder is walked too (the bound ends a loop), so a name behind
                // it is found rather than reported.
                EntryKind::Symlink
                    if db.files().get(db, &dir.join(entry.name.as_str())).kind(db)
                        == ctxgraph_db::system::FileKind::Directory =>
                {
                    pending.push(dir.join(entry.name.as_str()));
                }
                _ => found.extend(names.iter().filter(|name| **name == entry.name.as_str())),
            }
        }
    }
    Some(found)
}

/// CG026: each context file name the workspace's own settings give (`context.fileName` in
/// `workspace_settings`, GM6/QW2) that no file the agent found at start-up bears, the names
/// it always searches (`always`) aside: the setting adds nothing here. Names are matched
/// exactly, case included, so `Agents.md` finds no `AGENTS.md` on a case-sensitive disk. A
/// name a file below the working directory bears is found (a read there attaches it).
/// Names given by the user's or the system's settings apply to every project and are not
/// reported.
pub fn context_name_findings<'a>(
    db: &dyn ctxgraph_db::Db,
    (title, rule): (&str, &str),
    (names, names_from): (&[String], Option<&std::path::Path>),
    workspace_settings: &std::path::Path,
    always: &[&str],
    found: impl Iterator<Item = &'a std::path::Path> + Clone,
) -> Vec<Finding> {
    if names_from != Some(workspace_settings) {
        return Vec::new();
    }
    // Names with a folder in them are left alone: only a whole walk could tell.
    let missing: Vec<&str> = names
        .iter()
        .map(String::as_str)
        .filter(|name| !always.contains(name) && !name.contains('/'))
        .filter(|name| !found.clone().any(|file| file.ends_with(name)))
        .collect();
    let root = workspace_settings.parent().and_then(std::path::Path::parent);
    let below = root.map_or_else(|| Some(Vec::new()), |root| names_below(db, root, &missing));
    // A walk that hit its bound says nothing: no finding rather than a wrong one.
    let Some(below) = below else { return Vec::new() };
    missing
        .into_iter()
        .filter(|name| !below.contains(name))
        .map(|name| Finding {
            code: Code::ContextNameFindsNothing,
            severity: Code::ContextNameFindsNothing.severity(),
            message: format!(
                "context.fileName in {} names `{name}`, but no file of that name is in a folder {title} searches at start or below the working directory (names match exactly, case included), so the setting adds nothing here ({rule})",
                path::display(workspace_settings)
            ),
            location: Some(ctxgraph_db::lint::Location::at_json_string(db, workspace_settings, name)),
            hint: "check the spelling and case against the file on disk, or drop the name".to_owned(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use ctxgraph_db::system::MemorySystem;
    use ctxgraph_db::testing::TestDb;

    use super::names_below;

    /// The walk finds a name behind a link to a folder, ends on a link back up, and gives no
    /// answer past its bound rather than a wrong one.
    #[test]
    fn the_walk_follows_links_and_stops_at_its_bound() {
        let fs = MemorySystem::new();
        fs.write_file("/r/pkg/AGENTS.md", "x");
        fs.write_file("/elsewhere/Agents.md", "x");
        fs.symlink("/elsewhere", "/r/linked");
        let db = TestDb::new(fs);
        let below = names_below(&db, Path::new("/r"), &["AGENTS.md", "Agents.md", "NOPE.md"]);
        assert_eq!(below, Some(vec!["AGENTS.md", "Agents.md"]));

        // A link back up: the walk ends where the links stop resolving (ELOOP), with an answer.
        let fs = MemorySystem::new();
        fs.write_file("/r/a/x.md", "x");
        fs.symlink("/r", "/r/a/up");
        let db = TestDb::new(fs);
        assert_eq!(names_below(&db, Path::new("/r"), &["NOPE.md"]), Some(vec![]));

        // More folders than the bound: no answer.
        let fs = MemorySystem::new();
        for i in 0..=super::WALK_FOLDERS {
            fs.create_dir_all(format!("/r/d{i}"));
        }
        let db = TestDb::new(fs);
        assert_eq!(names_below(&db, Path::new("/r"), &["NOPE.md"]), None);
    }
}
