//! opencode's own texts (model prompts, built-in agent prompts, the structured-output line,
//! the references and skills blocks' own lines, the built-in skill's description) as an
//! input: never stored in this repository, they
//! are loaded from the user's opencode installation by the engine, verified against
//! [`assets.toml`](assets.toml) (length and blake3 per release), and read here by name.
//! Rules L1–L3 in `docs/opencode/installation.md`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use serde::Deserialize;

use crate::Db;

pub use inputs::Installation;

// salsa's input macro generates public constructors that cannot carry doc comments.
#[allow(missing_docs)]
mod inputs {
    use super::InstallationState;

    /// The opencode installation the message is built for: one per database, set by the
    /// engine (compare before set), read by every query that needs one of opencode's texts.
    #[salsa::input(debug)]
    pub struct Installation {
        #[returns(ref)]
        pub state: InstallationState,
    }
}

/// Where a database keeps its one [`Installation`] input, created on first use (its state
/// starts as [`InstallationState::Missing`] until the engine sets it).
#[derive(Debug, Default)]
pub struct InstallationSlot(OnceLock<Installation>);

impl InstallationSlot {
    /// The database's installation input.
    pub fn get(&self, db: &dyn Db) -> Installation {
        *self.0.get_or_init(|| Installation::new(db, InstallationState::default()))
    }
}

/// What the engine found.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum InstallationState {
    /// Nothing was looked for, or nothing was found: why, in words ("no `opencode` on
    /// PATH", "…/opencode: not readable: …").
    Missing {
        /// Said in the warning and in `unavailable` blocks.
        reason: String,
    },
    /// An installation was read.
    Found(Arc<Texts>),
}

impl Default for InstallationState {
    fn default() -> Self {
        InstallationState::Missing { reason: "no opencode installation was looked for".to_owned() }
    }
}

/// The verified texts of one installation.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Texts {
    /// The executable the texts were read from.
    pub binary: PathBuf,
    /// Its version (`1.18.33`).
    pub version: String,
    /// Every asset of [`assets.toml`](assets.toml) for that version that was found and
    /// matched, by name.
    pub texts: BTreeMap<String, Arc<str>>,
}

/// One of opencode's texts, or why it is not available.
pub type Asset = Result<Arc<str>, Unavailable>;

/// Why a text of opencode's is not available: the message shows a marked placeholder.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Unavailable {
    /// The asset's name (`model/default`).
    pub asset: String,
    /// Why, in words.
    pub reason: String,
}

impl Unavailable {
    /// L3: the marked placeholder that stands in for the text in the message.
    pub fn placeholder(&self) -> String {
        format!("[ctxgraph: opencode's text {} is unavailable: {}]", self.asset, self.reason)
    }
}

/// L2: the text `name` from the installation, verified.
pub fn asset(db: &dyn Db, installation: Installation, name: &str) -> Asset {
    let unavailable = |reason: String| Unavailable { asset: name.to_owned(), reason };
    match installation.state(db) {
        InstallationState::Missing { reason } => Err(unavailable(reason.clone())),
        InstallationState::Found(found) => match found.texts.get(name) {
            Some(text) => Ok(Arc::clone(text)),
            None if known_assets(&found.version).is_none() => Err(unavailable(format!(
                "opencode {} ({}) is a release ctxgraph has no table of texts for",
                found.version,
                found.binary.display()
            ))),
            None => Err(unavailable(format!(
                "not found in {} (opencode {}) with the length and blake3 ctxgraph expects",
                found.binary.display(),
                found.version
            ))),
        },
    }
}

/// One row of the table: an asset's length and hash.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
pub struct AssetRecord {
    /// Length of the text in UTF-8 bytes.
    pub bytes: usize,
    /// blake3 of the text, 64 hex digits.
    pub blake3: String,
}

#[derive(Deserialize)]
struct Table {
    versions: BTreeMap<String, BTreeMap<String, AssetRecord>>,
    /// Per release, per executable size in bytes: where each literal sits (from its
    /// opening quote to past its closing one) in the executable recorded.
    #[serde(default)]
    offsets: BTreeMap<String, BTreeMap<String, BTreeMap<String, [u64; 2]>>>,
}

fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| {
        toml::from_str(include_str!("assets.toml")).expect("assets.toml is valid (a unit test checks)")
    })
}

/// L1: the assets ctxgraph knows for an opencode release, by name; `None` for a release
/// with no table.
pub fn known_assets(version: &str) -> Option<&'static BTreeMap<String, AssetRecord>> {
    table().versions.get(version)
}

/// L2: where each asset's literal sits in the recorded executable of `version` that is
/// `size` bytes long: a hint that spares a scan, verified like any other candidate.
pub fn known_offsets(version: &str, size: u64) -> Option<&'static BTreeMap<String, [u64; 2]>> {
    table().offsets.get(version)?.get(&size.to_string())
}

/// The releases [`known_assets`] has a table for.
pub fn known_versions() -> impl Iterator<Item = &'static str> {
    table().versions.keys().map(String::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_parses_and_names_every_family() {
        let assets = known_assets("1.18.33").expect("1.18.33");
        for family in
            ["default", "anthropic", "beast", "codex", "gpt", "gpt-6", "gemini", "trinity", "kimi", "muse"]
        {
            let record = &assets[&format!("model/{family}")];
            assert_eq!(record.blake3.len(), 64);
            assert!(record.bytes > 0);
        }
        for name in [
            "skill/customize-opencode/description",
            "skills/intro",
            "skills/how-to-load",
            "skills/none-available",
        ] {
            assert!(assets.contains_key(name), "{name}");
        }
        assert!(assets.contains_key("structured-output"));
        assert_eq!(known_versions().collect::<Vec<_>>(), ["1.18.33"]);
        let offsets = known_offsets("1.18.33", 185_354_368).expect("the linux-x64 executable's offsets");
        assert!(assets.keys().all(|name| offsets.contains_key(name)));
    }
}
