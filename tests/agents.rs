//! The other agents' conformance cases: `tests/agents/<agent>/<ID>/` holds a fixture
//! (`proj/`, made a git repository, and `home/`), `case.toml` (the working directory, the
//! agent's `-c` settings, the file the model reads) and what the real agent sent, recorded by
//! `oracle/record-agents.sh` with its scratch run directory written as `<run>`: Codex's
//! `oracle.out`; Gemini's `oracle.system`, `oracle.user` and `oracle.read`; Qwen Code's
//! `oracle.system` and `oracle.read` (its own wording as `<prose:blake3=…>`, the profile's
//! fingerprints, checked against the real package by a test); Copilot's `oracle.system`,
//! `oracle.read` and, for a run it refuses, `oracle.refused`; Kilo's `oracle.system` and
//! `oracle.read`; Cline's and Continue's `oracle.system` (their rules section) and, for a
//! read, `oracle.read` (the tool's result with the file as `<file>`: nothing attached); Aider's
//! `oracle.user` and, for each other order of its read-only files seen in repeated captures,
//! `oracle.user-N`; `listing.txt`, the order the disk listed the run's folders in. Each case
//! runs on both `System` backends, laid out in that order (in memory every other folder in an
//! order neither sorted nor reverse-sorted), and must match byte for byte (Aider's files in
//! any order, since its own order is a Python set's; on a disk that cannot list a folder as
//! recorded, the runs of blocks its listing orders as a set).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ctxgraph_agents::claude_code::reads_in_session;
use ctxgraph_agents::claude_code::request_prose::RequestProse;
use ctxgraph_agents::copilot::{Prose as CopilotProse, copilot_context};
use ctxgraph_db::agent::Agent;
use ctxgraph_db::db::Workspace;
use ctxgraph_db::hash::ContentHash;
use ctxgraph_db::path::normalize;
use ctxgraph_db::profile::{Block, InstallationSearch, Layout, Placement, Request, Section, WordingSource};
use ctxgraph_db::system::{MemorySystem, System};
use ctxgraph_engine::profiles::profile;
use ctxgraph_engine::{Engine, HostEnv, O200k, OsSystem};
use ctxgraph_test_support::tree::{DiskWriter, MemoryWriter, TreeWriter, copy_tree, git_worktree};
use ctxgraph_tests::listing::{self, Listing};
use serde::Deserialize;

/// Where in-memory runs live.
const MEMORY_RUN: &str = "/tmp/agents/run";

/// The host's date in every case (`Date.toDateString()`), and the line pi writes for it,
/// which recordings keep as `<date>` (the day they were made is not the test's).
const HOST_DATE: &str = "Sun Nov 29 2026";
const PI_DATE_LINE: (&str, &str) = ("\nCurrent date: 2026-11-29\n", "\nCurrent date: <date>\n");

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    #[allow(dead_code, reason = "documentation for the reader of case.toml")]
    description: String,
    #[allow(dead_code, reason = "tests/rule_ids.rs checks them")]
    #[serde(default)]
    rules: Vec<String>,
    #[serde(default)]
    run: Run,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Run {
    #[serde(default = "dot")]
    cwd: String,
    /// The agent's `-c KEY=VALUE` settings.
    #[serde(default)]
    config: Vec<String>,
    /// Gemini, Qwen Code: the file (relative to `proj/`) the model reads first.
    #[serde(default)]
    read: Option<String>,
    /// Claude Code: files (relative to `proj`) the model reads one after the other;
    /// `oracle.read` holds what each Read result carried after the file.
    #[serde(default)]
    reads: Vec<String>,
    /// Copilot, Aider: the agent is expected to send no request at all (`oracle.refused`).
    #[serde(default)]
    refused: bool,
    /// Aider: `KEY=VALUE` variables in the agent's environment (`$AIDER_READ`).
    #[serde(default)]
    env: Vec<String>,
    /// Why the case runs on the disk backend only (its MCP servers are processes the engine
    /// starts in the project folder, which exists only there).
    #[serde(default)]
    disk_only: Option<String>,
    /// `request`: the case records the agent's whole first request (Claude Code's CC16,
    /// Codex's skills and AGENTS.md items) instead of its rule text.
    #[serde(default)]
    section: Option<String>,
}

fn dot() -> String {
    ".".to_owned()
}

/// Every case directory of `agent`, sorted.
fn case_dirs(agent: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("agents").join(agent);
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|err| panic!("{}: {err}", root.display()))
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|dir| dir.join("case.toml").is_file())
        .collect();
    dirs.sort();
    dirs
}

