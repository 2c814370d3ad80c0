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
