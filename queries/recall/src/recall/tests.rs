//! Recall over a store in a [`MemorySystem`]: ranking order, the clamp at several budgets,
//! determinism.

use super::*;
use ctxgraph_db::db::Host;
use ctxgraph_db::system::MemorySystem;
use ctxgraph_db::testing::TestDb;

const DAY: i64 = 86_400_000;
/// "Now" in these tests: 2026-11-29T00:00Z.
const NOW: i64 = 20_786 * DAY;

fn fact(id: &str, text: &str, scope: &str, source: &str, updated: i64) -> String {
    format!(
        r#"{{"type":"fact","v":1,"id":"{id}","text":"{text}","scope":"{scope}","category":"other","source":"{source}","status":"active","hash":"h","createdAt":{updated},"updatedAt":{updated}}}"#
    )
}

fn forget(id: &str) -> String {
    format!(r#"{{"type":"status","v":1,"id":"{id}","status":"inactive","reason":"user-forget","at":{NOW}}}"#)
}

fn observation(id: &str, tool: &str, l0: &str, l1: &str, files: &[&str], age_days: i64) -> String {
    let files = serde_json::to_string(files).unwrap();
    format!(
        r#"{{"v":1,"id":"{id}","tool":"{tool}","outcome":"error","kind":"gotcha","l0":"{l0}","l1":"{l1}","files":{files},"keywords":[],"evidenceHash":"e{id}","textHash":"t{id}","createdAt":{}}}"#,
        NOW - age_days * DAY
    )
}

fn card(id: &str, session: &str, title: &str, summary: &str, age_days: i64) -> String {
    format!(
        r#"{{"v":1,"id":"{id}","sessionID":"{session}","title":"{title}","createdAt":0,"archivedAt":{},"goal":"","summary":"{summary}","outcome":"completed","files":["src/{session}.rs"]}}"#,
        NOW - age_days * DAY
    )
}

fn lines(records: &[String]) -> String {
    records.iter().fold(String::new(), |out, r| out + r + "\n")
}

/// A workspace at /w whose store holds every kind of record, with texts long enough that
/// small budgets must cut.
fn store() -> MemorySystem {
    let fs = MemorySystem::new();
    let root = "/w/.opencode/memory";
    fs.write_file(
        format!("{root}/facts.jsonl"),
        lines(&[
            fact("fct_01", "Use pnpm, not npm, in this repo", "project", "explicit", NOW - 40 * DAY),
            fact(
                "fct_02",
                "Prefers small commits with conventional-commit titles",
                "user",
                "explicit",
                NOW - 30 * DAY,
            ),
            fact(
                "fct_03",
                "The npm registry mirror is slow; pnpm uses a local store",
                "project",
                "compaction",
                NOW - DAY,
            ),
            fact(
                "fct_04",
                "Tests run with cargo nextest, never cargo test",
                "project",
                "explicit",
                NOW - 2 * DAY,
            ),
            fact("fct_05", "The user wants npm for everything", "user", "explicit", NOW - 90 * DAY),
            forget("fct_05"),
            fact(
                "fct_06",
                "CI runs on two cores; keep test suites under a minute",
                "project",
                "compaction",
                NOW - 5 * DAY,
            ),
        ]),
    );
    let long = "The suite's preload file is resolved relative to the working directory, so running it from the repository root loads nothing and every fixture is missing; change into the package first.";
    fs.write_file(
        format!("{root}/observations.jsonl"),
        lines(&[
            observation(
                "obs_01",
                "bash",
                "`pnpm test` must run from packages/app, not the root",
                long,
                &["packages/app/vitest.config.ts"],
                3,
            ),
            observation(
                "obs_02",
                "edit",
                "generated files under src/gen are overwritten by the build",
                long,
                &["src/gen/schema.rs"],
                10,
            ),
            observation("obs_03", "bash", "the docker daemon needs sudo on this machine", long, &[], 1),
            observation(
                "obs_04",
                "read",
                "config lives in config/app.toml, not .env",
                long,
                &["config/app.toml"],
                20,
            ),
        ]),
    );
    fs.write_file(
        format!("{root}/handoff.json"),
        format!(
            r#"{{"v":1,"sessionID":"ses_a","updatedAt":{},"source":"compaction","goal":"Move the build to pnpm workspaces","status":"in_progress","done":["{d}","{d}"],"inProgress":["converting packages/app"],"next":["convert packages/api","update CI"],"decisions":["{d}"],"files":["package.json","pnpm-workspace.yaml"],"constraints":["keep npm scripts working until CI moves"],"openQuestions":["{d}","{d}"]}}"#,
            NOW - DAY,
            d = "a fairly long sentence that describes one step of the work in enough detail to cost budget"
        ),
    );
    fs.write_file(
        format!("{root}/tool_stats.json"),
        format!(
            r#"{{"v":1,"updatedAt":{NOW},"tools":{{"edit":{{"calls":12,"errors":5,"consecutiveErrors":1,"recent":"sseseseesses","errorKinds":{{"not_found":5}}}},"bash":{{"calls":9,"errors":1,"consecutiveErrors":0,"recent":"sssssssse","errorKinds":{{"timeout":1}}}}}}}}"#
        ),
    );
    fs.write_file(
        format!("{root}/sessions.jsonl"),
        lines(&[
            card(
                "crd_01",
                "ses_x",
                "Switch to pnpm",
                "Replaced npm with pnpm in the root package and CI.",
                6,
            ),
            card("crd_02", "ses_y", "Fix flaky docker test", "The docker test needed a longer timeout.", 2),
            card(
                "crd_03",
                "ses_x",
                "Switch to pnpm workspaces",
                "Second archive of the same session: the latest card wins.",
                5,
            ),
        ]),
    );
    fs.create_dir_all("/w");
    fs
}

fn workspace(db: &TestDb) -> Workspace {
    let host = Host::new(db, BTreeMap::default(), "/home".into(), "linux".into(), "Sun Nov 29 2026".into());
    Workspace::new(db, host, "/w".into())
}

fn recall(query: &str, max_chars: usize) -> Recall {
    Recall { max_chars, ..Recall::new(query, NOW) }
}

fn ids(draft: &Draft) -> Vec<&str> {
    draft.items.iter().map(|i| i.id.as_str()).collect()
}

#[test]
fn day_start_is_midnight_utc() {
    assert_eq!(day_start_ms("Sun Nov 29 2026"), Some(NOW));
    assert_eq!(day_start_ms("Thu Jan 01 1970"), Some(0));
    assert_eq!(day_start_ms("Sun Foo 29 2026"), None);
}

#[test]
fn facts_rank_by_query_and_skip_forgotten_ones() {
    let db = TestDb::new(store());
    let ws = workspace(&db);
    let cases: &[(&str, &[&str])] = &[
        // fct_05 mentions npm too, but it was forgotten.
        ("npm", &["fct_01", "fct_03"]),
        ("pnpm store", &["fct_03", "fct_01"]),
        ("commit titles", &["fct_02"]),
        // No query: explicit facts first, newest first; then the others.
        ("", &["fct_04", "fct_02", "fct_01", "fct_03", "fct_06"]),
    ];
    for (query, expected) in cases {
        assert_eq!(ids(facts_block(&db, ws, recall(query, 9000))), *expected, "{query:?}");
    }
    let draft = facts_block(&db, ws, recall("npm", 9000));
    let forgotten = draft.cut.iter().find(|c| c.id == "fct_05").unwrap();
    assert_eq!(forgotten.reason, CutReason::Inactive { why: "user-forget".to_owned() });
}

#[test]
fn observations_rank_with_file_boost_and_detail_for_the_top_two() {
    let db = TestDb::new(store());
    let ws = workspace(&db);
    let draft = observations_block(&db, ws, recall("run the app tests from packages", 9000));
    assert_eq!(ids(draft)[0], "obs_01");
    let draft = observations_block(&db, ws, recall("docker", 9000));
    assert_eq!(ids(draft), ["obs_03"]);
    let draft = observations_block(&db, ws, recall("", 9000));
    assert_eq!(ids(draft), ["obs_03", "obs_01", "obs_02", "obs_04"]);
    assert!(draft.items[0].short.is_some() && draft.items[1].short.is_some());
    assert!(draft.items[2].short.is_none());
}

#[test]
fn sessions_keep_the_latest_card_per_session_and_skip_the_current_one() {
    let db = TestDb::new(store());
    let ws = workspace(&db);
    assert_eq!(ids(sessions_block(&db, ws, recall("pnpm", 9000))), ["crd_03"]);
    let current = Recall { session_id: Some("ses_x".to_owned()), ..recall("pnpm", 9000) };
    // Nothing else matches: the most recent card stands in.
    assert_eq!(ids(sessions_block(&db, ws, current)), ["crd_02"]);
}

#[test]
fn lessons_follow_the_error_rate_thresholds() {
    let db = TestDb::new(store());
    let ws = workspace(&db);
    let draft = lessons_block(&db, ws, recall("", 9000));
    assert_eq!(ids(draft), ["edit"]);
    assert_eq!(
        draft.items[0].line,
        "- edit: 5/12 recent calls failed (mostly not_found). Re-read the file and copy the exact text before editing."
    );
    let without_edit = Recall { tools: Some(vec!["bash".to_owned()]), ..recall("", 9000) };
    assert!(lessons_block(&db, ws, without_edit).items.is_empty());
}

#[test]
fn handoff_of_another_session_is_labelled_and_expires() {
    let db = TestDb::new(store());
    let ws = workspace(&db);
    assert_eq!(
        handoff_block(&db, ws, recall("", 9000)).title,
        "Previous Task Handoff (from an earlier session)"
    );
    let same = Recall { session_id: Some("ses_a".to_owned()), ..recall("", 9000) };
    assert_eq!(handoff_block(&db, ws, same).title, "Current Task Handoff");
    let later = Recall { now: NOW + 3 * DAY, ..recall("", 9000) };
    assert!(handoff_block(&db, ws, later).items.is_empty());
}

/// The clamp at several budgets: never over, never hard-cut, identical on repeat, and the
/// text itself pinned.
#[test]
fn clamp_fits_every_budget() {
    let db = TestDb::new(store());
    let ws = workspace(&db);
    for max in [9000, 2400, 1500, 900, 400] {
        let ctx = memory_context(&db, ws, recall("pnpm tests", max));
        assert!(ctx.chars <= max, "{max}: {}", ctx.chars);
        assert!(!ctx.hard_cut, "{max}");
        assert_eq!(ctx.chars, ctx.text.chars().count());
        let again = TestDb::new(store());
        assert_eq!(memory_context(&again, workspace(&again), recall("pnpm tests", max)).text, ctx.text);
        insta::assert_snapshot!(format!("clamp_{max}"), ctx.text);
    }
}

#[test]
fn sacrifice_order_drops_sessions_before_facts() {
    let db = TestDb::new(store());
    let ws = workspace(&db);
    let ctx = memory_context(&db, ws, recall("pnpm tests", 900));
    let kept: Vec<BlockId> = ctx.blocks.iter().map(|b| b.id).collect();
    let gone: Vec<BlockId> = ctx.removed.iter().map(|b| b.id).collect();
    assert!(kept.contains(&BlockId::Handoff), "{kept:?}");
    assert!(gone.contains(&BlockId::Sessions), "{gone:?}");
    let removed_card = ctx.removed.iter().flat_map(|b| &b.cut).find(|c| c.id == "crd_03").unwrap();
    assert!(
        matches!(removed_card.reason, CutReason::BlockRemoved | CutReason::Budget { .. }),
        "{removed_card:?}"
    );
}

#[test]
fn an_empty_store_recalls_nothing() {
    let fs = MemorySystem::new();
    fs.create_dir_all("/w");
    let db = TestDb::new(fs);
    let ws = workspace(&db);
    assert_eq!(memory_context(&db, ws, recall("anything", 9000)).text, "");
}

#[test]
fn broken_lines_are_skipped_and_reported() {
    let fs = store();
    let good = fact("fct_09", "Keep PRs small", "user", "explicit", NOW);
    fs.write_file("/w/.opencode/memory/facts.jsonl", format!("{good}\nnot json\n{good}"));
    let db = TestDb::new(fs);
    let ws = workspace(&db);
    assert_eq!(ids(facts_block(&db, ws, recall("", 9000))), ["fct_09"]);
    let skipped = skipped_lines(&db, ws);
    assert_eq!(skipped["facts.jsonl"].iter().map(|s| s.line).collect::<Vec<_>>(), [2, 3]);
}
