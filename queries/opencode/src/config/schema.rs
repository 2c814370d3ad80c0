//! S1/S2: the shape opencode's config schema (`Config.Info`, 1.18.33) gives each top-level
//! key, checked with the messages its validator prints.
//!
//! The binary, not the spec's reading of the tests, decides: unknown top-level keys are
//! dropped without an error (S1 as observed with `opencode debug config`), and every
//! violation of a known key is reported, in the schema's field order, as
//! `Expected <type>, got <value>` with the key path. Keys whose inner schema is large
//! (providers, agents, MCP servers, permissions…) are checked for their outer type only.

use serde_json::Value;

/// One schema violation (S2).
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct SchemaIssue {
    /// `Expected …, got …`, worded as opencode words it.
    pub message: String,
    /// The key path, e.g. `["compaction", "tail_turns"]`; empty for the root.
    pub path: Vec<String>,
}

impl SchemaIssue {
    /// The line opencode prints for it: `↳ <message> <path joined by ".">`.
    pub fn line(&self) -> String {
        format!("↳ {} {}", self.message, self.path.join("."))
    }
}

#[derive(Clone, Copy)]
enum Shape {
    /// `Schema.optional(String)`.
    String,
    Boolean,
    /// opencode's non-negative integer (`tail_turns`, `reserved`…).
    Count,
    /// A positive integer (`port`, `max_lines`); only the type is checked.
    Number,
    Literals(&'static [&'static str]),
    /// A union printed under a name (`LogLevel`) or as its members.
    Named(&'static str, fn(&Value) -> bool),
    ArrayOf(&'static Shape),
    RecordOf(&'static Shape),
    Struct(&'static [(&'static str, Shape)]),
    /// An object whose contents are not checked here.
    AnyObject,
    /// Not checked at all (unions whose wording is not known).
    Unchecked,
}

const STRINGS: Shape = Shape::ArrayOf(&Shape::String);
const BOOLEAN: Shape = Shape::Boolean;

/// `Config.Info`'s fields, in declaration order (the order issues are reported in).
const FIELDS: &[(&str, Shape)] = &[
    ("$schema", Shape::String),
    ("shell", Shape::String),
    (
        "logLevel",
        Shape::Named("LogLevel", |v| matches!(v.as_str(), Some("DEBUG" | "INFO" | "WARN" | "ERROR"))),
    ),
    (
        "server",
        Shape::Struct(&[
            ("port", Shape::Number),
            ("hostname", Shape::String),
            ("mdns", Shape::Boolean),
            ("mdnsDomain", Shape::String),
            ("cors", STRINGS),
        ]),
    ),
    ("command", Shape::AnyObject),
    ("skills", Shape::Struct(&[("paths", STRINGS), ("urls", STRINGS)])),
    ("references", Shape::AnyObject),
    ("reference", Shape::AnyObject),
    ("watcher", Shape::Struct(&[("ignore", STRINGS)])),
    ("snapshot", Shape::Boolean),
    ("plugin", Shape::ArrayOf(&Shape::Unchecked)),
    ("share", Shape::Literals(&["manual", "auto", "disabled"])),
    ("autoshare", Shape::Boolean),
    ("autoupdate", Shape::Named("boolean | \"notify\"", |v| v.is_boolean() || v.as_str() == Some("notify"))),
    ("disabled_providers", STRINGS),
    ("enabled_providers", STRINGS),
    ("model", Shape::String),
    ("small_model", Shape::String),
    ("default_agent", Shape::String),
    ("subagent_depth", Shape::Count),
    ("username", Shape::String),
    ("mode", Shape::AnyObject),
    ("agent", Shape::AnyObject),
    ("provider", Shape::AnyObject),
    ("mcp", Shape::AnyObject),
    ("formatter", Shape::Unchecked),
    ("lsp", Shape::Unchecked),
    ("instructions", STRINGS),
    ("layout", Shape::Unchecked),
    (
        "permission",
        Shape::Named("PermissionActionConfig | object | undefined", |v| v.is_object() || v.is_string()),
    ),
    ("tools", Shape::RecordOf(&BOOLEAN)),
    ("attachment", Shape::AnyObject),
    ("enterprise", Shape::Struct(&[("url", Shape::String)])),
    ("tool_output", Shape::Struct(&[("max_lines", Shape::Number), ("max_bytes", Shape::Number)])),
    (
        "compaction",
        Shape::Struct(&[
            ("auto", Shape::Boolean),
            ("prune", Shape::Boolean),
            ("tail_turns", Shape::Count),
            ("preserve_recent_tokens", Shape::Count),
            ("reserved", Shape::Count),
        ]),
    ),
    ("experimental", Shape::AnyObject),
];

