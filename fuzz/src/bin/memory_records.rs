//! Memory records (docs/memory.md §3.1) from arbitrary bytes: the tolerant JSONL readers, the
//! fold, the ranking and the clamp never panic, and the clamp never exceeds its budget.
//! The input's first byte picks the budget; the rest is read as every store file at once.

#![no_main]

use ctxgraph_recall::rank::{Doc, rank};
use ctxgraph_recall::record::{
    FactLine, Handoff, Observation, SessionCard, ToolStats, fold_facts, parse_jsonl, parse_record,
};
use ctxgraph_recall::render::{BlockId, Draft, Item, assemble};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&budget, rest)) = data.split_first() else { return };
    let text = String::from_utf8_lossy(rest);
    let facts = fold_facts(parse_jsonl::<FactLine>(rest).records);
    let observations = parse_jsonl::<Observation>(rest).records;
    let _ = parse_jsonl::<SessionCard>(rest);
    let _ = parse_record::<Handoff>(&text);
    let _ = parse_record::<ToolStats>(&text);
    let docs: Vec<Doc<'_>> = facts
        .iter()
        .map(|f| Doc {
            id: &f.record.id,
            text: f.record.text.clone(),
            files: &[],
            time: f.record.updated_at,
            decays: true,
        })
        .chain(observations.iter().map(|o| Doc {
            id: &o.id,
            text: o.note.l0.clone(),
            files: &o.note.files,
            time: o.created_at,
            decays: true,
        }))
        .collect();
    let ranking = rank(&text, &docs, i64::MAX);
    let items: Vec<Item> = ranking
        .kept
        .iter()
        .map(|&(i, score)| Item {
            id: docs[i].id.to_owned(),
            score,
            line: format!("- {}", docs[i].text),
            short: None,
            drop_rank: 0,
        })
        .collect();
    let max = usize::from(budget) * 40;
    let drafts = [Draft { id: BlockId::Facts, title: "Facts".to_owned(), items, cut: Vec::new() }];
    let context = assemble(&drafts, max);
    assert!(context.chars <= max);
    assert_eq!(context.chars, context.text.chars().count());
});
