//! opencode's merged config in the shape every agent's settings answer in
//! ([`SettingsReport`]): each C3 source a layer, every value with its origin.

use std::collections::HashMap;
use std::sync::Arc;

use ctxgraph_db::settings::{
    Replaced, SettingKind, SettingNode, SettingOrigin, SettingsLayer, SettingsReport, SettingsSource,
};

use super::schema::redact_like_debug_config;
use super::{ConfigSource, MergedConfig, Node, NodeKind, Provenance, SourceKind};

/// The rules by which opencode sets values itself (its defaults before reading config
/// directories, the OS user name, `$schema`).
const DERIVED_RULES: &[&str] = &["C3.5", "C3.10", "C7.5"];

/// `config` as the report `ctxgraph config` and every surface show, for `agent` (`opencode`).
pub fn settings_report(config: &MergedConfig, agent: &'static str) -> SettingsReport {
    let mut sources = Sources::default();
    let layers = config
        .layers
        .iter()
        .map(|layer| SettingsLayer {
            source: sources.get(&layer.source),
            status: layer.status.clone(),
            dropped_keys: layer.dropped_keys.clone(),
        })
        .collect();
    let tree = sources.node(&config.tree);
    SettingsReport {
        agent,
        layers,
        masked: redact_like_debug_config(&config.tree.render(false)),
        tree,
        derived_rules: DERIVED_RULES,
        unknown_key_rule: Some("S1"),
        warnings: config.warnings.clone(),
    }
}

/// Each source converted once: a 1 MB config has ~100 000 values and a handful of sources.
#[derive(Default)]
struct Sources(HashMap<ConfigSource, Arc<SettingsSource>>);

impl Sources {
    fn get(&mut self, source: &ConfigSource) -> Arc<SettingsSource> {
        self.0
            .entry(source.clone())
            .or_insert_with(|| {
                Arc::new(SettingsSource {
                    kind: source.kind.id(),
                    label: source.kind.label(),
                    name: source.name(),
                    rule: source.kind.rule(),
                    derived: source.kind == SourceKind::Derived,
                })
            })
            .clone()
    }

    fn origin(&mut self, origin: &Provenance) -> SettingOrigin {
        SettingOrigin {
            source: self.get(&origin.source),
            at: origin.at.map(|at| (at.line, at.column)),
            via: origin.via.clone(),
            written: origin.written.clone(),
        }
    }

    fn node(&mut self, node: &Node) -> SettingNode {
        let kind = match &node.kind {
            NodeKind::Scalar(value) => SettingKind::Scalar(value.clone()),
            NodeKind::Array(items) => SettingKind::Array(items.iter().map(|n| self.node(n)).collect()),
            NodeKind::Object(entries) => {
                SettingKind::Object(entries.iter().map(|(k, n)| (k.clone(), self.node(n))).collect())
            }
        };
        let replaced = node
            .overridden
            .iter()
            .map(|old| Replaced { value: old.value.clone(), origin: self.origin(&old.origin) })
            .collect();
        SettingNode { kind, origin: self.origin(&node.origin), replaced }
    }
}

#[cfg(test)]
mod tests {
    use super::SourceKind;

    /// A layer's `kind` in `config --format json` is the name opencode's report types serialise.
    #[test]
    fn kind_ids_are_the_serde_names() {
        let kinds = [
            SourceKind::WellKnown,
            SourceKind::GlobalSeed,
            SourceKind::Global,
            SourceKind::EnvFile,
            SourceKind::Project,
            SourceKind::Directory,
            SourceKind::EnvContent,
            SourceKind::Account,
            SourceKind::Managed,
            SourceKind::ManagedPreferences,
            SourceKind::Derived,
        ];
        for kind in kinds {
            assert_eq!(serde_json::to_value(kind).expect("serialises"), kind.id(), "{kind:?}");
        }
    }
}
