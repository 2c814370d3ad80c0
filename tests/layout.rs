//! The crate graph keeps the layout ARCHITECTURE.md describes (issue #42, item 4), read from
//! `cargo metadata`'s resolved graph:
//!
//! - the no-I/O crates live under `queries/` (at least three of them), and none has tokio or
//!   reqwest among its normal dependencies, even transitively;
//! - no dev-dependency points up the graph: a crate's tests use only crates it does not sit
//!   below (a dev-dependency that depends on the crate would link two copies of it and hide
//!   layering mistakes behind test-only edges);
//! - an agent is named only in its folders and the registry, and no two modules of a crate
//!   refer to each other (read from the sources).

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// What a crate under `queries/` may not link: an async runtime or an HTTP client.
const FORBIDDEN_IN_QUERIES: &[&str] = &["tokio", "reqwest"];

/// One package of the resolved graph and its edges, by kind.
#[derive(Default)]
struct Node {
    name: String,
    manifest: PathBuf,
    member: bool,
    normal: Vec<String>,
    dev: Vec<String>,
}

/// The workspace's resolved graph, packages by id.
struct Graph {
    root: PathBuf,
    nodes: BTreeMap<String, Node>,
}

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| env!("CARGO").to_owned())
}

/// The host's target triple: the graph is the one this machine builds (a `cfg(windows)`
/// dependency is not), and no other platform's manifests need to be in the local registry.
fn host_triple() -> String {
    let out = Command::new("rustc").arg("-vV").output().expect("rustc -vV runs");
    let text = String::from_utf8(out.stdout).expect("rustc -vV prints UTF-8");
    text.lines().find_map(|l| l.strip_prefix("host: ")).expect("rustc -vV names its host").to_owned()
}

fn graph() -> Graph {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.toml");
    // Offline: a test talks to no server it did not start (the registry included); the
    // build that compiled this test already has every manifest of the host's graph.
    let out = Command::new(cargo())
        .args(["metadata", "--format-version", "1", "--offline", "--locked", "--filter-platform"])
        .arg(host_triple())
        .arg("--manifest-path")
        .arg(&manifest)
        .output()
        .expect("cargo metadata runs");
    assert!(out.status.success(), "cargo metadata failed: {}", String::from_utf8_lossy(&out.stderr));
    let meta: Value = serde_json::from_slice(&out.stdout).expect("cargo metadata prints JSON");
    let members: BTreeSet<&str> = meta["workspace_members"]
        .as_array()
        .expect("workspace_members")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let mut nodes = BTreeMap::new();
    for package in meta["packages"].as_array().expect("packages") {
        let id = package["id"].as_str().expect("package id").to_owned();
        let node = Node {
            name: package["name"].as_str().expect("package name").to_owned(),
            manifest: PathBuf::from(package["manifest_path"].as_str().expect("manifest_path")),
            member: members.contains(id.as_str()),
            ..Node::default()
        };
        nodes.insert(id, node);
    }
    for resolved in meta["resolve"]["nodes"].as_array().expect("resolve.nodes") {
        let node =
            nodes.get_mut(resolved["id"].as_str().expect("node id")).expect("a resolved node is a package");
        for dep in resolved["deps"].as_array().expect("deps") {
            let pkg = dep["pkg"].as_str().expect("dep pkg").to_owned();
            let kinds: Vec<Option<&str>> =
                dep["dep_kinds"].as_array().expect("dep_kinds").iter().map(|k| k["kind"].as_str()).collect();
            if kinds.contains(&None) {
                node.normal.push(pkg.clone());
            }
            if kinds.contains(&Some("dev")) {
                node.dev.push(pkg);
            }
        }
    }
    let root = PathBuf::from(meta["workspace_root"].as_str().expect("workspace_root"));
    Graph { root, nodes }
}

