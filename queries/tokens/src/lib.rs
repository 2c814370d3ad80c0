//! ctxgraph-tokens: OpenAI's `o200k_base` token counts.
//!
//! A crate of its own so that it is compiled optimised in every profile: the first count of a
//! process builds the rank table from the packed vocabulary, and in a debug build that loop
//! was 40 % of every `explain` or `lint` a test ran (the workspace's root Cargo.toml sets this
//! crate's opt-level for `dev`).
//!
//! The vocabulary is in the binary packed and deflated (`data/o200k_base.vocab`, 1.04 MB,
//! where tiktoken-rs's own base64 text is 3.6 MB), and the table is built from it the first
//! time a process counts tokens: only `explain`, `lint`, `check` and their kin ever do. The
//! pack is committed rather than made by a build script: a build script reading tiktoken-rs
//! would compile tiktoken-rs, fancy-regex and the regex crates a second time, for the host, on
//! every cold build (about 25 s of a 2-core machine's compile time). The test
//! `the_committed_pack_is_tiktoken_s_vocabulary` packs tiktoken-rs's vocabulary afresh and
//! compares, so the file cannot drift from its source.
//!
//! The counting itself (`Vocabulary`) is written here rather than done by tiktoken-rs's
//! `CoreBPE`, which is the reference the tests hold it to: `CoreBPE::new` copies every token
//! twice more (a decoder map and a sorted list, for decoding and prefix completion, which a
//! count never uses) and sorts 200k byte strings, 80 % of a first count's 250 ms; a table of
//! ranks over the inflated pack, borrowing its bytes, is all a count needs. tiktoken-rs
//! remains the tests' reference: for the vocabulary, the pre-tokenising pattern (`PIECES`)
//! and the expected counts. It is not a dependency of the binary: it turns on every Unicode
//! table of the regex crates (scripts, ages, segmentation, boolean properties), which the
//! pattern does not use.
//!
//! It replaced `bpe-openai`, which embedded three prebuilt dictionaries (32 MB for o200k
//! alone, most of the release binary) made by a build script that dominated a cold release
//! build. BENCHMARKS.md has the first-use cost.

#![warn(missing_docs)]

use std::hash::BuildHasher;
use std::ops::Range;
use std::sync::{LazyLock, Mutex, PoisonError};

use rustc_hash::{FxBuildHasher, FxHashMap};

/// A token's rank in the vocabulary (`u32`, as tiktoken numbers them).
type Rank = u32;

/// The tokenizer's name, as token counts are labelled.
pub const NAME: &str = "o200k_base";

/// How `o200k_base` splits a text before byte-pair merging: each match is encoded on its
/// own. The encoding's published definition (a test compares it with tiktoken-rs's), one
/// alternative per line; `\p{..}` needs only the general categories, `(?i:..)` case
/// folding and `\s` the Perl classes, the Unicode tables ctxgraph-tokens turns on.
const PIECES: &str = concat!(
    // A word, capitals first: one optional character that is no letter, digit or line
    // break (a space, a quote), any capitals, at least one lower case letter, then an
    // optional English contraction.
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    "|",
    // A word of capitals, lower case letters after them optional (`HTTP`, which the
    // alternative above leaves, since it needs a lower case letter).
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    "|",
    // Numbers, three digits at most per piece.
    r"\p{N}{1,3}",
    "|",
    // Punctuation and symbols, with an optional space before and line breaks or slashes after.
    r" ?[^\s\p{L}\p{N}]+[\r\n/]*",
    "|",
    // Line breaks with the blanks before them.
    r"\s*[\r\n]+",
    "|",
    // A run of blanks at the end of the text, or up to, not including, the last one before
    // any other character: that one starts the next piece (the look-ahead is why this is
    // fancy-regex, not regex).
    r"\s+(?!\S)",
    "|",
    // What is left: one blank before a digit or a character the rest do not start with.
    r"\s+",
);

