//! `tabwire-host`, the program: the native-messaging host Chrome starts for the tabwire
//! extension. (Its binary is built by the `tabwire` package beside `tabwire`, so that one
//! `cargo install` installs both; this is all it runs.)
//!
//! Checks who started it, prepares the runtime directory, then relays between the browser
//! (stdin/stdout) and any number of bridges (its socket) until the browser goes. Exit codes:
//! 0 after a normal end (stdin closed, SIGTERM, SIGINT), 1 after an error or bad input from the
//! browser, 2 when the caller is not allowed.

use std::process::ExitCode;

use crate::{Shutdown, lifecycle, logging, origin, runtime_dir};

/// The program: parse who started it, prepare, relay until the browser goes or a signal comes
/// ([`lifecycle::run`]), and return the code above. Errors are told once, on stderr (and in the
/// log file once logging is set up).
pub fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let allowed = std::env::var(origin::ALLOWED_ENV).ok();
    let extension_id = match origin::check(&args, allowed.as_deref()) {
        Ok(id) => id,
        Err(e) => {
            eprintln!("tabwire-host: {e}");
            return ExitCode::from(2);
        }
    };
    let (dir, moved) = runtime_dir::resolve_explained();
    let root = match runtime_dir::prepare(&dir) {
        Ok(root) => root,
        Err(e) => {
            eprintln!("tabwire-host: {e}");
            return ExitCode::from(1);
        }
    };
    logging::init(&root);
    if let Some(why) = moved {
        tracing::warn!("{why}");
    }
    // One thread: every hop between the tasks of a message's way is a local wake-up, not a
    // cross-thread one, and the work per message is tiny.
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            tracing::error!("cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    let code = runtime.block_on(async {
        // Caught before the socket and record exist, so a signal never leaves them behind.
        match Shutdown::on_signals() {
            Ok(shutdown) => {
                lifecycle::run(lifecycle::Config { root, extension_id }, shutdown).await
            }
            Err(e) => {
                tracing::error!("cannot catch SIGTERM and SIGINT: {e}");
                1
            }
        }
    });
    // Do not wait for the runtime's threads: a blocking read of a non-pipe stdin would hold its
    // shutdown until the browser writes again. Returning from main ends the process anyway.
    runtime.shutdown_background();
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}
