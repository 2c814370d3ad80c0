//! What an agent's settings are and where each value came from (`ctxgraph config`), in one
//! shape for every agent: the places it reads settings from, in the order a later one wins,
//! and every value in effect with its origin and the values it replaced. Each profile
//! answers in it ([`Profile::settings_report`](crate::profile::Profile::settings_report));
//! the surfaces only render it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::files::{ReadFailure, file_bytes};

/// One place settings are read from: a file, a variable, a URL, or the agent itself (its
/// defaults and the values it derives).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SettingsSource {
    /// A stable identifier of the kind of place (`project`, `user`, `derived`, …).
    pub kind: &'static str,
    /// The kind in words (`project config`, `user settings`).
    #[serde(skip)]
    pub label: &'static str,
    /// How the agent names it: a file's path, a URL, a variable's name.
    #[serde(rename = "source")]
    pub name: String,
    /// The rule that puts this place in the chain; empty when there is none to cite (an
    /// agent's built-in default).
    #[serde(skip_serializing_if = "str::is_empty")]
    pub rule: &'static str,
    /// Whether the agent itself set what comes from here (defaults, derived values), as
    /// opposed to something the user wrote.
    #[serde(skip)]
    pub derived: bool,
}

/// What one place contributed.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "status", content = "reason", rename_all = "kebab-case")]
pub enum LayerStatus {
    /// Read and merged.
    Loaded,
    /// Not there (or not readable as the agent reads it): nothing from it.
    Missing,
    /// There and empty.
    Empty,
    /// A place ctxgraph does not read, and why.
    Unavailable(String),
}

/// One place in the chain and what it did.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SettingsLayer {
    /// The place.
    #[serde(flatten)]
    pub source: Arc<SettingsSource>,
    /// Loaded, missing, empty or unavailable (with the reason).
    #[serde(flatten)]
    pub status: LayerStatus,
    /// Keys the agent drops from this place because it does not know them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub dropped_keys: Vec<String>,
}

/// Where one value came from.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SettingOrigin {
    /// The place that set it.
    pub source: Arc<SettingsSource>,
    /// Its line and column in that place's text, when it has a position.
    pub at: Option<(usize, usize)>,
    /// The substitutions (`{env:X}`) whose output is part of the value.
    pub via: Vec<String>,
    /// With `via`: the value as written, before substitution (what is shown unless secrets
    /// are asked for).
    pub written: Option<String>,
}

impl SettingOrigin {
    /// A value from `source` with no position or substitution.
    pub fn new(source: Arc<SettingsSource>) -> Self {
        SettingOrigin { source, at: None, via: Vec::new(), written: None }
    }
}

/// A value a later place replaced.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Replaced {
    /// The value before the replacement (secrets included: the renderer decides).
    pub value: Value,
    /// Where it had come from.
    pub origin: SettingOrigin,
}

/// A settings value with its origin on every part.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SettingNode {
    /// The value; the parts of arrays and objects are nodes in turn.
    pub kind: SettingKind,
    /// Who set it (for an object: who created it; its keys keep their own).
    pub origin: SettingOrigin,
    /// Earlier values at this place, oldest first.
    pub replaced: Vec<Replaced>,
}

/// The shape of a [`SettingNode`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum SettingKind {
    /// A string, number, boolean or null.
    Scalar(Value),
    /// Elements, each with its own origin.
    Array(Vec<SettingNode>),
    /// Keys in the order they were first set.
    Object(Vec<(String, SettingNode)>),
}

impl SettingNode {
    /// An empty object created by `origin`.
    pub fn empty_object(origin: SettingOrigin) -> Self {
        SettingNode { kind: SettingKind::Object(Vec::new()), origin, replaced: Vec::new() }
    }

    /// The JSON value; unless `secrets`, values produced by substitution are shown as
    /// written (`{env:X}`). Keys print as JavaScript's `JSON.stringify` prints them
    /// (array-index keys first, ascending), which is how every agent that writes its
    /// settings in JSON shows them.
    pub fn render(&self, secrets: bool) -> Value {
        if let (false, Some(written), SettingKind::Scalar(_)) = (secrets, &self.origin.written, &self.kind) {
            return Value::String(written.clone());
        }
        match &self.kind {
            SettingKind::Scalar(value) => value.clone(),
            SettingKind::Array(items) => Value::Array(items.iter().map(|n| n.render(secrets)).collect()),
            SettingKind::Object(entries) => {
                let mut ordered: Vec<&(String, SettingNode)> = entries.iter().collect();
                ordered.sort_by_key(|(key, _)| crate::js::array_index(key).map_or((1, 0), |i| (0, i)));
                Value::Object(
                    ordered.into_iter().map(|(k, n)| (k.clone(), n.render(secrets))).collect::<Map<_, _>>(),
                )
            }
        }
    }

