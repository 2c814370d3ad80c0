//! The engine's questions about opencode alone: its prompt and message, config, agents,
//! explanation, lint, memory, remote documents and its installation's texts.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ctxgraph_db::agent::Agent;
use ctxgraph_db::installation::InstallationState;
use ctxgraph_db::lint::{Budget, Finding};
use ctxgraph_db::profile;
use ctxgraph_db::remote::ConfigRequest;
use ctxgraph_db::system::FileKind;
use ctxgraph_db::{Db, Workspace};
use ctxgraph_memory::recall::{MemorySettings, Recall, memory_context, skipped_lines, unreadable_store_file};
use ctxgraph_memory::record::Skipped;
use ctxgraph_memory::render::MemoryContext;
use ctxgraph_opencode::agents::{Agents, agents};
use ctxgraph_opencode::config::wellknown::pending_requests;
use ctxgraph_opencode::config::{MergedConfig, merged_config};
use ctxgraph_opencode::explain::{Explanation, TargetExplanation, explain, explain_target};
use ctxgraph_opencode::instructions::{SystemPaths, system_paths};
use ctxgraph_opencode::lint::lint;
use ctxgraph_opencode::memory::prompt_memory;
use ctxgraph_opencode::message::{MessageOptions, system_message, system_message_layout};
use ctxgraph_opencode::nearby::{Nearby, nearby_rules};
use ctxgraph_opencode::prompt::{
    BuildError, Layout, ModelRef, Prompt, Section, system_prompt, system_prompt_layout,
};

use super::installation;
use crate::{Engine, EngineError, O200k, RemoteState, answers, current_thread_runtime, profiles, remote};

/// opencode's texts by name ([`Engine::installation_texts`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InstallationTexts {
    /// The executable the texts were read from; `None` without an installation.
    pub binary: Option<PathBuf>,
    /// Its release.
    pub version: Option<String>,
    /// Each text asked for that was found and verified.
    pub texts: std::collections::BTreeMap<String, String>,
    /// Why each other one is not.
    pub unavailable: std::collections::BTreeMap<String, String>,
}

impl Engine {
    /// The system text from the environment block to the last instruction block.
    pub fn system_prompt(&self, ws: Workspace, model: Option<ModelRef>) -> Result<Prompt, EngineError> {
        Ok(system_prompt(&self.db, ws, model).clone()?)
    }

    /// The whole system message (docs/opencode/prompt.md) opencode sends for `options` (A1–A2, B1–B5): the
    /// installation's texts come from [`Engine::load_installation`].
    pub fn system_message(&self, ws: Workspace, options: MessageOptions) -> Result<Prompt, EngineError> {
        Ok(system_message(&self.db, ws, options).clone()?)
    }

    /// The merged config with the provenance of every value (C1–C7).
    pub fn merged_config(&self, ws: Workspace) -> Result<MergedConfig, EngineError> {
        merged_config(&self.db, ws).clone().map_err(|e| EngineError::Build(BuildError::Config(e)))
    }

    /// G1–G2: opencode's agents with their permission rulesets.
    pub fn agents(&self, ws: Workspace) -> Result<Agents, EngineError> {
        agents(&self.db, ws).clone().map_err(|e| EngineError::Build(BuildError::Config(e)))
    }

    /// B5: why each skill is in or out of `agent`'s skills block (for `explain`).
    pub fn explain_skills(
        &self,
        ws: Workspace,
        agent: &str,
    ) -> Result<ctxgraph_opencode::skills::explain::SkillsExplanation, EngineError> {
        use ctxgraph_opencode::skills::ListingError;
        ctxgraph_opencode::skills::explain::explain_skills(&self.db, ws, agent).map_err(|e| match e {
            ListingError::Config(e) => EngineError::Build(BuildError::Config(e)),
            ListingError::UnknownAgent(name) => EngineError::UnknownAgent {
                name,
                available: agents(&self.db, ws)
                    .as_ref()
                    .map(|all| all.list.iter().map(|a| a.key.clone()).collect())
                    .unwrap_or_default(),
            },
        })
    }

