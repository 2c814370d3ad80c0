//! `lint --agent claude-code`: the `claudeMdExcludes` patterns that keep nothing out (CG025,
//! `docs/lint.md`).

use ctxgraph_db::db::{Db, Workspace};
use ctxgraph_db::lint::{Code, Finding, Location};
use ctxgraph_db::path;

use super::excludes::{EXCLUDES_KEY, claude_md_excludes};

/// CG025: every pattern written relative to the project (`CLAUDE.local.md`, `sub/CLAUDE.md`,
/// `./CLAUDE.md`). Claude Code matches a pattern against a file's absolute path (CC14), so
/// a pattern that starts with a name, not `/` or a wildcard, matches nothing: the file it
/// names is sent all the same, and nothing says so (captured: CC-54). Each finding points at
/// the pattern in its settings file.
pub fn exclude_findings(db: &dyn Db, ws: Workspace) -> Vec<Finding> {
    claude_md_excludes(db, ws)
        .patterns()
        .iter()
        .filter(|exclude| starts_with_a_name(&exclude.pattern))
        .map(|exclude| {
            let settings = &exclude.settings;
            let anywhere = format!("**/{}", exclude.pattern.trim_start_matches("./"));
            Finding {
                code: Code::ExcludeMatchesNothing,
                severity: Code::ExcludeMatchesNothing.severity(),
                message: format!(
                    "{EXCLUDES_KEY} pattern `{}` in {} matches nothing: Claude Code matches patterns against absolute paths, so the files it names are still sent (CC14)",
                    exclude.pattern,
                    path::display(settings)
                ),
                location: Some(Location::at_json_string(db, settings, &exclude.pattern)),
                hint: format!("write `{anywhere}` to match it in any folder, or the file's absolute path"),
            }
        })
        .collect()
}

/// Whether `pattern` begins with a plain name (a letter, digit, `.`, `_` or `-`): it can
/// match no absolute path, all of which begin with `/`.
fn starts_with_a_name(pattern: &str) -> bool {
    pattern.chars().next().is_some_and(|c| c.is_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

#[cfg(test)]
mod tests {
    use super::starts_with_a_name;

    #[test]
    fn only_a_pattern_that_starts_with_a_name_is_relative() {
        for relative in ["CLAUDE.local.md", "sub/CLAUDE.md", "./CLAUDE.md", ".claude/rules/x.md", "_x", "-y"]
        {
            assert!(starts_with_a_name(relative), "{relative}");
        }
        for matching in ["/abs/CLAUDE.md", "**/CLAUDE.md", "*/CLAUDE.md", "{a,/b}", "[/]x", ""] {
            assert!(!starts_with_a_name(matching), "{matching}");
        }
    }
}