/// C7.3: keys dropped before validation (legacy TUI settings).
pub const LEGACY_TUI_KEYS: [&str; 3] = ["theme", "keybinds", "tui"];

/// Whether `key` is a top-level key opencode's schema defines.
pub fn is_known_key(key: &str) -> bool {
    FIELDS.iter().any(|(name, _)| *name == key)
}

/// S2: every violation in `config` (a decoded layer, legacy keys already dropped).
/// `shown` is the same value as it may be printed (substituted values as their tokens):
/// messages quote it, so a secret that fails validation is not echoed.
pub fn validate(config: &Value, shown: &Value) -> Vec<SchemaIssue> {
    let mut issues = Vec::new();
    let Value::Object(map) = config else {
        issues
            .push(SchemaIssue { message: format!("Expected Config, got {}", show(shown)), path: Vec::new() });
        return issues;
    };
    for (name, shape) in FIELDS {
        if let Some(value) = map.get(*name) {
            let shown = Shown(shown.get(*name));
            check(shape, value, shown, true, &mut vec![(*name).to_owned()], &mut issues);
        }
    }
    issues
}

/// The printable counterpart of a value being checked, if it has one.
#[derive(Clone, Copy)]
struct Shown<'a>(Option<&'a Value>);

impl<'a> Shown<'a> {
    fn get(self, index: impl serde_json::value::Index) -> Shown<'a> {
        Shown(self.0.and_then(|v| v.get(index)))
    }
}

fn check(
    shape: &Shape,
    value: &Value,
    shown: Shown<'_>,
    optional: bool,
    path: &mut Vec<String>,
    issues: &mut Vec<SchemaIssue>,
) {
    let undefined = if optional { " | undefined" } else { "" };
    let mut expected = |what: &str| {
        // Without a printable counterpart (never expected), the value is not quoted.
        let got = shown.0.map_or_else(|| "a value".to_owned(), show);
        issues.push(SchemaIssue { message: format!("Expected {what}, got {got}"), path: path.clone() });
    };
    match shape {
        Shape::String if !value.is_string() => expected(&format!("string{undefined}")),
        Shape::Boolean if !value.is_boolean() => expected(&format!("boolean{undefined}")),
        Shape::Number if !value.is_number() => expected(&format!("number{undefined}")),
        Shape::Count => match value.as_f64() {
            None => expected(&format!("number{undefined}")),
            Some(n) if n.fract() != 0.0 => expected("an integer"),
            Some(n) if n < 0.0 => expected("a value greater than or equal to 0"),
            Some(_) => {}
        },
        Shape::Literals(options) if !value.as_str().is_some_and(|s| options.contains(&s)) => {
            let list: Vec<String> = options.iter().map(|o| format!("\"{o}\"")).collect();
            expected(&list.join(" | "));
        }
        Shape::Named(name, accepts) if !accepts(value) => expected(name),
        Shape::ArrayOf(item) => match value {
            Value::Array(items) => {
                for (index, element) in items.iter().enumerate() {
                    path.push(index.to_string());
                    check(item, element, shown.get(index), false, path, issues);
                    path.pop();
                }
            }
            _ => expected(&format!("array{undefined}")),
        },
        Shape::RecordOf(item) => match value {
            Value::Object(map) => {
                for (key, element) in map {
                    path.push(key.clone());
                    check(item, element, shown.get(key.as_str()), false, path, issues);
                    path.pop();
                }
            }
            _ => expected(&format!("object{undefined}")),
        },
        Shape::Struct(fields) => match value {
            Value::Object(map) => {
                for (name, field) in *fields {
                    if let Some(element) = map.get(*name) {
                        path.push((*name).to_owned());
                        check(field, element, shown.get(*name), true, path, issues);
                        path.pop();
                    }
                }
            }
            _ => expected(&format!("object{undefined}")),
        },
        Shape::AnyObject if !value.is_object() => expected(&format!("object{undefined}")),
        _ => {}
    }
}

