//! Extraction that needs a model (§6.2 observations), behind [`Extractor`]: an
//! OpenAI-compatible HTTP client for real use, [`Scripted`] for tests. Evidence is
//! redacted and deduplicated by hash *before* any model call, so the same tool failure is
//! never sent twice.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use crate::record::{self, Note, Observation, ObservationHashes, SCHEMA_VERSION};
use serde::Serialize;
use serde_json::{Value, json};

use crate::recall::MemorySettings;
use crate::text::{hash, new_id, normalize};
use crate::{Store, StoreError, files};

/// §6.2 caps.
const INPUT_CHARS: usize = 500;
const OUTPUT_CHARS: usize = 2000;
const MAX_OBSERVATIONS: usize = 2;
const MAX_HASHES: usize = 5000;
/// Tools whose own calls teach nothing about the workspace (§6.2 step 1).
const MEMORY_TOOLS: &[&str] = &["memory_recall", "memory_remember", "memory_forget"];
const READ_ONLY: &[&str] = &["read", "glob", "grep", "list"];

/// One settled tool call.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Evidence {
    /// The tool's name, as the agent called it (`bash`, `read`, …).
    pub tool: String,
    /// `completed` or `error`.
    pub outcome: String,
    /// The call's input, as text (JSON for most tools).
    pub input: String,
    /// What the tool returned, or its error message.
    pub output: String,
}

/// A model that turns evidence into 0–2 observations.
pub trait Extractor: Send + Sync {
    /// The observations the model draws from one (redacted) call; an error says why the
    /// model could not be asked or what it answered instead.
    fn observations(&self, evidence: &Evidence) -> Result<Vec<Note>, String>;
}

/// What [`observe`] did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "result", rename_all = "kebab-case")]
pub enum Observed {
    /// Nothing to learn from this call (a memory tool, a small successful read).
    Skipped {
        /// Why the call was not worth a model call.
        why: String,
    },
    /// The same evidence was seen before: no model call.
    Seen {
        /// The hash of the redacted, normalised evidence (§6.2).
        evidence_hash: String,
    },
    /// The model was asked and its observations (possibly none) were appended.
    Stored {
        /// The hash of the redacted, normalised evidence (§6.2).
        evidence_hash: String,
        /// The ids of the observations stored, in the model's order.
        ids: Vec<String>,
    },
}

/// §6.2: gate, redact, hash, dedupe, ask the model, append, remember the hash.
pub fn observe(
    store: &Store,
    evidence: &Evidence,
    session: Option<&str>,
    model: &dyn Extractor,
) -> Result<Observed, StoreError> {
    crate::check_session(session)?;
    if MEMORY_TOOLS.contains(&evidence.tool.as_str()) {
        return Ok(Observed::Skipped { why: "memory tools are not observed".to_owned() });
    }
    if evidence.outcome != "error"
        && READ_ONLY.contains(&evidence.tool.as_str())
        && evidence.output.chars().count() < 200
    {
        return Ok(Observed::Skipped { why: "a small successful read-only call".to_owned() });
    }
    // Redacted before cut, so a secret across the cut is still recognised whole.
    let redact =
        |text: &str, max: usize| -> String { store.redactor().redact(text).text.chars().take(max).collect() };
    let evidence = Evidence {
        tool: evidence.tool.clone(),
        outcome: evidence.outcome.clone(),
        input: normalize(&redact(&evidence.input, INPUT_CHARS), Some(workspace_of(store))),
        output: normalize(&redact(&evidence.output, OUTPUT_CHARS), Some(workspace_of(store))),
    };
    let evidence_hash =
        hash(&serde_json::to_string(&evidence).map_err(|e| StoreError::Invalid(e.to_string()))?);
    let hashes_path = store.root().join(record::OBSERVATION_HASHES);
    let seen = |hashes: &Option<ObservationHashes>| {
        hashes.as_ref().is_some_and(|h| h.hashes.contains_key(&evidence_hash))
    };
    if seen(&read_hashes(&hashes_path)?) {
        return Ok(Observed::Seen { evidence_hash });
    }
    // The model call happens outside the lock; a concurrent twin may make the same call,
    // and the hash check under the lock below keeps only one set of records.
    let notes = model.observations(&evidence).map_err(StoreError::Extract)?;
    store.locked(|| {
        let mut hashes = read_hashes(&hashes_path)?.unwrap_or_default();
        if hashes.hashes.contains_key(&evidence_hash) {
            return Ok(Observed::Seen { evidence_hash: evidence_hash.clone() });
        }
        let now = store.now();
        let existing = existing_text_hashes(store)?;
        let mut stored = Vec::new();
        for mut note in notes.into_iter().take(MAX_OBSERVATIONS) {
            note.l0 = redact(&note.l0, Note::L0_CHARS);
            note.l1 = redact(&note.l1, Note::L1_CHARS);
            for term in note.files.iter_mut().chain(&mut note.keywords) {
                *term = redact(term, Note::L0_CHARS);
            }
            let text_hash = hash(&normalize(&note.l0, Some(workspace_of(store))));
            if note.l0.trim().is_empty()
                || existing.contains(&text_hash)
                || stored.iter().any(|o: &Observation| o.text_hash == text_hash)
            {
                continue;
            }
            stored.push(Observation {
                v: SCHEMA_VERSION,
                id: new_id("obs_", now),
                session_id: session.map(str::to_owned),
                tool: evidence.tool.clone(),
                outcome: evidence.outcome.clone(),
                note,
                evidence_hash: evidence_hash.clone(),
                text_hash,
                created_at: now,
            });
        }
        store.append_observations(&stored)?;
        // Even when the model found nothing, this evidence is never sent again.
        hashes.v = SCHEMA_VERSION;
        hashes.hashes.insert(evidence_hash.clone(), now);
        while hashes.hashes.len() > MAX_HASHES {
            let oldest =
                hashes.hashes.iter().min_by(|a, b| a.1.cmp(b.1).then(a.0.cmp(b.0))).map(|(k, _)| k.clone());
            match oldest {
                Some(key) => hashes.hashes.remove(&key),
                None => break,
            };
        }
        store.write_json(record::OBSERVATION_HASHES, &hashes)?;
        Ok(Observed::Stored {
            evidence_hash: evidence_hash.clone(),
            ids: stored.into_iter().map(|o| o.id).collect(),
        })
    })
}

