//! C3: where config layers come from.

use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The kind of a config source, in C3 order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SourceKind {
    /// C3.1/R1–R5: `<auth url>/.well-known/opencode` for a `wellknown` auth entry.
    WellKnown,
    /// C4: the global file opencode seeds on first start when no global file exists
    /// (ctxgraph does not write it; the layer stands in for it).
    GlobalSeed,
    /// C4: `config.json`, `opencode.json`, `opencode.jsonc` in the XDG config dir.
    Global,
    /// C3.3: `$OPENCODE_CONFIG`.
    EnvFile,
    /// C3.4: `opencode.json{,c}` from the worktree down to `D`.
    Project,
    /// C3.5/C5: `.opencode` dirs, `~/.opencode`, `$OPENCODE_CONFIG_DIR`.
    Directory,
    /// C3.6: `$OPENCODE_CONFIG_CONTENT`.
    EnvContent,
    /// C3.7: the console account's org config.
    Account,
    /// C3.8: the managed dir (`/etc/opencode`).
    Managed,
    /// C3.9: macOS managed preferences.
    ManagedPreferences,
    /// C3.10 and the directory step: values opencode derives after or between layers.
    Derived,
}

impl SourceKind {
    /// The kind in words, for `config`'s source list and for explanations.
    pub fn label(self) -> &'static str {
        match self {
            SourceKind::WellKnown => "well-known remote config",
            SourceKind::GlobalSeed => "global config (seeded by opencode)",
            SourceKind::Global => "global config",
            SourceKind::EnvFile => "OPENCODE_CONFIG file",
            SourceKind::Project => "project config",
            SourceKind::Directory => "config directory",
            SourceKind::EnvContent => "OPENCODE_CONFIG_CONTENT",
            SourceKind::Account => "account org config",
            SourceKind::Managed => "managed config",
            SourceKind::ManagedPreferences => "macOS managed preferences",
            SourceKind::Derived => "derived by opencode",
        }
    }

    /// The kind as `--format json` names it (its serde name).
    pub fn id(self) -> &'static str {
        match self {
            SourceKind::WellKnown => "well-known",
            SourceKind::GlobalSeed => "global-seed",
            SourceKind::Global => "global",
            SourceKind::EnvFile => "env-file",
            SourceKind::Project => "project",
            SourceKind::Directory => "directory",
            SourceKind::EnvContent => "env-content",
            SourceKind::Account => "account",
            SourceKind::Managed => "managed",
            SourceKind::ManagedPreferences => "managed-preferences",
            SourceKind::Derived => "derived",
        }
    }

    /// The spec rule that puts this source in the chain.
    pub fn rule(self) -> &'static str {
        match self {
            SourceKind::WellKnown => "C3.1",
            SourceKind::GlobalSeed | SourceKind::Global => "C4",
            SourceKind::EnvFile => "C3.3",
            SourceKind::Project => "C3.4",
            SourceKind::Directory => "C3.5",
            SourceKind::EnvContent => "C3.6",
            SourceKind::Account => "C3.7",
            SourceKind::Managed => "C3.8",
            SourceKind::ManagedPreferences => "C3.9",
            SourceKind::Derived => "C3.10",
        }
    }

    /// Whether the source is a file on disk (its name is its path).
    pub fn is_file(self) -> bool {
        matches!(
            self,
            SourceKind::Global
                | SourceKind::EnvFile
                | SourceKind::Project
                | SourceKind::Directory
                | SourceKind::Managed
        )
    }
}

/// One source of config. Its `name` is how opencode names it in errors: a file path, a
/// URL, or a variable name.
///
/// Every config value's [`Provenance`](super::Provenance) holds its source, so a clone must
/// not allocate: the texts are shared (a 1 MB config has ~100 000 values, #24 D9).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConfigSource {
    /// Which C3 step the source belongs to; orders the layers.
    pub kind: SourceKind,
    /// How opencode names it (see the type's docs).
    pub name: Arc<str>,
    /// Where relative `{file:}` references resolve (V2).
    pub dir: Arc<Path>,
}

impl ConfigSource {
    /// A config file: named by its path, `{file:}` resolved from its directory.
    pub fn file(kind: SourceKind, path: &Path) -> Self {
        let dir = Arc::from(path.parent().unwrap_or(Path::new("/")));
        Self { kind, name: Arc::from(ctxgraph_db::path::display(path)), dir }
    }

    /// A source that is not a file (an env variable, a URL, a derivation step), with the
    /// directory its relative `{file:}` references resolve from.
    pub fn virtual_source(kind: SourceKind, name: impl Into<String>, dir: PathBuf) -> Self {
        Self { kind, name: Arc::from(name.into()), dir: Arc::from(dir) }
    }

    /// How opencode names the source in errors.
    pub fn name(&self) -> String {
        self.name.to_string()
    }

    /// The file, for file sources.
    pub fn path(&self) -> Option<&Path> {
        self.kind.is_file().then(|| Path::new(&*self.name))
    }
}
