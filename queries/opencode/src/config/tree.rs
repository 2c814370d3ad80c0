//! Config values with provenance: every node knows the source that set it, where in that
//! source, whether substitution produced it, and which values it replaced.

use indexmap::IndexMap;
use serde_json::{Map, Value};

use super::source::ConfigSource;
use ctxgraph_db::js::array_index;
use ctxgraph_db::lines::LineColumn;

/// Where one config value came from.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Provenance {
    /// The layer (file, env variable, remote document, derivation) that set the value.
    pub source: ConfigSource,
    /// The value's position in the source's (substituted) text, if it has one (columns
    /// count characters).
    pub at: Option<LineColumn>,
    /// V1/V2: the `{env:…}`/`{file:…}` tokens whose output is part of this value.
    pub via: Vec<String>,
    /// With `via`: the value as written, before substitution (what is shown unless secrets
    /// are asked for).
    pub written: Option<String>,
}

impl Provenance {
    /// A value from `source` with no position or substitution known (yet).
    pub fn new(source: ConfigSource) -> Self {
        Self { source, at: None, via: Vec::new(), written: None }
    }
}

/// A value a later source replaced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Overridden {
    /// The value as it was before the replacement (secrets included; render decides).
    pub value: Value,
    /// Where that value had come from.
    pub origin: Provenance,
}

/// A JSON value with provenance on every node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    /// The value itself; children of arrays and objects are nodes in turn.
    pub kind: NodeKind,
    /// Who set this node (for objects: who created it; merged keys keep their own).
    pub origin: Provenance,
    /// Earlier values at this path, oldest first.
    pub overridden: Vec<Overridden>,
}

/// The shape of a [`Node`]: merging recurses into objects only (C1); arrays and scalars
/// are replaced whole, or concatenated for the C2 keys.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NodeKind {
    /// A string, number, boolean or null (never an array or object).
    Scalar(Value),
    /// Elements keep their own provenance, so a C2-concatenated list says who added each.
    Array(Vec<Node>),
    /// Keys in insertion order (JS object order for non-index keys), indexed: a config
    /// with tens of thousands of keys in one object parses and merges in linear time.
    Object(IndexMap<String, Node>),
}

impl Node {
    /// A leaf set by `origin`, with nothing overridden yet.
    pub fn scalar(value: Value, origin: Provenance) -> Self {
        Node { kind: NodeKind::Scalar(value), origin, overridden: Vec::new() }
    }

    /// An object created by `origin`; its entries keep the provenance they carry.
    pub fn object(entries: impl IntoIterator<Item = (String, Node)>, origin: Provenance) -> Self {
        Node { kind: NodeKind::Object(entries.into_iter().collect()), origin, overridden: Vec::new() }
    }

    /// A node built from a plain JSON value, every part attributed to `origin`.
    pub fn from_value(value: Value, origin: &Provenance) -> Self {
        let kind = match value {
            Value::Array(items) => {
                NodeKind::Array(items.into_iter().map(|v| Node::from_value(v, origin)).collect())
            }
            Value::Object(map) => {
                NodeKind::Object(map.into_iter().map(|(k, v)| (k, Node::from_value(v, origin))).collect())
            }
            scalar => NodeKind::Scalar(scalar),
        };
        Node { kind, origin: origin.clone(), overridden: Vec::new() }
    }

    /// JavaScript truthiness of the value (what opencode's `if (config.x)` tests): arrays
    /// and objects are truthy whatever they hold, so their children are not looked at.
    pub fn is_truthy(&self) -> bool {
        match &self.kind {
            NodeKind::Scalar(Value::Null) => false,
            NodeKind::Scalar(Value::Bool(b)) => *b,
            NodeKind::Scalar(Value::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0),
            NodeKind::Scalar(Value::String(s)) => !s.is_empty(),
            NodeKind::Scalar(Value::Array(_) | Value::Object(_))
            | NodeKind::Array(_)
            | NodeKind::Object(_) => true,
        }
    }

    /// The plain JSON value (secrets included).
    pub fn to_value(&self) -> Value {
        self.render(true)
    }

    /// The JSON value; unless `secrets`, values produced by substitution are shown as
    /// written (`{env:X}`), not as substituted.
    pub fn render(&self, secrets: bool) -> Value {
        if let (false, Some(written), NodeKind::Scalar(_)) = (secrets, &self.origin.written, &self.kind) {
            return Value::String(written.clone());
        }
        match &self.kind {
            NodeKind::Scalar(value) => value.clone(),
            NodeKind::Array(items) => Value::Array(items.iter().map(|n| n.render(secrets)).collect()),
            // JS objects list integer-like keys first, ascending (what JSON.stringify prints).
            NodeKind::Object(_) => Value::Object(
                self.js_entries()
                    .into_iter()
                    .map(|(k, n)| (k.clone(), n.render(secrets)))
                    .collect::<Map<_, _>>(),
            ),
        }
    }

    /// The entries in the order JavaScript enumerates them (`Object.entries`): integer-like
    /// keys first, ascending, then the others in insertion order. Empty unless an object.
    pub fn js_entries(&self) -> Vec<(&String, &Node)> {
        let mut ordered: Vec<(&String, &Node)> =
            self.as_object().map(|e| e.iter().collect()).unwrap_or_default();
        ordered.sort_by_key(|(key, _)| array_index(key).map_or((1, 0), |i| (0, i)));
        ordered
    }

