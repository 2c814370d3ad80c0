//! Likely secrets in text: the one table ctxgraph recognises them by.
//!
//! `lint` reports the secrets a rule file would send to a model provider; the memory store
//! (`ctxgraph-memory`) redacts them before anything is written, hashed, sent or printed.
//! Both read [`PATTERNS`], so what one finds the other hides. The patterns are written for
//! ctxgraph: fixed prefixes and lengths that real keys have, plus (for redaction only)
//! secrets recognised by what surrounds them. No secret-scanning crate fits as a
//! dependency: they bring their own rule formats and scanners where ctxgraph needs one table
//! that redaction and `lint` share. Matches are reported by kind and position only:
//! callers must never print the text.

use std::sync::LazyLock;

use regex::Regex;

use crate::lines::{Column, LineColumn, Lines};

/// One kind of secret and how to recognise it.
#[derive(Debug)]
pub struct Pattern {
    /// The id a redaction writes (`[REDACTED:<id>]`, docs/memory.md §8).
    pub id: &'static str,
    /// What `lint` calls it.
    pub name: &'static str,
    /// The expression. Where only part of a match is the secret (a password in a URL, the
    /// value of `token = …`), that part is the group `s`, and only it is redacted.
    pub regex: &'static str,
    /// Recognised by its own shape (a fixed prefix and length), so `lint` reports it too.
    /// The others are recognised by their surroundings (`password=…`, `Bearer …`): fine to
    /// hide from a memory, too noisy to flag in rule files that explain configuration.
    pub by_shape: bool,
}

/// Every pattern, more specific prefixes first (a match is reported, or redacted, by the
/// first pattern that finds it).
pub const PATTERNS: &[Pattern] = &[
    Pattern {
        id: "private_key",
        name: "private key",
        // The whole block when its end is there, else the header alone.
        regex: r"(?s)-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?:.*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----)?",
        by_shape: true,
    },
    Pattern {
        id: "aws_key",
        name: "AWS access key ID",
        regex: r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b",
        by_shape: true,
    },
    Pattern {
        id: "github_token",
        name: "GitHub token",
        regex: r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,}",
        by_shape: true,
    },
    Pattern {
        id: "github_token",
        name: "GitHub fine-grained token",
        regex: r"\bgithub_pat_[A-Za-z0-9_]{22,}",
        by_shape: true,
    },
    Pattern {
        id: "gitlab_token",
        name: "GitLab token",
        regex: r"\bglpat-[A-Za-z0-9_-]{20,}",
        by_shape: true,
    },
    Pattern {
        id: "slack_token",
        name: "Slack token",
        regex: r"\bxox[abposr]-[A-Za-z0-9-]{10,}",
        by_shape: true,
    },
    Pattern {
        id: "anthropic_key",
        name: "Anthropic API key",
        regex: r"\bsk-ant-[A-Za-z0-9_-]{20,}",
        by_shape: true,
    },
    Pattern {
        id: "openai_key",
        name: "OpenAI API key",
        // Project, service-account and admin keys carry `-` and `_`; legacy ones are
        // alphanumeric (so `sk-learn-…` prose is not one).
        regex: r"\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}|\bsk-[A-Za-z0-9]{20,}",
        by_shape: true,
    },
    Pattern { id: "google_key", name: "Google API key", regex: r"\bAIza[0-9A-Za-z_-]{35}", by_shape: true },
    Pattern {
        id: "stripe_key",
        name: "Stripe secret key",
        regex: r"\b(?:sk|rk)_live_[0-9A-Za-z]{24,}",
        by_shape: true,
    },
    Pattern { id: "npm_token", name: "npm token", regex: r"\bnpm_[A-Za-z0-9]{36}\b", by_shape: true },
    Pattern {
        id: "jwt",
        name: "JSON Web Token",
        regex: r"\beyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+",
        by_shape: true,
    },
    Pattern {
        id: "bearer",
        name: "bearer token",
        regex: r"(?i)\bbearer\s+(?P<s>[A-Za-z0-9._~+/=-]{16,})",
        by_shape: false,
    },
    Pattern {
        id: "url_creds",
        name: "password in a URL",
        regex: r"(?i)\b[a-z][a-z0-9+.-]*://[^/\s:@]+:(?P<s>[^@\s/]+)@",
        by_shape: false,
    },
    Pattern {
        id: "assignment",
        name: "secret assignment",
        regex: r#"(?i)\b[a-z0-9_-]*(?:api[_-]?key|secret|token|passw(?:or)?d|pwd|auth|credential|private[_-]key|access[_-]key)[a-z0-9_-]*"?\s*[:=]\s*"?(?P<s>[^\s"',;\[][^\s"',;]{5,})"#,
        by_shape: false,
    },
];

/// Names of variables (or keys) whose values are secrets; the word list `assignment` uses.
pub const SECRET_NAME: &str =
    r"(?i)api[_-]?key|secret|token|passw(?:or)?d|pwd|auth|credential|private[_-]key|access[_-]key";

/// [`PATTERNS`], compiled once. The expressions are constants and `every_pattern_compiles`
/// compiles each, so the `expect` cannot fire in a build whose tests passed.
static COMPILED: LazyLock<Vec<(&'static Pattern, Regex)>> = LazyLock::new(|| {
    PATTERNS.iter().map(|p| (p, Regex::new(p.regex).expect("a constant secret pattern compiles"))).collect()
});

static SECRET_NAME_REGEX: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(SECRET_NAME).expect("the constant secret-name pattern compiles"));

/// Every pattern with its compiled expression, in [`PATTERNS`] order.
pub fn compiled() -> &'static [(&'static Pattern, Regex)] {
    &COMPILED
}

/// Whether a variable or key named `name` holds a secret by its name. The shell's
/// `PWD` and `OLDPWD` are working directories, not passwords.
pub fn is_secret_name(name: &str) -> bool {
    !matches!(name, "PWD" | "OLDPWD") && SECRET_NAME_REGEX.is_match(name)
}

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
    for (pattern, regex) in compiled().iter().filter(|(p, _)| p.by_shape) {
        for found in regex.find_iter(text) {
            if !spans.iter().any(|(start, end, _)| found.start() < *end && *start < found.end()) {
                spans.push((found.start(), found.end(), pattern.name));
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
        for pattern in PATTERNS {
            if let Err(err) = Regex::new(pattern.regex) {
                panic!("{} ({}): {err}", pattern.name, pattern.regex);
            }
        }
        Regex::new(SECRET_NAME).unwrap();
        assert_eq!(compiled().len(), PATTERNS.len());
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
            ("JSON Web Token", format!("eyJ{}.eyJ{}.{}", "a".repeat(10), "b".repeat(12), "c".repeat(20))),
        ];
        for (kind, secret) in cases {
            let text = format!("# Rules\n\nuse the key  {secret} for staging\n");
            assert_eq!(find_secrets(&text), [SecretMatch { kind, line: 3, column: 14 }], "{kind}");
        }
    }

    #[test]
    fn secret_names_are_not_working_directories() {
        assert!(is_secret_name("DB_PWD") && is_secret_name("GITHUB_TOKEN"));
        assert!(!is_secret_name("PWD") && !is_secret_name("OLDPWD") && !is_secret_name("HOME"));
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
