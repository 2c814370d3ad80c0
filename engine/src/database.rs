//! The concrete salsa database.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use ctxgraph_db::Db;
use ctxgraph_db::files::Files;
use ctxgraph_db::installation::{Installation, InstallationSlot};
use ctxgraph_db::remote::RemoteDocs;
use ctxgraph_db::system::System;

/// How many times each query executed (salsa `WillExecute` events), by query name.
#[derive(Debug, Default)]
pub struct ExecutionLog {
    counts: Mutex<BTreeMap<String, u64>>,
    /// The sum of `counts`, kept apart: a host reads it twice per turn.
    total: AtomicU64,
}

impl ExecutionLog {
    fn record(&self, query: String) {
        *self.counts.lock().unwrap_or_else(PoisonError::into_inner).entry(query).or_default() += 1;
        self.total.fetch_add(1, Ordering::Relaxed);
    }

    /// Executions of all queries since start.
    pub fn total(&self) -> u64 {
        self.total.load(Ordering::Relaxed)
    }

    /// Executions per query since start.
    pub fn totals(&self) -> BTreeMap<String, u64> {
        self.counts.lock().unwrap_or_else(PoisonError::into_inner).clone()
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
                    // `Debug` reads like `system_paths(Id(0))`; keep the query name.
                    let key = format!("{database_key:?}");
                    let name = key.split('(').next().unwrap_or(&key).to_owned();
                    log.record(name);
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