impl Graph {
    /// Every package `from` links through normal dependencies, `from` excluded unless a
    /// cycle leads back to it.
    fn normal_closure(&self, from: &str) -> BTreeSet<&str> {
        let mut seen = BTreeSet::new();
        let mut queue: VecDeque<&str> = self.nodes[from].normal.iter().map(String::as_str).collect();
        while let Some(id) = queue.pop_front() {
            if seen.insert(id) {
                queue.extend(self.nodes[id].normal.iter().map(String::as_str));
            }
        }
        seen
    }

    /// The workspace crates whose manifest is under `queries/`, by id.
    fn query_crates(&self) -> Vec<&str> {
        let queries = self.root.join("queries");
        self.nodes
            .iter()
            .filter(|(_, n)| n.member && n.manifest.starts_with(&queries))
            .map(|(id, _)| id.as_str())
            .collect()
    }
}

#[test]
fn query_crates_link_no_runtime_or_http_client() {
    let graph = graph();
    let crates = graph.query_crates();
    let names: Vec<&str> = crates.iter().map(|id| graph.nodes[*id].name.as_str()).collect();
    assert!(
        crates.len() >= 3,
        "queries/ holds {} crates ({names:?}); the no-I/O layer is at least three",
        crates.len()
    );
    let mut found = Vec::new();
    for id in &crates {
        for dep in graph.normal_closure(id) {
            let dep = &graph.nodes[dep].name;
            if FORBIDDEN_IN_QUERIES.contains(&dep.as_str()) {
                found.push(format!("{} → {dep}", graph.nodes[*id].name));
            }
        }
    }
    assert!(
        found.is_empty(),
        "crates under queries/ link I/O machinery through normal dependencies: {found:?}"
    );
}

#[test]
fn dev_dependencies_point_down_only() {
    let graph = graph();
    let mut upward = Vec::new();
    for (id, node) in graph.nodes.iter().filter(|(_, n)| n.member) {
        // A crate's dev-dependency on itself (to turn a feature on for its own tests) is
        // not an edge up.
        for dev in node.dev.iter().filter(|dev| *dev != id) {
            if graph.normal_closure(dev).contains(id.as_str()) {
                upward.push(format!(
                    "{} dev-depends on {}, which depends on it",
                    node.name, graph.nodes[dev].name
                ));
            }
        }
    }
    assert!(upward.is_empty(), "dev-dependencies up the crate graph: {upward:#?}");
}

