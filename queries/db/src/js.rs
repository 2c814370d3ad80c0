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
