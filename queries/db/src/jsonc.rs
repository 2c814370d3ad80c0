//! J1/J2: JSONC as opencode's `jsonc-parser` accepts it: comments, trailing commas,
//! duplicate keys (last wins), nothing else from JSON5.

use jsonc_parser::ParseOptions;
use jsonc_parser::errors::ParseErrorKind;

use crate::lines::{Column, LineColumn, Lines};

/// A parse failure with the position opencode reports (J2).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct JsoncError {
    /// The code name opencode prints (`printParseErrorCode`), e.g. `CommaExpected`.
    pub code: &'static str,
    /// The parser's own wording.
    pub message: String,
    /// Byte offset of the error in the text.
    pub offset: usize,
    /// J2: 1-based; the number of LF-separated segments before the offset.
    pub line: usize,
    /// J2: 1-based, in UTF-16 code units (a CR before LF counts as a column).
    pub column: usize,
}

fn strict_options() -> ParseOptions {
    ParseOptions {
        allow_comments: true,
        allow_trailing_commas: true,
        allow_loose_object_property_names: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    }
}

/// Parses JSONC into a JSON value. Empty, whitespace-only and comment-only text is an
/// error (`ValueExpected`), as in opencode.
pub fn parse(text: &str) -> Result<serde_json::Value, JsoncError> {
    parse_tree(text, &|_| ()).map(|tree| tree.to_value())
}

/// A parsed value whose every node carries `T`, built from the node's byte range.
#[derive(Clone, Debug, PartialEq)]
pub enum Tree<T> {
    /// A string, number, boolean or null.
    Scalar(serde_json::Value, T),
    /// An array, its items in order.
    Array(Vec<Tree<T>>, T),
    /// Duplicate keys: the last value wins, at the first key's position (JS assignment).
    Object(indexmap::IndexMap<String, Tree<T>>, T),
}

impl<T> Tree<T> {
    /// The plain JSON value, annotations dropped.
    pub fn to_value(&self) -> serde_json::Value {
        match self {
            Tree::Scalar(value, _) => value.clone(),
            Tree::Array(items, _) => serde_json::Value::Array(items.iter().map(Tree::to_value).collect()),
            Tree::Object(entries, _) => {
                serde_json::Value::Object(entries.iter().map(|(k, v)| (k.clone(), v.to_value())).collect())
            }
        }
    }
}

/// Parses JSONC with `annotate` called on every node's byte range (J1).
pub fn parse_tree<T>(
    text: &str,
    annotate: &dyn Fn(std::ops::Range<usize>) -> T,
) -> Result<Tree<T>, JsoncError> {
    let collect = jsonc_parser::CollectOptions::default();
    match jsonc_parser::parse_to_ast(text, &collect, &strict_options()) {
        Ok(result) => match result.value {
            Some(value) => Ok(build(value, annotate)),
            None => Err(error_at(text, text.len(), "ValueExpected", "Value expected".to_owned())),
        },
        Err(err) => {
            let code = code_name(err.kind());
            let mut offset = err.range().start;
            // The Rust parser points just after the previous value; the JS one at the token
            // that should have been a separator.
            if matches!(code, "CommaExpected" | "ColonExpected") {
                offset = skip_trivia(text, offset);
            }
            Err(error_at(text, offset, code, err.kind().to_string()))
        }
    }
}

fn build<T>(value: jsonc_parser::ast::Value<'_>, annotate: &dyn Fn(std::ops::Range<usize>) -> T) -> Tree<T> {
    use jsonc_parser::ast::Value as Ast;
    use serde_json::Value;
    let range = |r: jsonc_parser::common::Range| r.start..r.end;
    match value {
        Ast::StringLit(lit) => {
            Tree::Scalar(Value::String(lit.value.into_owned()), annotate(range(lit.range)))
        }
        Ast::NumberLit(lit) => Tree::Scalar(js_number(lit.value), annotate(range(lit.range))),
        Ast::BooleanLit(lit) => Tree::Scalar(Value::Bool(lit.value), annotate(range(lit.range))),
        Ast::NullKeyword(null) => Tree::Scalar(Value::Null, annotate(range(null.range))),
        Ast::Array(array) => {
            let r = range(array.range);
            Tree::Array(array.elements.into_iter().map(|v| build(v, annotate)).collect(), annotate(r))
        }
        Ast::Object(object) => {
            let r = range(object.range);
            let mut entries = indexmap::IndexMap::with_capacity(object.properties.len());
            for prop in object.properties {
                // A duplicate key keeps its first position and takes the new value.
                entries.insert(prop.name.into_string(), build(prop.value, annotate));
            }
            Tree::Object(entries, annotate(r))
        }
    }
}

