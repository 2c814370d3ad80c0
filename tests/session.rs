//! Sessions recorded from the opencode 1.18.33 binary (`tests/session/<case>/`, recorded by
//! `tests/oracle/record-session.sh`): ctxgraph replays every prefix of each session and
//! must reach opencode's decisions and bytes.
//!
//! - every compaction: the conversation sent to the summarizer, byte for byte, its
//!   `tail_start_id` and the summary it anchors to;
//! - every finished step: whether it overflowed (a compaction followed it or not);
//! - every first request after a compaction: the whole `messages` array after the system
//!   message;
//! - every run's end, pruning on or off: the parts marked (or none);
//! - every read: the reminder appended to its output and its `metadata.loaded`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ctxgraph_db::Workspace;
use ctxgraph_engine::{Engine, HostEnv, OsSystem};
use ctxgraph_opencode::config::schema::Compaction;
use ctxgraph_opencode::nearby::ReadKind;
use ctxgraph_opencode::session::Session;
use ctxgraph_opencode::session::compaction::{ModelLimit, PlanParams};
use ctxgraph_opencode::session::convert::TargetModel;
use ctxgraph_opencode::session::export::{
    Export, ExportMessage, PartKind, Role, ToolInput, ToolStatus, parse_export,
};
use ctxgraph_opencode::session::reads::ReadPoint;
use serde::Deserialize;
use serde_json::Value;

#[derive(Debug, Deserialize)]
struct Case {
    proj: String,
    limit: Value,
    compaction: Value,
    #[serde(default)]
    files: std::collections::BTreeMap<String, String>,
}

struct Fixture {
    name: String,
    dir: PathBuf,
    case: Case,
    /// With `<PROJ>` replaced by the raw fixture path, as opencode had it.
    export: Export,
}

impl Fixture {
    fn read(&self, name: &str) -> Option<String> {
        std::fs::read_to_string(self.dir.join(name)).ok()
    }

    fn params(&self) -> PlanParams {
        let field = |name: &str| self.case.limit.get(name).and_then(Value::as_u64);
        PlanParams {
            limit: ModelLimit {
                context: field("context").unwrap_or(0),
                input: field("input"),
                output: field("output").unwrap_or(0),
            },
            compaction: Compaction::from_value(Some(&self.case.compaction)),
            target: TargetModel { provider_id: "fake".into(), model_id: "fake-model".into() },
        }
    }

    fn normalise(&self, text: &str) -> String {
        text.replace(&self.case.proj, "<PROJ>")
    }

    fn messages(&self) -> &[ExportMessage] {
        &self.export.messages
    }
}

fn fixtures() -> Vec<Fixture> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("session");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("tests/session")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.join("case.json").is_file())
        .collect();
    dirs.sort();
    assert!(!dirs.is_empty(), "no session fixtures in {}", root.display());
    dirs.into_iter()
        .map(|dir| {
            let case: Case =
                serde_json::from_str(&std::fs::read_to_string(dir.join("case.json")).expect("case.json"))
                    .expect("case.json");
            let text = std::fs::read_to_string(dir.join("export.json")).expect("export.json");
            // The export is normalised JSON; the raw path needs no escaping.
            let export = parse_export(text.replace("<PROJ>", &case.proj).as_bytes()).expect("export parses");
            let name = dir.file_name().expect("name").to_string_lossy().into_owned();
            Fixture { name, dir, case, export }
        })
        .collect()
}

/// An engine with nothing on disk but the case's files (the read tests), isolated like
/// the recorder's opencode.
fn engine_for(fixture: &Fixture) -> (Engine, Workspace, tempfile::TempDir, String) {
    let run = tempfile::tempdir().expect("tempdir");
    let run_dir = run.path().canonicalize().expect("canonical");
    let proj = run_dir.join("proj");
    std::fs::create_dir_all(&proj).expect("proj");
    for dir in ["home", "config", "data", "cache", "state", "managed"] {
        std::fs::create_dir_all(run_dir.join(dir)).expect("run dirs");
    }
    // The recorder passed the case's `compaction` block in the config.
    let config = serde_json::json!({ "compaction": fixture.case.compaction });
    std::fs::write(proj.join("opencode.json"), config.to_string()).expect("config");
    for (rel, content) in &fixture.case.files {
        let path = proj.join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("dirs");
        std::fs::write(path, content).expect("write");
    }
    let vars = ctxgraph_tests::oracle_vars(&run_dir);
    let env = HostEnv {
        vars,
        home: run_dir.join("home"),
        platform: "linux".into(),
        date: "Sun Nov 29 2026".into(),
    };
    let mut engine = Engine::new(Arc::new(OsSystem), env);
    let ws = engine.open(&proj).expect("workspace");
    let proj = proj.to_string_lossy().into_owned();
    (engine, ws, run, proj)
}

