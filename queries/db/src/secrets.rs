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

use std::borrow::Cow;
use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

use crate::lines::{Column, LineColumn, Lines};

mod json;

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

/// Where a key-shaped secret may start and end: at a character that is not a letter or a
/// digit. Not `\b`, for which `_` is part of a word: `token_<key>` and `<key>_prod` carry a
/// key glued into an identifier, as ids and variable names do. The regex crate has no
/// look-around, so the boundary character is matched outside the secret, which is the
/// group `s` (the part reported and redacted).
macro_rules! key {
    ($body:literal) => {
        concat!(r"(?:^|[^0-9A-Za-z])(?P<s>", $body, r")")
    };
    ($body:literal, closed) => {
        concat!(r"(?:^|[^0-9A-Za-z])(?P<s>", $body, r")(?:[^0-9A-Za-z]|$)")
    };
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
        regex: key!(r"(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}", closed),
        by_shape: true,
    },
    Pattern {
        id: "github_token",
        name: "GitHub token",
        regex: key!(r"(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,}"),
        by_shape: true,
    },
    Pattern {
        id: "github_token",
        name: "GitHub fine-grained token",
        regex: key!(r"github_pat_[A-Za-z0-9_]{22,}"),
        by_shape: true,
    },
    Pattern {
        id: "gitlab_token",
        name: "GitLab token",
        regex: key!(r"glpat-[A-Za-z0-9_-]{20,}"),
        by_shape: true,
    },
    Pattern {
        id: "slack_token",
        name: "Slack token",
        regex: key!(r"xox[abposr]-[A-Za-z0-9-]{10,}"),
        by_shape: true,
    },
    Pattern {
        id: "anthropic_key",
        name: "Anthropic API key",
        regex: key!(r"sk-ant-[A-Za-z0-9_-]{20,}"),
        by_shape: true,
    },
    Pattern {
        id: "openai_key",
        name: "OpenAI API key",
        // Project, service-account and admin keys carry `-` and `_`; legacy ones are
        // alphanumeric (so `sk-learn-…` prose is not one).
        regex: key!(r"sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}|sk-[A-Za-z0-9]{20,}"),
        by_shape: true,
    },
    Pattern {
        id: "google_key",
        name: "Google API key",
        regex: key!(r"AIza[0-9A-Za-z_-]{35}"),
        by_shape: true,
    },
    Pattern {
        id: "stripe_key",
        name: "Stripe secret key",
        regex: key!(r"(?:sk|rk)_live_[0-9A-Za-z]{24,}"),
        by_shape: true,
    },
    Pattern {
        id: "npm_token",
        name: "npm token",
        regex: key!(r"npm_[A-Za-z0-9]{36}", closed),
        by_shape: true,
    },
    Pattern {
        id: "jwt",
        name: "JSON Web Token",
        regex: key!(r"eyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+"),
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
        // Neither `"` nor `\` in the password: run over JSON text, a match must not end
        // inside an escape (`\"`) and leave the string open.
        regex: r#"(?i)\b[a-z][a-z0-9+.-]*://[^/\s:@"\\]+:(?P<s>[^@\s/"\\]+)@"#,
        by_shape: false,
    },
    Pattern {
        id: "url_param",
        name: "credential in a URL query",
        // `?token=…`, `&key=…`, `&sig=…`, `&access_token=…`, `&X-Amz-Signature=…`: a query
        // parameter whose name says it carries a credential (`#sha256=` pins are fragments,
        // not queries, and stay).
        // A value starting with `[` is a redaction already; with `{`, an `{env:…}` or
        // `{file:…}` token as written, which names the secret without holding it.
        regex: r#"(?i)[?&](?:[a-z0-9_.-]*(?:token|key|sig|secret|passw|pwd|credential|auth)[a-z0-9_.-]*)=(?P<s>[^&#\s"'<>\\\[{][^&#\s"'<>\\]*)"#,
        by_shape: false,
    },
    Pattern {
        id: "assignment",
        name: "secret assignment",
        // Reported by `lint` only when the value looks random ([`looks_random`]).
        // The name ends in the secret word (or in `_key`/`_value` after it): `tokenizer`,
        // `max_tokens`, `author` and `token_url` name no secret.
        regex: r#"(?i)\b[a-z0-9_-]*(?:api[_-]?key|secret|token|passw(?:or)?d|pwd|auth|credential|private[_-]?key|access[_-]?key)(?:[_-]?(?:key|value))?"?\s*[:=]\s*"?(?P<s>[^\s"',;\[{\\][^\s"',;\\]{5,})"#,
        by_shape: false,
    },
];

