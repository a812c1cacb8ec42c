//! Where the host's logs go: stderr always (Chrome keeps a native host's stderr in its own
//! log), and `<runtime>/host-<pid>.log` too when `TABWIRE_LOG` is set. Never stdout: that is
//! the browser's channel, and one stray byte there breaks the framing.

use std::fs::OpenOptions;
use std::path::Path;
use std::sync::Mutex;

use tracing_subscriber::EnvFilter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// Environment variable holding a tracing filter (`debug`, `tabwire_host=trace`, …).
pub const LOG_ENV: &str = "TABWIRE_LOG";

/// Install the global subscriber. `runtime` is the runtime directory for the log file.
pub fn init(runtime: &Path) {
    let wanted = std::env::var(LOG_ENV).ok().filter(|f| !f.trim().is_empty());
    let filter = match EnvFilter::try_new(wanted.as_deref().unwrap_or("info")) {
        Ok(filter) => filter,
        Err(e) => {
            eprintln!(
                "tabwire-host: {LOG_ENV}={wanted:?} is not a valid log filter ({e}); logging at info"
            );
            EnvFilter::new("info")
        }
    };
    let stderr = tracing_subscriber::fmt::layer().with_writer(std::io::stderr).with_ansi(false);
    let file = wanted.and_then(|_| {
        let path = runtime.join(format!("host-{}.log", std::process::id()));
        let mut opts = OpenOptions::new();
        opts.create(true).append(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
        match opts.open(&path) {
            Ok(f) => {
                Some(tracing_subscriber::fmt::layer().with_writer(Mutex::new(f)).with_ansi(false))
            }
            Err(e) => {
                eprintln!("tabwire-host: cannot open the log file {}: {e}", path.display());
                None
            }
        }
    });
    tracing_subscriber::registry().with(filter).with(stderr).with(file).init();
}
