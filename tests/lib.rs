//! The conformance harness: runs ctxgraph on the oracle's fixture cases and renders the
//! result in the format `tests/oracle/record.sh` writes from the real opencode binary.
//!
//! A case (`tests/conformance/<ID>/`) is laid out the way `capture.sh` lays out its
//! scratch run (`<RUN>/proj`, `<RUN>/home`, `<RUN>/config/opencode`, …), either in a
//! [`MemorySystem`] or in a real temporary directory, with the same environment, and
//! the output is normalised with the same placeholders. See `tests/conformance/README.md`.

#![warn(missing_docs)]
// A harness that cannot set up a case fails the test that called it: panicking is its
// contract, not an edge case to document on each function.
#![allow(clippy::missing_panics_doc)]

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ctxgraph_db::system::{ListingOrder, MemorySystem, System};
use ctxgraph_engine::{Engine, EngineError, HostEnv, OsSystem};
use ctxgraph_opencode::instructions::{Origin, SystemPaths};
use ctxgraph_opencode::prompt::{Block, ModelRef, Prompt};
use ctxgraph_test_support::tree::{
    DiskWriter, MemoryWriter, TreeWriter, copy_tree, copy_tree_to_disk, git_worktree,
};
use serde::Deserialize;

pub mod listing;

use listing::Listing;

/// The date the harness pins; rendered as `<DATE>` like the oracle's output.
const DATE: &str = "Sun Nov 29 2026";
/// The model `capture.sh` runs with.
const MODEL: &str = "fake/fake-model";
/// Where in-memory runs live: the oracle's own scratch layout.
const MEMORY_RUN: &str = "/tmp/oracle/run.ctxgraph";

/// One recorded case: its `case.toml` (tests/conformance/README.md) and where it lives.
#[derive(Debug, Deserialize)]
pub struct Case {
    /// The case's id: its directory's name (`E-01`).
    #[serde(skip)]
    pub id: String,
    /// The case's directory (`case.toml`, `proj/`, `home/`, …).
    #[serde(skip)]
    pub dir: PathBuf,
    /// What the case shows, in one sentence.
    pub description: String,
    /// The rule ids (docs/opencode/) the case exercises.
    #[serde(default)]
    pub rules: Vec<String>,
    /// The case ids and matrix rows (docs/opencode/) it covers.
    #[serde(default)]
    pub covers: Vec<String>,
    /// Where its snapshot came from (`oracle`: recorded from the real binary).
    pub source: String,
    /// The capture command it was recorded with (documentation; record.sh warns on a
    /// difference).
    #[serde(default)]
    pub recorded_with: String,
    /// Set when opencode refused to build a prompt; ctxgraph must refuse too.
    #[serde(default)]
    pub oracle_error: Option<String>,
    /// How the case is laid out and run.
    #[serde(default)]
    pub run: Run,
    /// Skill names whose winner opencode picks by a race (B5.7): the recorded winner must be
    /// one of the files ctxgraph found with that name.
    #[serde(default)]
    pub racy: Vec<String>,
}

/// A case's `[run]` table: the layout and the session the capture ran.
#[derive(Debug, Default, Deserialize)]
pub struct Run {
    /// The working directory, relative to `proj/` (default `.`).
    #[serde(default = "dot")]
    pub cwd: String,
    /// Directories under `proj/` that are git repositories.
    #[serde(default)]
    pub git: Vec<String>,
    /// Dirs under `proj/` that get a `.git` holding only `HEAD` (no repository to git).
    #[serde(default)]
    pub git_head_only: Vec<String>,
    /// Extra environment variables; path values are relative to `proj/<cwd>`.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Files (relative to `proj/`) the read tool reads, one capture each.
    #[serde(default)]
    pub reads: Vec<String>,
    /// Files that reads fail on with `EACCES` (mode 000 for a non-root user).
    #[serde(default)]
    pub unreadable: Vec<String>,
    /// Files made mode 000 on disk, as recorded by an oracle running as root (which reads
    /// them anyway). In memory they stay readable, which is what root sees.
    #[serde(default)]
    pub mode_000: Vec<String>,
    /// The unprivileged user record.sh ran opencode as, so that `unreadable` files were
    /// really denied (root is not denied by mode 000).
    #[serde(default)]
    pub oracle_user: Option<String>,
}

