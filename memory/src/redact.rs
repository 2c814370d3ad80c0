//! docs/memory.md §8: secrets are replaced by `[REDACTED:<kind>]` before anything is written to
//! the store, hashed, or sent to a model.
//!
//! The patterns are ctxgraph's one secrets table ([`ctxgraph_db::secrets`], which
//! `lint` reads too). Where only part of a match is the secret (a password in a URL, the
//! value of `token = …`), the pattern names that part `s` and only it is replaced, so the
//! text stays readable.

use std::collections::BTreeMap;

use ctxgraph_db::secrets;
use serde_json::Value;

/// Redacted text, and how much of it was secret.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Redacted {
    /// The text with each secret replaced by `[REDACTED:<kind>]`.
    pub text: String,
    /// Characters of the input that were replaced.
    pub secret_chars: usize,
    /// The kinds found, in pattern order, each once.
    pub kinds: Vec<&'static str>,
}

impl Redacted {
    /// §8 post-rule: more than half of the text was secret; such a record is not stored.
    pub fn mostly_secret(&self, original: &str) -> bool {
        2 * self.secret_chars > original.chars().count()
    }
}

/// Redacts with the spec's patterns plus the values of secret-named environment variables.
#[derive(Clone, Debug, Default)]
pub struct Redactor {
    /// Literal values (≥ 8 chars) of variables named like secrets, longest first.
    env_values: Vec<String>,
}

impl Redactor {
    /// `env` is the process environment (or a test's); values of variables whose name
    /// looks like a secret's and that are at least 8 characters long are redacted verbatim.
    pub fn new(env: &BTreeMap<String, String>) -> Self {
        let mut env_values: Vec<String> = env
            .iter()
            .filter(|(name, value)| value.chars().count() >= 8 && secrets::is_secret_name(name))
            .map(|(_, value)| value.clone())
            .collect();
        env_values.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
        env_values.dedup();
        Redactor { env_values }
    }

    /// `text` with every secret the table or the environment's values find replaced, and
    /// how much of it that was.
    pub fn redact(&self, text: &str) -> Redacted {
        let mut out = text.to_owned();
        let mut secret_chars = 0;
        let mut kinds = Vec::new();
        for value in &self.env_values {
            if out.contains(value.as_str()) {
                secret_chars += out.matches(value.as_str()).count() * value.chars().count();
                out = out.replace(value.as_str(), "[REDACTED:env_value]");
                kinds.push("env_value");
            }
        }
        let (redacted, spans) = secrets::redact(&out);
        secret_chars += spans.iter().map(|span| out[span.range.clone()].chars().count()).sum::<usize>();
        // In pattern order, each once.
        for pattern in secrets::PATTERNS {
            if !kinds.contains(&pattern.id) && spans.iter().any(|span| span.pattern.id == pattern.id) {
                kinds.push(pattern.id);
            }
        }
        if !spans.is_empty() {
            out = redacted.into_owned();
        }
        Redacted { text: out, secret_chars, kinds }
    }

