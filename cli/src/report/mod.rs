//! The report page (`ctxgraph report`, `check --format html`): its data model, plain values
//! read off the engine's answers, and its renderer, which writes the tables in Rust (they
//! read without script) around the CSS and script in `assets/`, with the data as one JSON
//! blob the script reads for its hover and focus details.

pub mod html;
pub mod model;
