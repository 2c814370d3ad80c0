//! P1–P3: where opencode looks for global things.

use std::path::PathBuf;

use crate::flags::{FlagError, flags};
use ctxgraph_db::db::{Db, Workspace, env_var};
use ctxgraph_db::path;

/// The directories opencode derives from the environment.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct GlobalPaths {
    /// P2: `os.homedir()` (used by `{file:~/…}` and the XDG defaults).
    pub os_home: PathBuf,
    /// P2: `H` = `$OPENCODE_TEST_HOME` ?? `os.homedir()` (used by `~/` entries, the global
    /// `~/.claude/CLAUDE.md` and `~/.opencode`).
    pub home: PathBuf,
    /// P1: `$XDG_CONFIG_HOME/opencode` (or `~/.config/opencode`): the global config files.
    pub config: PathBuf,
    /// P1: `$XDG_DATA_HOME/opencode`.
    pub data: PathBuf,
    /// P3: `G` = `$OPENCODE_CONFIG_DIR` ?? [`GlobalPaths::config`]: the global `AGENTS.md`.
    pub instruction_dir: PathBuf,
    /// C3.8: the managed config directory.
    pub managed: PathBuf,
}

/// P1–P3: opencode's global directories for this workspace's host, after flags and `$XDG_*`.
#[salsa::tracked(returns(ref))]
pub fn global_paths(db: &dyn Db, ws: Workspace) -> Result<GlobalPaths, FlagError> {
    let host = ws.host(db);
    let flags = flags(db, host).as_ref().map_err(Clone::clone)?;
    // Relative values are used verbatim by opencode, i.e. against the process cwd, which
    // is the instance directory.
    let cwd = ws.cwd(db);
    let os_home = path::resolve(cwd, host.home(db));
    let xdg = |var: &str, default: &str| match env_var(db, host, var.to_owned()) {
        Some(value) if !value.is_empty() => path::resolve(cwd, value),
        _ => os_home.join(default),
    };
    let config = xdg("XDG_CONFIG_HOME", ".config").join("opencode");
    let data = xdg("XDG_DATA_HOME", ".local/share").join("opencode");
    let home = match &flags.test_home {
        Some(test_home) => path::resolve(cwd, test_home),
        None => os_home.clone(),
    };
    let instruction_dir = match &flags.config_dir {
        Some(dir) => path::resolve(cwd, dir),
        None => config.clone(),
    };
    let managed = match &flags.test_managed_dir {
        Some(dir) => path::resolve(cwd, dir),
        None => PathBuf::from(match host.platform(db).as_str() {
            "darwin" => "/Library/Application Support/opencode",
            "win32" => "C:\\ProgramData\\opencode",
            _ => "/etc/opencode",
        }),
    };
    Ok(GlobalPaths { os_home, home, config, data, instruction_dir, managed })
}