/// A value as Effect's formatter shows it: JSON, compact.
fn show(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// `compaction` (typed for the compaction stage), with opencode's defaults.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Compaction {
    /// Automatic compaction when the context is full (default true).
    pub auto: Option<bool>,
    /// Pruning of old tool outputs (default false).
    pub prune: Option<bool>,
    /// At most this many recent user turns are tail candidates (K8; unset: no limit).
    pub tail_turns: Option<u64>,
    /// The token budget of the verbatim tail; unset, derived from the usable window.
    pub preserve_recent_tokens: Option<u64>,
    /// Token buffer kept free for compaction.
    pub reserved: Option<u64>,
}

impl Compaction {
    /// Reads a validated `compaction` value (absent or invalid fields are `None`).
    pub fn from_value(value: Option<&Value>) -> Self {
        let field = |name: &str| value.and_then(|v| v.get(name));
        Compaction {
            auto: field("auto").and_then(Value::as_bool),
            prune: field("prune").and_then(Value::as_bool),
            tail_turns: field("tail_turns").and_then(Value::as_u64),
            preserve_recent_tokens: field("preserve_recent_tokens").and_then(Value::as_u64),
            reserved: field("reserved").and_then(Value::as_u64),
        }
    }

    /// Whether opencode compacts on overflow: on unless the config turns it off.
    pub fn auto(&self) -> bool {
        self.auto.unwrap_or(true)
    }
}

/// What `opencode debug config` masks when it prints the config: string values under a
/// `headers` object or under a key that names a secret, and `http(s)` URLs carrying
/// credentials. Applied to ctxgraph's JSON so it prints what opencode prints.
pub fn redact_like_debug_config(value: &Value) -> Value {
    redact(value, false)
}

fn redact(value: &Value, in_headers: bool) -> Value {
    match value {
        Value::Array(items) => Value::Array(items.iter().map(|v| redact(v, in_headers)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, v)| {
                    let masked = match v {
                        Value::String(s) => in_headers || names_secret(key) || url_with_credentials(s),
                        _ => false,
                    };
                    let v = if masked {
                        Value::String("***".to_owned())
                    } else {
                        redact(v, in_headers || key.eq_ignore_ascii_case("headers"))
                    };
                    (key.clone(), v)
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

/// opencode's `/(?:api.?key|secret|password|token$|authorization$|cookie$|credential|private.?key)/i`.
fn names_secret(key: &str) -> bool {
    let key = key.to_lowercase();
    let around = |first: &str, second: &str| {
        key.match_indices(first).any(|(at, _)| {
            let rest = &key[at + first.len()..];
            rest.starts_with(second)
                || rest.chars().next().is_some_and(|c| rest[c.len_utf8()..].starts_with(second))
        })
    };
    around("api", "key")
        || around("private", "key")
        || ["secret", "password", "credential"].iter().any(|w| key.contains(w))
        || ["token", "authorization", "cookie"].iter().any(|w| key.ends_with(w))
}

fn url_with_credentials(value: &str) -> bool {
    let lower = value.to_ascii_lowercase();
    let Some(rest) = lower.strip_prefix("http://").or_else(|| lower.strip_prefix("https://")) else {
        return false;
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let query = value.split_once('?').map_or("", |(_, q)| q.split('#').next().unwrap_or(""));
    authority.contains('@') || query.split('&').any(|pair| names_secret(pair.split('=').next().unwrap_or("")))
}