    /// The node at a dotted path split in segments (`a.b.0`); array elements by index.
    pub fn lookup(&self, path: &[&str]) -> Option<&SettingNode> {
        let Some((first, rest)) = path.split_first() else { return Some(self) };
        let child = match &self.kind {
            SettingKind::Object(entries) => entries.iter().find(|(k, _)| k == first).map(|(_, n)| n)?,
            SettingKind::Array(items) => items.get(first.parse::<usize>().ok()?)?,
            SettingKind::Scalar(_) => return None,
        };
        child.lookup(rest)
    }

    /// Every leaf (a scalar, an empty object or array) with its path, in the order set.
    pub fn leaves(&self) -> Vec<(Vec<String>, &SettingNode)> {
        let mut out = Vec::new();
        self.collect_leaves(&mut Vec::new(), &mut out);
        out
    }

    fn collect_leaves<'a>(&'a self, path: &mut Vec<String>, out: &mut Vec<(Vec<String>, &'a SettingNode)>) {
        match &self.kind {
            SettingKind::Object(entries) if !entries.is_empty() => {
                for (key, node) in entries {
                    path.push(key.clone());
                    node.collect_leaves(path, out);
                    path.pop();
                }
            }
            SettingKind::Array(items) if !items.is_empty() => {
                for (index, node) in items.iter().enumerate() {
                    path.push(index.to_string());
                    node.collect_leaves(path, out);
                    path.pop();
                }
            }
            _ => out.push((path.clone(), self)),
        }
    }

    /// Sets `value` at the dotted `path` below this object, creating objects on the way
    /// (attributed to `origin`); a value already there is recorded as replaced.
    pub fn set(&mut self, path: &[&str], value: Value, origin: SettingOrigin) {
        let Some((last, parents)) = path.split_last() else { return };
        let mut at = self;
        for segment in parents {
            let SettingKind::Object(entries) = &mut at.kind else { return };
            let index = if let Some(index) = entries.iter().position(|(k, _)| k == segment) {
                index
            } else {
                entries.push(((*segment).to_owned(), SettingNode::empty_object(origin.clone())));
                entries.len() - 1
            };
            at = &mut entries[index].1;
        }
        let SettingKind::Object(entries) = &mut at.kind else { return };
        let node = SettingNode { kind: SettingKind::Scalar(value), origin, replaced: Vec::new() };
        match entries.iter_mut().find(|(k, _)| k == last) {
            Some((_, slot)) => {
                let old = std::mem::replace(slot, node);
                let value = old.render(true);
                slot.replaced = old.replaced;
                slot.replaced.push(Replaced { value, origin: old.origin });
            }
            None => entries.push(((*last).to_owned(), node)),
        }
    }
}

/// An agent's settings: every place it reads them from, in the order a later one wins, and
/// the values in effect.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SettingsReport {
    /// The agent's `--agent` name.
    pub agent: &'static str,
    /// Every place, in merge order, with what it did; the agent's own (derived) values
    /// have no layer.
    pub layers: Vec<SettingsLayer>,
    /// The values in effect: the whole merged settings where the profile reproduces the
    /// agent's merge, else the settings that shape its context.
    pub tree: SettingNode,
    /// `tree` as JSON without secrets: masked where the agent's own printout masks, and
    /// substituted values as written.
    pub masked: Value,
    /// The rules by which the agent derives the values it sets itself (for the heading of
    /// those values).
    pub derived_rules: &'static [&'static str],
    /// The rule by which unknown keys are dropped, when the agent drops them.
    pub unknown_key_rule: Option<&'static str>,
    /// Things the agent only logs about its settings.
    pub warnings: Vec<String>,
}

/// What an agent's settings source is before it is read: its kind, label, path and rule.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SettingsFile {
    /// See [`SettingsSource::kind`].
    pub kind: &'static str,
    /// See [`SettingsSource::label`].
    pub label: &'static str,
    /// The file.
    pub path: std::path::PathBuf,
    /// See [`SettingsSource::rule`].
    pub rule: &'static str,
}

/// A setting that shaped the layout, and where its value came from.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Setting {
    /// The agent's name for it (`project_doc_max_bytes`, `context.fileName`, …).
    pub name: &'static str,
    /// Its value, as the agent's settings would write it.
    pub value: String,
    /// The file it was read from; `None` for the agent's default or a command-line override.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<PathBuf>,
}