/// The shortest value of a secret-named key `lint` calls random (a 16-character key is
/// 96 bits in base64; shorter values are mostly words, versions and placeholders).
pub const RANDOM_MIN_CHARS: usize = 16;

/// The least Shannon entropy, in bits per character, of a value `lint` calls random: it
/// turns away repetitions (`Password1Password1` is 2.95, `xxxx…` 0). Of random base62 keys
/// 93 % of the 16-character ones pass every test of [`looks_random`], 97.5 % of the
/// 24-character ones and all 32-hex-digit ones (measured on 5,000 of each); the misses are
/// keys without a digit or without one of the cases.
pub const RANDOM_MIN_BITS_PER_CHAR: f64 = 3.0;

/// Whether the value of a secret-named key (`api_key = "…"`) looks like a generated key
/// rather than a placeholder, a reference or a word: at least [`RANDOM_MIN_CHARS`]
/// characters of a key's alphabet (letters, digits, `+/=_.-`), upper and lower case
/// letters and digits all present (or 32+ hex digits), and at least
/// [`RANDOM_MIN_BITS_PER_CHAR`] bits of entropy per character. `${API_KEY}`,
/// `process.env.API_KEY`, `your-api-key-here` and `xxxxxxxx…` fail one of these; a
/// password a person wrote with digits in it (`ThisIsMyS3cretPassw0rd`) passes, and is one.
pub fn looks_random(value: &str) -> bool {
    let chars: Vec<char> = value.chars().collect();
    if chars.len() < RANDOM_MIN_CHARS
        || !chars.iter().all(|c| c.is_ascii_alphanumeric() || "+/=_.-".contains(*c))
    {
        return false;
    }
    let has = |test: fn(&char) -> bool| chars.iter().any(test);
    let mixed = has(char::is_ascii_uppercase) && has(char::is_ascii_lowercase) && has(char::is_ascii_digit);
    let hex = chars.len() >= 32 && chars.iter().all(char::is_ascii_hexdigit) && has(char::is_ascii_digit);
    (mixed || hex) && bits_per_char(&chars) >= RANDOM_MIN_BITS_PER_CHAR
}

/// Shannon entropy of the character distribution, in bits per character.
fn bits_per_char(chars: &[char]) -> f64 {
    // Counts as u32 (exact in f64); a value of 4 G characters is no key.
    let Ok(n) = u32::try_from(chars.len()) else { return 0.0 };
    let mut counts: std::collections::BTreeMap<char, u32> = std::collections::BTreeMap::new();
    for c in chars {
        *counts.entry(*c).or_default() += 1;
    }
    counts.values().map(|&k| f64::from(k) / f64::from(n)).map(|p| -p * p.log2()).sum()
}

/// Names of variables (or keys) whose values are secrets; the word list `assignment` uses.
pub const SECRET_NAME: &str =
    r"(?i)api[_-]?key|secret|token|passw(?:or)?d|pwd|auth|credential|private[_-]key|access[_-]key";

/// [`PATTERNS`], compiled once. The expressions are constants and `every_pattern_compiles`
/// compiles each, so the `expect` cannot fire in a build whose tests passed.
static COMPILED: LazyLock<Vec<(&'static Pattern, Regex)>> = LazyLock::new(|| {
    PATTERNS.iter().map(|p| (p, Regex::new(p.regex).expect("a constant secret pattern compiles"))).collect()
});