/// The number of `o200k_base` tokens in `text` (GPT-4o and later). The table is built on
/// the process's first count, then shared.
pub fn count(text: &str) -> usize {
    // Short texts cost less to count than to look up.
    if text.len() < COUNTED_SHORT {
        return O200K_BASE.count(text);
    }
    let key = blake3::hash(text.as_bytes());
    if let Some(count) = COUNTS.lock().unwrap_or_else(PoisonError::into_inner).get(&key) {
        return *count;
    }
    let count = O200K_BASE.count(text);
    let mut counts = COUNTS.lock().unwrap_or_else(PoisonError::into_inner);
    if counts.len() >= COUNTS_KEPT {
        counts.clear();
    }
    counts.insert(key, count);
    count
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

/// Builds the table afresh, as a process's first count does: for the benchmark of that cost
/// (ctxgraph-engine's benches/tokens.rs), not for use.
#[doc(hidden)]
pub fn build_tables() -> impl Sized {
    o200k_base()
}

/// [`count`] without the memo, as a text's first count is: for the benchmark of the encoder
/// (ctxgraph-engine's benches/tokens.rs), not for use.
#[doc(hidden)]
pub fn count_unmemoised(text: &str) -> usize {
    O200K_BASE.count(text)
}

static O200K_BASE: LazyLock<Vocabulary> = LazyLock::new(o200k_base);

fn o200k_base() -> Vocabulary {
    Vocabulary::unpack(PACKED).expect("the committed pack is a valid o200k_base")
}

/// The number of ranks (u32, little-endian); each rank's token bytes in rank order, each
/// length-prefixed (LEB128), empty for a rank with no regular token; the number of special
/// tokens, then each one's rank and text; all of it deflated. A count reads the regular
/// tokens only: a special token's spelling in a text is counted as the plain text it is.
static PACKED: &[u8] = include_bytes!("../data/o200k_base.vocab");

/// What counting needs of `o200k_base`: the pre-tokenising pattern, and each regular token's
/// rank by its bytes.
struct Vocabulary {
    /// The inflated pack; `tokens` points into it.
    packed: Box<[u8]>,
    /// Each rank's token bytes in `packed` (empty for a rank that has none).
    tokens: Vec<Range<u32>>,
    /// Ranks, found by their token's bytes. hashbrown's table rather than a map keyed by the
    /// bytes: the keys borrow from `packed`, which the same value owns.
    ranks: hashbrown::HashTable<Rank>,
    /// Splits a text into the pieces that are encoded separately.
    pieces: fancy_regex::Regex,
}

impl Vocabulary {
    /// The vocabulary from the packed form; `None` only if that form is malformed, which the
    /// tests below rule out for the vocabulary this binary carries.
    fn unpack(deflated: &[u8]) -> Option<Self> {
        let packed = miniz_oxide::inflate::decompress_to_vec(deflated).ok()?.into_boxed_slice();
        let mut reader = Reader { packed: &packed, at: 0 };
        let count = reader.u32()?;
        let mut tokens = Vec::with_capacity(count as usize);
        let mut ranks = hashbrown::HashTable::with_capacity(count as usize);
        for rank in 0..count {
            let span = reader.bytes()?;
            let bytes = spanned(&packed, &span);
            tokens.push(span);
            if !bytes.is_empty() {
                ranks.insert_unique(FxBuildHasher.hash_one(bytes), rank, |&rank: &Rank| {
                    FxBuildHasher.hash_one(spanned(&packed, &tokens[rank as usize]))
                });
            }
        }
        // The special tokens end the pack; a count does not look them up.
        for _ in 0..reader.len()? {
            reader.u32()?;
            std::str::from_utf8(reader.slice()?).ok()?;
        }
        if reader.at != packed.len() {
            return None;
        }
        let pieces = fancy_regex::Regex::new(PIECES).ok()?;
        Some(Vocabulary { packed, tokens, ranks, pieces })
    }

    fn token(&self, rank: Rank) -> &[u8] {
        spanned(&self.packed, &self.tokens[rank as usize])
    }

    /// The rank of the token spelled `bytes`, if there is one.
    fn rank(&self, bytes: &[u8]) -> Option<Rank> {
        self.ranks.find(FxBuildHasher.hash_one(bytes), |&rank| self.token(rank) == bytes).copied()
    }

    /// How many tokens `text` encodes to, special tokens' spellings as plain text.
    fn count(&self, text: &str) -> usize {
        let mut total = 0;
        let mut end = 0;
        for piece in self.pieces.find_iter(text) {
            match piece {
                Ok(piece) => {
                    total += self.piece_len(piece.as_str().as_bytes());
                    end = piece.end();
                }
                // fancy-regex gives up on a match that backtracks past its limit. The pattern's
                // one lookahead looks at a single character, so this is not known to happen;
                // if it does, the rest is counted a token per byte (an upper bound) rather
                // than the process stopping over a count.
                Err(_) => return total + (text.len() - end),
            }
        }
        total
    }

    /// The number of tokens byte-pair merging makes of one piece: from single bytes, join
    /// the two adjacent parts whose joined bytes are the lowest-ranked token (the leftmost
    /// of equals), until no two adjacent parts join into a token.
    ///
    /// One way for every piece: a heap of candidate joins. A scan of every pair per join is
    /// quadratic in the piece, and a piece is one run of letters or spaces that a hostile
    /// rule file can make megabytes long (tiktoken scans short pieces and switches to a heap
    /// for long ones; one path costs prose about 4 % here: BENCHMARKS.md).
    fn piece_len(&self, piece: &[u8]) -> usize {
        if piece.len() <= 1 || self.rank(piece).is_some() {
            return usize::from(!piece.is_empty());
        }
        // Parts as a linked list over their start offsets: `next[start]` is where the part
        // starting at `start` ends (the next part's start); `prev[start]` the previous part's
        // start; `dead[start]` once the part has been joined into the one before it.
        let n = piece.len();
        let mut next: Vec<usize> = (1..=n).collect();
        // `n` for the first part, which has none before it.
        let mut prev: Vec<usize> = (0..n).map(|i| i.checked_sub(1).unwrap_or(n)).collect();
        let mut dead = vec![false; n];
        // Candidate joins: (rank, start of the left part, end of the right part). A candidate
        // is stale once either part has changed, which its end no longer matching says.
        let mut joins = std::collections::BinaryHeap::new();
        let join_of = |start: usize, next: &[usize]| {
            let middle = next[start];
            let end = *next.get(middle)?;
            let rank = self.rank(&piece[start..end])?;
            Some(std::cmp::Reverse((rank, start, end)))
        };
        joins.extend((0..n - 1).filter_map(|start| join_of(start, &next)));
        let mut parts = n;
        while let Some(std::cmp::Reverse((_, start, end))) = joins.pop() {
            let middle = next[start];
            if dead[start] || middle >= n || next[middle] != end {
                continue;
            }
            // Join the part at `middle` into the one at `start`.
            dead[middle] = true;
            next[start] = end;
            if end < n {
                prev[end] = start;
            }
            parts -= 1;
            joins.extend(join_of(start, &next));
            let before = prev[start];
            if before < n {
                joins.extend(join_of(before, &next));
            }
        }
        parts
    }
}

/// Reads the inflated pack, handing out the spans of what it reads.
struct Reader<'a> {
    packed: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn u32(&mut self) -> Option<u32> {
        let head = self.packed.get(self.at..self.at + 4)?;
        self.at += 4;
        Some(u32::from_le_bytes(head.try_into().ok()?))
    }

    /// A LEB128 length.
    fn len(&mut self) -> Option<usize> {
        let mut len = 0usize;
        for shift in (0..28).step_by(7) {
            let byte = *self.packed.get(self.at)?;
            self.at += 1;
            len |= usize::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Some(len);
            }
        }
        None
    }

    /// A length-prefixed run of bytes, as its span in the pack.
    fn bytes(&mut self) -> Option<Range<u32>> {
        let len = self.len()?;
        let end = self.at.checked_add(len).filter(|&end| end <= self.packed.len())?;
        let span = u32::try_from(self.at).ok()?..u32::try_from(end).ok()?;
        self.at = end;
        Some(span)
    }

    fn slice(&mut self) -> Option<&[u8]> {
        let span = self.bytes()?;
        Some(spanned(self.packed, &span))
    }
}

