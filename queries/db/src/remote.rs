//! Remote documents (`instructions` URLs) as inputs.
//!
//! Queries list the URLs they need and read a [`RemoteDoc`] per URL; the engine fetches
//! them asynchronously and sets the inputs. No query ever waits on the network.

use std::fmt::Write as _;
use std::sync::Arc;

use dashmap::DashMap;
use sha2::Digest;

use crate::Db;

pub use inputs::{ConfigDoc, RemoteDoc};

// salsa's input macro generates public constructors (`new`, `builder`) that cannot carry
// doc comments; this module scopes the allowance to them.
#[allow(missing_docs)]
mod inputs {
    use super::{ConfigDocState, ConfigRequest, RemoteState};

    /// One `instructions` URL: what the engine last learned about it. Queries read the
    /// state and never fetch, so a build is never blocked on the network.
    #[salsa::input(debug)]
    pub struct RemoteDoc {
        /// The URL exactly as the config wrote it (an integrity pin fragment included).
        #[returns(ref)]
        pub url: String,
        /// Pending until the engine's fetch settles, then loaded or failed.
        #[returns(ref)]
        pub state: RemoteState,
    }

    /// A remote config document (R1–R5), fetched by the engine. Unlike [`RemoteDoc`] it
    /// keeps the content type (R2 looks at it) and is never served from a cache: opencode
    /// aborts when one cannot be fetched.
    #[salsa::input(debug)]
    pub struct ConfigDoc {
        /// The URL and headers; the same request always maps to the same input.
        #[returns(ref)]
        pub request: ConfigRequest,
        /// Pending until the engine's fetch settles.
        #[returns(ref)]
        pub state: ConfigDocState,
    }
}

/// What the engine knows about one URL.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum RemoteState {
    /// Not fetched (the build ran without fetching, or the fetch has not finished). A
    /// pending document produces no block.
    Pending,
    /// The body, decoded as F6 (BOM dropped, invalid UTF-8 replaced).
    Loaded {
        /// The decoded body: the block's text.
        text: Arc<str>,
        /// Network, revalidated or cache: `explain` and `--format json` say which.
        from: LoadedFrom,
    },
    /// Fetching failed and no usable cached copy exists: no block, as in opencode (I8).
    Failed(FetchFailure),
}

/// Where a loaded body came from.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum LoadedFrom {
    /// A fresh 2xx response.
    Network,
    /// The server answered 304 to a conditional request: the cached body is current.
    Revalidated,
    /// The cached copy, because the network was not used (`None`: offline) or failed.
    Cache {
        /// Why the network was not used or not trusted; the warning names it.
        because: Option<FetchFailure>,
    },
}

/// Why a URL produced no body.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum FetchFailure {
    /// Offline and nothing cached.
    Offline,
    /// Not an `http`/`https` URL, or unparsable.
    InvalidUrl(String),
    /// The host name did not resolve.
    Dns(String),
    /// No connection (refused, unreachable, TLS failure).
    Connect(String),
    /// No response headers within the deadline (opencode's 5 s, retries included), or the
    /// body did not arrive within the total deadline.
    Timeout {
        /// `"response headers"` or `"body"`: which deadline expired.
        phase: &'static str,
        /// The deadline that expired, so the message says how long was waited.
        after_ms: u64,
    },
    /// A non-2xx status after retries.
    Status(u16),
    /// The body is larger than the cap.
    BodyTooLarge {
        /// The cap in bytes (`--remote-max-bytes`).
        limit: u64,
    },
    /// The connection broke while reading the body.
    Body(String),
    /// Too many redirects, or a redirect to another scheme.
    Redirect(String),
    /// The body does not match the URL's integrity pin.
    PinMismatch {
        /// `blake3` or `sha256`, as the fragment named it.
        algorithm: &'static str,
        /// The pinned digest (lower-case hex).
        expected: String,
        /// The digest of the body received (lower-case hex).
        actual: String,
    },
}

