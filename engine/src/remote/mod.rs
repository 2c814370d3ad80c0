//! Fetching remote `instructions` (I8) for the engine: concurrently, with opencode's retry
//! and timeout rules, a body cap, integrity pins and an on-disk cache of last good copies.
//! Results become [`RemoteState`] inputs; queries never wait on the network.

mod cache;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use ctxgraph_db::files::decode_utf8;
use ctxgraph_db::remote::{ConfigDocState, ConfigRequest, FetchFailure, LoadedFrom, Pin, RemoteState};
use reqwest::header::{
    ACCEPT, CONTENT_TYPE, ETAG, HeaderMap, HeaderName, HeaderValue, IF_MODIFIED_SINCE, IF_NONE_MATCH,
    LAST_MODIFIED,
};
use reqwest::{StatusCode, Url};

pub use cache::{Cache, CachedBody};

/// How remote documents are fetched. The defaults are opencode's where it has one.
#[derive(Clone, Debug)]
pub struct FetchOptions {
    /// I8: from sending the request until response headers, retries included (opencode:
    /// 5000 ms).
    pub header_timeout: Duration,
    /// Reading the body. opencode has no limit here (E-21); ctxgraph stops waiting after
    /// this long so a stalled server cannot hang a build.
    pub body_timeout: Duration,
    /// Bodies larger than this are refused, checked while streaming.
    pub max_body_bytes: u64,
    /// R5: retries after the first attempt.
    pub retries: u32,
    /// R5: exponential backoff base (doubled per retry, plus jitter).
    pub backoff_base: Duration,
    /// I8: documents fetched at once.
    pub concurrency: usize,
    /// Redirects followed before a fetch fails.
    pub max_redirects: usize,
    /// Use the cache only; no network.
    pub offline: bool,
    /// Never fall back to a cached copy when a fetch fails.
    pub strict: bool,
    /// Where last good copies live; `None` disables the cache.
    pub cache_dir: Option<PathBuf>,
}

impl Default for FetchOptions {
    fn default() -> Self {
        Self {
            header_timeout: Duration::from_secs(5),
            body_timeout: Duration::from_secs(30),
            max_body_bytes: 1024 * 1024,
            retries: 2,
            backoff_base: Duration::from_millis(200),
            concurrency: 4,
            max_redirects: 5,
            offline: false,
            strict: false,
            cache_dir: None,
        }
    }
}

/// The HTTP client (or the runtime that drives it) could not be set up.
#[derive(Debug, thiserror::Error)]
#[error("cannot set up the HTTP client: {0}")]
pub struct FetcherError(String);

impl FetcherError {
    pub(crate) fn from_io(err: &std::io::Error) -> Self {
        Self(err.to_string())
    }

    pub(crate) fn from_message(message: String) -> Self {
        Self(message)
    }
}

/// Fetches remote documents. Cheap to share; one per process is enough.
#[derive(Clone, Debug)]
pub struct Fetcher {
    client: reqwest::Client,
    options: Arc<FetchOptions>,
    cache: Option<Arc<Cache>>,
}

enum Fetched {
    Body { bytes: Vec<u8>, etag: Option<String>, last_modified: Option<String> },
    NotModified,
}