/// Every pattern in one automaton: most texts an output shows (ids, paths, counts) hold no
/// secret, and one pass over them says so without running each expression.
static ANY: LazyLock<regex::RegexSet> = LazyLock::new(|| {
    regex::RegexSet::new(PATTERNS.iter().map(|p| p.regex)).expect("the constant secret patterns compile")
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

/// One secret in a text: where it is (the secret alone, without what recognised it) and
/// the pattern that found it.
#[derive(Clone, Debug)]
pub struct Span {
    /// The secret's bytes in the text.
    pub range: Range<usize>,
    /// The pattern that found it (its `id` is what a redaction writes).
    pub pattern: &'static Pattern,
}

/// Which patterns to look with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Patterns {
    /// The key-shaped ones, which `lint` reports, and secret-named assignments whose value
    /// [`looks_random`].
    ByShape,
    /// Every one, as everything that hides secrets does.
    All,
}

/// Every secret in `text`, in order of position; where two patterns find overlapping text,
/// the first pattern in [`PATTERNS`] order keeps it.
pub fn spans(text: &str, patterns: Patterns) -> Vec<Span> {
    let mut spans: Vec<Span> = Vec::new();
    if !ANY.is_match(text) {
        return spans;
    }
    // `lint` looks at assignments too, but keeps only random-looking values.
    let wanted = |p: &Pattern| p.by_shape || patterns == Patterns::All || p.id == "assignment";
    for (pattern, regex) in compiled().iter().filter(|(p, _)| wanted(p)) {
        let mut at = 0;
        while let Some(caps) = regex.captures_at(text, at) {
            let Some(found) = caps.name("s").or_else(|| caps.get(0)) else { break };
            // The next search starts where the secret ends, not the match: a key's closing
            // boundary character may be the opening one of the next key (`<key>,<key>`).
            // Every pattern's secret is at least one character, so `at` moves on.
            if found.end() <= at {
                break;
            }
            at = found.end();
            // `Authorization: Bearer …` names a scheme, not a secret.
            if pattern.id == "assignment"
                && (is_auth_scheme(found.as_str())
                    || (patterns == Patterns::ByShape && !looks_random(found.as_str())))
            {
                continue;
            }
            let range = found.range();
            if !spans.iter().any(|s| range.start < s.range.end && s.range.start < range.end) {
                spans.push(Span { range, pattern });
            }
        }
    }
    spans.sort_unstable_by_key(|s| s.range.start);
    spans
}

fn is_auth_scheme(value: &str) -> bool {
    ["bearer", "basic", "digest", "token"].iter().any(|s| value.eq_ignore_ascii_case(s))
}

/// `text` with every secret (all patterns) replaced by `[REDACTED:<id>]` (docs/memory.md §8),
/// and the spans replaced.
pub fn redact(text: &str) -> (Cow<'_, str>, Vec<Span>) {
    let spans = spans(text, Patterns::All);
    if spans.is_empty() {
        return (Cow::Borrowed(text), spans);
    }
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for span in &spans {
        out.push_str(&text[copied..span.range.start]);
        out.push_str("[REDACTED:");
        out.push_str(span.pattern.id);
        out.push(']');
        copied = span.range.end;
    }
    out.push_str(&text[copied..]);
    (Cow::Owned(out), spans)
}

/// Strings shorter than this are scanned every time rather than remembered clean.
const CLEAN_MIN_BYTES: usize = 24;

/// The one redaction every output goes through (text, JSON, SARIF, serve, MCP, the
/// report, the language server): the values of secret-named environment variables, then
/// every pattern in [`PATTERNS`] (URL credentials included). Only the prompt text an agent
/// sends is printed as it is (`build` shows exactly that).
#[derive(Debug, Default)]
pub struct Redactor {
    /// Values (≥ 8 characters) of variables named like secrets, longest first: what
    /// `{env:…}` can put into a config, a URL or a block id.
    env_values: Vec<String>,
    /// Strings this redactor found clean.
    clean: CleanStrings,
}

impl Clone for Redactor {
    fn clone(&self) -> Self {
        Redactor { env_values: self.env_values.clone(), clean: CleanStrings::new() }
    }
}

/// The strings a [`Redactor`] found clean, so that a host's next reply, which repeats most of
/// them (every block's source and reason, turn after turn), is not scanned again: on a
/// 145 KB `serve` reply the scan was most of what writing it cost. Redaction is a function
/// of the string and the redactor's environment values, so a string found clean stays
/// clean. Each string is kept whole (a hash alone could let a secret collide with a clean
/// string), up to [`CleanStrings::MAX_BYTES`], after which the set starts over. A caller
/// that finds the set busy (another thread holds it) scans instead of waiting.
#[derive(Debug, Default)]
struct CleanStrings(std::sync::Mutex<CleanSet>);

#[derive(Debug, Default)]
struct CleanSet {
    strings: std::collections::HashSet<Box<str>, rustc_hash::FxBuildHasher>,
    bytes: usize,
}

impl CleanStrings {
    /// What the set may hold before it starts over: a few replies' worth of strings.
    const MAX_BYTES: usize = 4 << 20;

    const fn new() -> Self {
        CleanStrings(std::sync::Mutex::new(CleanSet {
            strings: std::collections::HashSet::with_hasher(rustc_hash::FxBuildHasher),
            bytes: 0,
        }))
    }

    fn contains(&self, text: &str) -> bool {
        self.0.try_lock().is_ok_and(|set| set.strings.contains(text))
    }

    fn insert(&self, text: &str) {
        let Ok(mut set) = self.0.try_lock() else { return };
        if set.bytes + text.len() > Self::MAX_BYTES {
            set.strings.clear();
            set.bytes = 0;
        }
        if text.len() <= Self::MAX_BYTES && set.strings.insert(text.into()) {
            set.bytes += text.len();
        }
    }
}

impl Redactor {
    /// `env` is the process environment (or a test's).
    pub fn new<'a>(env: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        let mut env_values: Vec<String> = env
            .into_iter()
            .filter(|(name, value)| value.chars().count() >= 8 && is_secret_name(name))
            .map(|(_, value)| value.to_owned())
            .collect();
        env_values.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
        env_values.dedup();
        Redactor { env_values, clean: CleanStrings::new() }
    }

    /// `text` with every secret replaced by `[REDACTED:<id>]` (an environment value by
    /// `[REDACTED:env_value]`).
    pub fn text<'a>(&self, text: &'a str) -> Cow<'a, str> {
        // A short string costs less to scan than to look up.
        let remembered = text.len() >= CLEAN_MIN_BYTES;
        if remembered && self.clean.contains(text) {
            return Cow::Borrowed(text);
        }
        let mut out = Cow::Borrowed(text);
        for value in &self.env_values {
            if out.contains(value.as_str()) {
                out = Cow::Owned(out.replace(value.as_str(), "[REDACTED:env_value]"));
            }
        }
        match redact(&out).0 {
            Cow::Borrowed(_) if matches!(out, Cow::Borrowed(_)) => {
                if remembered {
                    self.clean.insert(text);
                }
                out
            }
            Cow::Borrowed(_) => out,
            Cow::Owned(redacted) => Cow::Owned(redacted),
        }
    }

    /// Every string in `value` redacted, at any depth (keys are names, not values).
    pub fn json(&self, value: &mut serde_json::Value) {
        self.json_except(value, &[]);
    }

    /// [`Redactor::json`], but the strings under the object keys in `verbatim` stay as
    /// they are: the prompt text an agent sends (`build --format json`'s block texts).
    pub fn json_except(&self, value: &mut serde_json::Value, verbatim: &[&str]) {
        use serde_json::Value;
        match value {
            Value::String(s) => {
                if let Cow::Owned(redacted) = self.text(s) {
                    *s = redacted;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| self.json_except(v, verbatim)),
            Value::Object(map) => {
                for (key, v) in map.iter_mut() {
                    if !(verbatim.contains(&key.as_str()) && v.is_string()) {
                        self.json_except(v, verbatim);
                    }
                }
            }
            _ => {}
        }
    }

    /// `value` with every string redacted: a typed message (the language server's) through
    /// its JSON form. A value that does not come back from JSON is returned unredacted
    /// only if it had no string to redact.
    pub fn serialized<T: serde::Serialize + serde::de::DeserializeOwned>(&self, value: T) -> T {
        let Ok(mut json) = serde_json::to_value(&value) else { return value };
        let before = json.clone();
        self.json(&mut json);
        if json == before {
            return value;
        }
        serde_json::from_value(json).unwrap_or(value)
    }
}