fn load(dir: &Path) -> Case {
    let path = dir.join("case.toml");
    let text = std::fs::read_to_string(&path).expect("case.toml is readable");
    toml::from_str(&text).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

/// The capture scripts' layout: `<run>/proj` (a git repository), `<run>/home`, the
/// fixture's `above/` in `<run>` itself (the folder that holds the git root), and its
/// `automemory/` as Claude Code's auto memory of `<run>/proj`.
fn lay_out(dir: &Path, run: &Path, out: &mut dyn TreeWriter) {
    out.dir(&run.join("home"));
    copy_tree(&dir.join("above"), run, out);
    copy_tree(&dir.join("proj"), &run.join("proj"), out);
    copy_tree(&dir.join("home"), &run.join("home"), out);
    // Claude Code's auto memory lives under a folder named after the project's path, which
    // only the run knows (CC15): the fixture keeps it as `automemory/`.
    let slug = ctxgraph_agents::claude_code::project_slug(&run.join("proj"));
    copy_tree(&dir.join("automemory"), &run.join("home/.claude/projects").join(slug).join("memory"), out);
    git_worktree(&run.join("proj"), out);
}

/// Where a folder of `listing.txt` (`proj/…`, `home/…`, `above/…`) lies in the run.
fn in_run(run: &Path, dir: &str) -> PathBuf {
    match dir.split_once('/').map_or((dir, ""), |(top, rest)| (top, rest)) {
        ("above", rest) => run.join(rest),
        (top, rest) => run.join(top).join(rest),
    }
}

/// A case laid out: the engine over it, the run directory, and whether the folders list as
/// they did for the agent (false on a disk that lists them otherwise: listing-ordered runs
/// are then compared as sets).
struct Laid {
    engine: Engine,
    run: PathBuf,
    listed_as_recorded: bool,
    _scratch: Option<tempfile::TempDir>,
}

/// An engine over the case laid out on `backend`, every folder listed as the agent's disk
/// listed it (`listing.txt`; other folders, in memory, in an order neither sorted nor
/// reverse-sorted), with HOME inside the run as the capture scripts set it, and the case's
/// `env` (`KEY=VALUE`) among the host's variables.
fn engine(dir: &Path, disk: bool, env: &[String]) -> Laid {
    let listing = Listing::of(dir);
    let (system, run, scratch, listed_as_recorded): (Arc<dyn System>, PathBuf, _, bool) = if disk {
        let scratch = tempfile::tempdir().expect("temp dir");
        let run = std::fs::canonicalize(scratch.path()).expect("canonical temp dir");
        lay_out(dir, &run, &mut DiskWriter);
        substitute_run(dir, &run, &mut DiskWriter);
        let listed = listing.on_disk(&|d| in_run(&run, d));
        (Arc::new(OsSystem), run, Some(scratch), listed)
    } else {
        let fs = MemorySystem::new();
        let run = PathBuf::from(MEMORY_RUN);
        lay_out(dir, &run, &mut MemoryWriter(&fs));
        substitute_run(dir, &run, &mut MemoryWriter(&fs));
        listing.in_memory(&fs, &|d| in_run(&run, d));
        (Arc::new(fs), run, None, true)
    };
    let home = run.join("home");
    let mut vars: std::collections::BTreeMap<String, String> =
        [("HOME".to_owned(), home.to_string_lossy().into_owned())].into();
    vars.extend(
        env.iter()
            .filter_map(|kv| kv.split_once('='))
            .map(|(k, v)| (k.to_owned(), v.replace("<run>", &run.to_string_lossy()))),
    );
    let env = HostEnv { vars, home, platform: "linux".to_owned(), date: HOST_DATE.to_owned() };
    Laid { engine: Engine::new(system, env), run, listed_as_recorded, _scratch: scratch }
}

/// The case's `-c` settings as the profile's request takes them.
fn request(case: &Case, agent: Agent) -> Request {
    let settings = case
        .run
        .config
        .iter()
        .map(|setting| {
            let (key, value) = setting.split_once('=').expect("KEY=VALUE");
            (key.to_owned(), value.to_owned())
        })
        .collect();
    let section = match case.run.section.as_deref() {
        Some("request") => Section::Request,
        None => Section::Rules,
        Some(other) => panic!("section {other}: not a section the cases record"),
    };
    Request { section, settings, wording: profile(agent).fingerprints() }
}

/// Every block of a layout is the bytes its range names, and its hash is theirs.
fn check_blocks(text: &str, blocks: &[Block]) -> Result<(), String> {
    for block in blocks {
        let bytes = text.get(block.range.clone()).ok_or("a block's range is outside the text")?;
        if ContentHash::of(bytes) != block.hash {
            return Err(format!("{}: the hash is not the range's", block.source.display()));
        }
    }
    Ok(())
}

/// A case's recorded output file `name` (`oracle.system`, `oracle.read`, …).
fn recorded(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).expect("oracle files: run tests/oracle/record-agents.sh")
}

/// Fixture files may name the run directory as `<run>` (absolute imports, the keys of
/// `~/.claude.json`); the recorder writes the real one in before capturing, and so does this.
fn substitute_run(dir: &Path, run: &Path, out: &mut dyn TreeWriter) {
    fn walk(from: &Path, to: &Path, run: &Path, out: &mut dyn TreeWriter) {
        let Ok(entries) = std::fs::read_dir(from) else { return };
        for entry in entries.filter_map(Result::ok) {
            let (source, target) = (entry.path(), to.join(entry.file_name()));
            if source.is_dir() {
                walk(&source, &target, run, out);
            } else if let Ok(text) = std::fs::read_to_string(&source)
                && (text.contains("<run>") || text.contains("<repo>"))
            {
                // `<repo>`: this repository (a case's MCP server is tests/oracle/mcp_server.py).
                let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the repository");
                let text =
                    text.replace("<run>", &run.to_string_lossy()).replace("<repo>", &repo.to_string_lossy());
                out.file(&target, text.into_bytes());
            }
        }
    }
    for part in ["proj", "home"] {
        walk(&dir.join(part), &run.join(part), run, out);
    }
    walk(&dir.join("above"), run, run, out);
}

