//! The worker threads every computation runs on: a fixed few, however much the editor asks.
//!
//! A thread per request or per change let a burst of typing start dozens. A job queued here
//! holds its [`Snapshot`](ctxgraph_engine::Snapshot) while it waits; the next edit then waits
//! for it (salsa waits for every snapshot to be dropped), and a stale job's first query
//! unwinds at once, so the queue drains quickly. A job that panics is caught, so a worker is
//! never lost and no queued snapshot is left undropped.

use std::io;
use std::num::NonZeroUsize;
use std::panic::AssertUnwindSafe;

use crossbeam_channel::Sender;

type Job = Box<dyn FnOnce() + Send + 'static>;

/// At most this many workers: computations are CPU-bound, and the main thread reads the
/// editor's messages meanwhile.
pub const MAX_WORKERS: usize = 2;

/// A fixed set of worker threads fed from one queue; they stop when the pool is dropped.
pub struct Pool {
    jobs: Sender<Job>,
}

impl Pool {
    /// `MAX_WORKERS` workers, fewer on a machine with fewer cores.
    pub fn new() -> io::Result<Pool> {
        let cores = std::thread::available_parallelism().map_or(1, NonZeroUsize::get);
        Pool::with_workers(cores.clamp(1, MAX_WORKERS))
    }

    /// `workers` threads (at least one); an error when the system cannot start one.
    pub fn with_workers(workers: usize) -> io::Result<Pool> {
        let (jobs, queue) = crossbeam_channel::unbounded::<Job>();
        for n in 0..workers.max(1) {
            let queue = queue.clone();
            std::thread::Builder::new().name(format!("ctxgraph-lsp-worker-{n}")).spawn(move || {
                for job in queue {
                    // A panic is a bug in one answer; the worker goes on with the next job.
                    let _ = std::panic::catch_unwind(AssertUnwindSafe(job));
                }
            })?;
        }
        Ok(Pool { jobs })
    }

    /// Runs `job` on the next free worker.
    pub fn run(&self, job: impl FnOnce() + Send + 'static) {
        // The workers live as long as the pool: the queue cannot be disconnected here.
        let _ = self.jobs.send(Box::new(job));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_run_on_the_workers_and_a_panic_loses_none() {
        let pool = Pool::with_workers(2).expect("workers");
        let (done, finished) = crossbeam_channel::unbounded();
        pool.run(|| panic!("a bug in one job"));
        pool.run(|| panic!("and another"));
        for n in 0..20 {
            let done = done.clone();
            pool.run(move || {
                let name = std::thread::current().name().map(str::to_owned);
                let _ = done.send((n, name));
            });
        }
        let mut seen: Vec<(i32, Option<String>)> = (0..20)
            .map(|_| finished.recv_timeout(std::time::Duration::from_secs(60)).expect("every job runs"))
            .collect();
        seen.sort();
        assert_eq!(seen.iter().map(|(n, _)| *n).collect::<Vec<_>>(), (0..20).collect::<Vec<_>>());
        assert!(
            seen.iter()
                .all(|(_, name)| name.as_deref().is_some_and(|n| n.starts_with("ctxgraph-lsp-worker-")))
        );
    }
}
