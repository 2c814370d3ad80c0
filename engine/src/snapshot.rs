//! A read-only engine on another thread, interrupted by salsa cancellation.
//!
//! A language server answers on worker threads while the editor keeps typing. A worker holds
//! a [`Snapshot`] (a clone of the database: one more handle on the same storage); the main
//! thread, which owns the [`Engine`], sets an input on the next keystroke, and salsa then
//! makes every query the worker enters unwind with `salsa::Cancelled` and waits for the
//! snapshot to be dropped. [`Snapshot::run`] turns that unwinding into [`Interrupted`].
//! [`Cancel`] interrupts one snapshot alone (`$/cancelRequest`), leaving the others running.

use std::ops::Deref;
use std::panic::AssertUnwindSafe;

use salsa::Database as _;

use crate::Engine;

/// A read-only engine for one piece of work on another thread (see the module docs).
pub struct Snapshot {
    engine: Engine,
}

/// The work was stale and stopped: an input changed, or its [`Cancel`] was used.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("interrupted: an input changed or the request was cancelled")]
pub struct Interrupted;

/// Interrupts the queries of one [`Snapshot`], from any thread.
#[derive(Clone, Debug)]
pub struct Cancel(salsa::CancellationToken);

impl Cancel {
    /// The snapshot's next query unwinds; [`Snapshot::run`] answers [`Interrupted`].
    pub fn cancel(&self) {
        self.0.cancel();
    }
}

impl Snapshot {
    pub(crate) fn new(engine: Engine) -> Self {
        Snapshot { engine }
    }

    /// What interrupts this snapshot alone.
    pub fn cancel_handle(&self) -> Cancel {
        Cancel(self.engine.db.cancellation_token())
    }

    /// Runs `work` on the snapshot; [`Interrupted`] when an input changed under it or its
    /// [`Cancel`] was used. Any other panic goes on unwinding.
    pub fn run<T>(&self, work: impl FnOnce(&Engine) -> T) -> Result<T, Interrupted> {
        // One attached scope for the whole of `work`: salsa clears a database's cancel flag
        // when its outermost attached call returns, so with each engine call attaching on its
        // own, a `Cancel` landing inside a call after salsa's last check would be forgotten
        // and the work would go on. Attached here, the flag stays set until the next query
        // checks it (or `run` returns).
        // Unwind safety: a cancelled query leaves no memo behind (salsa's own guarantee),
        // and `work` sees the engine only through `&`.
        let engine = &self.engine;
        salsa::Cancelled::catch(AssertUnwindSafe(|| salsa::attach(&engine.db, || work(engine))))
            .map_err(|_| Interrupted)
    }
}

impl Deref for Snapshot {
    type Target = Engine;

    fn deref(&self) -> &Engine {
        &self.engine
    }
}