/// What an agent's recorded start-up files hold, compared with the layout's text.
enum Start {
    /// One file holds exactly the layout's text (`oracle.out`, `oracle.system`).
    Whole(&'static str),
    /// Gemini: `oracle.system` (the system instruction's part) and `oracle.user` (the first
    /// user message's part) are the layout's text joined by a blank line, and each block
    /// lies in the part its placement names.
    SystemThenUser,
    /// Aider: every `oracle.user*` file (one per order seen in repeated captures) is the
    /// layout's text with its blocks in some order (AI5).
    AnyOrder,
}

/// What the case's reads are compared with.
enum Reads {
    /// `oracle.read` holds exactly what a read of `run.read` attaches.
    Attached,
    /// The agent attaches nothing to a read; the function checks that the recorded result
    /// (`oracle.read`) held nothing but the file.
    Nothing(fn(recorded: &str, read: &str, layout: &Layout) -> Result<(), String>),
    /// Claude Code: `run.reads` one after the other in one session (CC12); `oracle.read`
    /// holds what each attached, under a `--- read FILE ---` line.
    Session,
}

/// How the agent refuses a run the case marks `refused` (`oracle.refused`).
enum Refusal {
    /// It never does.
    Never,
    /// It starts, and declines to send: the layout carries a note, and `oracle.refused`
    /// holds this word (Copilot, CP13).
    Note(&'static str),
    /// It would not start: the layout is an error saying so (Aider, AI3).
    WouldNotStart,
}

/// A further check of an agent's own facts, beside the recordings.
type ExtraCheck = fn(&Engine, Workspace, &Case, &Layout) -> Result<(), String>;

/// One agent's conformance cases: `tests/agents/<folder>/`, what its recordings hold, and
/// a further check of its own facts, when it has one.
struct Row {
    agent: Agent,
    folder: &'static str,
    start: Start,
    reads: Reads,
    refusal: Refusal,
    extra: Option<ExtraCheck>,
}

/// Every agent with recorded cases. Adding one is a row here and its case folder.
const AGENTS: &[Row] = &[
    Row {
        agent: Agent::Codex,
        folder: "codex",
        start: Start::Whole("oracle.out"),
        reads: Reads::Attached,
        refusal: Refusal::Never,
        extra: None,
    },
    Row {
        agent: Agent::Gemini,
        folder: "gemini",
        start: Start::SystemThenUser,
        reads: Reads::Attached,
        refusal: Refusal::Never,
        extra: None,
    },
    Row {
        agent: Agent::ClaudeCode,
        folder: "claude-code",
        start: Start::Whole("oracle.out"),
        reads: Reads::Session,
        refusal: Refusal::Never,
        extra: None,
    },
    Row {
        agent: Agent::QwenCode,
        folder: "qwen-code",
        start: Start::Whole("oracle.system"),
        reads: Reads::Attached,
        refusal: Refusal::Never,
        extra: None,
    },
    Row {
        agent: Agent::Copilot,
        folder: "copilot",
        start: Start::Whole("oracle.system"),
        reads: Reads::Attached,
        refusal: Refusal::Note("compaction_static_context_blocked"),
        extra: Some(copilot_budget),
    },
    Row {
        agent: Agent::Cline,
        folder: "cline",
        start: Start::Whole("oracle.system"),
        reads: Reads::Nothing(cline_read_holds_only_the_file),
        refusal: Refusal::Never,
        extra: None,
    },
    Row {
        agent: Agent::Continue,
        folder: "continue",
        start: Start::Whole("oracle.system"),
        reads: Reads::Nothing(continue_read_holds_only_the_file),
        refusal: Refusal::Never,
        extra: None,
    },
    Row {
        agent: Agent::Kilo,
        folder: "kilo",
        start: Start::Whole("oracle.system"),
        reads: Reads::Attached,
        refusal: Refusal::Never,
        extra: None,
    },
    Row {
        agent: Agent::Aider,
        folder: "aider",
        start: Start::AnyOrder,
        reads: Reads::Attached,
        refusal: Refusal::WouldNotStart,
        extra: None,
    },
    Row {
        agent: Agent::Pi,
        folder: "pi",
        start: Start::Whole("oracle.system"),
        reads: Reads::Nothing(pi_read_holds_only_the_file),
        refusal: Refusal::Never,
        extra: Some(pi_sends_nothing_from_above_the_run),
    },
    Row {
        agent: Agent::Auggie,
        folder: "auggie",
        start: Start::Whole("oracle.request"),
        reads: Reads::Nothing(auggie_reads_are_not_recorded),
        refusal: Refusal::Never,
        extra: None,
    },
];

/// Auggie's reads go to Augment's server, and its fake cannot ask for a tool call
/// (`capture_auggie.sh` has no `-R`): a case with a read has nothing to compare with.
fn auggie_reads_are_not_recorded(_: &str, read: &str, _: &Layout) -> Result<(), String> {
    Err(format!("{read}: Auggie's reads cannot be recorded; give its cases no `read`"))
}

/// `--- NAME: AGENT sent … --- ctxgraph built …` when `got` is not the recording.
fn compare(row: &Row, name: &str, expected: &str, got: &str) -> Result<(), String> {
    if got == expected {
        Ok(())
    } else {
        Err(format!("--- {name}: {} sent\n{expected}\n--- ctxgraph built\n{got}", row.agent.name()))
    }
}

/// Runs one case of `row` on one backend: the layout against the start-up recordings, the
/// reads against `oracle.read`, and the fate of every file considered (see [`check_fates`]).
fn run_case(row: &Row, dir: &Path, disk: bool, fates: &mut Vec<Fate>) -> Result<(), String> {
    let case = load(dir);
    if !disk && case.run.disk_only.is_some() {
        return Ok(());
    }
    let Laid { mut engine, run, listed_as_recorded, _scratch } = engine(dir, disk, &case.run.env);
    let proj = run.join("proj");
    let ws = engine.open(&normalize(&proj.join(&case.run.cwd))).map_err(|e| e.to_string())?;
    let portable = |text: &str| portable(text, &run);
    let request = request(&case, row.agent);
    // The whole request holds what the agent's MCP servers answer (Claude Code's CC22): the
    // case's servers are this repository's tests/oracle/mcp_server.py, spoken to over stdio.
    if request.section == Section::Request && !engine.pending_agent_mcp(ws, row.agent).is_empty() {
        let connector = ctxgraph_engine::mcp::McpConnector::new().map_err(|e| e.to_string())?;
        engine.fetch_agent_mcp(ws, row.agent, &connector).map_err(|e| e.to_string())?;
    }
    let built = engine.agent_layout(ws, row.agent, &request);
    let layout = match (&row.refusal, case.run.refused) {
        (Refusal::WouldNotStart, true) => {
            assert!(
                dir.join("oracle.refused").is_file(),
                "oracle.refused: run tests/oracle/record-agents.sh"
            );
            return match built {
                Err(err) if err.to_string().contains("would not start") => Ok(()),
                other => Err(format!("{} refused to start; ctxgraph built {other:?}", row.agent.name())),
            };
        }
        (Refusal::Never, true) => return Err("the case is refused, and the agent never refuses".to_owned()),
        _ => built.map_err(|e| e.to_string())?,
    };
    check_blocks(&layout.text, &layout.blocks)?;
    if let Some(extra) = row.extra {
        extra(&engine, ws, &case, &layout)?;
    }
    if let Refusal::Note(word) = row.refusal {
        if layout.note.is_some() != case.run.refused {
            return Err(format!("refused: {}; the layout's note: {:?}", case.run.refused, layout.note));
        }
        if case.run.refused {
            assert_eq!(recorded(dir, "oracle.refused").trim(), word);
            return Ok(());
        }
    }
    let mut diffs = Vec::new();
    let mut considered = layout.considered();
    match row.start {
        Start::Whole(name) => {
            let (expected, got) = comparable(&layout, &recorded(dir, name), &run, listed_as_recorded);
            diffs.extend(compare(row, name, &expected, &got).err());
        }
        Start::SystemThenUser => {
            diffs.extend(system_then_user(row, dir, &layout, &run, listed_as_recorded).err());
        }
        Start::AnyOrder => diffs.extend(any_order(dir, &layout, &portable).err()),
    }
    match &row.reads {
        Reads::Attached => {
            if let Some(read) = &case.run.read {
                let target = normalize(&proj.join(read));
                let attached =
                    engine.agent_read(ws, row.agent, &target, &request).map_err(|e| e.to_string())?;
                check_blocks(&attached.text, &attached.blocks)?;
                diffs.extend(
                    compare(row, "oracle.read", &recorded(dir, "oracle.read"), &portable(&attached.text))
                        .err(),
                );
                considered.push(target);
                considered
                    .extend(attached.blocks.iter().filter_map(|b| b.source.path().map(Path::to_path_buf)));
                considered.extend(attached.left_out.iter().map(|l| l.source.clone()));
            }
        }
        Reads::Nothing(check) => {
            if let Some(read) = &case.run.read {
                check(&recorded(dir, "oracle.read"), read, &layout)?;
                let target = normalize(&proj.join(read));
                let attached =
                    engine.agent_read(ws, row.agent, &target, &request).map_err(|e| e.to_string())?;
                if !attached.text.is_empty() || !attached.blocks.is_empty() {
                    return Err(format!("the {} profile attaches something to a read", row.agent.name()));
                }
                considered.push(target);
            }
        }
        Reads::Session => {
            if !case.run.reads.is_empty() {
                let files: Vec<PathBuf> =
                    case.run.reads.iter().map(|read| normalize(&proj.join(read))).collect();
                // A session of reads is no profile answer: the query behind Claude Code's
                // reads, through the engine's database (the `testing` feature).
                let attachments = reads_in_session(engine.db(), ws, &files);
                let words = RequestProse::fingerprints();
                let got: String = case
                    .run
                    .reads
                    .iter()
                    .zip(&attachments)
                    .map(|(read, attachment)| {
                        portable(&format!("--- read {read} ---\n{}\n", attachment.text(&words)))
                    })
                    .collect();
                diffs.extend(compare(row, "oracle.read", &recorded(dir, "oracle.read"), &got).err());
                // The first read is the profile's read answer right after start-up.
                let first =
                    engine.agent_read(ws, row.agent, &files[0], &request).map_err(|e| e.to_string())?;
                if first.text != attachments[0].text(&words) {
                    return Err("the profile's read is not the session's first read".to_owned());
                }
                considered.extend(files);
            }
        }
    }
    for file in considered {
        fates.extend(engine.file_fates(ws, &file).into_iter().map(|fate| Fate {
            at: format!(
                "{} ({}): {}",
                dir.display(),
                if disk { "disk" } else { "memory" },
                portable(&file.to_string_lossy())
            ),
            agent: fate.agent,
            rule: fate.rule,
            reason: portable(&fate.reason),
        }));
    }
    if diffs.is_empty() { Ok(()) } else { Err(diffs.join("\n")) }
}

/// The recording and ctxgraph's text, run directory written `<run>`; where the disk lists a
/// folder otherwise than the agent's disk did, each run of blocks that folder's listing
/// orders put in one order in both (`listing::as_sets`).
fn comparable(layout: &Layout, expected: &str, run: &Path, listed_as_recorded: bool) -> (String, String) {
    if !listed_as_recorded
        && let Some((theirs, ours)) =
            listing::as_sets(layout, &expected.replace("<run>", &run.to_string_lossy()))
    {
        return (portable(&theirs, run), portable(&ours, run));
    }
    (expected.to_owned(), portable(&layout.text, run))
}

/// A text as the recordings keep it: the run directory as `<run>`, the folder Claude Code
/// names after the project's path as `<slug>` (CC15), pi's date line with `<date>`.
fn portable(text: &str, run: &Path) -> String {
    let slug = ctxgraph_agents::claude_code::project_slug(&run.join("proj"));
    text.replace(&slug, "<slug>")
        .replace(run.to_string_lossy().as_ref(), "<run>")
        .replace(PI_DATE_LINE.0, PI_DATE_LINE.1)
}

/// [`Start::SystemThenUser`].
fn system_then_user(
    row: &Row,
    dir: &Path,
    layout: &Layout,
    run_dir: &Path,
    listed_as_recorded: bool,
) -> Result<(), String> {
    let run = run_dir.to_string_lossy();
    let (system, user) = (recorded(dir, "oracle.system"), recorded(dir, "oracle.user"));
    let parts: Vec<&str> = [system.as_str(), user.as_str()].into_iter().filter(|p| !p.is_empty()).collect();
    let (expected, got) = comparable(layout, &parts.join("\n\n"), run_dir, listed_as_recorded);
    compare(row, "oracle.system + oracle.user", &expected, &got)?;
    // The system part's end in the layout's text, the run directory written out.
    let system_end = system.replace("<run>", &run).len();
    for block in &layout.blocks {
        let in_system = block.range.end <= system_end;
        let placed = match block.placement {
            Placement::SystemMessage => in_system,
            Placement::FirstUserMessage => !in_system,
            Placement::ToolResult | Placement::AfterToolResult | Placement::ServerRequest => false,
        };
        if !placed {
            return Err(format!(
                "{}: placed in the {}, and its bytes are in the {} part",
                block.source.display(),
                block.placement.describe(),
                if in_system { "system" } else { "user" }
            ));
        }
    }
    Ok(())
}

/// [`Start::AnyOrder`]: every `oracle.user*` recording is the layout's text, its blocks in
/// some order; several orders recorded, or several files, is exactly what the layout marks
/// unordered (AI5).
fn any_order(dir: &Path, layout: &Layout, portable: &dyn Fn(&str) -> String) -> Result<(), String> {
    let mut recordings: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("case dir")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("oracle.user")))
        .collect();
    recordings.sort();
    if recordings.is_empty() {
        return Err("no oracle.user: run tests/oracle/record-agents.sh".to_owned());
    }
    let text = portable(&layout.text);
    let prefix = layout.blocks.first().map_or(text.as_str(), |b| &text[..b.range.start]);
    let parts: Vec<String> = layout.blocks.iter().map(|b| portable(layout.text_of(b))).collect();
    let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
    let unordered = layout.blocks.iter().all(|b| b.unordered && b.unstable.is_some());
    if (recordings.len() > 1 && !unordered)
        || (layout.blocks.len() > 1) != (unordered && !layout.blocks.is_empty())
    {
        return Err(format!(
            "{} orders recorded, {} blocks, unordered: {unordered}",
            recordings.len(),
            layout.blocks.len()
        ));
    }
    for path in &recordings {
        let expected = std::fs::read_to_string(path).expect("oracle.user");
        let same = if unordered { is_some_order(&expected, prefix, &parts) } else { expected == text };
        if !same {
            return Err(format!(
                "--- {}: aider sent\n{expected}\n--- ctxgraph built\n{text}",
                path.file_name().unwrap_or_default().to_string_lossy()
            ));
        }
    }
    Ok(())
}

