//! Query-level tests on the in-memory `System`: each case is one fixture string
//! (`ctxgraph_test_support::fixture`) and one inline snapshot of what a query makes of it.
//! To add a case, copy a test and edit its fixture; `cargo insta test --accept` (or
//! `INSTA_UPDATE=always`) fills in the snapshot, which you then review.

mod corpus;
mod explain;
mod lint;
mod prompt;
