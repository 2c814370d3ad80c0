//! Token counts for blocks and prompts.
//!
//! Which tokenizer a model uses is the host's business (and Anthropic's is not public), so
//! queries count through [`TokenCounter`] and the engine plugs in a real BPE. Counts are
//! estimates of what a provider bills, never part of the prompt bytes.

/// Counts the tokens of a text.
pub trait TokenCounter: Send + Sync {
    /// A short stable name for reports, e.g. `o200k_base`.
    fn name(&self) -> &'static str;
    /// The number of tokens in `text`.
    fn count(&self, text: &str) -> usize;
}

/// The fallback when no tokenizer is built in: one token per four bytes, rounded up
/// (the usual rule of thumb for English prose and code under BPE tokenizers).
#[derive(Clone, Copy, Debug, Default)]
pub struct BytesPerFour;

impl TokenCounter for BytesPerFour {
    fn name(&self) -> &'static str {
        "bytes/4"
    }

    fn count(&self, text: &str) -> usize {
        text.len().div_ceil(4)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_per_four_rounds_up() {
        assert_eq!(BytesPerFour.count(""), 0);
        assert_eq!(BytesPerFour.count("abc"), 1);
        assert_eq!(BytesPerFour.count("abcd"), 1);
        assert_eq!(BytesPerFour.count("abcde"), 2);
    }
}