    /// Redacts every string in `value`, at any depth (keys are names, not values).
    pub fn redact_json(&self, value: &mut Value) {
        match value {
            Value::String(s) => *s = self.redact(s).text,
            Value::Array(items) => items.iter_mut().for_each(|v| self.redact_json(v)),
            Value::Object(map) => map.values_mut().for_each(|v| self.redact_json(v)),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Key-shaped strings are built at run time so no secret-looking literal sits in the
    /// source.
    fn rep(c: char, n: usize) -> String {
        c.to_string().repeat(n)
    }

    /// One positive vector per kind (the whole expected output) and one negative.
    #[test]
    fn one_vector_per_pattern() {
        let pem = format!("-----BEGIN RSA PRIVATE KEY-----\n{}\n-----END RSA PRIVATE KEY-----", rep('M', 64));
        let jwt = format!("eyJ{}.eyJ{}.{}", rep('a', 10), rep('b', 12), rep('c', 20));
        let cases: Vec<(&str, String, String, &str)> = vec![
            (
                "private_key",
                format!("key: {pem} end"),
                "key: [REDACTED:private_key] end".into(),
                "-----BEGIN PUBLIC KEY----- is fine",
            ),
            (
                "aws_key",
                format!("id AKIA{} here", rep('Q', 16)),
                "id [REDACTED:aws_key] here".into(),
                "AKIA is a prefix",
            ),
            (
                "github_token",
                format!("t ghp_{}", rep('a', 36)),
                "t [REDACTED:github_token]".into(),
                "ghp_short",
            ),
            (
                "github_token",
                format!("github_pat_{}", rep('b', 30)),
                "[REDACTED:github_token]".into(),
                "github_pat_x",
            ),
            (
                "anthropic_key",
                format!("sk-ant-{}", rep('d', 40)),
                "[REDACTED:anthropic_key]".into(),
                "sk-ant-x",
            ),
            (
                "openai_key",
                format!("use sk-proj-{}", rep('e', 30)),
                "use [REDACTED:openai_key]".into(),
                "ask-questions-freely",
            ),
            ("slack_token", format!("xoxb-{}", rep('1', 20)), "[REDACTED:slack_token]".into(), "xoxo hugs"),
            ("google_key", format!("AIza{}", rep('f', 35)), "[REDACTED:google_key]".into(), "AIza short"),
            ("jwt", format!("cookie {jwt}"), "cookie [REDACTED:jwt]".into(), "eyJ alone"),
            (
                "bearer",
                format!("Authorization: Bearer {}", rep('g', 24)),
                "Authorization: Bearer [REDACTED:bearer]".into(),
                "bearer of news",
            ),
            (
                "url_creds",
                format!("postgres://app:{}@db:5432/x", rep('h', 10)),
                "postgres://app:[REDACTED:url_creds]@db:5432/x".into(),
                "https://example.com/a:b",
            ),
            (
                "assignment",
                format!("DB_PASSWORD={}", rep('i', 12)),
                "DB_PASSWORD=[REDACTED:assignment]".into(),
                "the password policy is strict",
            ),
            (
                "assignment",
                format!("\"api_key\": \"{}\"", rep('j', 10)),
                "\"api_key\": \"[REDACTED:assignment]\"".into(),
                "token: abc",
            ),
        ];
        let redactor = Redactor::default();
        for (kind, input, expected, negative) in cases {
            let out = redactor.redact(&input);
            assert_eq!(out.text, expected, "{kind}");
            assert!(out.kinds.contains(&kind), "{kind}: {:?}", out.kinds);
            assert_eq!(redactor.redact(negative).text, negative, "{kind} negative");
        }
    }

    #[test]
    fn env_values_are_redacted_by_name() {
        let secret = rep('z', 12);
        let env = BTreeMap::from([
            ("MY_SERVICE_TOKEN".to_owned(), secret.clone()),
            ("HOME".to_owned(), "/home/someone".to_owned()),
            ("SHORT_TOKEN".to_owned(), "abc".to_owned()),
        ]);
        let redactor = Redactor::new(&env);
        let out = redactor.redact(&format!("call with {secret} from /home/someone abc"));
        assert_eq!(out.text, "call with [REDACTED:env_value] from /home/someone abc");
    }

    /// A key glued into an identifier (`token_<key>`, a session id, `<key>_prod`) is
    /// redacted and the identifier kept; keys side by side are each redacted.
    #[test]
    fn keys_glued_by_underscores_are_redacted() {
        let aws = format!("AKIA{}", rep('Q', 16));
        let out = Redactor::default().redact(&format!("token_{aws} ses_{aws}_x {aws},{aws}"));
        assert_eq!(
            out.text,
            "token_[REDACTED:aws_key] ses_[REDACTED:aws_key]_x [REDACTED:aws_key],[REDACTED:aws_key]"
        );
        assert_eq!(out.secret_chars, 4 * 20);
    }

    #[test]
    fn mostly_secret_text_is_flagged() {
        let text = format!("k ghp_{}", rep('a', 36));
        let out = Redactor::default().redact(&text);
        assert!(out.mostly_secret(&text));
        let text = format!("the deploy token for staging lives in the vault, ghp_{}", rep('a', 36));
        assert!(!Redactor::default().redact(&text).mostly_secret(&text));
    }

    /// `lint` and the store read one table: whatever `lint` flags in a rule file, the
    /// store redacts.
    #[test]
    fn whatever_lint_flags_is_redacted() {
        let samples = [
            format!("AROA{}", rep('Q', 16)),
            format!("glpat-{}", rep('c', 20)),
            format!("sk_live_{}", rep('g', 24)),
            format!("npm_{}", rep('h', 36)),
            format!("sk-ant-api03-{}", rep('d', 80)),
            format!("sk-{}", rep('k', 48)),
            format!("github_pat_{}", rep('b', 82)),
            format!("-----BEGIN {}PRIVATE KEY-----", "OPENSSH "),
        ];
        for secret in samples {
            assert_eq!(secrets::find_secrets(&secret).len(), 1, "{secret}");
            let text = Redactor::default().redact(&format!("use {secret} here")).text;
            assert!(text.starts_with("use [REDACTED:") && text.ends_with("] here"), "{secret}: {text}");
        }
    }
}