fn dot() -> String {
    ".".to_owned()
}

/// Every case under `tests/conformance`, sorted by id.
pub fn cases() -> Vec<Case> {
    cases_in("conformance")
}

/// Every skills case under `tests/conformance/skills` (recorded by
/// `tests/oracle/record-skills.sh` into each case's `expected.txt`), sorted by id.
pub fn skill_cases() -> Vec<Case> {
    cases_in("conformance/skills")
}

fn cases_in(dir: &str) -> Vec<Case> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut cases: Vec<Case> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .filter_map(Result::ok)
        .filter(|entry| entry.path().join("case.toml").is_file())
        .map(|entry| Case::load(&entry.path()))
        .collect();
    cases.sort_by(|a, b| a.id.cmp(&b.id));
    cases
}

impl Case {
    /// The case in `dir` (`tests/conformance/<ID>`), from its `case.toml`.
    pub fn load(dir: &Path) -> Case {
        let text = std::fs::read_to_string(dir.join("case.toml")).expect("case.toml is readable");
        let mut case: Case =
            toml::from_str(&text).unwrap_or_else(|err| panic!("{}: {err}", dir.join("case.toml").display()));
        case.id = dir.file_name().expect("a case dir has a name").to_string_lossy().into_owned();
        case.dir = dir.to_path_buf();
        case
    }
}

/// Which `System` a case runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// A `MemorySystem` laid out like the capture's scratch run.
    Memory,
    /// A real temporary directory, through the engine's `OsSystem`.
    Disk,
}