impl SettingsReport {
    /// The report of an agent whose profile names its settings files (`files`, in merge
    /// order) and the settings that shape its layout: a layer per file with what the disk
    /// holds, and a value per setting read from a file (one with no file is a default, an
    /// environment variable or a flag, which a layout does not tell apart, so it is left
    /// out). Values are JSON where they parse as JSON, else strings.
    pub fn from_files(
        db: &dyn crate::Db,
        agent: &'static str,
        files: Vec<SettingsFile>,
        settings: &[Setting],
    ) -> Self {
        let layers: Vec<SettingsLayer> = files
            .into_iter()
            .map(|file| {
                let status = file_status(db, &file.path);
                let source = SettingsSource {
                    kind: file.kind,
                    label: file.label,
                    name: crate::path::display(&file.path),
                    rule: file.rule,
                    derived: false,
                };
                SettingsLayer { source: Arc::new(source), status, dropped_keys: Vec::new() }
            })
            .collect();
        let default = Arc::new(SettingsSource {
            kind: "default",
            label: "default",
            name: format!("{agent}'s default"),
            rule: "",
            derived: true,
        });
        let mut report = SettingsReport {
            agent,
            layers,
            tree: SettingNode::empty_object(SettingOrigin::new(default.clone())),
            masked: Value::Null,
            derived_rules: &[],
            unknown_key_rule: None,
            warnings: Vec::new(),
        };
        for setting in settings {
            let Some(from) = setting.from.as_deref() else { continue };
            let source = report.source_of(from);
            let value = serde_json::from_str(&setting.value)
                .ok()
                .filter(|v: &Value| !v.is_object())
                .unwrap_or_else(|| Value::String(setting.value.clone()));
            let path: Vec<&str> = setting.name.split('.').collect();
            report.tree.set(&path, value, SettingOrigin::new(source));
        }
        report.masked = masked(&report.tree);
        report
    }

    /// The value at `path` (a key per segment, array elements by index) as the answer
    /// shows it without secrets ([`SettingsReport::masked`]); `None` where the masked
    /// settings have no such path (a value the agent's own printout leaves out).
    pub fn masked_at(&self, path: &[String]) -> Option<&Value> {
        let mut at = &self.masked;
        for segment in path {
            at = match at {
                Value::Object(map) => map.get(segment)?,
                Value::Array(items) => items.get(segment.parse::<usize>().ok()?)?,
                _ => return None,
            };
        }
        Some(at)
    }

    /// The layer of the file `path`, or (for a file the profile read but does not list as
    /// a layer) a source naming the file.
    fn source_of(&self, path: &Path) -> Arc<SettingsSource> {
        let listed = self.layers.iter().find(|l| Path::new(&l.source.name) == path);
        listed.map_or_else(
            || {
                Arc::new(SettingsSource {
                    kind: "file",
                    label: "settings file",
                    name: crate::path::display(path),
                    rule: "",
                    derived: false,
                })
            },
            |layer| layer.source.clone(),
        )
    }

    /// Sets the value at `path` (a key per segment) to `value` from the file `from`, or
    /// (`None`) the agent's default; a value set before is recorded as the one it replaced.
    pub fn set_value(&mut self, path: &[&str], value: Value, from: Option<&Path>) {
        let source = match from {
            Some(from) => self.source_of(from),
            None => self.tree.origin.source.clone(),
        };
        self.tree.set(path, value, SettingOrigin::new(source));
        self.masked = masked(&self.tree);
    }

    /// Sets the top-level `key` to a list the agent adds up across its files, each item
    /// with the file it came from; nothing when the list is empty.
    pub fn set_list(&mut self, key: &str, items: impl IntoIterator<Item = (Value, std::path::PathBuf)>) {
        let items: Vec<SettingNode> = items
            .into_iter()
            .map(|(value, from)| SettingNode {
                kind: SettingKind::Scalar(value),
                origin: SettingOrigin::new(self.source_of(&from)),
                replaced: Vec::new(),
            })
            .collect();
        let (Some(first), SettingKind::Object(entries)) = (items.first(), &mut self.tree.kind) else {
            return;
        };
        let origin = first.origin.clone();
        entries.retain(|(k, _)| k != key);
        entries.push((
            key.to_owned(),
            SettingNode { kind: SettingKind::Array(items), origin, replaced: Vec::new() },
        ));
        self.masked = masked(&self.tree);
    }
}

/// `tree` as JSON without secrets: substituted values as written. (An agent that masks more
/// in its own printout, opencode, masks in its profile; every output then takes the one
/// redaction pass that finds secrets by their shape.)
pub fn masked(tree: &SettingNode) -> Value {
    tree.render(false)
}

/// What the disk holds at `path`, as a settings layer.
fn file_status(db: &dyn crate::Db, path: &Path) -> LayerStatus {
    match file_bytes(db, db.files().get(db, path)) {
        Ok(bytes) if bytes.iter().all(u8::is_ascii_whitespace) => LayerStatus::Empty,
        Ok(_) => LayerStatus::Loaded,
        Err(ReadFailure::NotFound | ReadFailure::IsADirectory) => LayerStatus::Missing,
        Err(failure) => LayerStatus::Unavailable(format!("cannot be read: {failure}")),
    }
}
