//! C1–C7, V1–V4, J1–J3, S1–S2, R1–R5: the config layers, loaded and merged the way
//! opencode V1 does it, with the provenance of every value.
//!
//! Each source is its own query ([`config_layer`]), so editing one `opencode.json`
//! re-parses that file only; [`merged_config`] folds the layers in C3 order into a
//! [`Node`] tree in which every value knows the source, line and column that set it,
//! the substitution it came through and the values it replaced.

pub mod report;
pub mod schema;
pub mod source;
pub mod tree;
pub mod wellknown;

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::flags::{FlagError, flags, is_truthy};
use crate::fs::up;
use crate::paths::global_paths;
use crate::substitute::{self, Substitution, SubstitutionError};
use ctxgraph_db::db::{Db, Workspace, env_var};
use ctxgraph_db::fault::InputFault;
use ctxgraph_db::files::{ReadFailure, file_text};
use ctxgraph_db::jsonc::{self, JsoncError};
use ctxgraph_db::lines::{Column, LineColumn, Lines};
use ctxgraph_db::path;
use ctxgraph_db::worktree::worktree;

pub use schema::SchemaIssue;
pub use source::{ConfigSource, SourceKind};
pub use tree::{Node, NodeKind, Overridden, Provenance};
use wellknown::{RemoteConfig, remote_config, wellknown_auth};

/// The `$schema` opencode writes into config files.
pub const SCHEMA_URL: &str = "https://opencode.ai/config.json";

/// The largest config text ctxgraph loads, before and after substitution (4 MiB; C6,
/// README deviation 3). Every value carries its provenance, so a config costs ~100 bytes
/// of memory per byte of text (BENCHMARKS.md, "Big configs"): this bounds a build's peak
/// where the 64 MiB file limit would allow gigabytes. opencode has no limit; real configs
/// are kilobytes.
pub const MAX_CONFIG_BYTES: usize = 4 * 1024 * 1024;

/// Why the config cannot be loaded. opencode aborts the instance on any of these, so no
/// prompt exists; ctxgraph reports them with the position.
#[derive(Clone, Debug, PartialEq, Eq, Hash, thiserror::Error)]
pub enum ConfigError {
    /// P6: a boolean environment flag holds a value opencode refuses to start with.
    #[error(transparent)]
    Flag(#[from] FlagError),
    /// J2. `error` holds opencode's position, in the substituted text; `line`, `column` and
    /// `line_text` are the same place in the file as written, so that a snippet never shows
    /// a value `{env:}`/`{file:}` put there.
    #[error("{source_name}:{}:{}: invalid JSONC ({}): {}", error.line, error.column, error.code, error.message)]
    Json {
        /// The source as opencode names it in its message (a path, or the env variable).
        source_name: String,
        /// opencode's error code, message and position.
        error: Box<JsoncError>,
        /// 1-based line in the text as written.
        line: usize,
        /// 1-based column in the text as written.
        column: usize,
        /// That line as written, for the snippet.
        line_text: String,
    },
    /// V2.
    #[error("{source_name}:{line}:{column}: bad file reference: {}", describe_substitution(error))]
    Substitution {
        /// The source the `{file:}` token is written in.
        source_name: String,
        /// Which file could not be read, and why.
        error: Box<SubstitutionError>,
        /// 1-based line of the token.
        line: usize,
        /// 1-based column of the token.
        column: usize,
        /// That line as written, for the snippet.
        line_text: String,
    },
    /// C6: a read error other than "missing" or "permission denied".
    #[error("{source_name}: cannot read config file: {reason}")]
    Read {
        /// The file that could not be read.
        source_name: String,
        /// The OS error, as text.
        reason: String,
    },
    /// S2: the issues in the schema's field order.
    #[error("Configuration is invalid at {source_name}\n{}", issues.iter().map(SchemaIssue::line).collect::<Vec<_>>().join("\n"))]
    Schema {
        /// The layer whose value failed the schema.
        source_name: String,
        /// Every issue, in the order opencode lists them.
        issues: Vec<SchemaIssue>,
    },
    /// R1/R4: fetching or decoding remote config failed.
    #[error("{message}")]
    Remote {
        /// The request's URL, for JSON output and for pointing at the source.
        url: String,
        /// The message, worded as opencode's.
        message: String,
    },
    /// R2: the server answered with a login page.
    #[error(
        "Failed to load remote config from {remote}: the server returned a login page instead of JSON.\nAuthentication is missing or has expired (the endpoint is likely behind an SSO or identity-aware proxy).\nRun `opencode auth login {url}` to re-authenticate."
    )]
    RemoteAuth {
        /// The well-known endpoint, for `opencode auth login`.
        url: String,
        /// The URL that returned the login page.
        remote: String,
    },
    /// An `instructions` entry whose braces expand to more patterns than ctxgraph globs
    /// (a deviation: opencode expands without bound, and hangs).
    #[error(
        "{source_name}{}: instructions entry {entry:?} expands to more than {limit} glob patterns; split it into several entries",
        at.map(|at| format!(":{}:{}", at.line, at.column)).unwrap_or_default()
    )]
    TooManyPatterns {
        /// The config file holding the entry.
        source_name: String,
        /// Where the entry is written, when the source has positions.
        at: Option<LineColumn>,
        /// The entry as written.
        entry: String,
        /// ctxgraph's bound on brace expansion.
        limit: usize,
    },
    /// C6: a config text over [`MAX_CONFIG_BYTES`] (a deviation: opencode loads any size).
    #[error(
        "{source_name}: config is {bytes} bytes, over ctxgraph's limit of {limit} bytes (4 MiB); opencode would load it, ctxgraph refuses it (C6)"
    )]
    TooLarge {
        /// The source whose text is too large.
        source_name: String,
        /// Its size in bytes (after substitution when that made it too large).
        bytes: usize,
        /// [`MAX_CONFIG_BYTES`].
        limit: usize,
    },
    /// The engine did not fetch a remote config the workspace needs (offline).
    #[error("{url}: remote config was not fetched (offline?); opencode loads it before anything else")]
    RemoteNotFetched {
        /// The remote config URL that was needed.
        url: String,
    },
}