/// A JSON number as JavaScript holds it (an f64), kept integral when it is one so it
/// prints as `JSON.stringify` would (`1.0` → `1`).
fn js_number(raw: &str) -> serde_json::Value {
    let Ok(float) = raw.parse::<f64>() else { return serde_json::Value::Null };
    if float.is_finite() && float.fract() == 0.0 && float.abs() < 9_007_199_254_740_992.0 {
        // Exact: the magnitude is below 2^53.
        #[allow(clippy::cast_possible_truncation)]
        return serde_json::Value::from(float as i64);
    }
    // JSON.stringify prints non-finite numbers as null.
    serde_json::Number::from_f64(float).map_or(serde_json::Value::Null, serde_json::Value::Number)
}

/// The offset of the next token at or after `offset`: past whitespace and comments.
fn skip_trivia(text: &str, mut offset: usize) -> usize {
    loop {
        let rest = &text[offset..];
        let trimmed = rest.trim_start_matches([' ', '\t', '\n', '\r']);
        offset += rest.len() - trimmed.len();
        if trimmed.starts_with("//") {
            offset += trimmed.find('\n').unwrap_or(trimmed.len());
        } else if let Some(body) = trimmed.strip_prefix("/*") {
            offset += body.find("*/").map_or(trimmed.len(), |end| end + 4);
        } else {
            return offset;
        }
    }
}

fn error_at(text: &str, offset: usize, code: &'static str, message: String) -> JsoncError {
    let offset = offset.min(text.len());
    let LineColumn { line, column } = Lines::new(text).locate(offset, Column::Utf16);
    JsoncError { code, message, offset, line, column }
}

/// Maps the Rust parser's error kinds onto the JS parser's code names (J2).
fn code_name(kind: &ParseErrorKind) -> &'static str {
    use ParseErrorKind as K;
    match kind {
        K::ExpectedColonAfterObjectKey => "ColonExpected",
        K::ExpectedComma => "CommaExpected",
        K::ExpectedStringObjectProperty => "PropertyNameExpected",
        K::ExpectedObjectValue => "ValueExpected",
        K::UnterminatedObject | K::UnexpectedCloseBracket => "CloseBraceExpected",
        K::UnterminatedArray | K::UnexpectedCloseBrace => "CloseBracketExpected",
        K::MultipleRootJsonValues => "EndOfFileExpected",
        K::UnterminatedCommentBlock => "UnexpectedEndOfComment",
        K::ExpectedDigit
        | K::ExpectedDigitFollowingNegativeSign
        | K::ExpectedPlusMinusOrDigitInNumberLiteral
        | K::BareDecimalPointNumbersNotAllowed
        | K::HexadecimalNumbersNotAllowed
        | K::UnaryPlusNumbersNotAllowed
        | K::NonFiniteNumbersNotAllowed => "InvalidNumberFormat",
        K::String(_) => "UnexpectedEndOfString",
        _ => "InvalidSymbol",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_comments_trailing_commas_and_duplicate_keys() {
        let value = parse("{\n // c\n \"a\": 1, /* x */ \"a\": [2,],\n}").unwrap();
        assert_eq!(value, serde_json::json!({"a": [2]}));
    }

    #[test]
    fn reports_line_and_utf16_column() {
        let err = parse("{\n  \"é\": 1\n  \"b\": 2\n}").unwrap_err();
        assert_eq!((err.code, err.line, err.column), ("CommaExpected", 3, 3));
        let empty = parse(" \n// only a comment\n").unwrap_err();
        assert_eq!((empty.code, empty.line), ("ValueExpected", 3));
        assert_eq!(parse("{'a': 1}").unwrap_err().line, 1);
    }
}