/// Copilot (CP13): every sent file has a block, and the verdict with the host's tokenizer
/// agrees with what Copilot did. Its own facts: the query behind the profile, through the
/// engine's database (the `testing` feature).
fn copilot_budget(engine: &Engine, ws: Workspace, case: &Case, layout: &Layout) -> Result<(), String> {
    let context = copilot_context(engine.db(), ws);
    if layout.blocks.len() != context.sent().count() {
        return Err("a sent file has no block in the layout".to_owned());
    }
    let budget = context.budget(&CopilotProse::fingerprints(), &O200k);
    if budget.refused != case.run.refused {
        return Err(format!("copilot refused: {}; ctxgraph's budget: {budget:?}", case.run.refused));
    }
    Ok(())
}

/// CL10: what the real `read_files` result held besides the file's own lines: nothing.
fn cline_read_holds_only_the_file(recorded: &str, _: &str, layout: &Layout) -> Result<(), String> {
    let recorded: serde_json::Value =
        serde_json::from_str(recorded).map_err(|e| format!("oracle.read: {e}"))?;
    let result = recorded[0]["result"].as_str().ok_or("oracle.read: no result")?;
    let own_lines = result
        .lines()
        .all(|line| line.split_once(" | ").is_some_and(|(n, _)| n.trim().parse::<u32>().is_ok()));
    if !own_lines || layout.blocks.iter().any(|b| result.contains(layout.text_of(b))) {
        return Err(format!("the recorded read result holds more than the file: {result:?}"));
    }
    Ok(())
}

