//! The instruction blocks of the system prompt.

use super::check::prompt;
use insta::assert_snapshot;

#[test]
fn project_rules_nearest_first() {
    assert_snapshot!(prompt(r"
        //- git: /repo
        //- cwd: /repo/app
        //- /repo/AGENTS.md
        Root rules.
        //- /repo/app/AGENTS.md
        App rules.
    "), @r#"
        Instructions from: /repo/app/AGENTS.md
        App rules.

        Instructions from: /repo/AGENTS.md
        Root rules.
        "#);
}

#[test]
fn global_rules_then_project_rules() {
    assert_snapshot!(prompt(r"
        //- git: /repo
        //- /home/.config/opencode/AGENTS.md
        Global rules.
        //- /repo/AGENTS.md
        Project rules.
    "), @r#"
        Instructions from: /home/.config/opencode/AGENTS.md
        Global rules.

        Instructions from: /repo/AGENTS.md
        Project rules.
        "#);
}

#[test]
fn broken_config_is_an_error() {
    assert_snapshot!(prompt(r#"
        //- git: /repo
        //- /repo/opencode.json
        { "instructions": [ }
    "#), @"error: /repo/opencode.json:1:21: invalid JSONC (CloseBracketExpected): Unexpected close brace");
}
