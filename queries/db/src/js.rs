//! JavaScript's string semantics where they differ from Rust's: every agent ctxgraph
//! reproduces is a node program.

/// JavaScript's `String.prototype.trim`: its whitespace set differs from Rust's (it
/// includes U+FEFF and excludes U+0085).
pub fn js_trim(s: &str) -> &str {
    fn is_js_space(c: char) -> bool {
        matches!(c, '\u{9}'..='\u{D}' | ' ' | '\u{A0}' | '\u{1680}' | '\u{2000}'..='\u{200A}'
            | '\u{2028}' | '\u{2029}' | '\u{202F}' | '\u{205F}' | '\u{3000}' | '\u{FEFF}')
    }
    s.trim_matches(is_js_space)
}

/// `key` as an array index, the keys a JavaScript object enumerates first, ascending
/// (`Object.entries`, `JSON.stringify`): a canonical decimal below 2^32 - 1.
pub fn array_index(key: &str) -> Option<u64> {
    let canonical =
        key == "0" || (!key.starts_with('0') && !key.is_empty() && key.bytes().all(|b| b.is_ascii_digit()));
    key.parse::<u64>().ok().filter(|&i| canonical && i < u64::from(u32::MAX))
}

#[cfg(test)]
mod tests {
    #[test]
    fn array_indexes_are_canonical_decimals_below_the_maximum_length() {
        for (key, index) in [("0", Some(0)), ("7", Some(7)), ("4294967294", Some(4_294_967_294))] {
            assert_eq!(super::array_index(key), index, "{key}");
        }
        for key in ["", "01", "-1", "1.0", "a", "4294967295", "99999999999999999999"] {
            assert_eq!(super::array_index(key), None, "{key}");
        }
    }
}
