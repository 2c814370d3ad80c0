//! ctxgraph-tokens: OpenAI's `o200k_base` token counts, through `tiktoken-rs`.
//!
//! A crate of its own so that it is compiled optimised in every profile: the first count of a
//! process builds tiktoken-rs's tables from the packed vocabulary, and in a debug build that
//! loop (with the map inserts instantiated here) was 40 % of every `explain` or `lint` a
//! test ran (the workspace's root Cargo.toml sets this crate's opt-level for `dev`).
//!
//! The vocabulary is in the binary packed and deflated (`data/o200k_base.vocab`, 1.04 MB,
//! where tiktoken-rs's own base64 text is 3.6 MB), and tiktoken-rs's tables are built from
//! it the first time a process counts tokens: only `explain`, `lint`, `check` and their kin
//! ever do. The pack is committed rather than made by a build script: a build script reading
//! tiktoken-rs would compile tiktoken-rs, fancy-regex and the regex crates a second time,
//! for the host, on every cold build (about 25 s of a 2-core machine's compile time). The
//! test `the_committed_pack_is_tiktoken_s_vocabulary` packs tiktoken-rs's vocabulary afresh
//! and compares, so the file cannot drift from its source.
//! It replaced `bpe-openai`, which embedded three prebuilt dictionaries (32 MB for o200k
//! alone, most of the release binary) made by a build script that dominated a cold release
//! build. BENCHMARKS.md has the first-use cost.

use std::sync::{LazyLock, Mutex, PoisonError};

use rustc_hash::FxHashMap;
use tiktoken_rs::{CoreBPE, Rank};

/// The tokenizer's name, as token counts are labelled.
pub const NAME: &str = "o200k_base";

/// The number of `o200k_base` tokens in `text` (GPT-4o and later). The tables are built on
/// the process's first count, then shared.
pub fn count(text: &str) -> usize {
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

/// Builds the tables afresh, as a process's first count does: for the benchmark of that cost
/// (ctxgraph-engine's benches/tokens.rs), not for use.
#[doc(hidden)]
pub fn build_tables() -> impl Sized {
    unpack(PACKED).expect("the committed pack is a valid o200k_base")
}

static O200K_BASE: LazyLock<CoreBPE> =
    LazyLock::new(|| unpack(PACKED).expect("the committed pack is a valid o200k_base"));

/// The number of ranks (u32, little-endian); each rank's token bytes in rank order, each
/// length-prefixed (LEB128), empty for a rank with no regular token; the number of special
/// tokens, then each one's rank and text; all of it deflated.
static PACKED: &[u8] = include_bytes!("../data/o200k_base.vocab");

/// The tokenizer from the packed form; `None` only if that form is malformed, which the
/// tests below rule out for the vocabulary this binary carries.
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

    /// A LEB128 length.
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
        assert_eq!(count(""), 0);
        assert_eq!(count("hello world"), 2);
    }

    /// Ranks are dense up to here in `o200k_base` (199,998 regular tokens; the special tokens
    /// sit at 199,999 and 200,018). A rank with no token is packed as an empty entry.
    const RANK_LIMIT: u32 = 200_019;

    /// `data/o200k_base.vocab` before deflating, made from tiktoken-rs's vocabulary.
    fn pack(bpe: &CoreBPE) -> Vec<u8> {
        let specials: Vec<(Rank, &str)> = [tiktoken_rs::ENDOFTEXT, tiktoken_rs::ENDOFPROMPT]
            .into_iter()
            .map(|text| {
                let tokens = bpe.encode_with_special_tokens(text);
                assert_eq!(tokens.len(), 1, "{text} is one special token of o200k_base");
                (tokens[0], text)
            })
            .collect();
        let mut packed = Vec::with_capacity(2 << 20);
        packed.extend_from_slice(&RANK_LIMIT.to_le_bytes());
        for rank in 0..RANK_LIMIT {
            let bytes = match bpe.decode_bytes(&[rank]) {
                Ok(bytes) if !specials.iter().any(|(special, _)| *special == rank) => bytes,
                _ => Vec::new(),
            };
            push_len(&mut packed, bytes.len());
            packed.extend_from_slice(&bytes);
        }
        push_len(&mut packed, specials.len());
        for (rank, text) in &specials {
            packed.extend_from_slice(&rank.to_le_bytes());
            push_len(&mut packed, text.len());
            packed.extend_from_slice(text.as_bytes());
        }
        packed
    }

    fn push_len(out: &mut Vec<u8>, mut len: usize) {
        loop {
            let byte = u8::try_from(len & 0x7f).expect("seven bits");
            len >>= 7;
            if len == 0 {
                out.push(byte);
                return;
            }
            out.push(byte | 0x80);
        }
    }

    /// The committed pack is tiktoken-rs's vocabulary, byte for byte once inflated.
    /// `CTXGRAPH_WRITE_VOCAB=1` writes it afresh (only a new tiktoken-rs could change it).
    #[test]
    fn the_committed_pack_is_tiktoken_s_vocabulary() {
        let reference = tiktoken_rs::o200k_base().expect("tiktoken-rs's o200k_base");
        let fresh = pack(&reference);
        if std::env::var_os("CTXGRAPH_WRITE_VOCAB").is_some() {
            let path = concat!(env!("CARGO_MANIFEST_DIR"), "/data/o200k_base.vocab");
            std::fs::write(path, miniz_oxide::deflate::compress_to_vec(&fresh, 10)).expect("write the pack");
            return;
        }
        let committed = miniz_oxide::inflate::decompress_to_vec(PACKED).expect("the pack inflates");
        assert!(
            committed == fresh,
            "data/o200k_base.vocab differs from tiktoken-rs's vocabulary: CTXGRAPH_WRITE_VOCAB=1"
        );
    }

    /// The tables built from the pack decode every rank as tiktoken-rs's own, specials
    /// included, and count the same.
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