/// Production source files outside the agents' folders: every crate's `src/`, without tests.
fn production_sources(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            let skipped = ["target", "tests", "benches", "examples", "fuzz", "test-support", ".git"];
            if path.is_dir() && !skipped.contains(&name.as_str()) && !name.starts_with('.') {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "rs")
                && name != "tests.rs"
                && path.components().any(|c| c.as_os_str() == "src")
            {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// An agent's folders and the names its code goes by: `Agent::<Variant>` and its module path.
struct AgentNames {
    agent: ctxgraph_db::agent::Agent,
    folders: Vec<PathBuf>,
    pattern: regex::Regex,
}

fn agent_names(root: &Path) -> Vec<AgentNames> {
    use ctxgraph_db::agent::Agent;
    Agent::ALL
        .iter()
        .map(|&agent| {
            let variant = format!("{agent:?}");
            if agent == Agent::Opencode {
                // Its crate, and its engine-side folder: what needs inputs set from outside
                // (sessions appended as they arrive, remote config), which the no-I/O crate
                // cannot hold.
                return AgentNames {
                    agent,
                    folders: vec![root.join("queries/opencode"), root.join("engine/src/opencode")],
                    pattern: regex::Regex::new(r"\bAgent::Opencode\b|\bctxgraph_opencode\b|\bopencode::")
                        .expect("pattern"),
                };
            }
            let base = agent.name().replace('-', "_");
            let folder = [
                format!("queries/agents/src/{base}"),
                format!("queries/agents/src/{base}_cli"),
                format!("queries/opencode/src/{base}"),
            ]
            .into_iter()
            .map(|f| root.join(f))
            .find(|f| f.is_dir())
            .unwrap_or_else(|| panic!("{agent}: no folder of its own"));
            let module = folder.file_name().expect("a folder name").to_string_lossy().into_owned();
            let pattern = regex::Regex::new(&format!(r"\bAgent::{variant}\b|\b{module}::")).expect("pattern");
            AgentNames { agent, folders: vec![folder], pattern }
        })
        .collect()
}

/// Issue #42, item 3: an agent is its folder plus its line in the registry. Outside the
/// agents' folders, an agent's code names (`Agent::Codex`, `codex::`) appear in at most two
/// production files: `queries/db/src/agent.rs` (the enum) and `engine/src/lib.rs` (the
/// profile table, and opencode's engine-side folder). A surface asks a profile what it
/// can do (`explains_in_full`, `sessions_live`), never which agent it is.
#[test]
fn an_agent_is_named_only_in_its_folder_and_the_registry() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace").to_path_buf();
    let sources = production_sources(&root);
    let agents_folders = root.join("queries/agents/src");
    let mut report = Vec::new();
    for names in agent_names(&root) {
        let naming: Vec<String> = sources
            .iter()
            .filter(|file| !names.folders.iter().any(|folder| file.starts_with(folder)))
            // Another agent's folder may build on this one (Qwen Code on Gemini CLI's).
            .filter(|file| {
                file.strip_prefix(&agents_folders).map_or(true, |rel| rel.components().count() == 1)
            })
            .filter(|file| {
                let text = std::fs::read_to_string(file).unwrap_or_default();
                text.lines()
                    .map(|line| line.split("//").next().unwrap_or_default())
                    .any(|code| names.pattern.is_match(code))
            })
            .map(|file| file.strip_prefix(&root).unwrap_or(file).display().to_string())
            .collect();
        let limit = 2;
        if naming.len() > limit {
            report.push(format!(
                "{} is named in {} files (at most {limit}): {naming:?}",
                names.agent,
                naming.len()
            ));
        }
    }
    assert!(report.is_empty(), "{}", report.join("\n"));
}

/// One crate's modules, each by its path below the crate root (`["opencode", "session"]`),
/// with the source file that holds it.
fn modules_of(src: &Path) -> BTreeMap<Vec<String>, PathBuf> {
    let mut modules = BTreeMap::new();
    let mut pending = vec![src.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let relative = path.strip_prefix(src).expect("below src").with_extension("");
            let mut module: Vec<String> =
                relative.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
            // `a/mod.rs` is `a`; `lib.rs`, `main.rs` and `bin/*` are roots, not modules.
            if module.last().is_some_and(|last| last == "mod") {
                module.pop();
            }
            if module == ["lib"] || module == ["main"] || module.first().is_some_and(|m| m == "bin") {
                continue;
            }
            modules.insert(module, path);
        }
    }
    modules
}

/// The modules `module`'s code refers to by path (`crate::a::b`, `super::c`, `self::d`,
/// `use crate::{a::X, b::Y}`), each resolved to the longest known module it names.
fn references(
    module: &[String],
    file: &Path,
    known: &BTreeMap<Vec<String>, PathBuf>,
) -> BTreeSet<Vec<String>> {
    // Compiled once for every file of every crate.
    static PATH: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"\b(crate|super|self)::((?:[a-z_][a-z0-9_]*::)*)(\{[^}]*\}|[a-z_][a-z0-9_]*)?")
            .expect("pattern")
    });
    let text = std::fs::read_to_string(file).unwrap_or_default();
    // `super` is the parent module, whether the module is `a/b.rs` or `a/b/mod.rs`.
    let parent: Vec<String> = module[..module.len() - 1].to_vec();
    let mut found = BTreeSet::new();
    let mut resolve = |base: Vec<String>, rest: &str| {
        let mut segments = base;
        segments.extend(rest.split("::").filter(|s| !s.is_empty()).map(str::to_owned));
        while !segments.is_empty() {
            if known.contains_key(&segments) {
                found.insert(segments);
                return;
            }
            segments.pop();
        }
    };
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or_default();
        for caps in PATH.captures_iter(code) {
            let base = match &caps[1] {
                "crate" => Vec::new(),
                "super" => parent.clone(),
                _ => module.to_vec(),
            };
            let prefix = caps.get(2).map_or("", |m| m.as_str());
            match caps.get(3).map(|m| m.as_str()) {
                Some(group) if group.starts_with('{') => {
                    for item in group.trim_matches(|c| c == '{' || c == '}').split(',') {
                        resolve(base.clone(), &format!("{prefix}{}", item.trim()));
                    }
                }
                Some(last) => resolve(base.clone(), &format!("{prefix}{last}")),
                None => resolve(base.clone(), prefix),
            }
        }
    }
    found
}

