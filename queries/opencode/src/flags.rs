//! P6/P7: the environment flags that shape discovery, with opencode's two grammars.

use ctxgraph_db::db::{Db, Host, env_var};

/// The flags in force for one host.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Flags {
    /// P7: `OPENCODE_DISABLE_CLAUDE_CODE` or `OPENCODE_DISABLE_CLAUDE_CODE_PROMPT`.
    /// Drops `CLAUDE.md` from the per-directory names and `~/.claude/CLAUDE.md` globally.
    pub disable_claude_code_prompt: Option<FlagSource>,
    /// P7: `OPENCODE_DISABLE_PROJECT_CONFIG` (truthy grammar).
    pub disable_project_config: Option<FlagSource>,
    /// P3: `OPENCODE_CONFIG_DIR`, raw.
    pub config_dir: Option<String>,
    /// C3.3: `OPENCODE_CONFIG`, raw.
    pub config_file: Option<String>,
    /// C3.6: `OPENCODE_CONFIG_CONTENT`.
    pub config_content: Option<String>,
    /// P2: `OPENCODE_TEST_HOME`.
    pub test_home: Option<String>,
    /// C3.8: `OPENCODE_TEST_MANAGED_CONFIG_DIR`.
    pub test_managed_dir: Option<String>,
}

/// Which variable turned a flag on, and its value: what `explain` quotes.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FlagSource {
    /// The environment variable.
    pub name: &'static str,
    /// Its value, as set.
    pub value: String,
}

/// A flag opencode refuses to start with (P6: an invalid `Config.boolean` kills the
/// flags layer, so no prompt is ever built).
#[derive(Clone, Debug, PartialEq, Eq, Hash, thiserror::Error)]
#[error(
    "{name}={value:?} is not a boolean opencode accepts (one of true, yes, on, 1, y, false, no, off, 0, n; case-sensitive)"
)]
pub struct FlagError {
    /// The environment variable.
    pub name: &'static str,
    /// Its value, as set.
    pub value: String,
}

/// P6: the `OPENCODE_*` flags in force for `host`, or the first one opencode would refuse.
#[salsa::tracked(returns(ref))]
pub fn flags(db: &dyn Db, host: Host) -> Result<Flags, FlagError> {
    let var = |name: &str| env_var(db, host, name.to_owned());
    let runtime = |name: &'static str| -> Result<Option<FlagSource>, FlagError> {
        match var(name) {
            None => Ok(None),
            Some(value) => match runtime_boolean(&value) {
                Some(true) => Ok(Some(FlagSource { name, value })),
                Some(false) => Ok(None),
                None => Err(FlagError { name, value }),
            },
        }
    };
    let truthy = |name: &'static str| {
        var(name).filter(|value| is_truthy(value)).map(|value| FlagSource { name, value })
    };
    let disable_claude_code = runtime("OPENCODE_DISABLE_CLAUDE_CODE")?;
    let disable_claude_code_prompt = runtime("OPENCODE_DISABLE_CLAUDE_CODE_PROMPT")?;
    Ok(Flags {
        disable_claude_code_prompt: disable_claude_code.or(disable_claude_code_prompt),
        disable_project_config: truthy("OPENCODE_DISABLE_PROJECT_CONFIG"),
        config_dir: var("OPENCODE_CONFIG_DIR"),
        config_file: var("OPENCODE_CONFIG"),
        config_content: var("OPENCODE_CONFIG_CONTENT"),
        test_home: var("OPENCODE_TEST_HOME"),
        test_managed_dir: var("OPENCODE_TEST_MANAGED_CONFIG_DIR"),
    })
}

/// P6, `Flag.*`: lower-cased `"true"`, or `"1"`. Anything else is false.
pub fn is_truthy(value: &str) -> bool {
    value.eq_ignore_ascii_case("true") || value == "1"
}

/// P6, `RuntimeFlags` (Effect `Config.boolean`): case-sensitive tokens; `None` = invalid.
pub fn runtime_boolean(value: &str) -> Option<bool> {
    match value {
        "true" | "yes" | "on" | "1" | "y" => Some(true),
        "false" | "no" | "off" | "0" | "n" => Some(false),
        _ => None,
    }
}