/// The session made of the first `n` messages of the export, as opencode had it then: a
/// compaction marker at the end is still unprocessed (its `tail_start_id` is written after,
/// K7.3).
fn prefix(engine: &mut Engine, fixture: &Fixture, n: usize) -> Session {
    let mut messages = fixture.messages()[..n].to_vec();
    if let Some(last) = messages.last_mut().filter(|m| compaction_marker(m).is_some()) {
        for part in last.parts.iter_mut().filter(|p| p.kind() == PartKind::Compaction) {
            part.tail_start_id = None;
        }
    }
    engine.open_session(Export { info: fixture.export.info.clone(), messages })
}

fn bare_engine() -> Engine {
    let env = HostEnv {
        vars: std::collections::BTreeMap::default(),
        home: PathBuf::from("/nonexistent"),
        platform: "linux".into(),
        date: "Sun Nov 29 2026".into(),
    };
    Engine::new(Arc::new(ctxgraph_db::system::MemorySystem::default()), env)
}

fn compaction_marker(message: &ExportMessage) -> Option<&ctxgraph_opencode::session::export::Part> {
    (message.info.role == Role::User).then_some(())?;
    message.parts.iter().find(|p| p.kind() == PartKind::Compaction)
}

#[test]
fn compaction_requests_match_the_recordings() {
    let mut checked = 0;
    for fixture in fixtures() {
        let mut engine = bare_engine();
        let markers: Vec<usize> = (0..fixture.messages().len())
            .filter(|&i| compaction_marker(&fixture.messages()[i]).is_some())
            .collect();
        for (k, &at) in markers.iter().enumerate() {
            let n = k + 1;
            let Some(expected) = fixture.read(&format!("compaction-{n}.txt")) else { continue };
            let session = prefix(&mut engine, &fixture, at + 1);
            let plan = engine.compaction_plan(session, fixture.params());
            let name = &fixture.name;
            assert_eq!(
                fixture.normalise(&plan.conversation),
                expected,
                "{name}: conversation of compaction {n}"
            );
            let marker = compaction_marker(&fixture.messages()[at]).expect("marker");
            assert_eq!(plan.tail_start_id, marker.tail_start_id, "{name}: tail_start_id of compaction {n}");
            // No recorded tail: no turn is kept, whatever fits.
            let kept = plan.turns.iter().any(|t| t.kept);
            assert_eq!(kept, marker.tail_start_id.is_some(), "{name}: turns kept at compaction {n}");
            let prior = fixture.read(&format!("prior-summary-{n}.txt"));
            assert_eq!(plan.previous_summary, prior, "{name}: summary compaction {n} anchors to");
            checked += 1;
        }
    }
    assert!(checked >= 6, "only {checked} compactions checked");
}

#[test]
fn overflow_is_decided_at_every_finished_step() {
    let mut checked = 0;
    for fixture in fixtures() {
        let mut engine = bare_engine();
        let messages = fixture.messages();
        for (i, message) in messages.iter().enumerate() {
            let info = &message.info;
            if info.role != Role::Assistant || info.finish.is_none() || info.is_summary() {
                continue;
            }
            // opencode compacted after this step iff an automatic marker comes next.
            let followed =
                messages.get(i + 1).and_then(compaction_marker).is_some_and(|p| p.auto == Some(true));
            let session = prefix(&mut engine, &fixture, i + 1);
            let plan = engine.compaction_plan(session, fixture.params());
            assert_eq!(plan.overflow, followed, "{}: overflow after {}", fixture.name, info.id);
            checked += 1;
        }
    }
    assert!(checked >= 20, "only {checked} steps checked");
}

#[test]
fn next_requests_match_the_recordings() {
    let mut checked = 0;
    for fixture in fixtures() {
        let mut engine = bare_engine();
        let messages = fixture.messages();
        let summaries: Vec<usize> =
            (0..messages.len()).filter(|&i| messages[i].info.is_completed_summary()).collect();
        for (k, &at) in summaries.iter().enumerate() {
            let n = k + 1;
            let Some(expected) = fixture.read(&format!("next-{n}.json")) else { continue };
            let expected: Value = serde_json::from_str(&expected).expect("next json");
            // The first normal request follows the message after the summary (the
            // synthetic continue message, or the next prompt).
            let session = prefix(&mut engine, &fixture, at + 2);
            let actual = engine.next_messages(session).expect("messages");
            let actual: Value =
                serde_json::from_str(&fixture.normalise(&Value::from(actual).to_string())).expect("json");
            assert_eq!(
                serde_json::to_string_pretty(&actual).expect("json"),
                serde_json::to_string_pretty(&expected).expect("json"),
                "{}: request after compaction {n}",
                fixture.name
            );
            checked += 1;
        }
    }
    assert!(checked >= 6, "only {checked} requests checked");
}

