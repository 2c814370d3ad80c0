//! The store's write paths on a temp directory with a fixed clock.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;

use super::*;
use crate::extract::{Evidence, Observed, OpenAiCompatible, Scripted, observe};
use crate::record::Note;

const NOW: i64 = 1_800_000_000_000;

fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path(), &BTreeMap::new()).with_clock(|| NOW);
    (dir, store)
}

fn active_texts(store: &Store) -> Vec<String> {
    store.facts().unwrap().into_iter().filter(Fact::is_active).map(|f| f.record.text).collect()
}

#[test]
fn remember_dedupes_exact_and_supersedes_near_duplicates() {
    let (_dir, store) = store();
    let first = store
        .remember(
            "Run the integration tests with cargo nextest before pushing.",
            Scope::Project,
            "tooling",
            FactSource::Explicit,
            None,
        )
        .unwrap();
    let again = store
        .remember(
            "run the integration tests  with CARGO nextest before pushing",
            Scope::Project,
            "tooling",
            FactSource::Explicit,
            None,
        )
        .unwrap();
    assert_eq!(again.stored, Stored::Duplicate { id: first.id().to_owned() });
    let near = store
        .remember(
            "Run the integration tests with cargo nextest before pushing anything",
            Scope::Project,
            "tooling",
            FactSource::Explicit,
            Some("ses_2"),
        )
        .unwrap();
    assert!(matches!(&near.stored, Stored::Superseded { old, .. } if old == first.id()), "{near:?}");
    assert_eq!(
        active_texts(&store),
        ["Run the integration tests with cargo nextest before pushing anything"]
    );
    // Nothing is deleted: three records, one fact retired by a status line.
    let log = std::fs::read_to_string(store.root().join("facts.jsonl")).unwrap();
    assert_eq!(log.lines().count(), 3);
    assert!(log.contains(r#""reason":"superseded""#));
}

#[test]
fn remember_redacts_before_writing_and_hashing() {
    let (_dir, store) = store();
    let key = format!("ghp_{}", "a".repeat(36));
    store
        .remember(
            &format!("The staging deploy uses the token {key} from the vault"),
            Scope::Project,
            "other",
            FactSource::Explicit,
            None,
        )
        .unwrap();
    let log = std::fs::read_to_string(store.root().join("facts.jsonl")).unwrap();
    assert!(!log.contains(&key));
    assert!(log.contains("[REDACTED:github_token]"));
    let fact = &store.facts().unwrap()[0];
    assert_eq!(fact.record.hash, text::hash(&text::normalize(&fact.record.text, None)));
    let err = store.remember(&key, Scope::User, "other", FactSource::Explicit, None).unwrap_err();
    assert!(matches!(err, StoreError::MostlySecret { .. }), "{err}");
}

#[test]
fn forget_by_id_and_by_query() {
    let (_dir, store) = store();
    let npm = store
        .remember("We use npm for scripts", Scope::Project, "tooling", FactSource::Explicit, None)
        .unwrap();
    store
        .remember("Prefers tabs over spaces", Scope::User, "preference", FactSource::Explicit, None)
        .unwrap();
    store
        .remember("The database is PostgreSQL 16", Scope::Project, "environment", FactSource::Explicit, None)
        .unwrap();
    assert_eq!(store.forget("forget that we use npm", None).unwrap(), [npm.id().to_owned()]);
    assert_eq!(active_texts(&store), ["Prefers tabs over spaces", "The database is PostgreSQL 16"]);
    let tabs = store.facts().unwrap()[1].record.id.clone();
    assert_eq!(store.forget(&tabs, None).unwrap(), std::slice::from_ref(&tabs));
    assert!(matches!(store.forget("kubernetes helm charts", None), Err(StoreError::NoMatch(_))));
    store.set_fact_status(&tabs, Status::Active, "user-restore", None).unwrap();
    assert_eq!(active_texts(&store), ["Prefers tabs over spaces", "The database is PostgreSQL 16"]);
}

#[test]
fn facts_over_the_cap_evict_compaction_facts_first() {
    let (_dir, store) = store();
    let store = store.with_sync(false);
    store.remember("explicit fact zero", Scope::User, "other", FactSource::Explicit, None).unwrap();
    for i in 0..MAX_ACTIVE_FACTS {
        store
            .remember(
                &format!("compaction fact number {i} about area{i}"),
                Scope::Project,
                "other",
                FactSource::Compaction,
                None,
            )
            .unwrap();
    }
    let facts = store.facts().unwrap();
    assert_eq!(facts.iter().filter(|f| f.is_active()).count(), MAX_ACTIVE_FACTS);
    let evicted: Vec<&Fact> = facts.iter().filter(|f| !f.is_active()).collect();
    assert_eq!(evicted.len(), 1);
    assert_eq!(evicted[0].record.source, FactSource::Compaction);
    assert_eq!(evicted[0].reason.as_deref(), Some("evicted"));
}

#[test]
fn handoff_is_trimmed_in_the_documented_order() {
    let (_dir, store) = store();
    let long = "x".repeat(400);
    let many = |n: usize| serde_json::to_string(&vec![long.clone(); n]).unwrap();
    let json = format!(
        r#"{{"goal":"ship it","status":"in_progress","openQuestions":{},"constraints":{},"decisions":{},"done":{},"files":["a.rs"]}}"#,
        many(4),
        many(4),
        many(4),
        many(2)
    );
    let handoff = store.set_handoff(&json, Some("ses_1")).unwrap();
    assert_eq!(handoff.open_questions.len(), 1);
    assert_eq!(handoff.constraints.len(), 1);
    assert_eq!((handoff.decisions.len(), handoff.done.len()), (4, 2), "trimming stops once under 900 tokens");
    assert!(handoff.token_estimate.unwrap() <= 900);
    assert_eq!(store.handoff().unwrap().unwrap(), handoff);
    let err = store.set_handoff("[1,", None).unwrap_err();
    assert!(err.to_string().contains("line 1"), "{err}");
    assert_eq!(store.handoff().unwrap().unwrap(), handoff, "a failed set keeps the old handoff");
}

#[test]
fn tool_outcomes_count_and_classify() {
    let (_dir, store) = store();
    store.record_tool_outcome("edit", Outcome::Ok, None, None).unwrap();
    store.record_tool_outcome("edit", Outcome::Error, None, Some("oldString not found in content")).unwrap();
    let stat = store.record_tool_outcome("edit", Outcome::Error, None, Some("rejected by user")).unwrap();
    assert_eq!((stat.calls, stat.errors, stat.consecutive_errors), (3, 1, 1));
    assert_eq!(stat.recent, "sep");
    assert_eq!(stat.error_kinds, BTreeMap::from([("not_found".to_owned(), 1), ("permission".to_owned(), 1)]));
    for _ in 0..30 {
        store.record_tool_outcome("bash", Outcome::Ok, None, None).unwrap();
    }
    let stats: ToolStats = store.read_json(record::TOOL_STATS).unwrap().unwrap();
    assert_eq!(stats.tools["bash"].recent.len(), RECENT_WINDOW);
    assert_eq!(stats.tools["bash"].calls, 30);
}

#[test]
fn concurrent_tool_outcomes_lose_no_increment() {
    let (_dir, store) = store();
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                for _ in 0..25 {
                    store.record_tool_outcome("bash", Outcome::Ok, None, None).unwrap();
                }
            });
        }
    });
    let stats: ToolStats = store.read_json(record::TOOL_STATS).unwrap().unwrap();
    assert_eq!(stats.tools["bash"].calls, 100);
}

