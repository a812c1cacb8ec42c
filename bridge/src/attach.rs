//! `--browser`: which running browser a command attaches to. The servers (`mcp/`, `serve/`) and
//! the commands that reach a browser (`tabwire status`, `tabwire sites`) each flatten it into
//! their arguments.

/// Which running browser to attach to. (`install` and `doctor` have a `--browser` of their own:
/// which browser *kinds* to set up or check.)
#[derive(Debug, Clone, clap::Args)]
pub struct Attach {
    /// Use only this browser: a host pid, a brand (chrome, edge, …) or a profile id, as
    /// `tabwire status` shows. Default: every browser running the tabwire extension.
    #[arg(long, env = "TABWIRE_BROWSER", value_name = "NAME|PID")]
    pub browser: Option<String>,
}
