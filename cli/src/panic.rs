//! A panic is a bug in ctxgraph: say so, ask for a report, and exit 3 as documented (Rust's
//! default is 101, which callers cannot tell from a crash of anything else).

use crate::error::EXIT_INTERNAL;

pub fn exit_internal_on_panic() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        default(info);
        crate::output::eprintln_styled(&crate::diagnostic::error_line(concat!(
            "this is a bug in ctxgraph ",
            env!("CARGO_PKG_VERSION"),
            "; please report it with the message above and the command you ran: ",
            env!("CARGO_PKG_REPOSITORY"),
            "/issues"
        )));
        std::process::exit(i32::from(EXIT_INTERNAL));
    }));
}

/// The environment variable that makes a debug build panic inside the command it runs.
#[cfg(debug_assertions)]
pub const TEST_PANIC_VAR: &str = "CTXGRAPH_TEST_PANIC";

/// Nothing in ctxgraph panics on purpose, so the end-to-end tests need a way to check the
/// hook above: with [`TEST_PANIC_VAR`] set, a debug build (what `cargo test` runs) panics
/// here, as a bug would. Release builds compile it out, so no environment can make a
/// shipped binary panic.
pub fn panic_if_testing() {
    #[cfg(debug_assertions)]
    if let Some(value) = std::env::var_os(TEST_PANIC_VAR) {
        panic!("{TEST_PANIC_VAR} is set ({})", value.to_string_lossy());
    }
}