fn evidence(output: &str) -> Evidence {
    Evidence { tool: "bash".into(), outcome: "error".into(), input: "bun test".into(), output: output.into() }
}

fn lesson(l0: &str) -> Note {
    Note { kind: "gotcha".into(), l0: l0.into(), l1: String::new(), files: vec![], keywords: vec![] }
}

#[test]
fn identical_evidence_costs_one_model_call() {
    let (_dir, store) = store();
    let model = Scripted::new(|_: &Evidence| {
        vec![lesson("bun test must run from the package"), lesson("second"), lesson("third")]
    });
    let first = observe(&store, &evidence("preload not found at 1764000000123"), None, &model).unwrap();
    let Observed::Stored { ids, .. } = first else { panic!("{first:?}") };
    assert_eq!(ids.len(), 2, "at most two per call");
    // Same evidence up to a timestamp: normalised to the same hash, no second call.
    let again = observe(&store, &evidence("preload not found at 1764000000999"), None, &model).unwrap();
    assert!(matches!(again, Observed::Seen { .. }), "{again:?}");
    assert_eq!(model.calls(), 1);
    let skipped =
        observe(&store, &Evidence { tool: "memory_recall".into(), ..evidence("x") }, None, &model).unwrap();
    assert!(matches!(skipped, Observed::Skipped { .. }));
    assert_eq!(model.calls(), 1);
}