/// The process's redactor, set once by the binary from its environment ([`install`]);
/// the patterns alone until then (a library, a test).
static PROCESS: std::sync::OnceLock<Redactor> = std::sync::OnceLock::new();

/// Sets the redactor every output of this process uses. The first call wins: the
/// environment does not change under a running process.
pub fn install(redactor: Redactor) {
    let _ = PROCESS.set(redactor);
}

/// The redactor [`install`] set, or one with the patterns alone.
pub fn redactor() -> &'static Redactor {
    static PATTERNS_ONLY: Redactor = Redactor { env_values: Vec::new(), clean: CleanStrings::new() };
    PROCESS.get().unwrap_or(&PATTERNS_ONLY)
}

/// Every likely secret in `text`, in order of position; overlapping matches of different
/// kinds are reported once, by the first pattern.
pub fn find_secrets(text: &str) -> Vec<SecretMatch> {
    let lines = Lines::new(text);
    spans(text, Patterns::ByShape)
        .into_iter()
        .map(|span| {
            let LineColumn { line, column } = lines.locate(span.range.start, Column::Chars);
            SecretMatch { kind: span.pattern.name, line, column }
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

    /// A string found clean is remembered and answered without a scan; one with a secret
    /// (a pattern's, or an environment value) never is, however often it comes; the set
    /// starts over past its bound and answers the same.
    #[test]
    fn only_clean_strings_are_remembered() {
        let token = fake("ghp_", 'a', 36);
        let value = "hunter2-hunter2-hunter2";
        let redactor = Redactor::new([("API_KEY", value)]);
        let clean = "a clean reason, long enough to be remembered".to_owned();
        let secrets = [
            format!("a reason that names {token} at length"),
            format!("a reason that names {value} at length"),
        ];
        for _ in 0..3 {
            assert!(matches!(redactor.text(&clean), Cow::Borrowed(text) if text == clean));
            for secret in &secrets {
                let redacted = redactor.text(secret);
                assert!(
                    redacted.contains("[REDACTED:")
                        && !redacted.contains(value)
                        && !redacted.contains(&token)
                );
            }
        }
        let remembered = |text: &str| redactor.clean.0.lock().unwrap().strings.contains(text);
        assert!(remembered(&clean));
        assert!(secrets.iter().all(|s| !remembered(s)));
        // Past the bound the set starts over, and answers stay the same.
        let big = "x".repeat(CleanStrings::MAX_BYTES - 8);
        assert_eq!(redactor.text(&big), big.as_str());
        assert!(!remembered(&clean) && remembered(&big));
        assert_eq!(redactor.text(&clean), clean.as_str());
        assert!(remembered(&clean) && !remembered(&big));
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
    fn finds_keys_glued_into_identifiers_and_next_to_each_other() {
        let aws = fake("AKIA", 'Q', 16);
        let npm = fake("npm_", 'h', 36);
        let aws_key = "AWS access key ID";
        // `_` is a word character, so `\b` saw no key in `token_<key>` or `<key>_prod`.
        for (text, column) in
            [(format!("token_{aws}"), 7), (format!("{aws}_prod"), 1), (format!("ses_{aws}_x"), 5)]
        {
            assert_eq!(find_secrets(&text), [SecretMatch { kind: aws_key, line: 1, column }], "{text}");
        }
        // One key's closing boundary is the next one's opening boundary.
        let text = format!("{aws},{aws} {npm}");
        let found: Vec<usize> = find_secrets(&text).iter().map(|m| m.column).collect();
        assert_eq!(found, [1, 22, 43], "{text}");
        // Letters and digits still bound a key: these are not keys.
        assert_eq!(find_secrets(&format!("x{aws}")), []);
        assert_eq!(find_secrets(&format!("{aws}9")), []);
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
    fn url_credentials_are_masked_and_pins_are_not() {
        let cases = [
            ("https://h/r.md?token=abc123&a=1", "https://h/r.md?token=[REDACTED:url_param]&a=1"),
            (
                "https://h/r.md?a=1&key=K9&sig=S%2F1#x",
                "https://h/r.md?a=1&key=[REDACTED:url_param]&sig=[REDACTED:url_param]#x",
            ),
            (
                "https://h/r?access_token=t0k&X-Amz-Signature=f00",
                "https://h/r?access_token=[REDACTED:url_param]&X-Amz-Signature=[REDACTED:url_param]",
            ),
            ("https://alice:pa55@h/r.md", "https://alice:[REDACTED:url_creds]@h/r.md"),
            ("https://h/r.md?page=2#sha256=00ff", "https://h/r.md?page=2#sha256=00ff"),
            ("https://h/r.md?token={env:RULES_TOKEN}", "https://h/r.md?token={env:RULES_TOKEN}"),
        ];
        for (url, masked) in cases {
            assert_eq!(redact(url).0, masked, "{url}");
        }
    }

    #[test]
    fn assignments_are_to_names_that_end_in_a_secret_word() {
        for (text, redacted) in [
            ("DB_PASSWORD=hunter2hunter2", "DB_PASSWORD=[REDACTED:assignment]"),
            ("secretAccessKey: abcdef123", "secretAccessKey: [REDACTED:assignment]"),
            ("client_secret_value = abcdef123", "client_secret_value = [REDACTED:assignment]"),
            ("\"tokenizer\": \"o200k_base\"", "\"tokenizer\": \"o200k_base\""),
            ("max_tokens: 12345678", "max_tokens: 12345678"),
            ("token_url: https://example.com/t", "token_url: https://example.com/t"),
        ] {
            assert_eq!(redact(text).0, redacted, "{text}");
        }
    }

    #[test]
    fn a_match_never_ends_inside_a_json_escape() {
        // Redacted as JSON text (what `write_stdout` sees), the output stays JSON.
        for value in [r#"x?token=ab\"cd"#, r#"https://u:p\"w@h"#, r#"api_key = "abcdef\"ghi""#] {
            let json = serde_json::to_string(&serde_json::json!({ "v": value })).unwrap();
            let redacted = redact(&json).0;
            assert!(serde_json::from_str::<serde_json::Value>(&redacted).is_ok(), "{json} -> {redacted}");
        }
    }

    #[test]
    fn random_looking_assignments_are_found_and_written_ones_are_not() {
        let random = format!("Zq8L{}", "xT4vR9mK2pW7nB5cY3hJ");
        for text in [
            format!("api_key = \"{random}\""),
            format!("GITHUB_TOKEN: {random}"),
            format!("\"secret\": \"{random}\""),
        ] {
            assert_eq!(find_secrets(&text).len(), 1, "{text}");
            assert_eq!(find_secrets(&text)[0].kind, "secret assignment");
        }
        for text in [
            "api_key = \"your-api-key-here\"",
            "token: ${{ secrets.GITHUB_TOKEN }}",
            "API_KEY=process.env.OPENAI_API_KEY",
            "password = \"correct horse battery\"",
            "token = \"xxxxxxxxxxxxxxxxxxxxxxxx\"",
            "secret: MyApiToken2024",
            "password: Password1Password1",
            "max_tokens = 4096000000000000",
            "author: SomebodyWithALongName",
            "\"tokenizer\": \"o200k_base\"",
        ] {
            assert_eq!(find_secrets(text), [], "{text}");
        }
        assert!(bits_per_char(&"Password1Password1".chars().collect::<Vec<_>>()) < RANDOM_MIN_BITS_PER_CHAR);
        assert!(bits_per_char(&random.chars().collect::<Vec<_>>()) >= RANDOM_MIN_BITS_PER_CHAR);
    }

    #[test]
    fn the_redactor_masks_environment_values_and_patterns_but_not_verbatim_fields() {
        let redactor = Redactor::new([("RULES_TOKEN", "rtok-0123456789"), ("HOME", "/home/someone-long")]);
        let text = "id http://h/rtok-0123456789/r.md?token=rtok-0123456789 in /home/someone-long";
        assert_eq!(
            redactor.text(text),
            "id http://h/[REDACTED:env_value]/r.md?token=[REDACTED:env_value] in /home/someone-long"
        );
        let mut value = serde_json::json!({"id": "rtok-0123456789", "text": "rtok-0123456789", "blocks": [{"text": "k ghp_0"}]});
        redactor.json_except(&mut value, &["text"]);
        assert_eq!(
            value,
            serde_json::json!({"id": "[REDACTED:env_value]", "text": "rtok-0123456789", "blocks": [{"text": "k ghp_0"}]})
        );
        let typed: Vec<String> = redactor.serialized(vec!["?sig=abc".to_owned()]);
        assert_eq!(typed, ["?sig=[REDACTED:url_param]"]);
    }

    #[test]
    fn reports_positions_in_characters() {
        let text = format!("é {}\n", fake("ghp_", 'z', 36));
        assert_eq!(find_secrets(&text), [SecretMatch { kind: "GitHub token", line: 1, column: 3 }]);
    }
}
