//! `explain`: why each rule file is, or is not, in the prompt.

use super::check::explain;
use insta::assert_snapshot;

#[test]
fn agents_md_wins_the_rule_name_lookup() {
    assert_snapshot!(explain(r"
        //- git: /repo
        //- cwd: /repo/app
        //- /repo/CLAUDE.md
        Claude rules.
        //- /repo/app/AGENTS.md
        App rules.
    "), @r#"
        /repo/app/AGENTS.md [project] loaded #2
        /repo/CLAUDE.md [project] shadowed: AGENTS.md won
        "#);
}

#[test]
fn rule_files_below_the_working_directory_are_attached_on_read() {
    assert_snapshot!(explain(r"
        //- git: /repo
        //- /repo/AGENTS.md
        Root rules.
        //- /repo/packages/api/AGENTS.md
        API rules.
        //- /repo/packages/api/CLAUDE.md -> AGENTS.md
    "), @r#"
        /repo/AGENTS.md [project] loaded #2
        /repo/packages/api/AGENTS.md [nearby] attached on read only
        /repo/packages/api/CLAUDE.md [nearby] read tool takes /repo/packages/api/AGENTS.md
        "#);
}

/// The glob's two matches come in the reverse of the order the (in-memory, newest first)
/// listing gives them: b.md was written first, so it is listed last and loaded first (F4).
#[test]
fn instructions_entries_load_after_the_project_files() {
    assert_snapshot!(explain(r#"
        //- git: /repo
        //- /repo/AGENTS.md
        Root rules.
        //- /repo/opencode.json
        { "instructions": ["docs/*.md", "missing.md"] }
        //- /repo/docs/b.md
        B.
        //- /repo/docs/a.md
        A.
    "#), @r#"
        /repo/AGENTS.md [project] loaded #2
        /repo/docs/b.md [instructions] loaded #3
        /repo/docs/a.md [instructions] loaded #4
        "#);
}

#[test]
fn claude_code_files_off_by_flag() {
    assert_snapshot!(explain(r"
        //- git: /repo
        //- env: OPENCODE_DISABLE_CLAUDE_CODE=1
        //- /repo/CLAUDE.md
        Claude rules.
    "), @"/repo/CLAUDE.md [project] OPENCODE_DISABLE_CLAUDE_CODE=1");
}