#[test]
fn pruning_marks_what_opencode_marked() {
    let mut checked = 0;
    // Every case: with pruning off (s16 would prune with it on) nothing is marked.
    for fixture in fixtures() {
        let mut engine = bare_engine();
        let mut export = fixture.export.clone();
        // What opencode marked, then the session as it was before any marking.
        let mut marked = BTreeSet::new();
        for message in &mut export.messages {
            for part in &mut message.parts {
                if let Some(state) = part.state.as_mut().filter(|s| s.is_compacted()) {
                    marked.insert(part.id.clone());
                    state.time = None;
                }
            }
        }
        // Pruning runs when a run's loop exits: after each step that finished with `stop`.
        let mut first_marks = None;
        for (i, message) in export.messages.iter().enumerate() {
            if message.info.role != Role::Assistant || message.info.finish.as_deref() != Some("stop") {
                continue;
            }
            let session = engine
                .open_session(Export { info: export.info.clone(), messages: export.messages[..=i].to_vec() });
            let plan = engine.compaction_plan(session, fixture.params());
            if !plan.pruned.is_empty() {
                first_marks = Some(plan.pruned.iter().cloned().collect::<BTreeSet<_>>());
                break;
            }
            checked += 1;
        }
        assert_eq!(first_marks.unwrap_or_default(), marked, "{}: parts pruned", fixture.name);
    }
    assert!(checked >= 20, "only {checked} run ends checked");
}

#[test]
fn reads_attach_what_opencode_attached() {
    use ctxgraph_opencode::session::reads::RuleState;

    let mut checked = 0;
    let mut raced = 0;
    for fixture in fixtures().into_iter().filter(|f| !f.case.files.is_empty()) {
        let (mut engine, ws, _run, proj) = engine_for(&fixture);
        let text = std::fs::read_to_string(fixture.dir.join("export.json")).expect("export");
        let export = parse_export(text.replace("<PROJ>", &proj).as_bytes()).expect("export");
        let session = engine.open_session(export.clone());
        for message in &export.messages {
            for part in &message.parts {
                if part.tool.as_deref() != Some("read") {
                    continue;
                }
                let Some(state) = &part.state else { continue };
                let input: Value = state.input.as_ref().and_then(ToolInput::fields).expect("input");
                let file = input.get("filePath").and_then(Value::as_str).expect("filePath");
                let point = ReadPoint::InMessage {
                    message: message.info.id.clone(),
                    before_part: Some(part.id.clone()),
                };
                let read = engine.nearby_in_session(ws, session, Path::new(file), &point).expect("nearby");
                let what = format!("{}: {} in {}", fixture.name, file, message.info.id);
                match state.status {
                    ToolStatus::Completed => {
                        // What the export records wins: the read reports it.
                        let output = state.output();
                        let reminder = output.split_once("</content>\n\n").map(|(_, r)| r.to_owned());
                        assert_eq!(read.reminder, reminder, "{what}: reminder");
                        let loaded: Vec<PathBuf> = state.loaded().map(PathBuf::from).collect();
                        assert_eq!(read.loaded, loaded, "{what}: metadata.loaded");
                        // ctxgraph's model: the same, or opencode's race naming the read that
                        // got the rule in this recording.
                        for rule in &read.rules {
                            let model = rule.computed.as_ref().unwrap_or(&rule.state);
                            let model_loads =
                                matches!(model, RuleState::Attached | RuleState::LoadedNotShown);
                            if let Some(race) = &rule.race {
                                let holder = message.parts.iter().find(|p| {
                                    p.completed_tool()
                                        .is_some_and(|s| s.loaded().any(|l| Path::new(l) == rule.path))
                                });
                                if let Some(holder) = holder {
                                    let named =
                                        race.iter().any(|h| h.part.as_deref() == Some(holder.id.as_str()));
                                    assert!(
                                        named,
                                        "{what}: {}: the race omits {}",
                                        rule.path.display(),
                                        holder.id
                                    );
                                }
                                raced += 1;
                            } else {
                                assert_eq!(
                                    model_loads,
                                    loaded.contains(&rule.path),
                                    "{what}: {}: the model says {model:?} and names no race",
                                    rule.path.display()
                                );
                                assert!(rule.computed.is_none(), "{what}: {}", rule.path.display());
                            }
                        }
                    }
                    ToolStatus::Error => {
                        assert!(
                            state.error.as_deref().unwrap_or("").starts_with("Cannot read binary file"),
                            "{what}"
                        );
                        assert_eq!(read.kind, ReadKind::Binary, "{what}");
                        assert_eq!(read.reminder, None, "{what}");
                    }
                    _ => continue,
                }
                checked += 1;
            }
        }
    }
    assert!(checked >= 12, "only {checked} reads checked");
    assert!(raced >= 4, "only {raced} rules marked as opencode's race");
}

