//! C3.1, R1–R5: remote org config from `.well-known/opencode`, for every `wellknown`
//! entry of opencode's auth store. Queries only say which requests they need and read
//! what the engine fetched ([`ConfigDoc`](ctxgraph_db::remote::ConfigDoc) inputs); they
//! never touch the network.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::ConfigError;
use crate::paths::global_paths;
use crate::substitute;
use ctxgraph_db::db::{Db, Workspace, env_var};
use ctxgraph_db::files::file_text;
use ctxgraph_db::remote::{ConfigDocState, ConfigRequest};

/// A `wellknown` entry of `$XDG_DATA_HOME/opencode/auth.json`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct WellKnownAuth {
    /// The store's key without trailing slashes (CFG-29), e.g. `https://example.com`.
    pub url: String,
    /// R3: the variable name `{env:}` resolves to `token` in the layers after it.
    pub env_key: String,
    /// The stored token; a secret, so it only reaches outputs through `{env:}` values
    /// shown as written.
    pub token: String,
}

impl WellKnownAuth {
    /// R1: where the config is fetched from.
    pub fn endpoint(&self) -> String {
        format!("{}/.well-known/opencode", self.url)
    }
}

/// The `wellknown` entries of the auth store, in the store's key order. A missing or
/// unreadable store has none.
#[salsa::tracked(returns(ref))]
pub fn wellknown_auth(db: &dyn Db, ws: Workspace) -> Vec<WellKnownAuth> {
    let Ok(paths) = global_paths(db, ws) else { return Vec::new() };
    let file = db.files().get(db, &paths.data.join("auth.json"));
    let Ok(text) = file_text(db, file) else { return Vec::new() };
    let Ok(Value::Object(store)) = serde_json::from_str::<Value>(&text.text) else { return Vec::new() };
    store
        .iter()
        .filter_map(|(key, entry)| {
            let field = |name: &str| entry.get(name).and_then(Value::as_str).map(str::to_owned);
            (field("type").as_deref() == Some("wellknown")).then_some(())?;
            Some(WellKnownAuth {
                url: key.trim_end_matches('/').to_owned(),
                env_key: field("key")?,
                token: field("token")?,
            })
        })
        .collect()
}

/// R3: the variable overlay for layers loaded after the first `count` well-known entries.
pub fn overlay(entries: &[WellKnownAuth], count: usize) -> Vec<(String, String)> {
    entries.iter().take(count).map(|e| (e.env_key.clone(), e.token.clone())).collect()
}

/// What one well-known source needs or produced.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum RemoteConfig {
    /// The engine has to fetch this first.
    Needs(ConfigRequest),
    /// R4: the merged remote config, compact JSON with `$schema`, ready for C7.
    Ready(String),
}

/// R1–R4 for the `index`-th well-known entry.
#[salsa::tracked(returns(ref))]
pub fn remote_config(db: &dyn Db, ws: Workspace, index: usize) -> Result<RemoteConfig, ConfigError> {
    let entries = wellknown_auth(db, ws);
    let Some(entry) = entries.get(index) else {
        return Ok(RemoteConfig::Ready("{}".to_owned()));
    };
    let endpoint = entry.endpoint();
    let first = ConfigRequest { url: endpoint.clone(), headers: Vec::new() };
    let Some(body) = fetched(db, &first, &entry.url)? else {
        return Ok(RemoteConfig::Needs(first));
    };
    let decoded: Value = serde_json::from_str(&body).map_err(|err| ConfigError::Remote {
        url: endpoint.clone(),
        message: format!("failed to decode remote config from {endpoint}: {err}"),
    })?;
    let Value::Object(wellknown) = decoded else {
        return Err(ConfigError::Remote {
            url: endpoint.clone(),
            message: format!("failed to decode remote config from {endpoint}: expected an object"),
        });
    };
    let embedded = match wellknown.get("config") {
        Some(Value::Object(config)) => config.clone(),
        _ => Map::new(),
    };
    let mut merged = Value::Object(embedded);
    if let Some(request) = remote_request(db, ws, entry, entries, index, wellknown.get("remote_config")) {
        let Some(body) = fetched(db, &request, &entry.url)? else {
            return Ok(RemoteConfig::Needs(request));
        };
        let url = request.url.clone();
        let data: Value = serde_json::from_str(&body).map_err(|err| ConfigError::Remote {
            url: url.clone(),
            message: format!("failed to decode remote config from {url}: {err}"),
        })?;
        let object = match data {
            Value::Object(mut data) => match data.get_mut("config") {
                Some(Value::Object(config)) => std::mem::take(config),
                _ => data,
            },
            _ => {
                return Err(ConfigError::Remote {
                    url: url.clone(),
                    message: format!("failed to decode remote config from {url}: expected object"),
                });
            }
        };
        super::merge_values(&mut merged, Value::Object(object));
    }
    if let Value::Object(map) = &mut merged {
        map.entry("$schema").or_insert_with(|| Value::String(super::SCHEMA_URL.to_owned()));
    }
    Ok(RemoteConfig::Ready(merged.to_string()))
}

