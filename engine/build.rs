//! Packs `o200k_base`'s vocabulary for src/tokens.rs.
//!
//! tiktoken-rs keeps the vocabulary as base64 text, 3.6 MB of the binary. Packed here (the
//! number of ranks, each rank's token bytes in rank order, length-prefixed, then the special
//! tokens with their ranks, all deflated) it is about a third of that; src/tokens.rs builds tiktoken-rs's tables from it
//! the first time a process counts tokens. The vocabulary itself is read from tiktoken-rs
//! (a build dependency), so there is one source of it.

use std::io::Write;

/// Ranks are dense up to here in `o200k_base` (199,998 regular tokens; the special tokens
/// sit at 199,999 and 200,018). A rank with no token is packed as an empty entry.
const RANK_LIMIT: u32 = 200_019;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    let bpe = tiktoken_rs::o200k_base().expect("tiktoken-rs builds o200k_base");
    let specials: Vec<(u32, &str)> = [tiktoken_rs::ENDOFTEXT, tiktoken_rs::ENDOFPROMPT]
        .into_iter()
        .map(|text| {
            let tokens = bpe.encode_with_special_tokens(text);
            assert_eq!(tokens.len(), 1, "{text} is one special token of o200k_base");
            (tokens[0], text)
        })
        .collect();
    let mut packed = Vec::with_capacity(2 << 20);
    packed.extend_from_slice(&RANK_LIMIT.to_le_bytes());
    let mut regular = 0u32;
    for rank in 0..RANK_LIMIT {
        let bytes = match bpe.decode_bytes(&[rank]) {
            Ok(bytes) if !specials.iter().any(|(special, _)| *special == rank) => bytes,
            _ => Vec::new(),
        };
        regular += u32::from(!bytes.is_empty());
        push_len(&mut packed, bytes.len());
        packed.extend_from_slice(&bytes);
    }
    assert!(regular > 199_000, "o200k_base has about 200k regular tokens, packed {regular}");
    // Then the special tokens: their count, then each one's rank and text.
    push_len(&mut packed, specials.len());
    for (rank, text) in &specials {
        packed.extend_from_slice(&rank.to_le_bytes());
        push_len(&mut packed, text.len());
        packed.extend_from_slice(text.as_bytes());
    }
    let deflated = miniz_oxide::deflate::compress_to_vec(&packed, 10);
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let mut file = std::fs::File::create(out.join("o200k_base.vocab")).expect("create the packed vocabulary");
    file.write_all(&deflated).expect("write the packed vocabulary");
}

/// LEB128: token lengths are almost all under 128, so one byte each.
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