impl std::fmt::Display for FetchFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FetchFailure::Offline => f.write_str("offline, and no cached copy"),
            FetchFailure::InvalidUrl(reason) => write!(f, "invalid URL: {reason}"),
            FetchFailure::Dns(reason) => write!(f, "DNS lookup failed: {reason}"),
            FetchFailure::Connect(reason) => write!(f, "connection failed: {reason}"),
            FetchFailure::Timeout { phase, after_ms } => {
                write!(f, "timed out waiting for the {phase} after {after_ms} ms")
            }
            FetchFailure::Status(code) => write!(f, "HTTP status {code}"),
            FetchFailure::BodyTooLarge { limit } => write!(f, "body larger than {limit} bytes"),
            FetchFailure::Body(reason) => write!(f, "reading the body failed: {reason}"),
            FetchFailure::Redirect(reason) => write!(f, "redirect refused: {reason}"),
            FetchFailure::PinMismatch { algorithm, expected, actual } => {
                write!(f, "{algorithm} of the body is {actual}, but the URL pins {expected}")
            }
        }
    }
}

impl FetchFailure {
    /// What opencode does with an offline URL: it has no offline mode and no cache.
    pub const OPENCODE_WHEN_OFFLINE: &'static str = "opencode fetches it on every step (I8)";
    /// What opencode does with a pinned URL whose body does not match: it checks no pins.
    pub const OPENCODE_WHEN_PINNED: &'static str = "opencode does not check pins and would include it";
    /// What opencode does when the fetch itself fails.
    pub const OPENCODE_WHEN_FAILED: &'static str = "opencode sends nothing for it either (I8)";

    /// What opencode does with the URL instead, for warnings and explanations alike.
    pub fn what_opencode_does(&self) -> &'static str {
        match self {
            FetchFailure::Offline => Self::OPENCODE_WHEN_OFFLINE,
            FetchFailure::PinMismatch { .. } => Self::OPENCODE_WHEN_PINNED,
            _ => Self::OPENCODE_WHEN_FAILED,
        }
    }

    /// A stable machine-readable name, for JSON output.
    pub fn code(&self) -> &'static str {
        match self {
            FetchFailure::Offline => "offline",
            FetchFailure::InvalidUrl(_) => "invalid-url",
            FetchFailure::Dns(_) => "dns",
            FetchFailure::Connect(_) => "connect",
            FetchFailure::Timeout { .. } => "timeout",
            FetchFailure::Status(_) => "status",
            FetchFailure::BodyTooLarge { .. } => "body-too-large",
            FetchFailure::Body(_) => "body",
            FetchFailure::Redirect(_) => "redirect",
            FetchFailure::PinMismatch { .. } => "pin-mismatch",
        }
    }
}

/// An integrity pin: a `#blake3=<hex>` or `#sha256=<hex>` fragment. Fragments are never
/// sent to the server, so opencode fetches the same resource.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Pin {
    /// `blake3` or `sha256`, the only two accepted (a fragment naming another is no pin).
    pub algorithm: &'static str,
    /// Lower-case hex.
    pub digest: String,
}

impl Pin {
    /// The pin in `url`'s fragment, if it has one.
    pub fn parse(url: &str) -> Option<Pin> {
        let (_, fragment) = url.split_once('#')?;
        let (algorithm, digest) = fragment.split_once('=')?;
        let algorithm = match algorithm {
            "blake3" => "blake3",
            "sha256" => "sha256",
            _ => return None,
        };
        let valid = digest.len() == 64 && digest.bytes().all(|b| b.is_ascii_hexdigit());
        valid.then(|| Pin { algorithm, digest: digest.to_ascii_lowercase() })
    }