/// The mid-step question (`nearby FILE --session EXPORT --message M`): s18's first step
/// with its reads before FILE completed as recorded and FILE's and the later reads in
/// flight (`running`, no output), as an opencode host sees it. A completed read's record
/// is a claim already made; reads still in flight race FILE (N4.1).
#[test]
fn mid_step_reads_race_the_ones_in_flight() {
    use ctxgraph_opencode::session::reads::RuleState;

    let fixture = fixtures().into_iter().find(|f| f.name == "s18_parallel_claims").expect("fixture");
    let (mut engine, ws, _run, proj) = engine_for(&fixture);
    let text = std::fs::read_to_string(fixture.dir.join("export.json")).expect("export");
    let mut export: Value = serde_json::from_str(&text.replace("<PROJ>", &proj)).expect("json");
    // The first step (frame.rs, ffi.rs, bw.rs) is the first message with read calls.
    let at = export["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .position(|m| m["parts"].as_array().is_some_and(|p| p.iter().any(|p| p["tool"] == "read")))
        .expect("a step with reads");
    export["messages"].as_array_mut().expect("messages").truncate(at + 1);
    let id = export["messages"][at]["info"]["id"].as_str().expect("id").to_owned();
    let reads: Vec<(String, String)> = export["messages"][at]["parts"]
        .as_array()
        .expect("parts")
        .iter()
        .filter(|p| p["tool"] == "read")
        .map(|p| {
            (
                p["id"].as_str().expect("id").to_owned(),
                p["state"]["input"]["filePath"].as_str().expect("path").to_owned(),
            )
        })
        .collect();
    let (frame, ffi) = (&reads[0], &reads[1]);
    let running = |export: &mut Value, from: usize| {
        for part in export["messages"][at]["parts"].as_array_mut().expect("parts") {
            if reads[from..].iter().any(|(id, _)| part["id"] == id.as_str()) {
                let input = part["state"]["input"].clone();
                part["state"] =
                    serde_json::json!({"status": "running", "input": input, "time": {"start": 1}});
            }
        }
    };
    let ask = |engine: &mut Engine, export: &Value| {
        let session = engine.open_session(parse_export(export.to_string().as_bytes()).expect("export"));
        let point = ReadPoint::InMessage { message: id.clone(), before_part: None };
        engine.nearby_in_session(ws, session, Path::new(&ffi.1), &point).expect("nearby")
    };
    let rule = |read: &ctxgraph_opencode::session::reads::SessionNearby, dir: &str| {
        read.rules
            .iter()
            .find(|r| r.path == Path::new(&proj).join(dir).join("AGENTS.md"))
            .expect("rule")
            .clone()
    };
    let frame_claimed = RuleState::Claimed { by_part: frame.0.clone() };

    // frame.rs done, as recorded: what it loaded is claimed, nothing left to race for.
    let mut done = export.clone();
    running(&mut done, 1);
    let read = ask(&mut engine, &done);
    let recorded: Vec<String> = fixture.messages()[at]
        .parts
        .iter()
        .find(|p| p.id == frame.0)
        .and_then(|p| p.completed_tool())
        .map(|s| s.loaded().map(|l| l.replace(&fixture.case.proj, &proj)).collect())
        .expect("frame.rs completed");
    assert!(!recorded.is_empty(), "frame.rs loaded something");
    for dir in ["q/src/h3", "q"] {
        let rule = rule(&read, dir);
        if recorded.iter().any(|l| Path::new(l) == rule.path) {
            assert_eq!(rule.state, frame_claimed, "{dir}");
            assert_eq!(rule.race, None, "{dir}: a completed read's claims are made");
        } else {
            assert!(!matches!(rule.state, RuleState::Claimed { .. }), "{dir}: {:?}", rule.state);
        }
    }

    // All three in flight: both rules are opencode's race; the model's picks are frame.rs
    // for h3/AGENTS.md (listed first) and ffi.rs for q/AGENTS.md.
    let mut all = export.clone();
    running(&mut all, 0);
    let read = ask(&mut engine, &all);
    let h3 = rule(&read, "q/src/h3");
    assert_eq!(h3.state, frame_claimed);
    assert!(h3.race.as_ref().is_some_and(|r| r.len() == 2), "{h3:?}");
    let q = rule(&read, "q");
    assert_eq!(q.state, RuleState::Attached, "the model's pick: ffi.rs skipped h3 without a file read");
    let holders: Vec<Option<&str>> =
        q.race.as_ref().expect("a race").iter().map(|h| h.part.as_deref()).collect();
    assert!(
        holders.contains(&Some(frame.0.as_str())) && holders.contains(&Some(ffi.0.as_str())),
        "{holders:?}"
    );
}

#[test]
fn appending_a_message_recomputes_only_the_new_message_and_the_session_queries() {
    let fixture =
        fixtures().into_iter().find(|f| f.name == "s12_second_compaction_unicode").expect("fixture");
    let mut engine = bare_engine();
    let n = fixture.messages().len();
    let session = prefix(&mut engine, &fixture, n - 1);
    engine.compaction_plan(session, fixture.params());
    engine.next_messages(session).expect("messages");
    let before = engine.db().executions().totals();
    engine.append_message(session, fixture.messages()[n - 1].clone());
    engine.compaction_plan(session, fixture.params());
    engine.next_messages(session).expect("messages");
    let after = engine.db().executions().totals();
    let ran = |query: &str| after.get(query).copied().unwrap_or(0) - before.get(query).copied().unwrap_or(0);
    // Per-message queries: the appended message only.
    assert_eq!(ran("model_messages"), 1);
    assert_eq!(ran("model_json_len"), 1);
    assert!(ran("summary_entry") <= 1);
    // Session queries: once each.
    assert_eq!(ran("filtered_history"), 1);
    assert_eq!(ran("compaction_plan"), 1);
    assert_eq!(ran("next_call_messages"), 1);
    // Re-adding the same message (a streamed update with nothing new) changes nothing.
    let total = engine.db().executions().total();
    engine.append_message(session, fixture.messages()[n - 1].clone());
    engine.compaction_plan(session, fixture.params());
    assert_eq!(engine.db().executions().total(), total);
}

#[test]
fn the_history_grown_message_by_message_is_k10_of_every_prefix() {
    use ctxgraph_opencode::session::history::{GrowingHistory, filter_compacted};
    let mut compactions = 0;
    for fixture in fixtures() {
        let mut engine = bare_engine();
        let session = engine.open_session(fixture.export.clone());
        let db = engine.db();
        let messages = session.messages(db);
        let mut grown = GrowingHistory::new(messages);
        for n in 0..=messages.len() {
            let expected = filter_compacted(db, &messages[..n]);
            assert_eq!(grown.history(), expected, "{}: the first {n} messages", fixture.name);
            for message in messages {
                assert_eq!(grown.contains_id(message.id(db)), expected.contains(message), "{}", fixture.name);
            }
            grown.grow(db);
        }
        compactions += usize::from(messages.iter().any(|m| m.info(db).is_completed_summary()));
    }
    assert!(compactions >= 3, "the fixtures cut the history {compactions} times");
}

fn overrides(fixture: &Fixture) -> ctxgraph_engine::LimitOverrides {
    let params = fixture.params();
    ctxgraph_engine::LimitOverrides {
        context: Some(params.limit.context),
        input: params.limit.input,
        output: Some(params.limit.output),
    }
}

/// The recorded read parts of a session: (message index, part id, status, loaded, pruned,
/// output).
struct RecordedRead {
    at: usize,
    part: String,
    failed: bool,
    loaded: Vec<PathBuf>,
    pruned: bool,
    output: String,
}

fn recorded_reads(export: &Export) -> Vec<RecordedRead> {
    let mut reads = Vec::new();
    for (at, message) in export.messages.iter().enumerate() {
        for part in message.parts.iter().filter(|p| p.tool.as_deref() == Some("read")) {
            let Some(state) = &part.state else { continue };
            if !matches!(state.status, ToolStatus::Completed | ToolStatus::Error) {
                continue;
            }
            reads.push(RecordedRead {
                at,
                part: part.id.clone(),
                failed: state.status == ToolStatus::Error,
                loaded: state.loaded().map(PathBuf::from).collect(),
                pruned: state.is_compacted(),
                output: state.output().to_owned(),
            });
        }
    }
    reads
}

#[test]
fn explain_traces_every_read_to_what_opencode_recorded() {
    use ctxgraph_opencode::explain::Lapse;
    use ctxgraph_opencode::session::reads::RuleState;

    let mut seen: BTreeSet<&str> = BTreeSet::new();
    let mut checked = 0;
    for fixture in fixtures().into_iter().filter(|f| !f.case.files.is_empty()) {
        let (mut engine, ws, _run, proj) = engine_for(&fixture);
        let text = std::fs::read_to_string(fixture.dir.join("export.json")).expect("export");
        let export = parse_export(text.replace("<PROJ>", &proj).as_bytes()).expect("export");
        let recorded = recorded_reads(&export);
        let session = engine.open_session(export.clone());
        let answer = engine.explain_session(ws, session, overrides(&fixture), None, None).expect("explain");
        assert_eq!(answer.reads.len(), recorded.len(), "{}: reads", fixture.name);
        let recorded_read = |id: &str| recorded.iter().find(|r| r.part == id).expect("a recorded read");
        let summaries: Vec<usize> =
            (0..export.messages.len()).filter(|&i| export.messages[i].info.is_completed_summary()).collect();
        for (read, rec) in answer.reads.iter().zip(&recorded) {
            let what = format!("{}: {}", fixture.name, rec.part);
            assert_eq!(read.part.as_deref(), Some(rec.part.as_str()), "{what}");
            let attached: Vec<PathBuf> = read
                .rules
                .iter()
                .filter(|r| matches!(r.found.state, RuleState::Attached | RuleState::LoadedNotShown))
                .map(|r| r.found.path.clone())
                .collect();
            if rec.failed {
                // N6: the recording has no `loaded`; the rules were claimed, then lost.
                assert_eq!(read.kind, ReadKind::Binary, "{what}");
                assert!(read.rules.iter().all(|r| !r.shown), "{what}");
            } else {
                assert_eq!(attached, rec.loaded, "{what}: attached = recorded metadata.loaded");
            }
            for rule in &read.rules {
                let what = format!("{what}: {}", rule.found.path.display());
                let in_reminder =
                    rec.output.contains(&format!("Instructions from: {}\n", rule.found.path.display()));
                assert_eq!(rule.shown, in_reminder, "{what}: shown");
                match &rule.found.state {
                    RuleState::Claimed { by_part } => {
                        let by = recorded_read(by_part);
                        assert_eq!(by.at, rec.at, "{what}: claimed in the same message");
                        assert!(by.loaded.contains(&rule.found.path), "{what}: the claiming read loaded it");
                        seen.insert("claimed");
                    }
                    RuleState::AlreadyLoaded { by_part } => {
                        let by = recorded_read(by_part);
                        assert!(
                            by.at < rec.at && by.loaded.contains(&rule.found.path) && !by.pruned,
                            "{what}"
                        );
                        seen.insert("already loaded");
                    }
                    RuleState::LoadedNotShown => {
                        assert!(matches!(read.kind, ReadKind::Image | ReadKind::Pdf), "{what}");
                        seen.insert("loaded, not shown");
                    }
                    RuleState::ReadFails => {
                        assert!(rec.failed, "{what}: the recorded read failed");
                        seen.insert("claimed, the read fails");
                    }
                    // N5: attached means shown: in the recorded reminder and metadata.loaded.
                    RuleState::Attached => {
                        assert!(rule.shown && !rec.failed && read.kind == ReadKind::Text, "{what}");
                    }
                    _ => {}
                }
                if let Some(earlier) = &rule.earlier {
                    let by = recorded_read(&earlier.part);
                    assert!(by.at < rec.at, "{what}: earlier");
                    match &earlier.lapse {
                        Lapse::Failed => assert!(by.failed, "{what}: the earlier read failed"),
                        Lapse::Pruned => assert!(by.pruned, "{what}: the earlier read was pruned"),
                        Lapse::CompactedAway { .. } => assert!(
                            by.loaded.contains(&rule.found.path)
                                && summaries.iter().any(|&s| by.at < s && s < rec.at),
                            "{what}: a compaction between the two reads"
                        ),
                        Lapse::UserAttached => {}
                    }
                    seen.insert(match earlier.lapse {
                        Lapse::Failed => "again after a failed read",
                        Lapse::Pruned => "again after pruning",
                        Lapse::CompactedAway { .. } => "again after a compaction",
                        Lapse::UserAttached => "user attached",
                    });
                }
                checked += 1;
            }
        }
    }
    let expected = [
        "again after a compaction",
        "again after a failed read",
        "already loaded",
        "claimed",
        "claimed, the read fails",
        "loaded, not shown",
    ];
    assert_eq!(seen, expected.into_iter().collect(), "verdicts covered by the recordings");
    assert!(checked >= 12, "only {checked} rules checked");
}

#[test]
fn explain_says_what_each_compaction_summarised_and_kept() {
    use ctxgraph_opencode::explain::{Compacts, Fate};

    let mut checked = 0;
    for fixture in fixtures() {
        let (mut engine, ws, _run, _) = engine_for(&fixture);
        let session = engine.open_session(fixture.export.clone());
        let messages = fixture.messages();
        let user_text = |i: usize| -> Option<String> {
            let m = &messages[i];
            (m.info.role == Role::User).then_some(())?;
            let text: Vec<&str> = m
                .parts
                .iter()
                .filter(|p| p.kind() == PartKind::Text && p.synthetic != Some(true))
                .map(ctxgraph_opencode::session::export::Part::text)
                .collect();
            (!text.is_empty()).then(|| text.join("\n"))
        };
        let markers: Vec<usize> =
            (0..messages.len()).filter(|&i| compaction_marker(&messages[i]).is_some()).collect();
        for (k, &at) in markers.iter().enumerate() {
            let n = k + 1;
            let name = &fixture.name;
            let marker = compaction_marker(&messages[at]).expect("marker");
            let id = &messages[at].info.id;
            let answer =
                engine.explain_session(ws, session, overrides(&fixture), Some(id), None).expect("explain");
            assert_eq!(
                answer.next_step.compacts,
                Compacts::Pending { marker: id.clone(), auto: marker.auto == Some(true) },
                "{name}: compaction {n}"
            );
            assert_eq!(
                answer.next_step.tail_start_id, marker.tail_start_id,
                "{name}: tail of compaction {n}"
            );
            let Some(conversation) = fixture.read(&format!("compaction-{n}.txt")) else { continue };
            let tail_at = marker
                .tail_start_id
                .as_ref()
                .map(|t| messages.iter().position(|m| &m.info.id == t).expect("tail"));
            for (i, fate) in answer.history.iter().enumerate() {
                let what = format!("{name}: compaction {n}, {}", fate.id);
                // Recorded: what the summarizer was shown, and where opencode put the tail.
                if let Some(text) = user_text(i) {
                    let shown = conversation.contains(&format!("[User]: {text}"));
                    assert_eq!(matches!(fate.fate, Fate::Summarised { .. }), shown, "{what}: summarised");
                }
                // Earlier compaction pairs inside the tail's range are not part of it (K7.2).
                let pair =
                    compaction_marker(&messages[i]).is_some() || messages[i].info.is_completed_summary();
                let in_tail = tail_at.is_some_and(|t| i >= t && i < at) && !pair;
                if in_tail {
                    assert!(matches!(fate.fate, Fate::Tail { .. }), "{what}: in the recorded tail");
                }
                checked += 1;
            }
            // The first request after it: which earlier messages it still carried.
            let Some(next) = fixture.read(&format!("next-{n}.json")) else { continue };
            let after = messages
                .iter()
                .position(|m| m.info.is_completed_summary() && m.info.parent_id.as_ref() == Some(id));
            let Some(summary) = after else { continue };
            let next_id = &messages[summary + 1].info.id;
            let answer = engine
                .explain_session(ws, session, overrides(&fixture), Some(next_id), None)
                .expect("explain");
            for (i, fate) in answer.history.iter().enumerate() {
                let Some(text) = user_text(i) else { continue };
                let sent = next.contains(&serde_json::to_string(&text).expect("json"));
                assert_eq!(fate.next_call, sent, "{name}: {} in the request after compaction {n}", fate.id);
                assert_eq!(matches!(fate.fate, Fate::Dropped { .. }), !sent, "{name}: {} dropped", fate.id);
                checked += 1;
            }
        }
    }
    assert!(checked >= 40, "only {checked} fates checked");
}

/// A synthetic message `i` of a long session: a prompt, a read, two replies, repeating.
fn synthetic(i: usize) -> ExportMessage {
    let id = format!("msg_{i:05}");
    let value = match i % 4 {
        0 => {
            serde_json::json!({"info": {"id": id, "role": "user", "model": {"providerID": "fake", "modelID": "fake-model"}},
                   "parts": [{"type": "text", "id": format!("prt_{i}"), "text": format!("prompt {i}")}]})
        }
        1 => {
            serde_json::json!({"info": {"id": id, "role": "assistant", "providerID": "fake", "modelID": "fake-model", "finish": "tool-calls", "tokens": {"total": 1000}},
                   "parts": [{"type": "step-start", "id": format!("prt_{i}a")},
                             {"type": "tool", "id": format!("prt_{i}b"), "tool": "read", "callID": format!("call_{i}"),
                              "state": {"status": "completed", "input": {"filePath": format!("/p/f{i}.txt")}, "output": "x".repeat(2000), "metadata": {"loaded": []}, "time": {}}}]})
        }
        _ => {
            serde_json::json!({"info": {"id": id, "role": "assistant", "providerID": "fake", "modelID": "fake-model", "finish": "stop", "tokens": {"total": 1000}},
                   "parts": [{"type": "text", "id": format!("prt_{i}b"), "text": format!("reply {i} ").repeat(20)}]})
        }
    };
    serde_json::from_value(value).expect("synthetic message")
}

#[test]
fn appending_to_a_long_session_rereads_only_its_last_run() {
    use ctxgraph_opencode::session::runs::RUN_LEN;

    let mut engine = bare_engine();
    let n = 10 * RUN_LEN + 7;
    let info = ctxgraph_opencode::session::export::SessionInfo { id: "ses_long".into(), directory: None };
    let session = engine.open_session(Export { info, messages: (0..n).map(synthetic).collect() });
    let params = PlanParams {
        limit: ModelLimit { context: 200_000, input: None, output: 32_000 },
        compaction: Compaction { prune: Some(true), ..Compaction::default() },
        target: TargetModel { provider_id: "fake".into(), model_id: "fake-model".into() },
    };
    let cold = engine.compaction_plan(session, params.clone());
    assert!(!cold.pruned.is_empty() && cold.tail_start_id.is_some(), "the plan prunes and keeps a tail");
    let cold_head = cold.head.len();
    let before = engine.db().executions().totals();
    assert!(before.get("run_facts").copied().unwrap_or(0) >= 10, "the cold plan memoizes full runs");
    engine.append_message(session, synthetic(n));
    let warm = engine.compaction_plan(session, params.clone());
    let after = engine.db().executions().totals();
    let ran = |query: &str| after.get(query).copied().unwrap_or(0) - before.get(query).copied().unwrap_or(0);
    // The messages' facts: full runs from their memos, the last, partial run once.
    assert!(ran("run_facts") <= 1, "{}", ran("run_facts"));
    assert_eq!(ran("partial_run_facts"), 1);
    assert_eq!(ran("tool_outputs"), 1);
    assert_eq!(ran("model_json_len"), 1);
    // The head's text: full runs come from their memos, at most one new one and the
    // entries of the last partial run.
    assert!(ran("run_conversation") <= 1, "{}", ran("run_conversation"));
    assert!(ran("summary_entry") <= RUN_LEN as u64, "{}", ran("summary_entry"));
    // And the answer is the one a fresh engine gives.
    let mut fresh = bare_engine();
    let info = ctxgraph_opencode::session::export::SessionInfo { id: "ses_long".into(), directory: None };
    let session = fresh.open_session(Export { info, messages: (0..=n).map(synthetic).collect() });
    assert!(warm.head.len() >= cold_head);
    assert_eq!(warm, fresh.compaction_plan(session, params));
}

/// K8 sizes a turn of hundreds of steps from one memo per run of 64 messages, not one per
/// message: a session-level query that read one memo per message made every query after it
/// at its depth of salsa's stack clear a dependency set as large as the session (issue 24
/// D6: `explain --session` quadratic in its reads). An append re-reads the last run only.
#[test]
fn a_long_turn_is_sized_one_memo_per_run() {
    use ctxgraph_opencode::session::runs::RUN_LEN;

    // One prompt, then 10 runs and 7 messages more of the same turn.
    let step = |i: usize| synthetic(4 * i + 2);
    let n = 10 * RUN_LEN + 7;
    let messages: Vec<ExportMessage> = std::iter::once(synthetic(0)).chain((1..n).map(step)).collect();
    let info = ctxgraph_opencode::session::export::SessionInfo { id: "ses_turn".into(), directory: None };
    let params = PlanParams {
        limit: ModelLimit { context: 200_000, input: None, output: 32_000 },
        compaction: Compaction::default(),
        target: TargetModel { provider_id: "fake".into(), model_id: "fake-model".into() },
    };
    let mut engine = bare_engine();
    let session = engine.open_session(Export { info: info.clone(), messages: messages.clone() });
    let cold = engine.compaction_plan(session, params.clone()).clone();
    assert_eq!(cold.turns.len(), 1, "one turn");
    assert!(!cold.turns[0].fits, "the turn does not fit: K8 sized it whole, then split it");
    let before = engine.db().executions().totals();
    let ran = |after: &std::collections::BTreeMap<String, u64>, query: &str| {
        after.get(query).copied().unwrap_or(0) - before.get(query).copied().unwrap_or(0)
    };
    assert_eq!(before.get("run_json_lens").copied(), Some(10), "one memo per full run");
    engine.append_message(session, step(n));
    let warm = engine.compaction_plan(session, params.clone()).clone();
    let after = engine.db().executions().totals();
    assert!(ran(&after, "run_json_lens") <= 1, "{}", ran(&after, "run_json_lens"));
    assert_eq!(ran(&after, "model_json_len"), 1);
    let mut all = messages;
    all.push(step(n));
    let mut fresh = bare_engine();
    let session = fresh.open_session(Export { info, messages: all });
    assert_eq!(&warm, fresh.compaction_plan(session, params));
}