fn workspace_of(store: &Store) -> &std::path::Path {
    &store.workspace
}

fn read_hashes(path: &std::path::Path) -> Result<Option<ObservationHashes>, StoreError> {
    match files::read_text(path)? {
        None => Ok(None),
        Some(text) => record::parse_record(&text)
            .map(Some)
            .map_err(|reason| StoreError::Corrupt { path: path.to_path_buf(), reason }),
    }
}

fn existing_text_hashes(store: &Store) -> Result<Vec<String>, StoreError> {
    let bytes = files::read_bytes(&store.root().join(record::OBSERVATIONS))?.unwrap_or_default();
    Ok(record::parse_jsonl::<Observation>(&bytes).records.into_iter().map(|o| o.text_hash).collect())
}

/// A deterministic extractor for tests and offline runs: a function of the evidence,
/// with a count of calls.
pub struct Scripted<F> {
    script: F,
    calls: AtomicUsize,
}

impl<F: Fn(&Evidence) -> Vec<Note> + Send + Sync> Scripted<F> {
    /// An extractor answering each piece of evidence with `script`'s notes.
    pub fn new(script: F) -> Self {
        Scripted { script, calls: AtomicUsize::new(0) }
    }

    /// How many times the extractor was asked.
    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}

impl<F: Fn(&Evidence) -> Vec<Note> + Send + Sync> Extractor for Scripted<F> {
    fn observations(&self, evidence: &Evidence) -> Result<Vec<Note>, String> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        Ok((self.script)(evidence))
    }
}

/// The model for extraction, resolved from config (§2): `memory_model`, else
/// `small_model`, as `provider/model`.
pub fn resolve_model(memory_model: Option<&str>, small_model: Option<&str>) -> Option<String> {
    memory_model.or(small_model).map(|m| m.split_once('/').map_or(m, |(_, id)| id).to_owned())
}