impl Fetcher {
    /// A fetcher with its own HTTP client (rustls) and, if configured, cache.
    pub fn new(options: FetchOptions) -> Result<Self, FetcherError> {
        // rustls needs a process-wide crypto provider; ring keeps builds free of aws-lc.
        // An error only means one is installed already.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let max_redirects = options.max_redirects;
        let redirects = reqwest::redirect::Policy::custom(move |attempt| {
            let from_https = attempt.previous().last().is_some_and(|u| u.scheme() == "https");
            match attempt.url().scheme() {
                _ if attempt.previous().len() > max_redirects => {
                    attempt.error(format!("more than {max_redirects} redirects"))
                }
                "https" => attempt.follow(),
                "http" if !from_https => attempt.follow(),
                scheme => {
                    let reason = format!(
                        "redirect from {} to a {scheme}: URL",
                        attempt.previous().last().map_or("", |u| u.scheme())
                    );
                    attempt.error(reason)
                }
            }
        });
        let client = reqwest::Client::builder()
            .user_agent(concat!("ctxgraph/", env!("CARGO_PKG_VERSION")))
            .redirect(redirects)
            .connect_timeout(options.header_timeout)
            .build()
            .map_err(|err| FetcherError(err.to_string()))?;
        let cache = options.cache_dir.clone().map(|dir| Arc::new(Cache::new(dir)));
        Ok(Self { client, options: Arc::new(options), cache })
    }

    /// The options this fetcher was made with.
    pub fn options(&self) -> &FetchOptions {
        &self.options
    }

    /// Loads every URL (concurrently, at most `concurrency` at once), in input order.
    pub async fn load_all(&self, urls: &[String]) -> Vec<RemoteState> {
        let permits = Arc::new(tokio::sync::Semaphore::new(self.options.concurrency.max(1)));
        let mut tasks = tokio::task::JoinSet::new();
        for (index, url) in urls.iter().enumerate() {
            let (fetcher, url, permits) = (self.clone(), url.clone(), Arc::clone(&permits));
            tasks.spawn(async move {
                let _permit = permits.acquire_owned().await;
                (index, fetcher.load(&url).await)
            });
        }
        let mut states = vec![RemoteState::Pending; urls.len()];
        while let Some(joined) = tasks.join_next().await {
            if let Ok((index, state)) = joined {
                states[index] = state;
            }
        }
        states
    }

    /// One URL, from the network or the cache, with its pin checked.
    pub async fn load(&self, url: &str) -> RemoteState {
        let pin = Pin::parse(url);
        let target = match Url::parse(url) {
            Ok(mut parsed) if matches!(parsed.scheme(), "http" | "https") => {
                // The fragment (pin or not) is never sent.
                parsed.set_fragment(None);
                parsed
            }
            Ok(parsed) => {
                return RemoteState::Failed(FetchFailure::InvalidUrl(format!(
                    "scheme {} is not http or https",
                    parsed.scheme()
                )));
            }
            Err(err) => return RemoteState::Failed(FetchFailure::InvalidUrl(err.to_string())),
        };
        // Cached by what is fetched: a changed pin is then checked against the cached body.
        let cache_key = target.as_str().to_owned();
        let cached = self.cache.as_ref().and_then(|cache| cache.get(&cache_key));
        let verified = |bytes: &[u8]| pin.as_ref().map_or(Ok(()), |pin| pin.verify(bytes));
        let loaded =
            |bytes: &[u8], from: LoadedFrom| RemoteState::Loaded { text: decode_utf8(bytes).text, from };
        let fallback = |because: Option<FetchFailure>| match (&cached, because) {
            (None, because) => RemoteState::Failed(because.unwrap_or(FetchFailure::Offline)),
            (Some(copy), because) => match (verified(&copy.body), because) {
                (Err(mismatch), None) => RemoteState::Failed(mismatch),
                (Err(_), Some(failure)) => RemoteState::Failed(failure),
                (Ok(()), Some(failure)) if self.options.strict => RemoteState::Failed(failure),
                (Ok(()), because) => loaded(&copy.body, LoadedFrom::Cache { because }),
            },
        };
        if self.options.offline {
            return fallback(None);
        }
        match self.fetch(&target, cached.as_ref()).await {
            Ok(Fetched::Body { bytes, etag, last_modified }) => {
                if let Err(mismatch) = verified(&bytes) {
                    return RemoteState::Failed(mismatch);
                }
                if let Some(cache) = &self.cache {
                    // A cache that cannot be written only costs the next offline build.
                    let _ = cache.put(&cache_key, &CachedBody { body: bytes.clone(), etag, last_modified });
                }
                loaded(&bytes, LoadedFrom::Network)
            }
            Ok(Fetched::NotModified) => match &cached {
                Some(copy) => match verified(&copy.body) {
                    Ok(()) => loaded(&copy.body, LoadedFrom::Revalidated),
                    Err(mismatch) => RemoteState::Failed(mismatch),
                },
                None => RemoteState::Failed(FetchFailure::Status(304)),
            },
            Err(failure) => fallback(Some(failure)),
        }
    }

