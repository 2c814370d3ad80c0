//! docs/memory.md §10 "Tokenize": the tokens every recall ranks by.

use std::sync::LazyLock;

use regex::Regex;

/// Runs of Unicode letters, digits and underscores.
static WORD: LazyLock<Regex> = LazyLock::new(|| {
    // A constant pattern; `tokenizes_words` exercises it.
    Regex::new(r"[\p{L}\p{N}_]+").unwrap_or_else(|_| unreachable!())
});

/// Common English function words, and the verbs people use to ask for memory itself, that
/// would otherwise match every record. Written for ctxgraph; sorted for binary search.
const STOPWORDS: &[&str] = &[
    "about", "above", "after", "again", "against", "all", "also", "am", "an", "and", "any", "are", "as",
    "at", "be", "because", "been", "before", "being", "below", "between", "both", "but", "by", "can",
    "could", "did", "do", "does", "doing", "don", "down", "during", "each", "else", "even", "ever", "few",
    "for", "from", "further", "had", "has", "have", "having", "he", "her", "here", "hers", "him", "his",
    "how", "if", "in", "into", "is", "it", "its", "itself", "just", "let", "like", "made", "make", "may",
    "me", "might", "more", "most", "much", "must", "my", "no", "nor", "not", "now", "of", "off", "on",
    "once", "only", "or", "other", "our", "ours", "out", "over", "own", "please", "same", "shall", "she",
    "should", "so", "some", "such", "than", "that", "the", "their", "them", "then", "there", "these", "they",
    "this", "those", "through", "to", "too", "under", "until", "up", "upon", "us", "very", "was", "we",
    "were", "what", "when", "where", "which", "while", "who", "whom", "why", "will", "with", "would", "yet",
    "you", "your", "yours",
];

fn is_stopword(token: &str) -> bool {
    STOPWORDS.binary_search(&token).is_ok()
}

/// Han, kana and Hangul: scripts written without spaces, tokenised one character at a time.
fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF      // Hiragana, Katakana
        | 0x3400..=0x4DBF    // CJK Extension A
        | 0x4E00..=0x9FFF    // CJK Unified Ideographs
        | 0xAC00..=0xD7AF    // Hangul syllables
        | 0xF900..=0xFAFF    // CJK Compatibility Ideographs
        | 0x20000..=0x2FA1F) // Extensions B–F, compatibility supplement
}

/// Every token of `text`, in order, repeats kept (BM25 counts them).
///
/// Lower-cased; `camelCase`/`PascalCase` and `snake_case` words also yield their parts after the
/// joined form (`getUserName` → `getusername`, `get`, `user`, `name`); one-character tokens
/// and stopwords are dropped; CJK characters are tokens of their own.
pub fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for word in WORD.find_iter(text) {
        let word = word.as_str();
        if word.chars().any(is_cjk) {
            cjk_word(word, &mut out);
            continue;
        }
        push(&mut out, word.to_lowercase());
        let parts = parts(word);
        if parts.len() > 1 {
            for part in parts {
                push(&mut out, part.to_lowercase());
            }
        }
    }
    out
}

/// The distinct tokens of a query, first-seen order.
pub fn query_tokens(text: &str) -> Vec<String> {
    let mut seen = Vec::new();
    for token in tokens(text) {
        if !seen.contains(&token) {
            seen.push(token);
        }
    }
    seen
}

fn push(out: &mut Vec<String>, token: String) {
    if token.chars().count() > 1 && !is_stopword(&token) {
        out.push(token);
    }
}

/// A mixed word splits into CJK characters and the non-CJK runs between them.
fn cjk_word(word: &str, out: &mut Vec<String>) {
    let mut run = String::new();
    for c in word.chars() {
        if is_cjk(c) {
            if !run.is_empty() {
                push(out, std::mem::take(&mut run).to_lowercase());
            }
            out.push(c.to_string());
        } else {
            run.push(c);
        }
    }
    if !run.is_empty() {
        push(out, run.to_lowercase());
    }
}

/// The parts of `word` at underscores and case changes: `HTTPServer2go` → `HTTP`,
/// `Server2go`; `get_user` → `get`, `user`.
fn parts(word: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    for piece in word.split('_').filter(|p| !p.is_empty()) {
        let chars: Vec<(usize, char)> = piece.char_indices().collect();
        let mut start = 0;
        for i in 1..chars.len() {
            let (at, c) = chars[i];
            let prev = chars[i - 1].1;
            let next_lower = chars.get(i + 1).is_some_and(|(_, n)| n.is_lowercase());
            let boundary = c.is_uppercase()
                && (prev.is_lowercase() || prev.is_numeric() || (prev.is_uppercase() && next_lower));
            if boundary {
                parts.push(&piece[start..at]);
                start = at;
            }
        }
        parts.push(&piece[start..]);
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stopwords_are_sorted() {
        assert!(STOPWORDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn tokenizes_words() {
        let cases: &[(&str, &[&str])] = &[
            ("Use pnpm, not npm!", &["use", "pnpm", "npm"]),
            ("getUserName", &["getusername", "get", "user", "name"]),
            ("HTTPServer", &["httpserver", "http", "server"]),
            ("snake_case kebab-case", &["snake_case", "snake", "case", "kebab", "case"]),
            ("src/memory/bm25.rs", &["src", "memory", "bm25", "rs"]),
            ("a b c 42", &["42"]),
            ("测试 the パス", &["测", "试", "パ", "ス"]),
            ("Ünïcode ÉTÉ", &["ünïcode", "été"]),
        ];
        for (text, expected) in cases {
            assert_eq!(tokens(text), *expected, "{text}");
        }
    }

    #[test]
    fn query_tokens_are_unique() {
        assert_eq!(query_tokens("npm npm pnpm NPM"), ["npm", "pnpm"]);
    }
}
