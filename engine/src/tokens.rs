//! The built-in tokenizer: OpenAI's `o200k_base` through `tiktoken-rs`.
//!
//! `tiktoken-rs` ships the vocabulary in its compact `.tiktoken` text (3.6 MB in the binary)
//! and builds its tables from it the first time a process counts tokens; only `explain`,
//! `lint`, `check` and their kin ever do. It replaced `bpe-openai`, which embedded three
//! prebuilt dictionaries (32 MB for o200k alone, most of the release binary) made by a build
//! script that dominated a cold release build. BENCHMARKS.md has the first-use cost.

use ctxgraph_queries::tokens::TokenCounter;

/// `o200k_base` (GPT-4o and later). Built on first use, then shared by the process.
#[derive(Clone, Copy, Debug, Default)]
pub struct O200k;

impl TokenCounter for O200k {
    fn name(&self) -> &'static str {
        "o200k_base"
    }

    fn count(&self, text: &str) -> usize {
        // Ordinary text: a special token's spelling inside a rule file is counted as the
        // plain text it is, as a provider's tokenizer counts user content.
        tiktoken_rs::o200k_base_singleton().encode_ordinary(text).len()
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
