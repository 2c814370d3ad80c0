//! The built-in tokenizer, [`ctxgraph_tokens`]'s `o200k_base`, as the queries' [`TokenCounter`].

use ctxgraph_db::tokens::TokenCounter;

/// `o200k_base` (GPT-4o and later). Built on first use, then shared by the process.
#[derive(Clone, Copy, Debug, Default)]
pub struct O200k;

impl TokenCounter for O200k {
    fn name(&self) -> &'static str {
        ctxgraph_tokens::NAME
    }

    fn count(&self, text: &str) -> usize {
        ctxgraph_tokens::count(text)
    }
}

impl O200k {
    /// Builds the tables afresh, as a process's first count does: for the benchmark of that
    /// cost (benches/tokens.rs), not for use.
    #[doc(hidden)]
    pub fn build_tables() -> impl Sized {
        ctxgraph_tokens::build_tables()
    }

    /// Counts without the process's memo of counts by hash, as a text's first count does:
    /// for the encoder's benchmark (benches/tokens.rs), not for use.
    #[doc(hidden)]
    pub fn count_unmemoised(text: &str) -> usize {
        ctxgraph_tokens::count_unmemoised(text)
    }
}