/// The cycles among the modules of the crate whose sources are `src`, each as the trail
/// that closes it. Two modules where neither contains the other may not reach each other
/// through their references; a parent and its child referring to each other is how a module
/// is split, not a tangle.
fn module_cycles(src: &Path) -> Vec<String> {
    let modules = modules_of(src);
    let contains = |outer: &[String], inner: &[String]| inner.starts_with(outer);
    let edges: BTreeMap<&Vec<String>, BTreeSet<Vec<String>>> = modules
        .iter()
        .map(|(module, file)| {
            let targets = references(module, file, &modules)
                .into_iter()
                .filter(|target| !contains(module, target) && !contains(target, module))
                .collect();
            (module, targets)
        })
        .collect();
    let mut cycles = Vec::new();
    for start in edges.keys() {
        // Depth first from the start's targets, each module once: bounded by the crate's size.
        let mut seen = BTreeSet::new();
        let mut pending: Vec<(Vec<String>, Vec<String>)> =
            edges[start].iter().map(|t| (t.clone(), vec![t.join("::")])).collect();
        while let Some((at, trail)) = pending.pop() {
            // Back inside the start: its subtree reached itself through a module outside it.
            if contains(start, &at) {
                cycles.push(format!("{} → {}", start.join("::"), trail.join(" → ")));
                break;
            }
            if !seen.insert(at.clone()) {
                continue;
            }
            for next in edges.get(&at).into_iter().flatten() {
                let mut trail = trail.clone();
                trail.push(next.join("::"));
                pending.push((next.clone(), trail));
            }
        }
    }
    cycles
}

/// Issue #42, item 4: no module cycles inside a crate (see [`module_cycles`]).
#[test]
fn no_module_cycles_inside_a_crate() {
    let graph = graph();
    let mut report = Vec::new();
    for node in graph.nodes.values().filter(|n| n.member) {
        let src = node.manifest.parent().expect("a crate directory").join("src");
        report.extend(module_cycles(&src).into_iter().map(|cycle| format!("{}: {cycle}", node.name)));
    }
    assert!(report.is_empty(), "module cycles:\n{}", report.join("\n"));
}

/// The check finds a cycle between siblings, through a grouped import and `super::`, and
/// takes a parent and its child naming each other for what it is.
#[test]
fn module_cycles_are_found_between_siblings_only() {
    let dir = tempfile::tempdir().expect("temp dir");
    let src = dir.path().join("src");
    let write = |relative: &str, text: &str| {
        let path = src.join(relative);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    };
    write("lib.rs", "mod a;\nmod b;\nmod c;\n");
    write("a/mod.rs", "mod inner;\nuse crate::{b::Thing, c};\nuse self::inner::X;\n");
    write("a/inner.rs", "use super::Y; // the parent's\n");
    write("b.rs", "pub struct Thing;\n// use crate::a::Nothing; a comment is no reference\n");
    write("c.rs", "fn f() { super::b::Thing }\n");
    assert_eq!(module_cycles(&src), Vec::<String>::new());
    write("b.rs", "pub struct Thing;\nuse crate::a::inner::X;\n");
    let cycles = module_cycles(&src);
    // Found once, from `a`'s side (from `b` the walk never climbs back out of `a::inner`).
    assert_eq!(cycles.len(), 1, "{cycles:?}");
    assert!(cycles[0].starts_with("a → ") && cycles[0].ends_with(" → b → a::inner"), "{cycles:?}");
}