/// A one-connection HTTP server on 127.0.0.1 that answers every request with `body` and
/// hands back the request it saw.
fn fake_model(body: String) -> (String, std::thread::JoinHandle<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let handle = std::thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        stream.set_read_timeout(Some(std::time::Duration::from_secs(10))).unwrap();
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut head = String::new();
        let mut length = 0;
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = v.trim().parse().unwrap();
            }
            head.push_str(&line);
            if line == "\r\n" || line.is_empty() {
                break;
            }
        }
        let mut request = vec![0; length];
        reader.read_exact(&mut request).unwrap();
        let mut stream = stream;
        write!(stream, "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}", body.len()).unwrap();
        head + &String::from_utf8(request).unwrap()
    });
    (url, handle)
}

#[test]
fn the_openai_compatible_extractor_talks_to_a_loopback_server() {
    let (_dir, store) = store();
    let content = serde_json::json!({"observations":[{"kind":"gotcha","l0":"bun test needs the package dir","l1":"","files":[],"keywords":["bun"]}]});
    let reply =
        serde_json::json!({"choices":[{"message":{"role":"assistant","content":content.to_string()}}]});
    let (url, server) = fake_model(reply.to_string());
    let key = format!("sk-proj-{}", "k".repeat(30));
    let model = OpenAiCompatible::new(url, "small-model", Some("test-key".to_owned()));
    let result = observe(&store, &evidence(&format!("failed with {key}")), Some("ses_1"), &model).unwrap();
    assert!(matches!(&result, Observed::Stored { ids, .. } if ids.len() == 1), "{result:?}");
    let request = server.join().unwrap();
    assert!(request.starts_with("POST /v1/chat/completions"), "{request}");
    assert!(request.contains("\"model\":\"small-model\""));
    assert!(request.to_ascii_lowercase().contains("authorization: bearer test-key"));
    assert!(!request.contains(&key), "evidence is redacted before the model sees it");
}

#[test]
fn model_resolution_prefers_memory_model() {
    assert_eq!(extract::resolve_model(Some("openai/gpt-x"), Some("a/b")).as_deref(), Some("gpt-x"));
    assert_eq!(extract::resolve_model(None, Some("a/b")).as_deref(), Some("b"));
    assert_eq!(extract::resolve_model(None, None), None);
}

#[test]
fn a_torn_multibyte_last_line_is_skipped_then_cut_off() {
    let (_dir, store) = store();
    store.remember("Use pnpm, not npm", Scope::Project, "tooling", FactSource::Explicit, None).unwrap();
    let path = store.root().join("facts.jsonl");
    // A crash on a full disk cut the next record inside "é" (0xC3 0xA9).
    let mut log = std::fs::read(&path).unwrap();
    let intact = log.clone();
    log.extend_from_slice(b"{\"type\":\"fact\",\"v\":1,\"text\":\"caf\xC3");
    std::fs::write(&path, &log).unwrap();
    // A middle line that is not UTF-8 is skipped and listed, not fatal.
    let mut middle = b"{\"note\":\"\xFF\"}\n".to_vec();
    middle.extend_from_slice(&log);
    std::fs::write(&path, &middle).unwrap();
    let lines = store.fact_lines().unwrap();
    let skipped: Vec<usize> = lines.skipped.iter().map(|s| s.line).collect();
    assert_eq!(skipped, [1, 3], "{:?}", lines.skipped);
    assert_eq!(active_texts(&store), ["Use pnpm, not npm"]);
    store.remember("Prefers small commits", Scope::User, "preference", FactSource::Explicit, None).unwrap();
    let after = std::fs::read(&path).unwrap();
    assert!(after.starts_with(&[b"{\"note\":\"\xFF\"}\n".as_slice(), &intact].concat()));
    assert!(!after.windows(4).any(|w| w == b"caf\xC3"), "the torn line is cut off");
    assert_eq!(active_texts(&store), ["Use pnpm, not npm", "Prefers small commits"]);
}