/// What ctxgraph produced for a case.
pub enum Outcome {
    /// The rendered snapshot body.
    Rendered(String),
    /// ctxgraph refused to build (as opencode does for `oracle_error` cases).
    Refused(EngineError),
    /// The case cannot run on this backend (e.g. `unreadable` files when running as
    /// root on disk).
    Skipped(&'static str),
}

/// Runs `case` on `backend`, rendering the prompt in the oracle snapshot format. The case is
/// laid out with each folder listed as the oracle's disk listed it (`listing.txt`; in memory,
/// every other folder in an order neither sorted nor reverse-sorted). Where a disk cannot
/// list a folder so (ext4 lists by a hash seeded per file system) and `expected` is given,
/// the blocks one glob call matched at one level, whose order follows the listing (F4), are
/// put in the order the oracle printed them: compared as a set.
pub fn run(case: &Case, backend: Backend, expected: Option<&str>) -> Outcome {
    let scratch;
    let mut listed_as_recorded = true;
    let (system, run_dir): (Arc<dyn System>, PathBuf) = match backend {
        Backend::Memory => (memory_system(case), PathBuf::from(MEMORY_RUN)),
        Backend::Disk => {
            scratch = tempfile::tempdir().expect("temp dir");
            let run_dir = std::fs::canonicalize(scratch.path()).expect("canonical temp dir");
            lay_out(case, &run_dir, &mut DiskWriter);
            listed_as_recorded = Listing::of(&case.dir).on_disk(&|d| in_run(&run_dir, d));
            for path in &case.run.unreadable {
                if !make_unreadable(&run_dir.join("proj").join(path)) {
                    return Outcome::Skipped("unreadable files are readable here (running as root)");
                }
            }
            for path in &case.run.mode_000 {
                if make_unreadable(&run_dir.join("proj").join(path)) {
                    return Outcome::Skipped("mode-000 files are unreadable here (not running as root)");
                }
            }
            (Arc::new(OsSystem), run_dir)
        }
    };
    let mut engine = Engine::new(system, host_env(case, &run_dir));
    let proj = run_dir.join("proj");
    let ws = match engine.open(&proj.join(&case.run.cwd)) {
        Ok(ws) => ws,
        Err(err) => return Outcome::Refused(err),
    };
    let model: ModelRef = MODEL.parse().expect("valid model");
    let (prompt, paths) =
        match engine.system_prompt(ws, Some(model)).and_then(|p| Ok((p, engine.system_paths(ws)?))) {
            Ok(found) => found,
            Err(err) => return Outcome::Refused(err),
        };
    let normalize = |text: &str| normalize(text, &run_dir);
    let system = match expected {
        Some(expected) if !listed_as_recorded => in_oracle_glob_order(&prompt, &paths, expected, &normalize),
        _ => normalize(&prompt.text()),
    };
    let mut out = String::new();
    section(&mut out, "system", &system);
    for read in &case.run.reads {
        let text = match engine.nearby(ws, &proj.join(read)) {
            Ok(nearby) => nearby.reminder().unwrap_or_default(),
            Err(err) => return Outcome::Refused(err),
        };
        section(&mut out, &format!("nearby {read}"), &normalize(&text));
    }
    out.push_str("=== end\n");
    Outcome::Rendered(out)
}

/// A case laid out on a backend, with an engine open at its `cwd`.
pub struct Opened {
    /// The engine over the case's system.
    pub engine: Engine,
    /// The workspace of the case's `cwd`.
    pub ws: ctxgraph_db::Workspace,
    /// Where the run is laid out (`<RUN>`).
    pub run_dir: PathBuf,
    _scratch: Option<tempfile::TempDir>,
}

impl Opened {
    /// `capture.sh`'s normalisation of a text of this run.
    pub fn normalize(&self, text: &str) -> String {
        normalize(text, &self.run_dir)
    }
}

/// Lays `case` out on `backend` as `capture.sh` does and opens an engine at its `cwd`.
pub fn open(case: &Case, backend: Backend) -> Opened {
    open_with_env(case, backend, BTreeMap::new())
}

/// [`open`], with variables added to the environment (a server's URL the case's config
/// reads through `{env:}`).
pub fn open_with_env(case: &Case, backend: Backend, extra: BTreeMap<String, String>) -> Opened {
    let (system, run_dir, scratch): (Arc<dyn System>, PathBuf, _) = match backend {
        Backend::Memory => (memory_system(case), PathBuf::from(MEMORY_RUN), None),
        Backend::Disk => {
            let scratch = tempfile::tempdir().expect("temp dir");
            let run_dir = std::fs::canonicalize(scratch.path()).expect("canonical temp dir");
            lay_out(case, &run_dir, &mut DiskWriter);
            // As recorded where this disk can list so (tmpfs; the recording's own ext4).
            Listing::of(&case.dir).on_disk(&|d| in_run(&run_dir, d));
            (Arc::new(OsSystem) as Arc<dyn System>, run_dir, Some(scratch))
        }
    };
    let mut env = host_env(case, &run_dir);
    env.vars.extend(extra);
    let mut engine = Engine::new(system, env);
    let ws = engine.open(&run_dir.join("proj").join(&case.run.cwd)).expect("the case's cwd opens");
    Opened { engine, ws, run_dir, _scratch: scratch }
}

/// The case laid out in memory under [`MEMORY_RUN`].
fn memory_system(case: &Case) -> Arc<dyn System> {
    let fs = MemorySystem::new();
    let run_dir = PathBuf::from(MEMORY_RUN);
    lay_out(case, &run_dir, &mut MemoryWriter(&fs));
    for path in &case.run.unreadable {
        fs.set_unreadable(run_dir.join("proj").join(path));
    }
    Listing::of(&case.dir).in_memory(&fs, &|d| in_run(&run_dir, d));
    Arc::new(fs)
}

/// Where a folder of a case's `listing.txt` (`proj/…`, `home/…`, `global/…`) lies in the
/// run `capture.sh` lays out.
fn in_run(run_dir: &Path, dir: &str) -> PathBuf {
    match dir.split_once('/').map_or((dir, ""), |(top, rest)| (top, rest)) {
        ("global", rest) => run_dir.join("config/opencode").join(rest),
        (top, rest) => run_dir.join(top).join(rest),
    }
}

/// An engine over the case laid out in memory, and the workspace of its `cwd`, for tests
/// that ask the engine other questions than the oracle's.
pub fn memory_engine(case: &Case) -> Result<(Engine, ctxgraph_db::Workspace), EngineError> {
    let run_dir = PathBuf::from(MEMORY_RUN);
    let mut engine = Engine::new(memory_system(case), host_env(case, &run_dir));
    let ws = engine.open(&run_dir.join("proj").join(&case.run.cwd))?;
    Ok((engine, ws))
}

fn section(out: &mut String, title: &str, text: &str) {
    let _ = write!(out, "=== {title}: {} bytes\n{text}\n", text.len());
}

/// The environment `capture.sh` isolates opencode in, for a run rooted at `run_dir`: home
/// and XDG dirs inside the run, the managed dir redirected, updates and sharing off.
pub fn oracle_vars(run_dir: &Path) -> BTreeMap<String, String> {
    let at = |p: &str| run_dir.join(p).to_string_lossy().into_owned();
    let mut vars = BTreeMap::from([
        ("HOME".to_owned(), at("home")),
        ("XDG_CONFIG_HOME".to_owned(), at("config")),
        ("XDG_DATA_HOME".to_owned(), at("data")),
        ("XDG_CACHE_HOME".to_owned(), at("cache")),
        ("XDG_STATE_HOME".to_owned(), at("state")),
        ("OPENCODE_TEST_MANAGED_CONFIG_DIR".to_owned(), at("managed")),
    ]);
    for flag in ["AUTOUPDATE", "MODELS_FETCH", "SHARE", "LSP_DOWNLOAD"] {
        vars.insert(format!("OPENCODE_DISABLE_{flag}"), "1".to_owned());
    }
    vars
}

/// Every recorded case below `root` (one directory each, described by its `case.toml`), in
/// directory order: its id (the directory's name), directory and parsed description.
pub fn recorded_cases<T: serde::de::DeserializeOwned>(root: &Path) -> Vec<(String, PathBuf, T)> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap_or_else(|err| panic!("{}: {err}", root.display()))
        .map(|entry| entry.expect("entry").path())
        .collect();
    dirs.sort();
    dirs.into_iter()
        .map(|dir| {
            let id = dir.file_name().and_then(|n| n.to_str()).expect("id").to_owned();
            let text = std::fs::read_to_string(dir.join("case.toml")).expect("case.toml");
            let case = toml::from_str(&text).unwrap_or_else(|err| panic!("{id}/case.toml: {err}"));
            (id, dir, case)
        })
        .collect()
}

