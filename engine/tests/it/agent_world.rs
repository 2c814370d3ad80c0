//! What the agent profiles' incrementality tests share: an in-memory tree, a warm engine,
//! one build of the profile's text with the queries it executed, and a change checked
//! against a fresh engine.

use std::collections::BTreeMap;
use std::sync::Arc;

use ctxgraph_db::system::MemorySystem;
use ctxgraph_engine::{ChangeEvent, Engine, HostEnv};

pub fn host() -> HostEnv {
    HostEnv::fixed("/home/u")
}

pub struct World {
    pub fs: Arc<MemorySystem>,
    pub engine: Engine,
    /// The profile's text, built in a workspace of the engine.
    pub text: fn(&mut Engine) -> String,
}

impl World {
    pub fn new(fs: Arc<MemorySystem>, text: fn(&mut Engine) -> String) -> Self {
        let engine = Engine::new(fs.clone(), host());
        World { fs, engine, text }
    }

    /// The text, and the queries that executed for it (by name, with counts).
    pub fn build(&mut self) -> (String, BTreeMap<String, u64>) {
        let before = self.engine.db().executions().totals();
        let text = (self.text)(&mut self.engine);
        let mut executed = self.engine.db().executions().totals();
        for (query, count) in &before {
            if let Some(now) = executed.get_mut(query) {
                *now -= count;
            }
        }
        executed.retain(|_, count| *count > 0);
        (text, executed)
    }

    /// Writes `text` to `path`, then [`World::change`] with the edit.
    pub fn edit(&mut self, path: &str, text: &str) -> (String, BTreeMap<String, u64>) {
        self.fs.write_file(path, text);
        self.change(ChangeEvent::Modified(path.into()))
    }

    /// Applies `event`, builds, and checks the warm text against a fresh engine's.
    pub fn change(&mut self, event: ChangeEvent) -> (String, BTreeMap<String, u64>) {
        self.engine.apply_changes(&[event]);
        let built = self.build();
        assert_eq!(built.0, (self.text)(&mut Engine::new(self.fs.clone(), host())), "warm and fresh differ");
        built
    }
}

pub fn counts(pairs: &[(&str, u64)]) -> BTreeMap<String, u64> {
    pairs.iter().map(|(name, count)| ((*name).to_owned(), *count)).collect()
}