static CLOCK: std::sync::atomic::AtomicI64 = std::sync::atomic::AtomicI64::new(NOW);

fn moving_clock() -> i64 {
    CLOCK.load(std::sync::atomic::Ordering::SeqCst)
}

fn log_lines(store: &Store) -> usize {
    std::fs::read(store.root().join("facts.jsonl"))
        .unwrap()
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .count()
}

#[test]
fn the_fact_log_is_compacted_at_twice_the_active_maximum() {
    let (_dir, store) = store();
    let store = store.with_clock(moving_clock).with_sync(false);
    let remember = |text: &str| {
        store
            .remember(text, Scope::Project, "tooling", FactSource::Explicit, Some("ses_1"))
            .unwrap()
            .id()
            .to_owned()
    };
    let pnpm = remember("Use pnpm, not npm");
    let _tabs = remember("Indent with tabs");
    let old = remember("The CI runs on Jenkins");
    store.forget(&old, None).unwrap();
    let recent = remember("Deploys go through Argo");
    // Ninety-one days later: `old` was retired long ago, `recent` just now.
    CLOCK.store(NOW + 91 * 86_400_000, std::sync::atomic::Ordering::SeqCst);
    store.forget(&recent, None).unwrap();
    let before: Vec<(String, bool, Option<String>)> = store
        .facts()
        .unwrap()
        .into_iter()
        .filter(|f| f.record.id != old)
        .map(|f| (f.record.id, f.record.status == Status::Active, f.reason))
        .collect();
    // Churn: the log grows by a status line per change, its state does not.
    let mut most = 0;
    for i in 0..2 * MAX_ACTIVE_FACTS {
        let status = if i % 2 == 0 { Status::Inactive } else { Status::Active };
        store.set_fact_status(&pnpm, status, "churn", None).unwrap();
        most = most.max(log_lines(&store));
    }
    assert!(most <= 2 * MAX_ACTIVE_FACTS, "the log reached {most} lines");
    let after: Vec<(String, bool, Option<String>)> = store
        .facts()
        .unwrap()
        .into_iter()
        .map(|f| (f.record.id, f.record.status == Status::Active, f.reason))
        .collect();
    assert_eq!(after, before, "compaction keeps every current state, and drops facts retired > 90 days ago");
    assert!(log_lines(&store) < 50, "{}", log_lines(&store));
}

#[test]
fn every_stored_field_is_redacted() {
    let key = format!("AKIA{}", "Q".repeat(16));
    let (_dir, store) = store();
    store.remember("Use pnpm, not npm", Scope::Project, &key, FactSource::Explicit, Some(&key)).unwrap();
    store.set_handoff(&format!(r#"{{"goal":"ship","sessionID":"{key}"}}"#), None).unwrap();
    let handoff = store.set_handoff(r#"{"goal":"ship"}"#, Some(&key)).unwrap();
    assert!(!handoff.session_id.unwrap().contains(&key));
    store.record_tool_outcome(&format!("tool-{key}"), Outcome::Error, None, Some(&key)).unwrap();
    let err = store.forget(&format!("the {key} thing"), Some("ses_1")).unwrap_err();
    assert!(!err.to_string().contains(&key), "{err}");
    let err = store.set_fact_status(&key, Status::Inactive, "x", None).unwrap_err();
    assert!(!err.to_string().contains(&key), "{err}");
    for entry in std::fs::read_dir(store.root()).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains(&key), "{}: {text}", path.display());
    }
}

#[test]
fn labels_and_sessions_are_bounded() {
    let (_dir, store) = store();
    let long = "c".repeat(MAX_CATEGORY_CHARS + 1);
    let err = store.remember("Use pnpm", Scope::Project, &long, FactSource::Explicit, None).unwrap_err();
    assert!(err.to_string().contains("category is at most 64"), "{err}");
    let long = "s".repeat(MAX_SESSION_CHARS + 1);
    let err =
        store.remember("Use pnpm", Scope::Project, "other", FactSource::Explicit, Some(&long)).unwrap_err();
    assert!(err.to_string().contains("session id is at most 256"), "{err}");
    assert!(!store.root().join("facts.jsonl").exists());
}