/// Lays a `record-config.sh` case (`dir`: proj/, global/, home/, managed/, extra/, data/)
/// out under `run` as that script does, and returns its environment (`<RUN>` in `env`
/// values is `run`).
pub fn lay_out_config_case(dir: &Path, run: &Path, git: bool, env: &BTreeMap<String, String>) -> HostEnv {
    for sub in ["home", "config/opencode", "data/opencode", "cache", "state", "managed", "proj"] {
        std::fs::create_dir_all(run.join(sub)).expect("mkdir");
    }
    for part in ["proj", "home", "managed", "extra"] {
        copy_tree_to_disk(&dir.join(part), &run.join(part));
    }
    copy_tree_to_disk(&dir.join("global"), &run.join("config/opencode"));
    copy_tree_to_disk(&dir.join("data"), &run.join("data/opencode"));
    if git {
        for dir in ["objects", "refs"] {
            std::fs::create_dir_all(run.join("proj/.git").join(dir)).expect("git");
        }
        std::fs::write(run.join("proj/.git/HEAD"), "ref: refs/heads/main\n").expect("HEAD");
    }
    let mut vars = oracle_vars(run);
    vars.insert("USER".to_owned(), "tester".to_owned());
    let run_text = run.to_string_lossy();
    for (name, value) in env {
        vars.insert(name.clone(), value.replace("<RUN>", &run_text));
    }
    HostEnv { vars, home: run.join("home"), platform: "linux".to_owned(), date: DATE.to_owned() }
}