impl ConfigError {
    /// The source the error is about.
    pub fn source_name(&self) -> Option<&str> {
        match self {
            ConfigError::Json { source_name, .. }
            | ConfigError::Substitution { source_name, .. }
            | ConfigError::Read { source_name, .. }
            | ConfigError::Schema { source_name, .. }
            | ConfigError::TooManyPatterns { source_name, .. }
            | ConfigError::TooLarge { source_name, .. } => Some(source_name),
            ConfigError::Remote { url, .. } | ConfigError::RemoteNotFetched { url } => Some(url),
            ConfigError::RemoteAuth { remote, .. } => Some(remote),
            ConfigError::Flag(_) => None,
        }
    }

    /// The error as every surface shows it: its code, its message, and for a JSONC or
    /// `{file:}` mistake the line as written with the rule it breaks (J2, V2); a schema's
    /// refusals one by one (S2).
    pub fn fault(&self) -> InputFault {
        use ctxgraph_db::fault::{FaultAt, FaultIssue};
        let mut fault = InputFault::new(self.code(), self.source_name().map(str::to_owned), self.to_string());
        let at = |line: usize, column: usize, line_text: &str, headline: String, rule: &'static str| {
            Some(Box::new(FaultAt {
                line,
                column,
                unit: Column::Utf16,
                line_text: line_text.to_owned(),
                headline,
                rule,
            }))
        };
        match self {
            ConfigError::Json { source_name, error, line, column, line_text } => {
                let headline =
                    format!("{source_name} is not valid JSONC: {} ({})", error.message, error.code);
                fault.at = at(*line, *column, line_text, headline, "J2");
                fault.details.push(("jsonc_code", error.code.to_owned()));
            }
            ConfigError::Substitution { source_name, error, line, column, line_text } => {
                let headline = format!("{source_name}: bad file reference: {}", describe_substitution(error));
                fault.at = at(*line, *column, line_text, headline, "V2");
            }
            ConfigError::TooManyPatterns { at: Some(place), .. } => {
                // The entry's place, from the parsed config: its line is not kept.
                let (line, column) = (place.line, place.column);
                fault.at = Some(Box::new(FaultAt {
                    line,
                    column,
                    unit: Column::Chars,
                    line_text: String::new(),
                    headline: self.to_string(),
                    rule: "I5",
                }));
            }
            ConfigError::Schema { issues, .. } => {
                fault.issues = issues
                    .iter()
                    .map(|issue| FaultIssue { message: issue.message.clone(), path: issue.path.clone() })
                    .collect();
            }
            _ => {}
        }
        fault
    }

    /// A stable machine-readable name.
    pub fn code(&self) -> &'static str {
        match self {
            ConfigError::Flag(_) => "invalid-flag",
            ConfigError::Json { .. } => "invalid-jsonc",
            ConfigError::Substitution { .. } => "bad-file-reference",
            ConfigError::Read { .. } => "unreadable",
            ConfigError::Schema { .. } => "invalid-config",
            ConfigError::TooManyPatterns { .. } => "too-many-patterns",
            ConfigError::TooLarge { .. } => "config-too-large",
            ConfigError::Remote { .. } => "remote-config",
            ConfigError::RemoteAuth { .. } => "remote-login-page",
            ConfigError::RemoteNotFetched { .. } => "remote-not-fetched",
        }
    }
}

/// The V2 message without a location, e.g. `"{file:x}" /d/x does not exist`.
pub fn describe_substitution(error: &SubstitutionError) -> String {
    match error {
        SubstitutionError::Missing { token, resolved, .. } => {
            format!("\"{token}\" {} does not exist", resolved.display())
        }
        SubstitutionError::Unreadable { token, resolved, reason, .. } => {
            format!("\"{token}\" ({}: {reason})", resolved.display())
        }
    }
}

