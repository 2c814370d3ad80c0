//! Overlays (an editor's unsaved text as a file's content) and snapshots interrupted by
//! salsa cancellation: what `ctxgraph lsp` stands on.

use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use ctxgraph_db::system::{MemorySystem, System};
use ctxgraph_engine::HostEnv;
use ctxgraph_engine::{Budget, Engine, Interrupted};

const SECRET: &str = "AKIAQQQQQQQQQQQQQQQQ";

fn world() -> (Arc<MemorySystem>, Engine) {
    let fs = Arc::new(MemorySystem::new());
    fs.init_git_repo("/repo");
    fs.write_file("/repo/AGENTS.md", "# Rules\n\n- run the tests\n");
    fs.write_file("/repo/src/main.rs", "fn main() {}\n");
    let engine = Engine::new(fs.clone(), HostEnv::fixed("/home/u"));
    (fs, engine)
}

fn codes(engine: &mut Engine) -> Vec<&'static str> {
    let ws = engine.open("/repo".as_ref()).expect("workspace");
    let findings = engine.agents_lint(ws, None, Budget::default()).expect("lint");
    findings.iter().map(|f| f.code.id()).collect()
}

/// Query executions of `work`, all queries together.
fn executions(engine: &mut Engine, work: impl FnOnce(&mut Engine)) -> u64 {
    let before = engine.executions().total();
    work(engine);
    engine.executions().total() - before
}

#[test]
fn an_overlay_is_read_instead_of_the_disk_until_it_is_cleared() {
    let (fs, mut engine) = world();
    let ws = engine.open("/repo".as_ref()).expect("workspace");
    assert!(!codes(&mut engine).contains(&"CG005"));
    let edited = format!("# Rules\n\nkey {SECRET}\n");
    assert!(engine.set_overlay("/repo/AGENTS.md".as_ref(), &edited));
    assert!(codes(&mut engine).contains(&"CG005"), "the unsaved text is linted");
    let prompt = engine.system_prompt(ws, None).expect("prompt");
    assert!(prompt.text().contains(SECRET), "and is what the prompt sends");
    // The disk still has what it had: nothing was written, and it was not read.
    assert_eq!(fs.read("/repo/AGENTS.md".as_ref()).expect("disk"), b"# Rules\n\n- run the tests\n");
    assert!(!engine.set_overlay("/repo/AGENTS.md".as_ref(), &edited), "the same text changes nothing");
    assert!(engine.clear_overlay("/repo/AGENTS.md".as_ref()));
    assert!(!codes(&mut engine).contains(&"CG005"), "closed: the disk's text again");
    assert!(!engine.clear_overlay("/repo/AGENTS.md".as_ref()));
}

#[test]
fn a_keystroke_elsewhere_or_the_same_text_again_costs_no_query() {
    let (_fs, mut engine) = world();
    codes(&mut engine);
    let warm = executions(&mut engine, |engine| {
        codes(engine);
    });
    assert_eq!(warm, 0, "a warm lint executes nothing");
    // A source file no agent reads at start-up: its buffer changes no query's input.
    let elsewhere = executions(&mut engine, |engine| {
        assert!(engine.set_overlay("/repo/src/main.rs".as_ref(), "fn main() { todo!() }\n"));
        codes(engine);
    });
    assert_eq!(elsewhere, 0, "a keystroke in a file no query read");
    // The rule file's own text, resent unchanged (a client sending the buffer on focus).
    let text = "# Rules\n\n- run the tests\n";
    assert!(engine.set_overlay("/repo/AGENTS.md".as_ref(), text));
    codes(&mut engine);
    let again = executions(&mut engine, |engine| {
        assert!(!engine.set_overlay("/repo/AGENTS.md".as_ref(), text));
        codes(engine);
    });
    assert_eq!(again, 0, "the same text again");
    // A real edit does re-run what read the file: the count can move.
    let edit = executions(&mut engine, |engine| {
        assert!(engine.set_overlay("/repo/AGENTS.md".as_ref(), "# Rules\n\n- run all the tests\n"));
        codes(engine);
    });
    assert!(edit > 0, "an edit of the rule file re-runs its queries");
}

/// A worker that keeps asking for a query on its snapshot until it is interrupted (bounded
/// in count and time); it reports when it has started, then what `run` returned.
fn busy_worker(
    engine: &mut Engine,
) -> (mpsc::Receiver<()>, mpsc::Receiver<Result<u32, Interrupted>>, ctxgraph_engine::Cancel) {
    let ws = engine.open("/repo".as_ref()).expect("workspace");
    engine.system_prompt(ws, None).expect("warm");
    let snapshot = engine.snapshot();
    let cancel = snapshot.cancel_handle();
    let (started_tx, started) = mpsc::channel();
    let (done_tx, done) = mpsc::channel();
    std::thread::spawn(move || {
        let deadline = Instant::now() + Duration::from_secs(30);
        let result = snapshot.run(|engine| {
            let _ = started_tx.send(());
            let mut asked = 0;
            while asked < 50_000_000 && Instant::now() < deadline {
                let _ = engine.system_prompt(ws, None);
                asked += 1;
            }
            asked
        });
        drop(snapshot);
        let _ = done_tx.send(result);
    });
    (started, done, cancel)
}

#[test]
fn an_edit_interrupts_a_snapshot_at_work() {
    let (_fs, mut engine) = world();
    let (started, done, _cancel) = busy_worker(&mut engine);
    started.recv_timeout(Duration::from_secs(30)).expect("the worker started");
    // Blocks until the worker has unwound and dropped its snapshot.
    let began = Instant::now();
    assert!(engine.set_overlay("/repo/AGENTS.md".as_ref(), "# Rules\n\n- edited\n"));
    assert!(began.elapsed() < Duration::from_secs(10), "the edit waited {:?}", began.elapsed());
    assert_eq!(done.recv_timeout(Duration::from_secs(30)).expect("the worker ended"), Err(Interrupted));
    let ws = engine.open("/repo".as_ref()).expect("workspace");
    assert!(engine.system_prompt(ws, None).expect("prompt").text().contains("- edited"));
}

#[test]
fn a_cancel_handle_interrupts_its_snapshot_alone() {
    let (_fs, mut engine) = world();
    // Many rounds, each cancelling a worker that is in the middle of its loop: a cancel that
    // lands inside one of the worker's calls, after salsa's last check, must still stop it
    // (salsa clears a database's cancel flag when its outermost attached call returns, so a
    // snapshot's work is one attached scope; a lost cancel runs the worker to its deadline).
    for round in 0..100 {
        let (started, done, cancel) = busy_worker(&mut engine);
        started.recv_timeout(Duration::from_secs(30)).expect("the worker started");
        std::thread::sleep(Duration::from_micros(200));
        // Another snapshot, not cancelled: it answers.
        let other = engine.snapshot();
        cancel.cancel();
        let ended = done.recv_timeout(Duration::from_secs(10));
        assert_eq!(ended, Ok(Err(Interrupted)), "round {round}: the cancel was lost");
        let ws = engine.open("/repo".as_ref()).expect("workspace");
        assert!(other.run(|engine| engine.system_prompt(ws, None).is_ok()).expect("not interrupted"));
    }
}