/// The two `System` backends over a run laid out on disk at `run`: the disk itself, and the
/// same tree copied into memory at the same path, listed in an order neither sorted nor
/// reverse-sorted (so a query that assumes a sorted listing is caught).
pub fn both_backends(run: &Path) -> [(&'static str, Arc<dyn System>); 2] {
    let fs = MemorySystem::new();
    copy_tree(run, run, &mut MemoryWriter(&fs));
    fs.set_listing_order(ListingOrder::Hashed);
    [("disk", Arc::new(OsSystem)), ("memory", Arc::new(fs))]
}

/// `capture.sh`'s environment for a run rooted at `run_dir`, with the provider it injects.
fn host_env(case: &Case, run_dir: &Path) -> HostEnv {
    let mut vars = oracle_vars(run_dir);
    vars.insert(
        "OPENCODE_CONFIG_CONTENT".to_owned(),
        concat!(
            r#"{"provider":{"fake":{"npm":"@ai-sdk/openai-compatible","name":"Fake","#,
            "\n",
            r#" "options":{"baseURL":"http://127.0.0.1:9/v1","apiKey":"x"},"models":{"fake-model":{"name":"fake-model"}}}},"#,
            "\n",
            r#" "model":"fake/fake-model","small_model":"fake/fake-model","autoupdate":false,"share":"disabled"}"#
        )
        .to_owned(),
    );
    vars.extend(case.run.env.clone());
    HostEnv { vars, home: run_dir.join("home"), platform: "linux".to_owned(), date: DATE.to_owned() }
}

/// `capture.sh`'s normalisation: scratch paths to placeholders, the date line to `<DATE>`.
pub fn normalize(text: &str, run_dir: &Path) -> String {
    let run = run_dir.to_string_lossy();
    let mut out = text
        .replace(&format!("{run}/proj"), "<FIXTURE>")
        .replace(&format!("{run}/config"), "<XDG_CONFIG>")
        .replace(&format!("{run}/home"), "<HOME>")
        .replace(run.as_ref(), "<RUN>");
    out = out.replace(&format!("Today's date: {DATE}"), "Today's date: <DATE>");
    out
}

/// The system text with each run of blocks from one glob call (same `instructions` entry,
/// same directory level) in the order those paths appear in `expected`.
fn in_oracle_glob_order(
    prompt: &Prompt,
    paths: &SystemPaths,
    expected: &str,
    normalize: &dyn Fn(&str) -> String,
) -> String {
    let group = |block: &Block| match block.candidate.map(|c| &paths.candidates[c].origin) {
        Some(Origin::Instruction { entry, dir }) => Some((entry.index, dir.clone())),
        _ => None,
    };
    let position = |block: &Block| {
        let header = normalize(block.text.lines().next().unwrap_or(""));
        expected.find(&format!("{header}\n")).unwrap_or(usize::MAX)
    };
    let mut blocks: Vec<&Block> = prompt.blocks.iter().collect();
    let mut start = 0;
    while start < blocks.len() {
        let key = group(blocks[start]);
        let end = match key {
            Some(_) => start + blocks[start..].iter().take_while(|b| group(b) == key).count(),
            None => start + 1,
        };
        blocks[start..end].sort_by_key(|b| position(b));
        start = end;
    }
    let texts: Vec<&str> = blocks.iter().map(|b| &*b.text).collect();
    normalize(&texts.join("\n"))
}

/// The body of a recorded snapshot (after its YAML header).
pub fn snapshot_body(id: &str) -> Option<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../snapshots/conformance__{id}.snap"));
    let text = std::fs::read_to_string(path).ok()?;
    let body = text.splitn(3, "---\n").nth(2)?;
    Some(body.to_owned())
}

/// `capture.sh` step 2: `proj/` (with `.git` where the case says), `home/`,
/// `config/opencode/` and the empty scratch dirs.
fn lay_out(case: &Case, run_dir: &Path, out: &mut dyn TreeWriter) {
    for dir in ["home", "config/opencode", "data", "cache", "state", "managed", "proj"] {
        out.dir(&run_dir.join(dir));
    }
    copy_tree(&case.dir.join("proj"), &run_dir.join("proj"), out);
    copy_tree(&case.dir.join("home"), &run_dir.join("home"), out);
    copy_tree(&case.dir.join("global"), &run_dir.join("config/opencode"), out);
    for repo in &case.run.git {
        git_worktree(&run_dir.join("proj").join(repo), out);
    }
    for dir in &case.run.git_head_only {
        // A `.git` directory that git does not accept as a repository.
        out.file(&run_dir.join("proj").join(dir).join(".git/HEAD"), b"ref: refs/heads/main\n".to_vec());
    }
}

/// chmod 000; false when the file can still be read (root).
fn make_unreadable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o000)).expect("chmod");
    std::fs::read(path).is_err()
}