/// CN8: the real Read result held the file under one line naming it, and nothing more.
fn continue_read_holds_only_the_file(recorded: &str, read: &str, _: &Layout) -> Result<(), String> {
    let named = format!("Content of <run>/proj/{read}:\n<file>");
    if recorded.trim_end_matches('\n') != named {
        return Err(format!("the recorded Read result holds more than the file: {recorded:?}"));
    }
    Ok(())
}

/// PI11: the real read tool's result held the file's text and nothing else.
fn pi_read_holds_only_the_file(recorded: &str, _: &str, _: &Layout) -> Result<(), String> {
    if recorded.trim_end_matches('\n') == "<file>" {
        Ok(())
    } else {
        Err(format!("the recorded read result holds more than the file: {recorded:?}"))
    }
}

/// pi walks up to `/` (PI2): the recordings were made with nothing above the run directory,
/// and a case can only match where that holds too. A file above it (on disk, a machine's
/// `/tmp/AGENTS.md`) is named here rather than shown as a diff.
fn pi_sends_nothing_from_above_the_run(
    _: &Engine,
    _: Workspace,
    case: &Case,
    layout: &Layout,
) -> Result<(), String> {
    let depth = Path::new(&case.run.cwd)
        .components()
        .filter(|c| matches!(c, std::path::Component::Normal(_)))
        .count();
    let run = layout.cwd.ancestors().nth(depth + 1).ok_or("the working directory is not below <run>/proj")?;
    match layout.sent_files().find(|file| !file.starts_with(run)) {
        Some(file) => Err(format!(
            "{} is above the run directory {}: pi sends it (PI2), and the cases were recorded with nothing there; remove it to run them",
            file.display(),
            run.display()
        )),
        None => Ok(()),
    }
}