    /// R1/R4: one remote config document, with `Accept: application/json` and the
    /// request's headers, the same retries and deadlines, and no cache (opencode aborts
    /// when remote config cannot be fetched, so a stale copy would hide that).
    pub async fn load_config(&self, request: &ConfigRequest) -> ConfigDocState {
        let url = match Url::parse(&request.url) {
            Ok(url) if matches!(url.scheme(), "http" | "https") => url,
            Ok(url) => {
                return ConfigDocState::Failed(FetchFailure::InvalidUrl(format!(
                    "scheme {} is not http or https",
                    url.scheme()
                )));
            }
            Err(err) => return ConfigDocState::Failed(FetchFailure::InvalidUrl(err.to_string())),
        };
        let mut headers = HeaderMap::new();
        headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
        for (name, value) in &request.headers {
            match (HeaderName::try_from(name.as_str()), HeaderValue::try_from(value.as_str())) {
                (Ok(name), Ok(value)) => {
                    headers.insert(name, value);
                }
                _ => {
                    return ConfigDocState::Failed(FetchFailure::InvalidUrl(format!(
                        "invalid header {name:?}"
                    )));
                }
            }
        }
        if self.options.offline {
            return ConfigDocState::Failed(FetchFailure::Offline);
        }
        match self.fetch_with(&url, headers, None).await {
            Ok((Fetched::Body { bytes, .. }, content_type)) => {
                ConfigDocState::Loaded { body: decode_utf8(&bytes).text, content_type }
            }
            Ok((Fetched::NotModified, _)) => ConfigDocState::Failed(FetchFailure::Status(304)),
            Err(failure) => ConfigDocState::Failed(failure),
        }
    }

    /// R5 + I8: retried GETs inside one header deadline, then the capped body read.
    async fn fetch(&self, url: &Url, cached: Option<&CachedBody>) -> Result<Fetched, FetchFailure> {
        self.fetch_with(url, HeaderMap::new(), cached).await.map(|(fetched, _)| fetched)
    }

