//! J1/J2: JSONC as opencode's `jsonc-parser` accepts it: comments, trailing commas,
//! duplicate keys (last wins), nothing else from JSON5.

use jsonc_parser::ParseOptions;
use jsonc_parser::errors::ParseErrorKind;

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
    match jsonc_parser::parse_to_serde_value::<Option<serde_json::Value>>(text, &strict_options()) {
        Ok(Some(value)) => Ok(value),
        Ok(None) => Err(error_at(text, text.len(), "ValueExpected", "Value expected".to_owned())),
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
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let last = before.rsplit('\n').next().unwrap_or("");
    let column = last.encode_utf16().count() + 1;
    JsoncError { code, message, offset, line, column }
}

/// Maps the Rust parser's error kinds onto the JS parser's code names (J2).
fn code_name(kind: &ParseErrorKind) -> &'static str {
    use ParseErrorKind::*;
    match kind {
        ExpectedColonAfterObjectKey => "ColonExpected",
        ExpectedComma => "CommaExpected",
        ExpectedStringObjectProperty => "PropertyNameExpected",
        ExpectedObjectValue => "ValueExpected",
        UnterminatedObject | UnexpectedCloseBracket => "CloseBraceExpected",
        UnterminatedArray | UnexpectedCloseBrace => "CloseBracketExpected",
        MultipleRootJsonValues => "EndOfFileExpected",
        UnterminatedCommentBlock => "UnexpectedEndOfComment",
        ExpectedDigit
        | ExpectedDigitFollowingNegativeSign
        | ExpectedPlusMinusOrDigitInNumberLiteral
        | BareDecimalPointNumbersNotAllowed
        | HexadecimalNumbersNotAllowed
        | UnaryPlusNumbersNotAllowed
        | NonFiniteNumbersNotAllowed => "InvalidNumberFormat",
        String(_) => "UnexpectedEndOfString",
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