/// One agent's verdict on a file a case considered, where it was met.
struct Fate {
    at: String,
    agent: &'static str,
    rule: &'static str,
    reason: String,
}

/// Every fate names its rule as data, defined on its agent's doc page (the profile's
/// `About::doc`; for opencode, a page of `docs/opencode/`, whose index the doc is), and the
/// reason, when it cites rule ids, cites that one: the id and the sentence agree.
fn check_fates(fates: &[Fate]) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace root");
    let mut problems = Vec::new();
    let defined = crate::rule_ids::definitions(root, &mut problems);
    let cited = crate::rule_ids::citation_regex();
    for fate in fates {
        let doc = profile(fate.agent.parse::<Agent>().expect("an agent's name")).about().doc;
        let page = defined.get(fate.rule).map(|(page, _)| match page.strip_prefix("../") {
            Some(other) => format!("docs/{other}"),
            None => format!("docs/opencode/{page}"),
        });
        let on_its_page = page.as_deref().is_some_and(|page| match doc.strip_suffix("README.md") {
            Some(folder) => page.starts_with(folder),
            None => page == doc,
        });
        if !on_its_page {
            problems.push(format!(
                "{}: {}'s rule {:?} is not defined on {doc} (it is on {page:?})",
                fate.at, fate.agent, fate.rule
            ));
        }
        let ids: Vec<&str> =
            cited.captures_iter(&fate.reason).map(|c| c.name("first").map_or("", |m| m.as_str())).collect();
        if !ids.is_empty() && !ids.contains(&fate.rule) {
            problems.push(format!(
                "{}: {}'s rule {} is not among those its reason cites: {}",
                fate.at, fate.agent, fate.rule, fate.reason
            ));
        }
    }
    problems
}