/// C3: every source, in merge order, including those ctxgraph cannot load (so that
/// `explain` can say so) and files that do not exist where opencode probes them
/// unconditionally (they load as `{}`).
#[salsa::tracked(returns(ref))]
pub fn config_sources(db: &dyn Db, ws: Workspace) -> Result<Vec<ConfigSource>, ConfigError> {
    let flags = flags(db, ws.host(db)).as_ref().map_err(|e| ConfigError::Flag(e.clone()))?;
    let paths = global_paths(db, ws).as_ref().map_err(|e| ConfigError::Flag(e.clone()))?;
    let cwd = ws.cwd(db);
    let mut sources = Vec::new();
    let file = |kind, path: &Path| ConfigSource::file(kind, path);

    // C3.1
    for entry in wellknown_auth(db, ws) {
        let endpoint = entry.endpoint();
        let dir = PathBuf::from(endpoint.rsplit_once('/').map_or(endpoint.as_str(), |(dir, _)| dir));
        sources.push(ConfigSource::virtual_source(SourceKind::WellKnown, endpoint, dir));
    }
    // C4, with the file opencode would seed (`!value` in JS: unset or empty).
    let set = |value: &Option<String>| value.as_deref().is_some_and(|v| !v.is_empty());
    let exists = |name: &str| db.files().get(db, &paths.config.join(name)).kind(db).exists();
    let seeds = !set(&flags.config_file)
        && !set(&flags.config_dir)
        && !set(&flags.config_content)
        && !["opencode.jsonc", "opencode.json", "config.json"].into_iter().any(exists);
    sources.push(file(SourceKind::Global, &paths.config.join("config.json")));
    sources.push(file(SourceKind::Global, &paths.config.join("opencode.json")));
    let jsonc = paths.config.join("opencode.jsonc");
    sources.push(file(if seeds { SourceKind::GlobalSeed } else { SourceKind::Global }, &jsonc));
    if let Some(config) = flags.config_file.as_ref().filter(|v| !v.is_empty()) {
        sources.push(file(SourceKind::EnvFile, &path::resolve(cwd, config)));
    }
    let root = &worktree(db, ws).root;
    let project_enabled = flags.disable_project_config.is_none();
    if project_enabled {
        let targets = vec!["opencode.jsonc".to_owned(), "opencode.json".to_owned()];
        let found = up(db, targets, cwd.clone(), root.clone()).clone().unwrap_or_default();
        for found in found.into_iter().rev() {
            sources.push(file(SourceKind::Project, &found));
        }
    }
    for dir in config_directories(db, ws).as_ref().map_err(|e| ConfigError::Flag(e.clone()))? {
        if dir.ends_with(".opencode") || flags.config_dir.as_deref() == Some(dir.as_str()) {
            let dir = path::resolve(cwd, dir);
            sources.push(file(SourceKind::Directory, &dir.join("opencode.json")));
            sources.push(file(SourceKind::Directory, &dir.join("opencode.jsonc")));
        }
    }
    if set(&flags.config_content) {
        sources.push(ConfigSource::virtual_source(
            SourceKind::EnvContent,
            "OPENCODE_CONFIG_CONTENT",
            cwd.clone(),
        ));
    }
    sources.push(ConfigSource::virtual_source(SourceKind::Account, "console account", cwd.clone()));
    if db.files().get(db, &paths.managed).kind(db).exists() {
        sources.push(file(SourceKind::Managed, &paths.managed.join("opencode.json")));
        sources.push(file(SourceKind::Managed, &paths.managed.join("opencode.jsonc")));
    }
    sources.push(ConfigSource::virtual_source(
        SourceKind::ManagedPreferences,
        "ai.opencode.managed",
        PathBuf::from("/Library/Managed Preferences"),
    ));
    Ok(sources)
}

/// C5: the config directories, as opencode lists them (raw strings, first occurrence kept):
/// the global config directory, every `.opencode` from `D` up to `W` (unless project config
/// is disabled), `~/.opencode`, `$OPENCODE_CONFIG_DIR`. Config files, and skills (B5),
/// are looked for in them.
#[salsa::tracked(returns(ref))]
pub fn config_directories(db: &dyn Db, ws: Workspace) -> Result<Vec<String>, FlagError> {
    let flags = flags(db, ws.host(db)).as_ref().map_err(Clone::clone)?;
    let paths = global_paths(db, ws).as_ref().map_err(Clone::clone)?;
    let cwd = ws.cwd(db);
    let root = &worktree(db, ws).root;
    let dot_opencode = |start: &Path, stop: &Path| {
        up(db, vec![".opencode".to_owned()], start.to_path_buf(), stop.to_path_buf())
            .clone()
            .unwrap_or_default()
    };
    let mut directories: Vec<String> = vec![path::display(&paths.config)];
    if flags.disable_project_config.is_none() {
        directories.extend(dot_opencode(cwd, root).iter().map(|p| path::display(p)));
    }
    directories.extend(dot_opencode(&paths.home, &paths.home).iter().map(|p| path::display(p)));
    directories.extend(flags.config_dir.clone());
    let mut seen = std::collections::HashSet::new();
    directories.retain(|d| seen.insert(d.clone()));
    Ok(directories)
}

