//! The concrete salsa database.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use ctxgraph_db::Db;
use ctxgraph_db::files::Files;
use ctxgraph_db::installation::{Installation, InstallationSlot};
use ctxgraph_db::remote::RemoteDocs;
use ctxgraph_db::system::System;
use rustc_hash::FxHashMap;

/// How many times each query executed (salsa `WillExecute` events), by query name.
#[derive(Debug, Default)]
pub struct ExecutionLog {
    /// By query (its ingredient): its name, formatted the first time it runs, and its count.
    /// Formatting the name on every execution was 6 % of compacting a session of 8 000 steps.
    counts: Mutex<FxHashMap<salsa::IngredientIndex, (String, u64)>>,
    /// The sum of `counts`, kept apart: a host reads it twice per turn.
    total: AtomicU64,
}

impl ExecutionLog {
    fn record(&self, query: salsa::DatabaseKeyIndex) {
        let mut counts = self.counts.lock().unwrap_or_else(PoisonError::into_inner);
        counts
            .entry(query.ingredient_index())
            .or_insert_with(|| {
                // `Debug` reads like `system_paths(Id(0))`; keep the query name.
                let key = format!("{query:?}");
                (key.split('(').next().unwrap_or(&key).to_owned(), 0)
            })
            .1 += 1;
        self.total.fetch_add(1, Ordering::Relaxed);
    }

    /// Executions of all queries since start.
    pub fn total(&self) -> u64 {
        self.total.load(Ordering::Relaxed)
    }

    /// Executions per query since start.
    pub fn totals(&self) -> BTreeMap<String, u64> {
        let counts = self.counts.lock().unwrap_or_else(PoisonError::into_inner);
        let mut totals = BTreeMap::new();
        for (name, count) in counts.values() {
            *totals.entry(name.clone()).or_default() += count;
        }
        totals
    }
}

/// The salsa database: the query storage, the [`System`] every file read goes through, the
/// side tables of file and remote-document inputs, and a count of query executions.
#[salsa::db]
#[derive(Clone)]
pub struct Database {
    storage: salsa::Storage<Self>,
    system: Arc<dyn System>,
    files: Arc<Files>,
    remotes: Arc<RemoteDocs>,
    installation: Arc<InstallationSlot>,
    executions: Arc<ExecutionLog>,
}

impl Database {
    /// An empty database over `system`.
    pub fn new(system: Arc<dyn System>) -> Self {
        let executions = Arc::new(ExecutionLog::default());
        let log = Arc::clone(&executions);
        let storage = salsa::Storage::builder()
            .event_callback(Box::new(move |event: salsa::Event| {
                if let salsa::EventKind::WillExecute { database_key } = event.kind {
                    log.record(database_key);
                }
            }))
            .build();
        Self {
            storage,
            system,
            files: Arc::default(),
            remotes: Arc::default(),
            installation: Arc::default(),
            executions,
        }
    }

    /// How many times each query has executed (rather than being reused) so far.
    pub fn executions(&self) -> &ExecutionLog {
        &self.executions
    }
}

#[salsa::db]
impl salsa::Database for Database {}

#[salsa::db]
impl Db for Database {
    fn system(&self) -> &dyn System {
        &*self.system
    }

    fn files(&self) -> &Files {
        &self.files
    }

    fn remotes(&self) -> &RemoteDocs {
        &self.remotes
    }

    fn installation(&self) -> Installation {
        self.installation.get(self)
    }
}