/// Every recorded case of every agent in [`AGENTS`], on both `System` backends, matches
/// what the real agent sent; and every fate met on the way is typed (see [`check_fates`]).
#[test]
fn every_agent_case_matches_the_recorded_binary() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("agents");
    let mut folders: Vec<String> = std::fs::read_dir(&root)
        .expect("tests/agents")
        .filter_map(Result::ok)
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    folders.sort();
    let mut rows: Vec<&str> = AGENTS.iter().map(|row| row.folder).collect();
    rows.sort_unstable();
    assert_eq!(folders, rows, "each folder of tests/agents has one row in AGENTS");
    let (mut failures, mut runs, mut fates) = (Vec::new(), 0, Vec::new());
    for row in AGENTS {
        let dirs = case_dirs(row.folder);
        assert!(!dirs.is_empty(), "no {} cases", row.folder);
        for dir in &dirs {
            for disk in [false, true] {
                runs += 1;
                if let Err(diff) = run_case(row, dir, disk, &mut fates) {
                    let backend = if disk { "disk" } else { "memory" };
                    failures.push(format!("{} ({backend}):\n{diff}", dir.display()));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {runs} runs differ from the oracle:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
    assert!(fates.len() > runs, "the cases met only {} fates", fates.len());
    let problems = check_fates(&fates);
    assert!(problems.is_empty(), "{} of {} fates:\n{}", problems.len(), fates.len(), problems.join("\n"));
}

/// The Qwen Code fingerprints the cases keep are the real package's wording: through the
/// engine's generic loader, the installed 0.24.4's output-language text for each recorded
/// language hashes to the token, and a case's layout says where its wording came from.
/// The package is installed from the npm registry into the test cache once, under the lock
/// every test binary shares (test-support), as opencode is.
#[test]
fn qwen_code_fingerprints_are_the_installed_wording() {
    use ctxgraph_agents::qwen_code::Wording;

    let package = ctxgraph_test_support::qwen_code::installed();
    let loaded = ctxgraph_engine::wording::load(
        Agent::QwenCode,
        Some(&package),
        &std::collections::BTreeMap::default(),
    )
    .expect("Qwen Code has wording of its own");
    let wording = (loaded.as_ref() as &dyn std::any::Any).downcast_ref::<Wording>().expect("a qwen Wording");
    assert!(!wording.is_unavailable(), "{}: {:?}", package.display(), wording.source);
    let fingerprints = Wording::fingerprints();
    for language in [None, Some("French"), Some("Chinese")] {
        let own = wording.written(language);
        let token = format!("<prose:blake3={}>", blake3::hash(own.as_bytes()).to_hex());
        assert_eq!(fingerprints.written(language), token, "{language:?}");
    }

    let dir = case_dirs("qwen-code").into_iter().find(|d| d.ends_with("QW-07")).expect("QW-07");
    let case = load(&dir);
    let Laid { mut engine, run, .. } = engine(&dir, false, &[]);
    let ws = engine.open(&run.join("proj").join(&case.run.cwd)).expect("open");
    let request = Request { settings: Vec::new(), wording: Some(loaded.clone()), ..Request::default() };
    let layout = engine.agent_layout(ws, Agent::QwenCode, &request).expect("layout");
    assert!(matches!(layout.wording, WordingSource::Installation { ref version, .. } if version == "0.24.4"));
    check_blocks(&layout.text, &layout.blocks).expect("blocks");
    let own = wording.written(Some("French"));
    let text = layout.text.replace(&own, &fingerprints.written(Some("French")));
    let expected = std::fs::read_to_string(dir.join("oracle.system")).expect("oracle.system");
    assert_eq!(text.replace(run.to_string_lossy().as_ref(), "<run>"), expected);
}

/// `text` is `prefix` then every one of `parts` exactly once, in some order: Aider's read-only
/// files come in a Python set's order (AI5). Parts are tried in turn at each position, with
/// backtracking (a part may be a prefix of another); bounded by the few parts a case has.
fn is_some_order(text: &str, prefix: &str, parts: &[&str]) -> bool {
    fn rest_matches(rest: &str, parts: &[&str], used: &mut Vec<bool>) -> bool {
        if used.iter().all(|u| *u) {
            return rest.is_empty();
        }
        for i in 0..parts.len() {
            if !used[i] && rest.starts_with(parts[i]) {
                used[i] = true;
                if rest_matches(&rest[parts[i].len()..], parts, used) {
                    return true;
                }
                used[i] = false;
            }
        }
        false
    }
    text.strip_prefix(prefix).is_some_and(|rest| rest_matches(rest, parts, &mut vec![false; parts.len()]))
}

#[test]
fn an_order_check_takes_every_part_once() {
    assert!(is_some_order("P-b-a", "P", &["-a", "-b"]));
    assert!(is_some_order("P-a-ab", "P", &["-a", "-ab"]), "backtracks when one part prefixes another");
    assert!(!is_some_order("P-a-a", "P", &["-a", "-b"]));
    assert!(!is_some_order("P-a", "P", &["-a", "-b"]));
    assert!(!is_some_order("Q-a-b", "P", &["-a", "-b"]));
}

/// AI9: the wording comes from the installed package (pip's launcher followed to its virtual
/// environment's `aider/coders/base_prompts.py`), and it is what the recordings keep as a
/// token: a case built with it, the token written back, is the recording. The package is
/// installed from the Python package index into the test cache once, under the lock every test binary shares.
#[test]
fn aider_wording_is_read_from_the_installed_package() {
    use ctxgraph_agents::aider::Wording;

    let launcher = ctxgraph_test_support::aider::installed();
    let wording = ctxgraph_agents::aider::installation::wording(&InstallationSearch {
        fs: &OsSystem,
        explicit: Some(&launcher),
        vars: &std::collections::BTreeMap::new(),
    });
    assert!(
        matches!(&wording.source, WordingSource::Installation { version, .. } if version == "0.86.2"),
        "{:?}",
        wording.source
    );
    let token = format!("<prose:blake3={}>", blake3::hash(wording.read_only_prefix.as_bytes()).to_hex());
    assert_eq!(token, Wording::fingerprints().read_only_prefix);

    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("agents/aider/AI-04");
    let Laid { mut engine, run, .. } = engine(&dir, false, &[]);
    let ws = engine.open(&run.join("proj")).expect("workspace");
    let request =
        Request { settings: Vec::new(), wording: Some(Arc::new(wording.clone())), ..Request::default() };
    let layout = engine.agent_layout(ws, Agent::Aider, &request).expect("layout");
    assert!(matches!(layout.wording, ctxgraph_db::profile::WordingSource::Installation { .. }));
    let expected = std::fs::read_to_string(dir.join("oracle.user")).expect("oracle.user");
    assert_eq!(layout.text.replacen(&wording.read_only_prefix, &token, 1), expected);
}

/// AI9: no installation, or a path without the package, is a placeholder with the reason.
#[test]
fn aider_wording_without_an_installation_is_a_placeholder() {
    let none = ctxgraph_agents::aider::installation::wording(&InstallationSearch {
        fs: &OsSystem,
        explicit: None,
        vars: &std::collections::BTreeMap::new(),
    });
    assert!(none.is_unavailable() && none.read_only_prefix.contains("unavailable"), "{none:?}");
    assert!(format!("{:?}", none.source).contains("--agent-path"));
    let scratch = tempfile::tempdir().expect("temp dir");
    let elsewhere = ctxgraph_agents::aider::installation::wording(&InstallationSearch {
        fs: &OsSystem,
        explicit: Some(scratch.path()),
        vars: &std::collections::BTreeMap::new(),
    });
    assert!(format!("{:?}", elsewhere.source).contains("no aider package"), "{elsewhere:?}");
}

/// CP16: the wording comes from the installed package (the npm launcher followed to the
/// platform executable and the runtime in its archive), and it is what the recordings keep
/// as tokens: a case built with it, the tokens written back, is the recording.
#[test]
fn copilot_wording_is_read_from_the_installed_package() {
    let launcher = ctxgraph_test_support::copilot::installed();
    let prose = ctxgraph_agents::copilot::installation::prose(&InstallationSearch {
        fs: &OsSystem,
        explicit: Some(&launcher),
        vars: &std::collections::BTreeMap::new(),
    });
    assert!(
        matches!(&prose.source, WordingSource::Installation { version, .. } if version == "1.0.102"),
        "{:?}",
        prose.source
    );
    let token = |text: &str| format!("<prose:blake3={}>", blake3::hash(text.as_bytes()).to_hex());
    let fingerprints = CopilotProse::fingerprints();
    assert_eq!(token(&prose.table_intro), fingerprints.table_intro);
    assert_eq!(token(&prose.read_before), fingerprints.read_before);
    assert_eq!(token(&prose.read_after), fingerprints.read_after);

    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("agents/copilot/CP-01");
    let Laid { mut engine, run, .. } = engine(&dir, false, &[]);
    let ws = engine.open(&run.join("proj")).expect("workspace");
    let section = copilot_context(engine.db(), ws).section(&prose);
    let tokens = section.replace(&prose.table_intro, &fingerprints.table_intro);
    let expected = std::fs::read_to_string(dir.join("oracle.system")).expect("oracle.system");
    assert_eq!(tokens.replace(run.to_string_lossy().as_ref(), "<run>"), expected);
}

/// CP16: anything else is refused with a reason, and the text gets placeholders.
#[test]
fn copilot_wording_without_an_installation_is_a_placeholder() {
    let scratch = tempfile::tempdir().expect("temp dir");
    let fake = scratch.path().join("copilot");
    std::fs::write(&fake, vec![b'x'; 2 * 1024 * 1024]).expect("write");
    let prose = ctxgraph_agents::copilot::installation::prose(&InstallationSearch {
        fs: &OsSystem,
        explicit: Some(&fake),
        vars: &std::collections::BTreeMap::new(),
    });
    assert!(prose.is_unavailable() && prose.table_intro.contains("unavailable"), "{prose:?}");
    let none = ctxgraph_agents::copilot::installation::prose(&InstallationSearch {
        fs: &OsSystem,
        explicit: None,
        vars: &std::collections::BTreeMap::new(),
    });
    assert!(matches!(none.source, WordingSource::Unavailable { ref reason } if reason.contains("--copilot")));
}

/// PI10: the real pi 0.73.1 package's wording, put together from its files, is what the
/// recordings' tokens stand for, and a layout with it is the recording with pi's words in.
/// The package is installed from the npm registry into the test cache once, under the lock
/// every test binary shares (test-support).
#[test]
fn pi_wording_is_read_from_the_installed_package() {
    use ctxgraph_agents::pi::Wording;
    use ctxgraph_db::profile::WordingSource;

    let package = ctxgraph_test_support::pi::installed();
    let loaded =
        ctxgraph_engine::wording::load(Agent::Pi, Some(&package), &std::collections::BTreeMap::default())
            .expect("pi has wording of its own");
    let wording = (loaded.as_ref() as &dyn std::any::Any).downcast_ref::<Wording>().expect("a pi Wording");
    assert!(!wording.is_unavailable(), "{}: {:?}", package.display(), wording.source);
    let dir = case_dirs("pi").into_iter().find(|d| d.ends_with("PI-13")).expect("PI-13");
    let case = load(&dir);
    let Laid { mut engine, run, .. } = engine(&dir, false, &[]);
    let ws = engine.open(&run.join("proj").join(&case.run.cwd)).expect("open");
    let request = Request { settings: Vec::new(), wording: Some(loaded.clone()), ..Request::default() };
    let layout = engine.agent_layout(ws, Agent::Pi, &request).expect("layout");
    assert!(matches!(layout.wording, WordingSource::Installation { ref version, .. } if version == "0.73.1"));
    check_blocks(&layout.text, &layout.blocks).expect("blocks");
    let fingerprints = Wording::fingerprints();
    let text = layout
        .text
        .replace(&wording.base_prompt, &fingerprints.base_prompt)
        .replace(&wording.skills_intro, &fingerprints.skills_intro)
        .replace(run.to_string_lossy().as_ref(), "<run>")
        .replace(PI_DATE_LINE.0, PI_DATE_LINE.1);
    assert_eq!(text, recorded(&dir, "oracle.system"));
    // Without an installation: marked placeholders, never pi's words.
    let none = ctxgraph_engine::wording::load(Agent::Pi, None, &std::collections::BTreeMap::default())
        .expect("pi has wording of its own");
    let none = (none.as_ref() as &dyn std::any::Any).downcast_ref::<Wording>().expect("a pi Wording");
    assert!(none.is_unavailable() && none.base_prompt.starts_with("<pi's base prompt"));
}

/// AU8: Auggie's built-in rule is read from the installed package (its `augment.mjs`) and is
/// what the recordings keep as a token.
#[test]
fn auggie_wording_is_read_from_the_installed_package() {
    use ctxgraph_agents::auggie::installation::Wording;

    let package = ctxgraph_test_support::auggie::installed();
    let loaded =
        ctxgraph_engine::wording::load(Agent::Auggie, Some(&package), &std::collections::BTreeMap::default())
            .expect("Auggie has wording of its own");
    let wording =
        (loaded.as_ref() as &dyn std::any::Any).downcast_ref::<Wording>().expect("an Auggie Wording");
    assert!(
        matches!(&wording.source, WordingSource::Installation { version, .. } if version == "0.36.0"),
        "{}: {:?}",
        package.display(),
        wording.source
    );
    let token = format!("<prose:blake3={}>", blake3::hash(wording.builtin.as_bytes()).to_hex());
    assert_eq!(token, Wording::fingerprints().builtin);
    let none = ctxgraph_engine::wording::load(Agent::Auggie, None, &std::collections::BTreeMap::default())
        .expect("Auggie has wording of its own");
    let none = (none.as_ref() as &dyn std::any::Any).downcast_ref::<Wording>().expect("an Auggie Wording");
    assert!(none.builtin.contains("unavailable") && none.builtin != wording.builtin, "{none:?}");
}