/// What a source contributed (C6: a missing or permission-denied file is `Missing`, a
/// 0-byte one `Empty`, both `{}`): every agent's settings layers share the one shape.
pub use ctxgraph_db::settings::LayerStatus;

/// One parsed layer (C6/C7 for one source).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layer {
    /// Whether the source was loaded, and if not, why.
    pub status: LayerStatus,
    /// The parsed value with provenance; `None` when nothing was loaded.
    pub tree: Option<Node>,
    /// S1: unknown top-level keys, dropped as opencode's decoder drops them.
    pub dropped_keys: Vec<String>,
    /// The dropped keys that are ctxgraph's own settings ([`CTXGRAPH_KEYS`]), as an object.
    pub ctxgraph: Option<Node>,
}

/// Top-level keys opencode does not know and ctxgraph reads: workspace memory's switch
/// and model (docs/memory.md §2). opencode drops them, so they never change its prompt.
pub const CTXGRAPH_KEYS: [&str; 2] = ["memory", "memory_model"];

impl Layer {
    fn without(status: LayerStatus) -> Self {
        Layer { status, tree: None, dropped_keys: Vec::new(), ctxgraph: None }
    }
}

/// C6/C7 for one source: read, substitute (V1–V3), parse (J1–J2), drop legacy keys,
/// validate (S1–S2), normalise agents, add `$schema` (C7.5).
#[salsa::tracked(returns(ref))]
pub fn config_layer(db: &dyn Db, ws: Workspace, source: ConfigSource) -> Result<Layer, ConfigError> {
    let host = ws.host(db);
    let name = source.name();
    let auth = wellknown_auth(db, ws);
    let (text, overlay) = match source.kind {
        SourceKind::Account => {
            return Ok(Layer::without(LayerStatus::Unavailable(
                "not loaded: opencode fetches the org config of a logged-in console account from its server; \
                 ctxgraph does not read opencode's account store"
                    .to_owned(),
            )));
        }
        SourceKind::ManagedPreferences => {
            let reason = if host.platform(db) == "darwin" {
                "not loaded: ctxgraph does not convert managed preference plists (opencode runs plutil)"
            } else {
                "not supported on this platform: managed preferences exist on macOS only"
            };
            return Ok(Layer::without(LayerStatus::Unavailable(reason.to_owned())));
        }
        SourceKind::Derived => return Ok(Layer::without(LayerStatus::Loaded)),
        SourceKind::GlobalSeed => (format!("{{\n  \"$schema\": \"{SCHEMA_URL}\"\n}}"), Vec::new()),
        SourceKind::EnvContent => {
            (env_var(db, host, "OPENCODE_CONFIG_CONTENT".to_owned()).unwrap_or_default(), Vec::new())
        }
        SourceKind::WellKnown => {
            let index = auth.iter().position(|e| e.endpoint() == name).unwrap_or(usize::MAX);
            match remote_config(db, ws, index).as_ref().map_err(Clone::clone)? {
                RemoteConfig::Ready(text) => (text.clone(), wellknown::overlay(auth, index + 1)),
                RemoteConfig::Needs(request) => {
                    return Err(ConfigError::RemoteNotFetched { url: request.url.clone() });
                }
            }
        }
        SourceKind::Global
        | SourceKind::EnvFile
        | SourceKind::Project
        | SourceKind::Directory
        | SourceKind::Managed => {
            let path = source.path().unwrap_or(Path::new("/"));
            let text = match file_text(db, db.files().get(db, path)) {
                Ok(decoded) => decoded.text.to_string(),
                Err(ReadFailure::NotFound | ReadFailure::PermissionDenied) => {
                    return Ok(Layer::without(LayerStatus::Missing));
                }
                Err(failure) => {
                    return Err(ConfigError::Read { source_name: name, reason: failure.to_string() });
                }
            };
            if text.is_empty() {
                return Ok(Layer::without(LayerStatus::Empty));
            }
            // R3: layers loaded with `R(path, H)` see the well-known tokens.
            let overlay = match source.kind {
                SourceKind::Managed => Vec::new(),
                _ => wellknown::overlay(auth, auth.len()),
            };
            (text, overlay)
        }
    };
    let paths = global_paths(db, ws).as_ref().map_err(|e| ConfigError::Flag(e.clone()))?;
    let env = |var: &str| {
        overlay
            .iter()
            .find(|(k, _)| k == var)
            .map(|(_, v)| v.clone())
            .or_else(|| env_var(db, host, var.to_owned()))
    };
    let read = |p: &Path| -> Result<Option<String>, String> {
        match file_text(db, db.files().get(db, p)) {
            Ok(decoded) => Ok(Some(decoded.text.to_string())),
            Err(ReadFailure::NotFound) => Ok(None),
            Err(failure) => Err(failure.to_string()),
        }
    };
    let cx = substitute::Context { env: &env, read: &read, dir: &source.dir, os_home: &paths.os_home };
    let located = source.kind != SourceKind::WellKnown;
    load_text(&text, &source, &cx, located)
}