    async fn fetch_with(
        &self,
        url: &Url,
        mut headers: HeaderMap,
        cached: Option<&CachedBody>,
    ) -> Result<(Fetched, Option<String>), FetchFailure> {
        let options = &self.options;
        if let Some(cached) = cached {
            if let Some(etag) = cached.etag.as_deref().and_then(|v| v.parse().ok()) {
                headers.insert(IF_NONE_MATCH, etag);
            }
            if let Some(date) = cached.last_modified.as_deref().and_then(|v| v.parse().ok()) {
                headers.insert(IF_MODIFIED_SINCE, date);
            }
        }
        // What went wrong on the latest attempt: a deadline that expires while retrying a
        // refused connection is reported as that refusal, not as a bare timeout.
        let mut last_failure = None;
        let attempts = async {
            let mut attempt = 0;
            loop {
                let last = attempt >= options.retries;
                match self.client.get(url.clone()).headers(headers.clone()).send().await {
                    Ok(response) if !last && is_retryable_status(response.status()) => {
                        last_failure = Some(FetchFailure::Status(response.status().as_u16()));
                    }
                    Ok(response) => return Ok(response),
                    Err(err) if !last && (err.is_connect() || err.is_timeout()) => {
                        last_failure = Some(classify(err, options.header_timeout));
                    }
                    Err(err) => return Err(classify(err, options.header_timeout)),
                }
                tokio::time::sleep(backoff(options.backoff_base, attempt)).await;
                attempt += 1;
            }
        };
        let outcome = tokio::time::timeout(options.header_timeout, attempts).await;
        let response = match outcome {
            Ok(result) => result?,
            Err(_) => {
                return Err(
                    last_failure.unwrap_or_else(|| timeout("response headers", options.header_timeout))
                );
            }
        };
        let status = response.status();
        if status == StatusCode::NOT_MODIFIED && cached.is_some() {
            return Ok((Fetched::NotModified, None));
        }
        if status.is_redirection() {
            // reqwest returns a redirect it will not follow (a `file:` target, say) as is.
            let location = response.headers().get(reqwest::header::LOCATION).and_then(|v| v.to_str().ok());
            return Err(FetchFailure::Redirect(format!(
                "{} to {}, which is not an http(s) URL",
                status.as_u16(),
                location.unwrap_or("nowhere")
            )));
        }
        if !status.is_success() {
            return Err(FetchFailure::Status(status.as_u16()));
        }
        let header = |name| {
            response
                .headers()
                .get(name)
                .and_then(|v: &reqwest::header::HeaderValue| v.to_str().ok())
                .map(str::to_owned)
        };
        let (etag, last_modified, content_type) = (header(ETAG), header(LAST_MODIFIED), header(CONTENT_TYPE));
        let bytes = tokio::time::timeout(options.body_timeout, read_capped(response, options.max_body_bytes))
            .await
            .map_err(|_| timeout("body", options.body_timeout))??;
        Ok((Fetched::Body { bytes, etag, last_modified }, content_type))
    }
}

/// R5: 408, 429, 500, 502, 503 and 504 are retried.
fn is_retryable_status(status: StatusCode) -> bool {
    matches!(status.as_u16(), 408 | 429 | 500 | 502 | 503 | 504)
}

/// `base × 2^attempt`, plus up to half of `base` of jitter so clients do not retry in step.
fn backoff(base: Duration, attempt: u32) -> Duration {
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    let jitter = base.mul_f64(f64::from(nanos % 1000) / 2000.0);
    base * 2u32.saturating_pow(attempt) + jitter
}

fn timeout(phase: &'static str, after: Duration) -> FetchFailure {
    FetchFailure::Timeout { phase, after_ms: u64::try_from(after.as_millis()).unwrap_or(u64::MAX) }
}

async fn read_capped(mut response: reqwest::Response, limit: u64) -> Result<Vec<u8>, FetchFailure> {
    if response.content_length().is_some_and(|length| length > limit) {
        return Err(FetchFailure::BodyTooLarge { limit });
    }
    let mut body = Vec::new();
    while let Some(chunk) =
        response.chunk().await.map_err(|err| FetchFailure::Body(error_chain(&err.without_url())))?
    {
        if (body.len() + chunk.len()) as u64 > limit {
            return Err(FetchFailure::BodyTooLarge { limit });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The failure without the URL reqwest puts in its message: the URL may carry a token
/// substituted from `{env:}`, and whoever prints the failure names the URL as written.
fn classify(err: reqwest::Error, header_timeout: Duration) -> FetchFailure {
    let err = err.without_url();
    let chain = error_chain(&err);
    if err.is_redirect() {
        FetchFailure::Redirect(chain)
    } else if err.is_timeout() {
        timeout("response headers", header_timeout)
    } else if chain.contains("dns error") || chain.contains("failed to lookup address") {
        FetchFailure::Dns(chain)
    } else {
        FetchFailure::Connect(chain)
    }
}

/// The error and its sources, `: `-joined (reqwest's own message is only the top).
fn error_chain(err: &dyn std::error::Error) -> String {
    let mut parts = vec![err.to_string()];
    let mut source = err.source();
    while let Some(inner) = source {
        let text = inner.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        source = inner.source();
    }
    parts.join(": ")
}
