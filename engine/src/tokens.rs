//! The built-in tokenizer: OpenAI's `o200k_base` through `bpe-openai`.
//!
//! Chosen over `tiktoken-rs` (spec/rust-stack.md §4): both ship their vocabularies in the
//! crate and work offline, but `bpe-openai` prepares the dictionary at build time, so it
//! loads in tens of milliseconds where `tiktoken-rs` parses its text file at start-up
//! (about 1.5 s unoptimised, which every CLI test would pay), and it counts without
//! materialising the token ids.

use ctxgraph_queries::tokens::TokenCounter;

/// `o200k_base` (GPT-4o and later). Loaded on first use, then shared by the process.
#[derive(Clone, Copy, Debug, Default)]
pub struct O200k;

impl TokenCounter for O200k {
    fn name(&self) -> &'static str {
        "o200k_base"
    }

    fn count(&self, text: &str) -> usize {
        bpe_openai::o200k_base().count(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_like_o200k() {
        // Reference counts from OpenAI's tokenizer for o200k_base.
        assert_eq!(O200k.count(""), 0);
        assert_eq!(O200k.count("hello world"), 2);
    }
}