/// C7 over one text: substitution, parsing, legacy keys, schema, agents, `$schema`.
/// Pure (no database), so the fuzz target and property tests run it directly.
pub fn load_text(
    text: &str,
    source: &ConfigSource,
    cx: &substitute::Context<'_>,
    located: bool,
) -> Result<Layer, ConfigError> {
    let name = source.name();
    check_size(text, source)?;
    let (substituted, substitutions) = substitute::substitute(text, cx).map_err(|error| {
        let offset = match &error {
            SubstitutionError::Missing { offset, .. } | SubstitutionError::Unreadable { offset, .. } => {
                *offset
            }
        };
        let lines = Lines::new(text);
        let LineColumn { line, column } = lines.locate(offset, Column::Utf16);
        let line_text = lines.line_text(line).to_owned();
        ConfigError::Substitution {
            source_name: name.clone(),
            error: Box::new(error),
            line,
            column,
            line_text,
        }
    })?;
    check_size(&substituted, source)?;
    let lines = Lines::new(&substituted);
    let annotate = |range: std::ops::Range<usize>| {
        let via: Vec<String> = substitutions
            .iter()
            .filter(|s| {
                s.output.start < range.end && s.output.end > range.start
                    || s.output.is_empty() && range.contains(&s.output.start)
            })
            .map(|s| s.token.clone())
            .collect();
        let written = (!via.is_empty()).then(|| written_value(&substituted, range.clone(), &substitutions));
        Provenance {
            source: source.clone(),
            at: located.then(|| lines.locate(range.start, Column::Chars)),
            via,
            written,
        }
    };
    let tree = jsonc::parse_tree(&substituted, &annotate).map_err(|error| {
        let written = Lines::new(text);
        let LineColumn { line, column } =
            written.locate(substitute::written_offset(error.offset, &substitutions), Column::Utf16);
        let line_text = written.line_text(line).to_owned();
        ConfigError::Json { source_name: name.clone(), error: Box::new(error), line, column, line_text }
    })?;
    let mut node = into_node(tree);
    // C7.3: legacy TUI keys go before validation.
    for legacy in schema::LEGACY_TUI_KEYS {
        node.remove(legacy);
    }
    // Issues quote the value as written (`{env:TOKEN}`), never what substitution put there.
    let issues = schema::validate(&node.to_value(), &node.render(false));
    if !issues.is_empty() {
        return Err(ConfigError::Schema { source_name: name, issues });
    }
    // S1 (as the binary behaves): unknown top-level keys are dropped silently.
    let mut dropped_keys = Vec::new();
    let mut own = Vec::new();
    if let Some(entries) = node.as_object_mut() {
        entries.retain(|key, value| {
            let known = schema::is_known_key(key);
            if !known {
                dropped_keys.push(key.clone());
                if CTXGRAPH_KEYS.contains(&key.as_str()) {
                    own.push((key.clone(), value.clone()));
                }
            }
            known
        });
    }
    let ctxgraph = (!own.is_empty()).then(|| Node::object(own, node.origin.clone()));
    normalize_agents(&mut node, source);
    // C7.5: a file without `$schema` gets one (opencode also rewrites the file).
    if source.kind.is_file() && node.get("$schema").is_none() {
        let origin = derived("C7.5: opencode adds $schema to a config file without one");
        node.insert("$schema", Node::scalar(Value::String(SCHEMA_URL.to_owned()), origin));
    }
    Ok(Layer { status: LayerStatus::Loaded, tree: Some(node), dropped_keys, ctxgraph })
}

/// C6: refuses a text over [`MAX_CONFIG_BYTES`].
fn check_size(text: &str, source: &ConfigSource) -> Result<(), ConfigError> {
    if text.len() > MAX_CONFIG_BYTES {
        return Err(ConfigError::TooLarge {
            source_name: source.name(),
            bytes: text.len(),
            limit: MAX_CONFIG_BYTES,
        });
    }
    Ok(())
}

/// The value's text as written: `{env:…}` outputs put back as their tokens, decoded as a
/// JSON string when it is one.
fn written_value(text: &str, range: std::ops::Range<usize>, substitutions: &[Substitution]) -> String {
    let raw = substitute::unsubstitute(text, range, substitutions);
    serde_json::from_str::<String>(&raw).unwrap_or(raw)
}

fn into_node(tree: jsonc::Tree<Provenance>) -> Node {
    match tree {
        jsonc::Tree::Scalar(value, origin) => Node::scalar(value, origin),
        jsonc::Tree::Array(items, origin) => Node {
            kind: NodeKind::Array(items.into_iter().map(into_node).collect()),
            origin,
            overridden: Vec::new(),
        },
        jsonc::Tree::Object(entries, origin) => {
            Node::object(entries.into_iter().map(|(k, v)| (k, into_node(v))), origin)
        }
    }
}

