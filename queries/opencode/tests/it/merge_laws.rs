//! C1/C2 as algebra. Both merges are associative on values as long as no key holds an
//! object in one layer and a non-object in another; with such a key they are not
//! (`{z:{y:1}} ⊕ {z:false} ⊕ {z:{}}` is `{z:{}}` grouped left, `{z:{y:1}}` grouped right).
//! That is why the global files are folded as their own group first and then joined as one
//! layer (C4), exactly as opencode groups them, never re-associated.

use ctxgraph_opencode::config::tree::{Node, merge_concat, merge_deep};
use ctxgraph_opencode::config::{ConfigSource, Provenance, SourceKind};
use proptest::prelude::*;
use serde_json::{Map, Value};

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<bool>().prop_map(Value::Bool),
        (0i64..3).prop_map(Value::from),
        "[ab]".prop_map(Value::String),
        prop::collection::vec("[ab]".prop_map(Value::String), 0..3).prop_map(Value::Array),
    ]
}

fn object() -> impl Strategy<Value = Value> {
    prop::collection::btree_map("[pq]", leaf(), 0..3).prop_map(|m| Value::Object(m.into_iter().collect()))
}

/// Small configs over few keys, so that layers collide often. Keys `x`/`y` always hold
/// objects (of `p`/`q` leaves), `z` a leaf: each key keeps its kind across layers.
/// `instructions` is a list of strings (S2 guarantees it before merging).
fn config() -> impl Strategy<Value = Value> {
    let instructions = prop::option::of(prop::collection::vec("[pqr]", 0..4));
    let fields = (prop::option::of(object()), prop::option::of(object()), prop::option::of(leaf()));
    (fields, instructions).prop_map(|((x, y, z), instructions)| {
        let mut object = Map::new();
        for (key, value) in [("x", x), ("y", y), ("z", z)] {
            if let Some(value) = value {
                object.insert(key.to_owned(), value);
            }
        }
        if let Some(list) = instructions {
            object.insert("instructions".to_owned(), Value::from(list));
        }
        Value::Object(object)
    })
}

fn node(value: &Value, name: &str) -> Node {
    Node::from_value(
        value.clone(),
        &Provenance::new(ConfigSource::virtual_source(SourceKind::Project, name, "/".into())),
    )
}

fn merged(merge: fn(&mut Node, Node), mut a: Node, b: Node) -> Node {
    merge(&mut a, b);
    a
}

#[test]
fn a_key_that_changes_kind_breaks_associativity() {
    let (a, b, c) =
        (serde_json::json!({"z": {"y": 1}}), serde_json::json!({"z": false}), serde_json::json!({"z": {}}));
    let left = merged(merge_deep, merged(merge_deep, node(&a, "a"), node(&b, "b")), node(&c, "c"));
    let right = merged(merge_deep, node(&a, "a"), merged(merge_deep, node(&b, "b"), node(&c, "c")));
    assert_eq!((left.to_value(), right.to_value()), (serde_json::json!({"z": {}}), a));
}

proptest! {
    #[test]
    fn merges_are_associative(a in config(), b in config(), c in config()) {
        for merge in [merge_deep as fn(&mut Node, Node), merge_concat] {
            let (a, b, c) = (node(&a, "a"), node(&b, "b"), node(&c, "c"));
            let left = merged(merge, merged(merge, a.clone(), b.clone()), c.clone());
            let right = merged(merge, a, merged(merge, b, c));
            // Equal as JSON, key order included (it is what opencode prints).
            prop_assert_eq!(
                serde_json::to_string(&left.to_value()).unwrap(),
                serde_json::to_string(&right.to_value()).unwrap()
            );
        }
    }

    #[test]
    fn every_instruction_keeps_the_source_that_listed_it_first(a in config(), b in config()) {
        let result = merged(merge_concat, node(&a, "a"), node(&b, "b"));
        if let Some(items) = result.get("instructions").and_then(|n| match &n.kind {
            ctxgraph_opencode::config::NodeKind::Array(items) => Some(items.clone()),
            _ => None,
        }) {
            for item in items {
                let value = item.to_value();
                let in_a = a.get("instructions").and_then(Value::as_array).is_some_and(|l| l.contains(&value));
                let expected = if in_a && b.get("instructions").is_some() || b.get("instructions").is_none() { "a" } else { "b" };
                prop_assert_eq!(&*item.origin.source.name, expected);
            }
        }
    }
}
