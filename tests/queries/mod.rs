//! Query-level tests on the in-memory `System`: each case is one fixture string
//! (`ctxgraph_test_support::fixture`) and one inline snapshot of what a query makes of it,
//! rendered by `check`.
//! To add a case, copy a test and edit its fixture;
//! `cargo insta test --accept -p ctxgraph-tests --test it -- queries::` fills in the snapshot
//! (without cargo-insta, the failing test prints the value to paste), which you then review.

mod check;
mod corpus;
mod explain;
mod lint;
mod prompt;
