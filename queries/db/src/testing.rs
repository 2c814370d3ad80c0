//! A minimal database over a [`MemorySystem`] for the query crates' own unit tests (behind
//! the `testing` feature for the crates above this one).

use std::sync::Arc;

use crate::Db;
use crate::files::Files;
use crate::installation::{Installation, InstallationSlot};
use crate::remote::RemoteDocs;
use crate::system::{MemorySystem, System};

/// A database over an in-memory file system, with empty remote and installation inputs.
#[salsa::db]
#[derive(Clone)]
pub struct TestDb {
    storage: salsa::Storage<Self>,
    system: Arc<MemorySystem>,
    files: Arc<Files>,
    remotes: Arc<RemoteDocs>,
    installation: Arc<InstallationSlot>,
}

impl TestDb {
    /// A database over `system`, with no file inputs created yet.
    pub fn new(system: MemorySystem) -> Self {
        Self {
            storage: salsa::Storage::default(),
            system: Arc::new(system),
            files: Arc::default(),
            remotes: Arc::default(),
            installation: Arc::default(),
        }
    }
}

#[salsa::db]
impl salsa::Database for TestDb {}

#[salsa::db]
impl Db for TestDb {
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
