//! `explain --format dot`: the provenance graph, sources → decisions → blocks, in Graphviz
//! DOT (`ctxgraph explain --format dot | dot -Tsvg > provenance.svg`), for whichever answer
//! `explain` gives: opencode's discovery (config entries, the rule that picked each file,
//! each block), or any agent's verdict on each file (the rule, and the placement or why
//! not).

use std::collections::HashMap;
use std::fmt;

use ctxgraph_db::path::display;
use ctxgraph_engine::answers::explain::{EntryExpansion, EntryReport, Item, Via};
use ctxgraph_engine::answers::profile::{AgentFate, Status};
use ctxgraph_server::protocol::ExplainReply;
use petgraph::dot::{Config, Dot, RankDir};
use petgraph::graph::{DiGraph, NodeIndex};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A rule file, config file or URL.
    Source,
    /// Why something was picked or dropped.
    Decision,
    Dropped,
    /// A block of the system prompt.
    Block,
}

struct Node {
    kind: Kind,
    label: String,
}

impl fmt::Display for Node {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label)
    }
}

#[derive(Default)]
struct Builder {
    graph: DiGraph<Node, &'static str>,
    by_key: HashMap<String, NodeIndex>,
}

impl Builder {
    /// The node for `key`, created once.
    fn node(&mut self, key: String, kind: Kind, label: String) -> NodeIndex {
        *self.by_key.entry(key).or_insert_with(|| self.graph.add_node(Node { kind, label }))
    }

    fn source(&mut self, label: String) -> NodeIndex {
        self.node(format!("source:{label}"), Kind::Source, label)
    }

    fn edge(&mut self, from: NodeIndex, to: NodeIndex) {
        if self.graph.find_edge(from, to).is_none() {
            self.graph.add_edge(from, to, "");
        }
    }
}

/// The graph of an `explain` answer.
pub fn graph(reply: &ExplainReply) -> String {
    let mut b = Builder::default();
    match reply {
        ExplainReply::Workspace(workspace) => {
            discovery(&mut b, &workspace.explanation.items, &workspace.explanation.entries);
        }
        ExplainReply::Target(target) => discovery(&mut b, &target.items, &target.entries),
        ExplainReply::File(file, fates) => {
            for fate in fates {
                verdict(&mut b, file, fate);
            }
        }
        ExplainReply::Files(files) => {
            for (file, fate) in files {
                verdict(&mut b, file, fate);
            }
        }
    }
    b.dot()
}

/// A file, the rule that decided it (per agent), and where its text goes or why it does not.
fn verdict(b: &mut Builder, file: &std::path::Path, fate: &AgentFate) {
    let source = b.source(display(file));
    let key = format!("{}:{}", fate.agent, display(file));
    let decision = b.node(format!("rule:{key}"), Kind::Decision, format!("{} {}", fate.agent, fate.rule));
    b.edge(source, decision);
    let outcome = match fate.status {
        Status::NotSent => b.node(format!("not:{key}"), Kind::Dropped, fate.reason.clone()),
        status => {
            let label = match fate.placement {
                Some(placement) => format!("{}: {placement}", status.label()),
                None => status.label().to_owned(),
            };
            b.node(format!("sent:{key}"), Kind::Block, label)
        }
    };
    b.edge(decision, outcome);
}

/// opencode's discovery: config entries, the decision behind each item, its block or why not.
fn discovery(b: &mut Builder, items: &[Item], entries: &[EntryReport]) {
    for entry in entries {
        let config = b.source(entry.config.clone());
        let decision = b.node(
            format!("entry:{}", entry.index),
            Kind::Decision,
            format!("instructions[{}] {:?}", entry.index, entry.entry),
        );
        b.edge(config, decision);
        if let EntryExpansion::Glob { levels, .. } = &entry.expansion
            && levels.iter().all(|l| l.matches.is_empty())
        {
            let dropped =
                b.node(format!("nomatch:{}", entry.index), Kind::Dropped, "matches nothing".to_owned());
            b.edge(decision, dropped);
        }
    }
    for (n, item) in items.iter().enumerate() {
        let source = b.source(item.source.label());
        // One decision per item, so each block's chain can be read off the graph.
        let decision = item.via.as_ref().map(|via| {
            let label = match via {
                Via::Global { .. } => "I3 first global rule".to_owned(),
                Via::Project { name, level, .. } => format!("I4 {name} won, {level} level(s) up"),
                Via::Instruction { index, dir, .. } => {
                    format!("I5 instructions[{index}] in {}", display(dir))
                }
                Via::Remote { index, .. } => format!("I8 instructions[{index}]"),
            };
            let decision = b.node(format!("via:{n}"), Kind::Decision, label);
            b.edge(source, decision);
            if let Via::Instruction { index, .. } | Via::Remote { index, .. } = via
                && let Some(entry) = b.by_key.get(&format!("entry:{index}")).copied()
            {
                b.edge(entry, decision);
            }
            decision
        });
        let from = decision.unwrap_or(source);
        match &item.loaded {
            Some(loaded) => {
                let label = format!(
                    "block #{}: bytes {}..{}, {} tokens",
                    loaded.position, loaded.range.start, loaded.range.end, loaded.size.tokens
                );
                let block = b.node(format!("block:{}", loaded.position), Kind::Block, label);
                b.edge(from, block);
            }
            None => {
                for (r, reason) in item.reasons.iter().enumerate() {
                    let dropped = b.node(format!("dropped:{n}:{r}"), Kind::Dropped, reason.summary());
                    b.edge(from, dropped);
                }
            }
        }
    }
}

impl Builder {
    fn dot(&self) -> String {
        let node_attributes = |_, (_, node): (NodeIndex, &Node)| {
            match node.kind {
                Kind::Source => "shape=box",
                Kind::Decision => "shape=ellipse",
                Kind::Dropped => "shape=octagon, color=firebrick",
                Kind::Block => "shape=note, color=forestgreen",
            }
            .to_owned()
        };
        let edge_attributes = |_, _| String::new();
        let dot = Dot::with_attr_getters(
            &self.graph,
            &[Config::RankDir(RankDir::LR)],
            &edge_attributes,
            &node_attributes,
        );
        format!("{dot}")
    }
}