/// R4: the second request, with `{env:}`/`{file:}` substituted in its URL and string
/// headers (the overlay includes this entry's own token).
fn remote_request(
    db: &dyn Db,
    ws: Workspace,
    entry: &WellKnownAuth,
    entries: &[WellKnownAuth],
    index: usize,
    remote: Option<&Value>,
) -> Option<ConfigRequest> {
    let remote = remote?.as_object()?;
    let url = remote.get("url")?.as_str()?;
    let host = ws.host(db);
    let os_home = global_paths(db, ws).as_ref().map(|p| p.os_home.clone()).unwrap_or_default();
    let overlay = overlay(entries, index + 1);
    let env = |name: &str| {
        overlay
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .or_else(|| env_var(db, host, name.to_owned()))
    };
    let read = |p: &Path| match file_text(db, db.files().get(db, p)) {
        Ok(text) => Ok(Some(text.text.to_string())),
        Err(ctxgraph_db::files::ReadFailure::NotFound) => Ok(None),
        Err(failure) => Err(failure.to_string()),
    };
    let dir = PathBuf::from(&entry.url);
    let cx = substitute::Context { env: &env, read: &read, dir: &dir, os_home: &os_home };
    // A reference that cannot be resolved is left as written, like an unset variable.
    let apply =
        |text: &str| substitute::substitute(text, &cx).map_or_else(|_| text.to_owned(), |(out, _)| out);
    let headers = remote
        .get("headers")
        .and_then(Value::as_object)
        .map(|headers| headers.iter().filter_map(|(k, v)| Some((k.clone(), apply(v.as_str()?)))).collect())
        .unwrap_or_default();
    Some(ConfigRequest { url: apply(url), headers })
}

/// The body of a fetched request; `None` while it is pending. R1: any failure aborts; R2:
/// an HTML body means the login expired.
fn fetched(db: &dyn Db, request: &ConfigRequest, auth_url: &str) -> Result<Option<String>, ConfigError> {
    let doc = db.remotes().config(db, request);
    match doc.state(db) {
        ConfigDocState::Pending => Ok(None),
        ConfigDocState::Failed(failure) => Err(ConfigError::Remote {
            url: request.url.clone(),
            message: format!("failed to fetch remote config from {}: {failure}", request.url),
        }),
        ConfigDocState::Loaded { body, content_type } => {
            if looks_like_html(body, content_type.as_deref()) {
                return Err(ConfigError::RemoteAuth {
                    url: auth_url.to_owned(),
                    remote: request.url.clone(),
                });
            }
            Ok(Some(body.to_string()))
        }
    }
}

/// R2: `content-type` mentions html, or the body starts with `<!doctype` / `<html`.
pub fn looks_like_html(body: &str, content_type: Option<&str>) -> bool {
    if content_type.is_some_and(|t| t.to_ascii_lowercase().contains("html")) {
        return true;
    }
    let start = body.trim_start().as_bytes();
    let starts =
        |prefix: &[u8]| start.len() >= prefix.len() && start[..prefix.len()].eq_ignore_ascii_case(prefix);
    starts(b"<!doctype") || starts(b"<html")
}

/// Every request the workspace's config still needs fetched, in source order.
pub fn pending_requests(db: &dyn Db, ws: Workspace) -> Vec<ConfigRequest> {
    (0..wellknown_auth(db, ws).len())
        .filter_map(|index| match remote_config(db, ws, index) {
            Ok(RemoteConfig::Needs(request)) => Some(request.clone()),
            _ => None,
        })
        .collect()
}