    /// The entries, if this node is an object.
    pub fn as_object(&self) -> Option<&IndexMap<String, Node>> {
        match &self.kind {
            NodeKind::Object(entries) => Some(entries),
            _ => None,
        }
    }

    /// The entries, mutably, if this node is an object (derivations edit the merged tree).
    pub fn as_object_mut(&mut self) -> Option<&mut IndexMap<String, Node>> {
        match &mut self.kind {
            NodeKind::Object(entries) => Some(entries),
            _ => None,
        }
    }

    /// The child at `key`; `None` if absent or this is not an object.
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.as_object()?.get(key)
    }

    /// The child at `key`, mutably; `None` if absent or this is not an object.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Node> {
        self.as_object_mut()?.get_mut(key)
    }

    /// Inserts or replaces `key` (a replaced value keeps its position, as in JS).
    pub fn insert(&mut self, key: &str, node: Node) {
        if let Some(entries) = self.as_object_mut() {
            match entries.get_mut(key) {
                Some(slot) => replace(slot, node),
                None => {
                    entries.insert(key.to_owned(), node);
                }
            }
        }
    }

    /// Removes `key` and returns its node, keeping the other keys' order.
    pub fn remove(&mut self, key: &str) -> Option<Node> {
        // Order-preserving, so O(n); only a handful of top-level keys are ever removed.
        self.as_object_mut()?.shift_remove(key)
    }

    /// The node at a dotted path (`a.b.0`); array elements by index.
    pub fn lookup(&self, path: &[&str]) -> Option<&Node> {
        let Some((first, rest)) = path.split_first() else { return Some(self) };
        let child = match &self.kind {
            NodeKind::Object(_) => self.get(first)?,
            NodeKind::Array(items) => items.get(first.parse::<usize>().ok()?)?,
            NodeKind::Scalar(_) => return None,
        };
        child.lookup(rest)
    }

    /// Every leaf (scalar, array element of a scalar, empty object or array) with its path.
    pub fn leaves(&self) -> Vec<(Vec<String>, &Node)> {
        let mut out = Vec::new();
        self.collect_leaves(&mut Vec::new(), &mut out);
        out
    }

    fn collect_leaves<'a>(&'a self, path: &mut Vec<String>, out: &mut Vec<(Vec<String>, &'a Node)>) {
        match &self.kind {
            NodeKind::Object(entries) if !entries.is_empty() => {
                for (key, node) in entries {
                    path.push(key.clone());
                    node.collect_leaves(path, out);
                    path.pop();
                }
            }
            NodeKind::Array(items) if !items.is_empty() => {
                for (index, node) in items.iter().enumerate() {
                    path.push(index.to_string());
                    node.collect_leaves(path, out);
                    path.pop();
                }
            }
            _ => out.push((path.clone(), self)),
        }
    }
}

/// Replaces `slot` by `new`, recording the old value (and what it had replaced) on `new`.
pub fn replace(slot: &mut Node, mut new: Node) {
    let old = std::mem::replace(slot, Node::scalar(Value::Null, new.origin.clone()));
    let mut history = old.overridden.clone();
    history.push(Overridden { value: old.to_value(), origin: old.origin });
    history.append(&mut new.overridden);
    new.overridden = history;
    *slot = new;
}

/// C1 (remeda `mergeDeep`): objects merge key by key, recursively; anything else (arrays
/// included) is replaced by the newer value.
pub fn merge_deep(into: &mut Node, from: Node) {
    match (&mut into.kind, from.kind) {
        (NodeKind::Object(existing), NodeKind::Object(incoming)) => {
            for (key, node) in incoming {
                match existing.get_mut(&key) {
                    Some(slot) => merge_deep(slot, node),
                    None => {
                        existing.insert(key, node);
                    }
                }
            }
        }
        (_, kind) => replace(into, Node { kind, origin: from.origin, overridden: from.overridden }),
    }
}

/// C2 (`mergeConfigConcatArrays`): C1, then when both sides have `instructions`, the
/// union of both lists, first occurrence kept; each element keeps its own source.
pub fn merge_concat(into: &mut Node, from: Node) {
    let earlier = into.get("instructions").and_then(array_items).map(<[Node]>::to_vec);
    let later_has = from.get("instructions").is_some();
    merge_deep(into, from);
    if let (Some(mut all), true) = (earlier, later_has) {
        let Some(slot) = into.get_mut("instructions") else { return };
        let Some(later) = array_items(slot).map(<[Node]>::to_vec) else { return };
        all.extend(later);
        // JSON text as the identity: `instructions` holds strings (S2), compared by value.
        let mut seen = std::collections::HashSet::new();
        all.retain(|node| seen.insert(node.to_value().to_string()));
        slot.kind = NodeKind::Array(all);
        // The list is now the union of both; nothing was replaced.
        slot.overridden.pop();
    }
}

fn array_items(node: &Node) -> Option<&[Node]> {
    match &node.kind {
        NodeKind::Array(items) => Some(items),
        _ => None,
    }
}
