//! Likely secrets in text that is sent to a model provider.
//!
//! A small set of high-confidence patterns (fixed prefixes and lengths that real keys
//! have), written for ctxgraph. No secret-scanning crate is a good fit as a dependency
//! (spec/rust-stack.md §4), and rule files are short, so a handful of regexes is enough.
//! Matches are reported by kind and position only: callers must never print the text.

use std::sync::LazyLock;

use regex::Regex;

use crate::lines::{Column, LineColumn, Lines};

/// One kind of secret and how to recognise it.
struct Pattern {
    kind: &'static str,
    regex: &'static str,
}

const PATTERNS: &[Pattern] = &[
    Pattern { kind: "private key", regex: r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----" },
    Pattern { kind: "AWS access key ID", regex: r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b" },
    Pattern { kind: "GitHub token", regex: r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36}\b" },
    Pattern { kind: "GitHub fine-grained token", regex: r"\bgithub_pat_[A-Za-z0-9_]{60,}" },
    Pattern { kind: "GitLab token", regex: r"\bglpat-[A-Za-z0-9_-]{20,}" },
    Pattern { kind: "Slack token", regex: r"\bxox[abposr]-[A-Za-z0-9-]{10,}" },
    Pattern { kind: "Anthropic API key", regex: r"\bsk-ant-[A-Za-z0-9_-]{32,}" },
    Pattern {
        kind: "OpenAI API key",
        regex: r"\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{32,}|\bsk-[A-Za-z0-9]{48}\b",
    },
    Pattern { kind: "Google API key", regex: r"\bAIza[0-9A-Za-z_-]{35}" },
    Pattern { kind: "Stripe secret key", regex: r"\b(?:sk|rk)_live_[0-9A-Za-z]{24,}" },
    Pattern { kind: "npm token", regex: r"\bnpm_[A-Za-z0-9]{36}\b" },
];

static COMPILED: LazyLock<Vec<(&'static str, Regex)>> = LazyLock::new(|| {
    PATTERNS
        .iter()
        // The patterns are constants, checked by `every_pattern_compiles`.
        .filter_map(|p| Regex::new(p.regex).ok().map(|r| (p.kind, r)))
        .collect()
});

/// Where a likely secret is. Deliberately holds no part of it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SecretMatch {
    /// What kind of secret it looks like (the pattern's name).
    pub kind: &'static str,
    /// 1-based line and column (in characters).
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
}

/// Every likely secret in `text`, in order of position; overlapping matches of different
/// kinds are reported once, by the first pattern.
pub fn find_secrets(text: &str) -> Vec<SecretMatch> {
    let mut spans: Vec<(usize, usize, &'static str)> = Vec::new();
    for (kind, regex) in COMPILED.iter() {
        for found in regex.find_iter(text) {
            if !spans.iter().any(|(start, end, _)| found.start() < *end && *start < found.end()) {
                spans.push((found.start(), found.end(), kind));
            }
        }
    }
    spans.sort_unstable();
    let lines = Lines::new(text);
    spans
        .into_iter()
        .map(|(start, _, kind)| {
            let LineColumn { line, column } = lines.locate(start, Column::Chars);
            SecretMatch { kind, line, column }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pattern_compiles() {
        assert_eq!(COMPILED.len(), PATTERNS.len());
    }

    /// Fake keys of the right shape, assembled at run time so no key-shaped literal sits
    /// in the source.
    fn fake(prefix: &str, body: char, len: usize) -> String {
        format!("{prefix}{}", body.to_string().repeat(len))
    }

    #[test]
    fn finds_each_kind() {
        let cases = [
            ("private key", format!("-----BEGIN {}PRIVATE KEY-----", "OPENSSH ")),
            ("AWS access key ID", fake("AKIA", 'Q', 16)),
            ("GitHub token", fake("ghp_", 'a', 36)),
            ("GitHub fine-grained token", fake("github_pat_", 'b', 82)),
            ("GitLab token", fake("glpat-", 'c', 20)),
            ("Slack token", fake("xoxb-", '1', 24)),
            ("Anthropic API key", fake("sk-ant-api03-", 'd', 80)),
            ("OpenAI API key", fake("sk-proj-", 'e', 64)),
            ("Google API key", fake("AIza", 'f', 35)),
            ("Stripe secret key", fake("sk_live_", 'g', 24)),
            ("npm token", fake("npm_", 'h', 36)),
        ];
        for (kind, secret) in cases {
            let text = format!("# Rules\n\nuse the key  {secret} for staging\n");
            assert_eq!(find_secrets(&text), [SecretMatch { kind, line: 3, column: 14 }], "{kind}");
        }
    }

    #[test]
    fn ignores_look_alikes() {
        let text = "\
Never hard-code AKIA-style keys; read AWS_ACCESS_KEY_ID from the environment.
Tokens look like ghp_xxx or sk-ant-...; ask the user for one.
-----BEGIN PUBLIC KEY-----
The ask-for-review task runs when the skeleton is done.
";
        assert_eq!(find_secrets(text), []);
        assert_eq!(find_secrets(&fake("AKIA", 'Q', 15)), []);
    }

    #[test]
    fn reports_positions_in_characters() {
        let text = format!("é {}\n", fake("ghp_", 'z', 36));
        assert_eq!(find_secrets(&text), [SecretMatch { kind: "GitHub token", line: 1, column: 3 }]);
    }
}