/// The agent schema's decoding (observed with the binary): every `agent.*`/`mode.*`
/// entry gets `options` (its unknown keys copied in) and `permission`, `{}` by default.
fn normalize_agents(node: &mut Node, source: &ConfigSource) {
    const KNOWN: &[&str] = &[
        "name",
        "model",
        "variant",
        "prompt",
        "description",
        "temperature",
        "top_p",
        "mode",
        "hidden",
        "color",
        "steps",
        "maxSteps",
        "options",
        "permission",
        "disable",
        "tools",
    ];
    let origin = derived("agent schema: unknown agent keys are copied into options");
    for group in ["agent", "mode"] {
        let Some(entries) = node.get_mut(group).and_then(Node::as_object_mut) else { continue };
        for (_, agent) in entries.iter_mut() {
            let Some(fields) = agent.as_object() else { continue };
            let unknown: Vec<(String, Node)> = fields
                .iter()
                .filter(|(k, _)| !KNOWN.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            let mut options = match agent.get("options") {
                Some(existing) if existing.as_object().is_some() => existing.clone(),
                _ => Node::object(Vec::new(), Provenance { source: source.clone(), ..origin.clone() }),
            };
            for (key, value) in unknown {
                options.insert(&key, value);
            }
            agent.insert("options", options);
            let permission = agent.get("permission").map(permission_object);
            let permission = match agent.get("tools").and_then(Node::as_object) {
                Some(tools) => {
                    let mut mapped =
                        tools_as_permission(tools, "agent schema: an agent's tools map becomes permissions");
                    if let Some(explicit) = permission {
                        tree::merge_deep(&mut mapped, explicit);
                    }
                    mapped
                }
                None => permission.unwrap_or_else(|| Node::object(Vec::new(), origin.clone())),
            };
            agent.insert("permission", permission);
        }
    }
    if let Some(permission) = node.get("permission").map(permission_object) {
        node.insert("permission", permission);
    }
}

/// The permission schema's decoding, per layer (observed with the binary): a bare action
/// (`"permission": "deny"`) means `{"*": action}`, so a later layer's object merges into it.
fn permission_object(node: &Node) -> Node {
    match &node.kind {
        NodeKind::Scalar(Value::String(_)) => {
            Node::object(vec![("*".to_owned(), node.clone())], node.origin.clone())
        }
        _ => node.clone(),
    }
}

/// The legacy `tools` map as permissions: `true` allows, anything else denies; `write`,
/// `edit` and `patch` all name the `edit` permission.
fn tools_as_permission(tools: &indexmap::IndexMap<String, Node>, why: &str) -> Node {
    let origin = derived(why);
    let mut mapped = Node::object(Vec::new(), origin);
    for (tool, enabled) in tools {
        let action = if enabled.to_value() == Value::Bool(true) { "allow" } else { "deny" };
        let key = if matches!(tool.as_str(), "write" | "edit" | "patch") { "edit" } else { tool.as_str() };
        mapped.insert(key, Node::scalar(Value::from(action), enabled.origin.clone()));
    }
    mapped
}

fn derived(name: &str) -> Provenance {
    Provenance::new(ConfigSource::virtual_source(SourceKind::Derived, name, PathBuf::new()))
}

/// One entry of the merged `instructions` list and the layer that contributed it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct InstructionEntry {
    /// The entry after substitution: what discovery globs or fetches.
    pub value: String,
    /// The layer that wrote it; relative entries are resolved from it (I5).
    pub source: ConfigSource,
    /// Where the entry is written in its source (`None` for sources without positions).
    pub at: Option<LineColumn>,
    /// The entry as written when `{env:}`/`{file:}` produced part of it (`?token={env:T}`).
    pub written: Option<String>,
}

impl InstructionEntry {
    /// The entry as it may be printed: as written when substitution produced part of it,
    /// so a substituted secret never reaches an output.
    pub fn shown(&self) -> &str {
        self.written.as_deref().unwrap_or(&self.value)
    }
}

/// The 1-based line of the config source where `entry` is written, from the provenance
/// the parser recorded.
pub fn entry_line(entry: &InstructionEntry) -> Option<usize> {
    entry.at.map(|at| at.line)
}

/// What one source did, for reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LayerReport {
    /// The source, named as opencode names it.
    pub source: ConfigSource,
    /// Loaded, missing, empty or unavailable (with the reason).
    pub status: LayerStatus,
    /// S1: the top-level keys opencode's decoder dropped from this layer.
    pub dropped_keys: Vec<String>,
}

/// The merged config: the value with provenance, and what every source did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MergedConfig {
    /// The merged value with the provenance of every node (and what each overrode).
    pub tree: Node,
    /// `instructions`, each entry with its source (discovery needs them).
    pub instructions: Vec<InstructionEntry>,
    /// Every source in C3 order, with its status.
    pub layers: Vec<LayerReport>,
    /// Things opencode only logs (an invalid `OPENCODE_PERMISSION`, …).
    pub warnings: Vec<String>,
    /// ctxgraph's own settings ([`CTXGRAPH_KEYS`]) from every layer, deep-merged in layer
    /// order. Not part of [`MergedConfig::value`], which is what opencode sees.
    pub ctxgraph: Node,
}