/// The bytes of `packed` that `span` (as [`Reader::bytes`] handed it out) points at.
fn spanned<'a>(packed: &'a [u8], span: &Range<u32>) -> &'a [u8] {
    &packed[span.start as usize..span.end as usize]
}

// The tests compare counts with tiktoken-rs on the repository's own Markdown and may rewrite
// the packed vocabulary (CTXGRAPH_WRITE_VOCAB): test I/O, not a query's.
#[cfg(test)]
#[allow(clippy::disallowed_methods)]
mod tests {
    use tiktoken_rs::CoreBPE;

    use super::*;

    #[test]
    fn the_pattern_is_tiktoken_s() {
        assert_eq!(PIECES, tiktoken_rs::O200K_BASE_PAT_STR);
    }

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

    /// Every regular token of tiktoken-rs's vocabulary has its rank in the table built from
    /// the pack, and no other bytes are a token there.
    #[test]
    fn the_table_holds_tiktoken_s_ranks() {
        let reference = tiktoken_rs::o200k_base().expect("tiktoken-rs's o200k_base");
        let specials: Vec<Rank> = [tiktoken_rs::ENDOFTEXT, tiktoken_rs::ENDOFPROMPT]
            .iter()
            .flat_map(|text| reference.encode_with_special_tokens(text))
            .collect();
        let ours = &*O200K_BASE;
        let mut regular = 0;
        for rank in 0..RANK_LIMIT + 64 {
            match reference.decode_bytes(&[rank]) {
                Ok(bytes) if !specials.contains(&rank) => {
                    assert_eq!(ours.rank(&bytes), Some(rank), "rank {rank}");
                    regular += 1;
                }
                _ => assert!(ours.tokens.get(rank as usize).is_none_or(Range::is_empty), "rank {rank}"),
            }
        }
        assert_eq!(ours.ranks.len(), regular);
        assert_eq!(ours.rank(b"not one token, surely"), None);
    }

