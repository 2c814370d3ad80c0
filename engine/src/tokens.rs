//! The built-in tokenizer: OpenAI's `o200k_base` through `tiktoken-rs`.
//!
//! The vocabulary is in the binary packed and deflated by build.rs (about 1.3 MB, where
//! tiktoken-rs's own base64 text is 3.6 MB), and tiktoken-rs's tables are built from it the
//! first time a process counts tokens: only `explain`, `lint`, `check` and their kin ever do.
//! It replaced `bpe-openai`, which embedded three prebuilt dictionaries (32 MB for o200k
//! alone, most of the release binary) made by a build script that dominated a cold release
//! build. BENCHMARKS.md has the first-use cost.

use std::sync::{LazyLock, Mutex, PoisonError};

use ctxgraph_db::tokens::TokenCounter;
use rustc_hash::FxHashMap;
use tiktoken_rs::{CoreBPE, Rank};

/// `o200k_base` (GPT-4o and later). Built on first use, then shared by the process.
#[derive(Clone, Copy, Debug, Default)]
pub struct O200k;

impl TokenCounter for O200k {
    fn name(&self) -> &'static str {
        "o200k_base"
    }

    fn count(&self, text: &str) -> usize {
        // Short texts cost less to count than to look up.
        if text.len() < COUNTED_SHORT {
            return encode(text);
        }
        let key = blake3::hash(text.as_bytes());
        if let Some(count) = COUNTS.lock().unwrap_or_else(PoisonError::into_inner).get(&key) {
            return *count;
        }
        let count = encode(text);
        let mut counts = COUNTS.lock().unwrap_or_else(PoisonError::into_inner);
        if counts.len() >= COUNTS_KEPT {
            counts.clear();
        }
        counts.insert(key, count);
        count
    }
}

/// Ordinary text: a special token's spelling inside a rule file is counted as the plain text
/// it is, as a provider's tokenizer counts user content.
fn encode(text: &str) -> usize {
    O200K_BASE.encode_ordinary(text).len()
}

/// Counts by the text's hash. Lint and `explain` count every sent block on each run, and a
/// language server runs them on every keystroke, where one file changed: hashing a text is
/// far cheaper than encoding it (the encoder was 8 % of a language-server keystroke before
/// this memo; BENCHMARKS.md). A count is a function of the text alone,
/// so the memo is the process's, not a query's (the counter is not a salsa input); it is
/// emptied when full rather than kept in order of use, since a host's working set is the
/// few hundred blocks of its workspaces.
static COUNTS: LazyLock<Mutex<FxHashMap<blake3::Hash, usize>>> = LazyLock::new(Mutex::default);
const COUNTS_KEPT: usize = 8192;
const COUNTED_SHORT: usize = 256;

impl O200k {
    /// Builds the tables afresh, as a process's first count does: for the benchmark of that
    /// cost (benches/tokens.rs), not for use.
    #[doc(hidden)]
    pub fn build_tables() -> impl Sized {
        unpack(PACKED).expect("build.rs packed a valid o200k_base")
    }
}

static O200K_BASE: LazyLock<CoreBPE> =
    LazyLock::new(|| unpack(PACKED).expect("build.rs packed a valid o200k_base"));

static PACKED: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/o200k_base.vocab"));

/// The tokenizer from build.rs's packed form; `None` only if that form is malformed, which
/// the tests below rule out for the vocabulary this binary carries.
fn unpack(deflated: &[u8]) -> Option<CoreBPE> {
    let packed = miniz_oxide::inflate::decompress_to_vec(deflated).ok()?;
    let mut reader = Reader { rest: &packed };
    let ranks = reader.u32()?;
    let mut encoder = FxHashMap::with_capacity_and_hasher(ranks as usize, rustc_hash::FxBuildHasher);
    for rank in 0..ranks {
        let bytes = reader.bytes()?;
        if !bytes.is_empty() {
            encoder.insert(bytes.to_vec(), rank);
        }
    }
    let mut specials = FxHashMap::default();
    for _ in 0..reader.len()? {
        let rank: Rank = reader.u32()?;
        let text = std::str::from_utf8(reader.bytes()?).ok()?;
        specials.insert(text.to_owned(), rank);
    }
    if !reader.rest.is_empty() {
        return None;
    }
    CoreBPE::new(encoder, specials, tiktoken_rs::O200K_BASE_PAT_STR).ok()
}

struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    fn u32(&mut self) -> Option<u32> {
        let (head, rest) = self.rest.split_first_chunk::<4>()?;
        self.rest = rest;
        Some(u32::from_le_bytes(*head))
    }

    /// A LEB128 length, as build.rs writes it.
    fn len(&mut self) -> Option<usize> {
        let mut len = 0usize;
        for shift in (0..28).step_by(7) {
            let (&byte, rest) = self.rest.split_first()?;
            self.rest = rest;
            len |= usize::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Some(len);
            }
        }
        None
    }

    fn bytes(&mut self) -> Option<&'a [u8]> {
        let len = self.len()?;
        if len > self.rest.len() {
            return None;
        }
        let (bytes, rest) = self.rest.split_at(len);
        self.rest = rest;
        Some(bytes)
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

    /// The packed vocabulary is tiktoken-rs's own, token for token, specials included, and
    /// counts the same.
    #[test]
    fn packed_vocabulary_is_tiktoken_s() {
        let reference = tiktoken_rs::o200k_base().expect("tiktoken-rs's o200k_base");
        let packed = &*O200K_BASE;
        for rank in 0..200_100 {
            assert_eq!(
                packed.decode_bytes(&[rank]).ok(),
                reference.decode_bytes(&[rank]).ok(),
                "rank {rank}"
            );
        }
        let text = "## Rules\n\nNever call the network from a test; use 127.0.0.1 ✓ — ünïcödé, 漢字, emoji 🦀\n\t<|endoftext|>";
        assert_eq!(packed.encode_ordinary(text), reference.encode_ordinary(text));
        assert_eq!(packed.encode_with_special_tokens(text), reference.encode_with_special_tokens(text));
    }

    #[test]
    fn a_malformed_pack_is_refused() {
        assert!(unpack(b"not deflate").is_none());
        let truncated = miniz_oxide::deflate::compress_to_vec(&[5, 0, 0, 0, 3, b'a'], 1);
        assert!(unpack(&truncated).is_none());
    }
}