impl MergedConfig {
    /// The merged value, as `opencode debug config` prints it (secrets included).
    pub fn value(&self) -> Value {
        self.tree.to_value()
    }

    /// `compaction`, typed (for the compaction stage, K-rules).
    pub fn compaction(&self) -> schema::Compaction {
        schema::Compaction::from_value(self.value().get("compaction"))
    }

    /// `agent.compaction.model` as (provider, model): the model opencode's summarizer runs
    /// on, when set as `provider/model`.
    pub fn compaction_model(&self) -> Option<(String, String)> {
        let value = self.tree.lookup(&["agent", "compaction", "model"])?.to_value();
        let (provider, model) = value.as_str()?.split_once('/')?;
        Some((provider.to_owned(), model.to_owned()))
    }

    /// `provider.<provider>.models.<model>.limit`: the token limits configured for one model,
    /// each when given as a number.
    pub fn model_limit(&self, provider: &str, model: &str) -> ConfiguredLimit {
        let limit = self.tree.lookup(&["provider", provider, "models", model, "limit"]).map(Node::to_value);
        let field = |name: &str| limit.as_ref().and_then(|l| l.get(name)).and_then(Value::as_u64);
        ConfiguredLimit { context: field("context"), input: field("input"), output: field("output") }
    }

    /// `provider.<provider>.options.<key>` when it is a string (`baseURL`, `apiKey`).
    pub fn provider_option(&self, provider: &str, key: &str) -> Option<String> {
        let value = self.tree.lookup(&["provider", provider, "options", key])?.to_value();
        value.as_str().map(str::to_owned)
    }

    /// ctxgraph's workspace-memory settings: `memory.enabled` (default off: upstream
    /// opencode has no memory), `memory_model`, and opencode's own `small_model`.
    pub fn memory(&self) -> ctxgraph_recall::recall::MemorySettings {
        let own = self.ctxgraph.to_value();
        let string = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_owned);
        ctxgraph_recall::recall::MemorySettings {
            enabled: own.pointer("/memory/enabled").and_then(Value::as_bool).unwrap_or(false),
            max_chars: own
                .pointer("/memory/maxTotalChars")
                .and_then(Value::as_u64)
                .and_then(|n| usize::try_from(n).ok()),
            memory_model: string(own.get("memory_model")),
            small_model: string(self.value().get("small_model")),
        }
    }
}

/// The token limits a config sets for one model (`provider.*.models.*.limit`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ConfiguredLimit {
    /// `limit.context`: the model's context window.
    pub context: Option<u64>,
    /// `limit.input`: what the model takes as input, when smaller than the window.
    pub input: Option<u64>,
    /// `limit.output`: the most the model writes in one reply.
    pub output: Option<u64>,
}