    /// R1–R4: the remote config requests the workspace still needs.
    pub fn config_requests(&self, ws: Workspace) -> Vec<ConfigRequest> {
        pending_requests(&self.db, ws)
    }

    /// Fetches the workspace's remote config (the well-known documents, then the
    /// `remote_config` URLs they name) and sets the inputs. A failure is not returned here:
    /// the config query turns it into opencode's error.
    pub async fn load_config(&mut self, ws: Workspace, fetcher: &remote::Fetcher) {
        // Each round can only reveal requests named by the previous one (R4: two levels).
        for _ in 0..3 {
            let requests = self.config_requests(ws);
            if requests.is_empty() {
                break;
            }
            let mut states = Vec::with_capacity(requests.len());
            for request in &requests {
                states.push(fetcher.load_config(request).await);
            }
            self.set_config_docs(requests.into_iter().zip(states));
        }
    }

    /// [`Engine::load_config`] on a runtime of its own, for callers without one. Inside a
    /// tokio runtime, await [`Engine::load_config`] instead (a runtime cannot block on
    /// another one).
    pub fn fetch_config(&mut self, ws: Workspace, fetcher: &remote::Fetcher) -> Result<(), EngineError> {
        if !self.config_requests(ws).is_empty() {
            current_thread_runtime()?.block_on(self.load_config(ws, fetcher));
        }
        Ok(())
    }

    /// The memoized prompt's blocks, without copying them, for a host that reads them each
    /// step ([`super::Turns`] read [`Engine::layout`] instead: the text laid out, memoized too).
    pub fn prompt(&self, ws: Workspace, model: Option<ModelRef>) -> Result<&Prompt, EngineError> {
        system_prompt(&self.db, ws, model).as_ref().map_err(|err| EngineError::Build(err.clone()))
    }

    /// [`Engine::system_message`] without a copy: the memoized message.
    pub fn message(&self, ws: Workspace, options: MessageOptions) -> Result<&Prompt, EngineError> {
        system_message(&self.db, ws, options).as_ref().map_err(|err| EngineError::from(err.clone()))
    }

    /// `section` of the system prompt (or, for [`Section::Message`], of the whole message)
    /// laid out, memoized: the same `Arc` for as long as the text is unchanged.
    pub fn layout(
        &self,
        ws: Workspace,
        section: Section,
        options: MessageOptions,
    ) -> Result<&Arc<Layout>, EngineError> {
        if section == Section::Message {
            system_message_layout(&self.db, ws, options)
                .as_ref()
                .map_err(|err| EngineError::from(err.clone()))
        } else {
            system_prompt_layout(&self.db, ws, section, options.model)
                .as_ref()
                .map_err(|err| EngineError::Build(err.clone()))
        }
    }

    /// What discovery found, with the facts behind each decision.
    pub fn system_paths(&self, ws: Workspace) -> Result<SystemPaths, EngineError> {
        system_paths(&self.db, ws).clone().map_err(|e| EngineError::Build(BuildError::Config(e)))
    }

    /// N1–N5: the rule files a read of `file` would attach in a fresh session. The file
    /// must exist (the read tool fails before attaching anything otherwise); reading a
    /// directory attaches nothing.
    pub fn nearby(&self, ws: Workspace, file: &Path) -> Result<Nearby, EngineError> {
        let target = ctxgraph_db::path::resolve(ws.cwd(&self.db), file);
        // Through the input, which the engine keeps current: no system call when warm.
        let kind = self.db.files().get(&self.db, &target).kind(&self.db);
        match kind {
            FileKind::Missing | FileKind::Inaccessible => {
                Err(EngineError::ReadTarget { path: target, reason: "no such file".to_owned() })
            }
            FileKind::Directory => Ok(Nearby::directory()),
            FileKind::File | FileKind::Other => Ok(nearby_rules(&self.db, ws, target).clone()?),
        }
    }

