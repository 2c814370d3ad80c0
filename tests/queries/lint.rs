//! `lint`, one case per finding and per layout that must not be one.

use super::check::lint;
use insta::assert_snapshot;

#[test]
fn claude_md_linked_to_agents_md_is_not_shadowed() {
    assert_snapshot!(lint(r"
        //- git: /repo
        //- /repo/AGENTS.md
        Root rules.
        //- /repo/CLAUDE.md -> AGENTS.md
    "), @"");
}

#[test]
fn claude_md_with_the_same_text_is_not_shadowed() {
    assert_snapshot!(lint(r"
        //- git: /repo
        //- /repo/AGENTS.md
        Root rules.
        //- /repo/CLAUDE.md
        Root rules.
    "), @"");
}

#[test]
fn claude_md_importing_agents_md_is_the_same_rules() {
    assert_snapshot!(lint(r"
        //- git: /repo
        //- /repo/AGENTS.md
        Root rules.
        //- /repo/CLAUDE.md
        @AGENTS.md
    "), @"");
}

#[test]
fn claude_md_with_other_rules_beside_agents_md() {
    assert_snapshot!(lint(r"
        //- git: /repo
        //- /repo/AGENTS.md
        Root rules.
        //- /repo/CLAUDE.md
        @AGENTS.md
        Claude-only rules.
    "), @"CG002 /repo/CLAUDE.md:1 /repo/CLAUDE.md sits beside an AGENTS.md with different content; opencode reads only AGENTS.md, Claude Code only CLAUDE.md");
}

#[test]
fn context_md_shadowed_by_agents_md_in_a_parent() {
    assert_snapshot!(lint(r"
        //- git: /repo
        //- cwd: /repo/app
        //- /repo/AGENTS.md
        Root rules.
        //- /repo/app/CONTEXT.md
        App rules.
    "), @"CG001 /repo/app/CONTEXT.md:1 /repo/app/CONTEXT.md is never loaded: AGENTS.md won the rule name lookup (/repo/AGENTS.md)");
}

#[test]
fn context_md_that_agents_md_points_to_is_not_shadowed() {
    assert_snapshot!(lint(r"
        //- git: /repo
        //- /repo/AGENTS.md
        Read CONTEXT.md for the vocabulary.
        //- /repo/CONTEXT.md
        Glossary.
    "), @"");
}

#[test]
fn rule_file_linked_out_of_the_repository() {
    assert_snapshot!(lint(r"
        //- git: /repo
        //- /etc/passwd
        root:x:0:0:root:/root:/bin/bash
        //- /repo/AGENTS.md -> /etc/passwd
    "), @"CG003 /repo/AGENTS.md /repo/AGENTS.md is a symlink to /etc/passwd, outside the repository /repo; other checkouts will not have it, and its text is sent to the model provider");
}

#[test]
fn rule_file_linked_inside_the_repository() {
    assert_snapshot!(lint(r"
        //- git: /repo
        //- /repo/docs/rules.md
        Shared rules.
        //- /repo/AGENTS.md -> docs/rules.md
    "), @"");
}

#[test]
fn package_scoped_constraint_below_the_working_directory() {
    assert_snapshot!(lint(r"
        //- git: /repo
        //- /repo/AGENTS.md
        Root rules.
        //- /repo/packages/db/AGENTS.md
        Never run migrations from a request handler.
    "), @"");
}

#[test]
fn repository_wide_constraint_below_the_working_directory() {
    assert_snapshot!(lint(r"
        //- git: /repo
        //- /repo/AGENTS.md
        Root rules.
        //- /repo/packages/db/AGENTS.md
        Database package notes. Schemas live in src/schema.
        Never push to main anywhere in the repository; open a pull request.
    "), @r#"CG011 /repo/packages/db/AGENTS.md:2 /repo/packages/db/AGENTS.md states constraints for the whole repository ("never"/"must", 1 line) but is only attached when the model reads a file under /repo/packages/db, once per session"#);
}

#[test]
fn unmatched_instructions_entry() {
    assert_snapshot!(lint(r#"
        //- git: /repo
        //- /repo/opencode.json
        { "instructions": ["docs/rules/*.md"] }
        //- /repo/docs/guide.md
        Not a rule.
    "#), @r#"CG008 /repo/opencode.json:1 instructions entry "docs/rules/*.md" in /repo/opencode.json matches no file"#);
}