/// The extraction client of §2: `memory_model`, else `small_model` (`provider/model`), at
/// `base_url` when given, else the provider's `options.baseURL`, with its `options.apiKey`.
/// `provider_option(provider, key)` reads the provider's options from the config of the
/// profile that owns the settings.
pub fn extraction_model(
    settings: &MemorySettings,
    base_url: Option<String>,
    provider_option: impl Fn(&str, &str) -> Option<String>,
) -> Result<OpenAiCompatible, StoreError> {
    let Some(name) = settings.memory_model.as_deref().or(settings.small_model.as_deref()) else {
        return Err(StoreError::Invalid(
            "no model for extraction: set \"memory_model\" (or \"small_model\") to PROVIDER/MODEL in the config"
                .to_owned(),
        ));
    };
    let Some((provider, model)) = name.split_once('/') else {
        return Err(StoreError::Invalid(format!("extraction model {name:?}: expected PROVIDER/MODEL")));
    };
    let Some(base_url) = base_url.or_else(|| provider_option(provider, "baseURL")) else {
        return Err(StoreError::Invalid(format!(
            "extraction model {name}: provider {provider:?} has no options.baseURL in the config; pass --base-url"
        )));
    };
    Ok(OpenAiCompatible::new(base_url, model, provider_option(provider, "apiKey")))
}

/// An OpenAI-compatible `POST {base}/chat/completions` client. The model must answer
/// with a JSON object `{"observations":[…]}`.
pub struct OpenAiCompatible {
    /// The API's base URL; `/chat/completions` is appended.
    pub base_url: String,
    /// The model id sent in each request.
    pub model: String,
    /// Sent as `Authorization: Bearer …` when set.
    pub api_key: Option<String>,
    /// The whole request's deadline (60 s unless changed).
    pub timeout: Duration,
    /// The last error body seen, for diagnostics.
    last_error: Mutex<Option<String>>,
}

/// The instruction sent with each piece of evidence (written for ctxgraph).
const INSTRUCTION: &str = "You read the result of one tool call made by a coding agent in a software project. \
Reply with a JSON object {\"observations\": [...]} holding zero, one or two lessons that would help a future \
session in the same project (not this task's progress). Each lesson has: kind (gotcha, fix, convention, \
environment, failure-mode or api-behaviour), l0 (one line, at most 160 characters), l1 (at most 800 \
characters), files (project-relative paths) and keywords. Reply with {\"observations\": []} when there is \
nothing durable to learn.";

impl OpenAiCompatible {
    /// A client for `model` at `base_url`, with the default 60 s timeout.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>, api_key: Option<String>) -> Self {
        OpenAiCompatible {
            base_url: base_url.into(),
            model: model.into(),
            api_key,
            timeout: Duration::from_secs(60),
            last_error: Mutex::new(None),
        }
    }

    async fn call(&self, evidence: &Evidence) -> Result<Vec<Note>, String> {
        // rustls needs a process-wide crypto provider; ring, as the engine's fetcher uses.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder().timeout(self.timeout).build().map_err(|e| e.to_string())?;
        let body = json!({
            "model": self.model,
            "temperature": 0,
            "response_format": {"type": "json_object"},
            "messages": [
                {"role": "system", "content": INSTRUCTION},
                {"role": "user", "content": serde_json::to_string(evidence).map_err(|e| e.to_string())?},
            ],
        });
        let url = format!("{}/chat/completions", self.base_url.trim_end_matches('/'));
        let mut request = client.post(&url).json(&body);
        if let Some(key) = &self.api_key {
            request = request.bearer_auth(key);
        }
        let response = request.send().await.map_err(|e| format!("{url}: {e}"))?;
        let status = response.status();
        let text = response.text().await.map_err(|e| format!("{url}: {e}"))?;
        if !status.is_success() {
            let cut: String = text.chars().take(200).collect();
            if let Ok(mut last) = self.last_error.lock() {
                *last = Some(cut.clone());
            }
            return Err(format!("{url}: HTTP {status}: {cut}"));
        }
        parse_reply(&text).map_err(|e| format!("{url}: {e}"))
    }
}

/// The observations in a chat-completions reply.
pub fn parse_reply(text: &str) -> Result<Vec<Note>, String> {
    let reply: Value = serde_json::from_str(text).map_err(|e| format!("reply is not JSON: {e}"))?;
    let content = reply
        .pointer("/choices/0/message/content")
        .and_then(Value::as_str)
        .ok_or("reply has no choices[0].message.content")?;
    let content: Value = serde_json::from_str(content).map_err(|e| format!("content is not JSON: {e}"))?;
    let list = content.get("observations").cloned().unwrap_or(Value::Array(Vec::new()));
    serde_json::from_value(list).map_err(|e| format!("observations: {e}"))
}

impl Extractor for OpenAiCompatible {
    fn observations(&self, evidence: &Evidence) -> Result<Vec<Note>, String> {
        let runtime =
            tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
        runtime.block_on(self.call(evidence))
    }
}