    /// Why every rule file and URL discovery considered is, or is not, in the prompt,
    /// with `o200k_base` token counts.
    pub fn explain(&self, ws: Workspace) -> Result<Explanation, EngineError> {
        Ok(explain(&self.db, ws, &O200k)?)
    }

    /// B3's facts: every configured reference and whether it is listed.
    pub fn references(&self, ws: Workspace) -> Result<answers::stages::References, EngineError> {
        let references = ctxgraph_opencode::references::references(&self.db, ws);
        Ok(references.as_ref().map_err(|e| BuildError::Config(e.clone()))?.clone())
    }

    /// B4's facts for the opencode agent `agent`: every configured server and its fate.
    pub fn mcp_facts(
        &self,
        ws: Workspace,
        agent: &str,
    ) -> Result<Vec<answers::stages::McpServerFact>, EngineError> {
        let facts = ctxgraph_opencode::mcp::mcp_facts(&self.db, ws, agent.to_owned());
        Ok(facts.as_ref().map_err(|e| BuildError::Config(e.clone()))?.clone())
    }

    /// [`Engine::explain`] for one file, `instructions` entry or URL; relative paths are
    /// taken from `base`.
    pub fn explain_target(
        &self,
        ws: Workspace,
        target: &str,
        base: &Path,
    ) -> Result<TargetExplanation, EngineError> {
        Ok(explain_target(&self.db, ws, &O200k, target, base)?)
    }

    /// Lint findings for the rules loaded from `ws`, token budgets in `o200k_base` tokens.
    pub fn lint(&self, ws: Workspace, budget: Budget) -> Result<Vec<Finding>, EngineError> {
        Ok(lint(&self.db, ws, &O200k, budget)?)
    }

    /// ctxgraph's memory settings from the merged config (`memory.enabled`, the models).
    pub fn memory_settings(&self, ws: Workspace) -> Result<MemorySettings, EngineError> {
        Ok(self.merged_config(ws)?.memory())
    }

    /// docs/memory.md §11.1: the recalled blocks for `recall`, clamped, with every candidate's
    /// score or the reason it was cut. A store file that exists but cannot be read is an
    /// error naming it, not an empty recall.
    pub fn memory_recall(&self, ws: Workspace, recall: Recall) -> Result<MemoryContext, EngineError> {
        if let Some((path, reason)) = unreadable_store_file(&self.db, ws) {
            let path = ctxgraph_db::path::display(&path);
            return Err(EngineError::Build(BuildError::MemoryStore { path, reason }));
        }
        Ok(memory_context(&self.db, ws, recall).clone())
    }

    /// The `<memory>` part `build` appends (only with `memory.enabled: true`).
    pub fn prompt_memory(&self, ws: Workspace) -> Result<Option<MemoryContext>, EngineError> {
        prompt_memory(&self.db, ws).clone().map_err(|e| EngineError::Build(e.into()))
    }