    /// The count tiktoken-rs gives: its ordinary encoding's length.
    fn reference_count(reference: &CoreBPE, text: &str) -> usize {
        reference.encode_ordinary(text).len()
    }

    /// Texts of every kind the engine counts (rule files, prompts, JSON, code) and the
    /// awkward ones: special tokens' spellings, long runs that make many merges, scripts
    /// without spaces, combining marks, emoji sequences.
    #[test]
    fn counts_as_tiktoken_does() {
        let reference = tiktoken_rs::o200k_base().expect("tiktoken-rs's o200k_base");
        let mut texts: Vec<String> = vec![
            String::new(),
            " ".to_owned(),
            "## Rules\n\nNever call the network from a test; use 127.0.0.1 ✓ — ünïcödé, 漢字, emoji 🦀\n\t<|endoftext|>".to_owned(),
            "<|endoftext|><|endofprompt|>".to_owned(),
            "a".repeat(5000),
            "ab".repeat(3000),
            " ".repeat(4000) + "x",
            "\n\n\n   \t\t  \r\n".repeat(50),
            "1234567890".repeat(300),
            "ŤĥïŝıšÅŁøñğŴøŕď".repeat(100),
            "日本語のテキストは空白なしで続く".repeat(100),
            "e\u{301}\u{302}\u{303}".repeat(200),
            "👩‍👩‍👧‍👦🏳️‍🌈".repeat(100),
            r#"{"$schema":"https://opencode.ai/config.json","instructions":["docs/**/*.md"]}"#.to_owned(),
            "fn main() {\n    println!(\"{}\", x?.unwrap_or_default());\n}\n".repeat(40),
            "supercalifragilisticexpialidocious_and_then_someMoreCamelCaseWordsHERE".repeat(50),
        ];
        // The repository's own prose: its top-level Markdown files and those under docs/.
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut markdown: Vec<std::path::PathBuf> =
            ["README.md", "ARCHITECTURE.md", "BENCHMARKS.md"].iter().map(|name| root.join(name)).collect();
        let mut dirs = vec![root.join("docs")];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).expect("docs/ is listed") {
                let path = entry.expect("a docs/ entry").path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|e| e == "md") {
                    markdown.push(path);
                }
            }
        }
        assert!(markdown.len() > 20, "the repository's Markdown files: {markdown:?}");
        texts.extend(markdown.iter().map(|path| std::fs::read_to_string(path).expect("Markdown is UTF-8")));
        for text in &texts {
            let head: String = text.chars().take(40).collect();
            assert_eq!(O200K_BASE.count(text), reference_count(&reference, text), "{head:?}…");
        }
    }

    /// Random texts over an alphabet small enough that long pieces with many merges (and
    /// ties between equal pairs) are common.
    #[test]
    fn counts_random_texts_as_tiktoken_does() {
        let reference = tiktoken_rs::o200k_base().expect("tiktoken-rs's o200k_base");
        let alphabet: Vec<char> = "aabbeenrst  \n1.'é漢🦀".chars().collect();
        // A fixed linear congruential sequence: the same texts on every run, no dependency.
        let mut state: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = move || {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) as usize
        };
        for _ in 0..400 {
            let len = next() % 300;
            let text: String = (0..len).map(|_| alphabet[next() % alphabet.len()]).collect();
            assert_eq!(O200K_BASE.count(&text), reference_count(&reference, &text), "{text:?}");
        }
    }

    #[test]
    fn a_malformed_pack_is_refused() {
        assert!(Vocabulary::unpack(b"not deflate").is_none());
        let truncated = miniz_oxide::deflate::compress_to_vec(&[5, 0, 0, 0, 3, b'a'], 1);
        assert!(Vocabulary::unpack(&truncated).is_none());
    }
}
