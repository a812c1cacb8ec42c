//! `tabwire wait`: follow a session's page events from a shell script, one compact JSON line per
//! event, over the session socket (no token needed: the socket is the user's own).

use std::io::Write;

use tabwire_proto::runtime_dir;

use tabwire_session::SessionClient;

#[derive(Debug, clap::Args)]
pub struct WaitArgs {
    /// The session whose page events to take (its id, as get_session shows). Default:
    /// $TABWIRE_SESSION_ID, else the only running session.
    #[arg(long, env = "TABWIRE_SESSION_ID", value_name = "ID")]
    pub session: Option<String>,
    /// How long each wait lasts, in seconds (0 to 120).
    #[arg(long, default_value_t = tabwire_link::limits::DEFAULT_WAIT_SECS, value_parser = clap::value_parser!(u64).range(0..=tabwire_link::limits::MAX_WAIT_SECS))]
    pub timeout: u64,
    /// Return after the first events (or the first timeout, printing nothing) instead of
    /// waiting on.
    #[arg(long)]
    pub once: bool,
}

pub async fn run(args: WaitArgs) -> anyhow::Result<()> {
    if args.timeout == 0 && !args.once {
        // Waiting on with zero-second waits would spin.
        anyhow::bail!(
            "--timeout 0 only makes sense with --once; waiting on needs a timeout of 1 or more"
        );
    }
    let dir = runtime_dir::resolve();
    let mut session = SessionClient::connect_default(&dir, args.session.as_deref()).await?;
    let mut out = std::io::stdout().lock();
    loop {
        let events = session.wait(args.timeout).await?;
        for event in &events {
            writeln!(out, "{event}")?;
        }
        out.flush()?;
        if args.once {
            return Ok(());
        }
    }
}