    /// Lines of the memory files that recall skipped, by file.
    pub fn memory_skipped(&self, ws: Workspace) -> std::collections::BTreeMap<&'static str, Vec<Skipped>> {
        skipped_lines(&self.db, ws)
    }

    /// I8: the distinct `http(s)://` entries of the merged `instructions`, in config order,
    /// then what `skills.urls` needs now (B5.10: each index, then the SKILL.md files a
    /// loaded index names that the cache lacks).
    pub fn remote_urls(&self, ws: Workspace) -> Result<Vec<String>, EngineError> {
        let mut urls: Vec<String> = Vec::new();
        let skills = ctxgraph_opencode::skills::remote::skill_urls(&self.db, ws);
        let paths = system_paths(&self.db, ws)
            .as_ref()
            .map_err(|e| EngineError::Build(BuildError::Config(e.clone())))?;
        for url in paths.remote.iter().map(|entry| &entry.url).chain(&skills) {
            if !urls.contains(url) {
                urls.push(url.clone());
            }
        }
        Ok(urls)
    }

    /// Fetches every remote document (I8) the workspace needs and sets the inputs; returns
    /// each URL's state. The queries never wait on the network: until this has run, a URL
    /// adds no block.
    pub async fn load_remote(
        &mut self,
        ws: Workspace,
        fetcher: &remote::Fetcher,
    ) -> Result<Vec<(String, RemoteState)>, EngineError> {
        // A loaded `skills.urls` index names more documents (B5.10): a second round fetches
        // them. Nothing else adds URLs, so two rounds reach the fixed point.
        let mut results: Vec<(String, RemoteState)> = Vec::new();
        for _round in 0..2 {
            let urls: Vec<String> = self
                .remote_urls(ws)?
                .into_iter()
                .filter(|u| !results.iter().any(|(done, _)| done == u))
                .collect();
            if urls.is_empty() {
                break;
            }
            let states = fetcher.load_all(&urls).await;
            let round: Vec<(String, RemoteState)> = urls.into_iter().zip(states).collect();
            self.set_remote_states(round.clone());
            results.extend(round);
        }
        Ok(results)
    }

    /// [`Engine::load_remote`] on a runtime of its own, for callers without one (none is
    /// started when the workspace names no URL). Inside a tokio runtime, await
    /// [`Engine::load_remote`] instead.
    pub fn fetch_remote(
        &mut self,
        ws: Workspace,
        fetcher: &remote::Fetcher,
    ) -> Result<Vec<(String, RemoteState)>, EngineError> {
        if self.remote_urls(ws)?.is_empty() {
            return Ok(Vec::new());
        }
        current_thread_runtime()?.block_on(self.load_remote(ws, fetcher))
    }

    /// opencode's findings for `lint --agent opencode`: its own lint's, whose errors keep
    /// their place in the file, and the listing order's (CG022). `None` for every other
    /// agent, whose findings the shared lint gathers from its profile.
    pub(crate) fn whole_lint(
        &self,
        ws: Workspace,
        agent: Agent,
        budget: Budget,
    ) -> Option<Result<Vec<Finding>, EngineError>> {
        (agent == Agent::Opencode).then(|| {
            let mut own = self.lint(ws, budget)?;
            let layout = profiles::profile(agent).layout(&self.db, ws, &profile::Request::default())?;
            own.extend(ctxgraph_agents::fates::listing::listing_findings(&layout));
            Ok(own)
        })
    }

    /// opencode's own texts by asset name (docs/opencode/installation.md), from the
    /// installation loaded with [`Engine::load_installation`]: each one found and verified
    /// (L2), and why each other one is not (L3). A name no release's table has is refused,
    /// with the names there are.
    pub fn installation_texts(&self, names: &[String]) -> Result<InstallationTexts, String> {
        use ctxgraph_db::installation::{asset, known_assets, known_versions};
        let known: std::collections::BTreeSet<&str> = known_versions()
            .filter_map(known_assets)
            .flat_map(|table| table.keys().map(String::as_str))
            .collect();
        if let Some(unknown) = names.iter().find(|name| !known.contains(name.as_str())) {
            let known = known.into_iter().collect::<Vec<_>>().join(", ");
            return Err(format!("opencode has no text named {unknown:?} (names: {known})"));
        }
        let installation = self.db.installation();
        let (binary, version) = match installation.state(&self.db) {
            InstallationState::Found(found) => (Some(found.binary.clone()), Some(found.version.clone())),
            InstallationState::Missing { .. } => (None, None),
        };
        let mut texts = InstallationTexts { binary, version, ..InstallationTexts::default() };
        for name in names {
            match asset(&self.db, installation, name) {
                Ok(text) => texts.texts.insert(name.clone(), text.to_string()),
                Err(missing) => texts.unavailable.insert(name.clone(), missing.reason),
            };
        }
        Ok(texts)
    }

    /// L1–L2: locates the opencode installation, loads and verifies its texts, and sets
    /// the installation input (only when it changed). Returns what was found.
    pub fn load_installation(&mut self, locate: &installation::Locate) -> &InstallationState {
        let state = installation::load(locate);
        self.set_installation(state);
        self.db.installation().state(&self.db)
    }
}
