//! docs/memory.md §3.2: normalisation, hashing and ids.

use std::collections::BTreeSet;
use std::fmt::Write;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use sha2::{Digest, Sha256};
use unicode_normalization::UnicodeNormalization;

/// NFKC, lower case, one space between words, no trailing punctuation, workspace paths
/// made relative, and runs of six or more digits (timestamps, pids, ports) as `#`.
pub fn normalize(text: &str, workspace: Option<&Path>) -> String {
    let mut text: String = text.nfkc().collect::<String>().to_lowercase();
    if let Some(root) = workspace.and_then(Path::to_str).filter(|r| r.len() > 1) {
        let prefix = format!("{}/", root.trim_end_matches('/').to_lowercase());
        text = text.replace(&prefix, "");
    }
    let words: Vec<&str> = text.split_whitespace().collect();
    let joined = words.join(" ");
    let trimmed = joined.trim_end_matches(|c: char| c.is_ascii_punctuation() || c == '…');
    let mut out = String::with_capacity(trimmed.len());
    let mut digits = String::new();
    for c in trimmed.chars() {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        flush_digits(&mut out, &mut digits);
        out.push(c);
    }
    flush_digits(&mut out, &mut digits);
    out
}

fn flush_digits(out: &mut String, digits: &mut String) {
    if digits.len() >= 6 {
        out.push('#');
    } else {
        out.push_str(digits);
    }
    digits.clear();
}

/// `sha256(x)` as hex, cut to 16 characters (§3.2).
pub fn hash(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    digest.iter().take(8).fold(String::with_capacity(16), |mut out, b| {
        let _ = write!(out, "{b:02x}");
        out
    })
}

const CROCKFORD: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/// A ULID-like id: `prefix`, 10 characters of millisecond time, 16 of randomness, all
/// Crockford base 32, so ids sort in creation order (§3.1).
pub fn new_id(prefix: &str, now_ms: i64) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut id = String::with_capacity(prefix.len() + 26);
    id.push_str(prefix);
    let time = now_ms.max(0).cast_unsigned();
    for shift in (0..10).rev() {
        id.push(CROCKFORD[((time >> (shift * 5)) & 31) as usize] as char);
    }
    let mut random = [0u8; 10];
    if getrandom::fill(&mut random).is_err() {
        // No entropy source: the pid and a process-wide counter still keep ids unique.
        let fallback = (u64::from(std::process::id()) << 32) ^ COUNTER.fetch_add(1, Ordering::Relaxed);
        random[..8].copy_from_slice(&fallback.to_le_bytes());
    }
    let bits = u128::from_le_bytes({
        let mut b = [0u8; 16];
        b[..10].copy_from_slice(&random);
        b
    });
    for shift in (0..16).rev() {
        id.push(CROCKFORD[((bits >> (shift * 5)) & 31) as usize] as char);
    }
    id
}

/// Token-set Jaccard similarity of two texts (§4.3's near-duplicate guard).
// Token counts are small, so the conversions to f64 are exact.
#[allow(clippy::cast_precision_loss)]
pub fn jaccard(a: &BTreeSet<String>, b: &BTreeSet<String>) -> f64 {
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    a.intersection(b).count() as f64 / a.union(b).count() as f64
}

/// The distinct tokens of `text`.
pub fn token_set(text: &str) -> BTreeSet<String> {
    crate::tokenize::tokens(text).into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_per_spec() {
        assert_eq!(normalize("  Use   PNPM, not npm!! ", None), "use pnpm, not npm");
        assert_eq!(normalize("ﬁle at /w/src/a.rs", Some(Path::new("/w"))), "file at src/a.rs");
        assert_eq!(normalize("pid 123456 port 8080", None), "pid # port 8080");
    }

    #[test]
    fn ids_sort_by_time() {
        let a = new_id("fct_", 1_000);
        let b = new_id("fct_", 2_000);
        assert!(a < b);
        assert_eq!(a.len(), 30);
        assert_ne!(new_id("fct_", 1), new_id("fct_", 1));
    }

    #[test]
    fn hash_is_16_hex() {
        assert_eq!(hash("abc"), "ba7816bf8f01cfea");
    }
}