/// C2–C4 and C3.10: merges every layer in order.
#[salsa::tracked(returns(ref))]
pub fn merged_config(db: &dyn Db, ws: Workspace) -> Result<MergedConfig, ConfigError> {
    let host = ws.host(db);
    let start = derived("start");
    let mut tree = Node::object(Vec::new(), start.clone());
    let mut layers = Vec::new();
    let mut warnings = Vec::new();
    // C4: the global files merge among themselves with plain C1 (instructions replace),
    // and the group then joins the chain as one C2 layer.
    let mut global: Option<Node> = None;
    let mut skeleton_done = false;
    let mut ctxgraph = Node::object(Vec::new(), start.clone());
    for source in config_sources(db, ws).as_ref().map_err(Clone::clone)? {
        let layer = config_layer(db, ws, source.clone()).as_ref().map_err(Clone::clone)?;
        layers.push(LayerReport {
            source: source.clone(),
            status: layer.status.clone(),
            dropped_keys: layer.dropped_keys.clone(),
        });
        if let Some(own) = &layer.ctxgraph {
            tree::merge_deep(&mut ctxgraph, own.clone());
        }
        let is_global = matches!(source.kind, SourceKind::Global | SourceKind::GlobalSeed);
        if !is_global && let Some(group) = global.take() {
            tree::merge_concat(&mut tree, group);
        }
        if source.kind >= SourceKind::Directory && !skeleton_done {
            add_directory_defaults(&mut tree);
            skeleton_done = true;
        }
        let Some(value) = &layer.tree else { continue };
        if is_global {
            match &mut global {
                Some(group) => tree::merge_deep(group, value.clone()),
                None => global = Some(value.clone()),
            }
        } else {
            tree::merge_concat(&mut tree, value.clone());
        }
    }
    if let Some(group) = global.take() {
        tree::merge_concat(&mut tree, group);
    }
    if !skeleton_done {
        add_directory_defaults(&mut tree);
    }
    post_process(db, host, &mut tree, &mut warnings);
    let instructions = match tree.get("instructions").map(|n| &n.kind) {
        Some(NodeKind::Array(items)) => items
            .iter()
            .filter_map(|item| match &item.kind {
                NodeKind::Scalar(Value::String(value)) => Some(InstructionEntry {
                    value: value.clone(),
                    source: item.origin.source.clone(),
                    at: item.origin.at,
                    written: item.origin.written.clone(),
                }),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    Ok(MergedConfig { tree, instructions, layers, warnings, ctxgraph })
}

/// C3.5: before the config directories are read, opencode makes sure `agent`, `mode`,
/// `plugin` and `command` exist (it then adds the directories' agents, commands and
/// plugins, which ctxgraph does not model).
fn add_directory_defaults(tree: &mut Node) {
    let origin = derived("C3.5: opencode's defaults before reading config directories");
    for (key, empty) in [
        ("agent", Value::Object(serde_json::Map::default())),
        ("mode", Value::Object(serde_json::Map::default())),
        ("plugin", Value::Array(Vec::new())),
        ("command", Value::Object(serde_json::Map::default())),
    ] {
        if tree.get(key).is_none() {
            tree.insert(key, Node::from_value(empty, &origin));
        }
    }
}

/// C3.10, in opencode's order.
fn post_process(db: &dyn Db, host: ctxgraph_db::Host, tree: &mut Node, warnings: &mut Vec<String>) {
    let var = |name: &str| env_var(db, host, name.to_owned()).filter(|v| !v.is_empty());
    // `mode.*` → `agent.*` with `mode: "primary"`.
    let modes = tree.get("mode").and_then(Node::as_object).cloned().unwrap_or_default();
    for (name, entry) in modes {
        let mut copy = entry.clone();
        if copy.as_object().is_some() {
            copy.insert(
                "mode",
                Node::scalar(Value::from("primary"), derived("C3.10: mode entries become primary agents")),
            );
        }
        let agent = Node::object(vec![(name, copy)], derived("C3.10: mode entries become primary agents"));
        match tree.get_mut("agent") {
            Some(existing) => tree::merge_deep(existing, agent),
            None => tree.insert("agent", agent),
        }
    }
    if let Some(permission) = var("OPENCODE_PERMISSION") {
        let origin = Provenance::new(ConfigSource::virtual_source(
            SourceKind::Derived,
            "OPENCODE_PERMISSION",
            PathBuf::new(),
        ));
        match serde_json::from_str::<Value>(&permission) {
            Ok(value @ Value::Object(_)) => {
                let incoming = Node::from_value(value, &origin);
                match tree.get_mut("permission") {
                    Some(existing) => tree::merge_deep(existing, incoming),
                    None => tree.insert("permission", incoming),
                }
            }
            Ok(_) | Err(_) => warnings
                .push("OPENCODE_PERMISSION contains invalid JSON, skipping (as opencode does)".to_owned()),
        }
    }
    // Legacy `tools` map → permission; explicit permissions win.
    if let Some(tools) = tree.get("tools").and_then(Node::as_object).cloned() {
        let mut mapped = tools_as_permission(&tools, "C3.10: legacy tools map becomes permissions");
        if let Some(existing) = tree.get("permission") {
            tree::merge_deep(&mut mapped, existing.clone());
        }
        // Assigning to an existing key keeps its position.
        tree.insert("permission", mapped);
    }
    let username_set = tree.get("username").is_some_and(Node::is_truthy);
    if !username_set {
        // `os.userInfo().username || "user"`; Bun takes the name from `$USER` and says
        // "unknown" without it (observed with the binary under `env -i`).
        let name = env_var(db, host, "USER".to_owned())
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| "unknown".to_owned());
        tree.insert("username", Node::scalar(Value::from(name), derived("C3.10: the OS user name ($USER)")));
    }
    let autoshare = tree.get("autoshare").is_some_and(|n| n.to_value() == Value::Bool(true));
    let share_set = tree.get("share").is_some_and(Node::is_truthy);
    if autoshare && !share_set {
        tree.insert(
            "share",
            Node::scalar(Value::from("auto"), derived("C3.10: autoshare: true means share: \"auto\"")),
        );
    }
    for (flag, key) in [("OPENCODE_DISABLE_AUTOCOMPACT", "auto"), ("OPENCODE_DISABLE_PRUNE", "prune")] {
        if var(flag).is_some_and(|v| is_truthy(&v)) {
            let origin =
                Provenance::new(ConfigSource::virtual_source(SourceKind::Derived, flag, PathBuf::new()));
            let mut compaction = match tree.get("compaction") {
                Some(existing) if existing.as_object().is_some() => existing.clone(),
                _ => Node::object(Vec::new(), origin.clone()),
            };
            compaction.insert(key, Node::scalar(Value::Bool(false), origin));
            tree.insert("compaction", compaction);
        }
    }
}

/// C1 over plain JSON values (R4 merges remote documents before they become a layer).
pub fn merge_values(into: &mut Value, from: Value) {
    match (into, from) {
        (Value::Object(existing), Value::Object(incoming)) => {
            for (key, value) in incoming {
                match existing.get_mut(&key) {
                    Some(slot) => merge_values(slot, value),
                    None => {
                        existing.insert(key, value);
                    }
                }
            }
        }
        (slot, value) => *slot = value,
    }
}