    /// The digest of `bytes` with this pin's algorithm, in lower-case hex.
    pub fn digest_of(&self, bytes: &[u8]) -> String {
        match self.algorithm {
            "blake3" => blake3::hash(bytes).to_hex().to_string(),
            _ => sha2::Sha256::digest(bytes).iter().fold(String::with_capacity(64), |mut hex, byte| {
                let _ = write!(hex, "{byte:02x}");
                hex
            }),
        }
    }

    /// `Ok` when `bytes` hash to the pinned digest; otherwise the mismatch, with both
    /// digests, as the failure the URL reports.
    pub fn verify(&self, bytes: &[u8]) -> Result<(), FetchFailure> {
        let actual = self.digest_of(bytes);
        if actual == self.digest {
            Ok(())
        } else {
            Err(FetchFailure::PinMismatch {
                algorithm: self.algorithm,
                expected: self.digest.clone(),
                actual,
            })
        }
    }
}

/// One request for remote config (R1/R4): the URL and the headers to send.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConfigRequest {
    /// The `.well-known/opencode` URL (R1) or the `remote_config.url` it named (R4).
    pub url: String,
    /// Name and value pairs from `remote_config.headers` (substituted, in config order);
    /// none for the `.well-known` request.
    pub headers: Vec<(String, String)>,
}

/// What the engine knows about one remote config request.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ConfigDocState {
    /// Not fetched yet.
    Pending,
    /// A 2xx response.
    Loaded {
        /// The response body as text; R2/R3 decide whether it is a config.
        body: Arc<str>,
        /// The `Content-Type` header, if sent: R2 tells a login page from JSON by it.
        content_type: Option<String>,
    },
    /// The request failed; opencode aborts startup here, so the config reports an error.
    Failed(FetchFailure),
}

/// The side table from URLs to [`RemoteDoc`] inputs, like [`Files`](crate::files::Files),
/// and from config requests to [`ConfigDoc`] inputs.
#[derive(Debug, Default)]
pub struct RemoteDocs {
    by_url: DashMap<String, RemoteDoc>,
    configs: DashMap<ConfigRequest, ConfigDoc>,
    mcp: crate::mcp::McpServers,
}

impl RemoteDocs {
    /// The input for `url`, created [`RemoteState::Pending`] if it is new.
    pub fn get(&self, db: &dyn Db, url: &str) -> RemoteDoc {
        if let Some(doc) = self.by_url.get(url) {
            return *doc;
        }
        *self
            .by_url
            .entry(url.to_owned())
            .or_insert_with(|| RemoteDoc::new(db, url.to_owned(), RemoteState::Pending))
    }

    /// The MCP servers' inputs, one per server config.
    pub fn mcp(&self) -> &crate::mcp::McpServers {
        &self.mcp
    }

    /// The input for a config request, created [`ConfigDocState::Pending`] if it is new.
    pub fn config(&self, db: &dyn Db, request: &ConfigRequest) -> ConfigDoc {
        if let Some(doc) = self.configs.get(request) {
            return *doc;
        }
        *self
            .configs
            .entry(request.clone())
            .or_insert_with(|| ConfigDoc::new(db, request.clone(), ConfigDocState::Pending))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pins_are_parsed_from_the_fragment_and_verified() {
        let body = b"rules\n";
        let blake = blake3::hash(body).to_hex().to_string();
        let pin = Pin::parse(&format!("https://x/a.md#blake3={}", blake.to_uppercase())).unwrap();
        assert_eq!(pin.verify(body), Ok(()));
        assert!(matches!(pin.verify(b"other"), Err(FetchFailure::PinMismatch { .. })));
        let sha = "9b9e2aa5ecc4d3deba7a1bd6c7b7aa6b3bec17dfa4f6ef9b3b9b1db1a3e9b2b0";
        assert_eq!(Pin::parse(&format!("https://x/a.md#sha256={sha}")).unwrap().algorithm, "sha256");
        assert_eq!(Pin::parse("https://x/a.md#section"), None);
        assert_eq!(Pin::parse("https://x/a.md#blake3=abc"), None);
    }
}
