//! `tabwire sites [list | allow PATTERN | revoke PATTERN]`: the user's way, besides the
//! extension's popup, to say where tabwire may reach. It goes through a running browser's host
//! to the extension, which keeps the list; no MCP tool can do this.

use anyhow::{Context, bail};
use serde::Serialize;
use tabwire_proto::sites::Pattern;

use tabwire_link::browser::BrowserInfo;
use tabwire_link::core::Core;
use tabwire_link::error::NO_BROWSER;
use tabwire_link::methods::{
    AllowSite, RevokeSite, SiteChange, SiteList, SitesAllow, SitesList, SitesRevoke, Switches,
};

use crate::attach::Attach;

#[derive(Debug, clap::Args)]
pub struct SitesArgs {
    #[command(subcommand)]
    pub action: Option<Action>,
    #[command(flatten)]
    pub attach: Attach,
}

#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// Show the allowed sites of each running browser (the default).
    List {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Let tabwire work on a site: https://app.example.com, https://*.example.com,
    /// http://localhost:*. Its open tabs get the page SDK when they next load. The switches
    /// are set to exactly the flags given: without them, they are off.
    Allow {
        pattern: String,
        /// Also let the assistant run its own JavaScript in the site's pages (evaluate).
        #[arg(long)]
        scripts: bool,
        /// Also let the assistant click and type through Chrome's debugger (real input events;
        /// Chrome shows its "is being debugged" bar while it acts).
        #[arg(long)]
        trusted_input: bool,
        /// Also let the assistant read, set, save and restore the site's cookies and storage.
        /// A cookie is a credential: whoever holds it is signed in as you.
        #[arg(long)]
        cookies: bool,
    },
    /// Stop tabwire on a site, at once: every call to its pages fails from now on.
    Revoke { pattern: String },
}

#[derive(Serialize)]
struct Listed {
    #[serde(flatten)]
    browser: BrowserInfo,
    #[serde(flatten)]
    list: SiteList,
}

pub async fn run(core: Core, args: SitesArgs) -> anyhow::Result<()> {
    core.ready().await;
    let browsers = core.browsers();
    if browsers.is_empty() {
        bail!("{NO_BROWSER}; the allowed sites are kept by the extension, so it must be running");
    }
    match args.action.unwrap_or(Action::List { json: false }) {
        Action::List { json } => list(&core, browsers, json).await,
        Action::Allow { pattern, scripts, trusted_input, cookies } => {
            let switches = Switches { scripts, trusted_input, cookies };
            change(&core, &browsers, SiteChange::Allow(switches), &pattern).await
        }
        Action::Revoke { pattern } => change(&core, &browsers, SiteChange::Revoke, &pattern).await,
    }
}

async fn list(core: &Core, browsers: Vec<BrowserInfo>, json: bool) -> anyhow::Result<()> {
    let mut listed = Vec::new();
    for browser in browsers {
        let pid = browser.host_pid.to_string();
        let list = core
            .invoke::<SitesList>(Some(&pid), &())
            .await
            .with_context(|| format!("{} did not say which sites it allows", browser.label()))?;
        listed.push(Listed { browser, list });
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&listed)?);
        return Ok(());
    }
    for Listed { browser, list } in &listed {
        println!("{} (profile {}):", browser.label(), browser.profile);
        if list.sites.is_empty() {
            println!("  no site is allowed");
        }
        for site in &list.sites {
            let on: Vec<&str> = list
                .options
                .get(site)
                .into_iter()
                .flatten()
                .filter(|(_, on)| **on)
                .map(|(name, _)| name.as_str())
                .collect();
            if on.is_empty() {
                println!("  {site}");
            } else {
                println!("  {site} ({})", on.join(", ").replace('_', " "));
            }
        }
    }
    Ok(())
}

async fn change(
    core: &Core,
    browsers: &[BrowserInfo],
    change: SiteChange,
    pattern: &str,
) -> anyhow::Result<()> {
    // Said here, before anything is sent; the extension checks again.
    let pattern = Pattern::parse(pattern)?.to_string();
    let [browser] = browsers else {
        let names: Vec<String> = browsers.iter().map(BrowserInfo::label).collect();
        bail!(
            "{} browsers run tabwire ({}); each keeps its own list: name one with --browser",
            browsers.len(),
            names.join(", ")
        );
    };
    let pid = browser.host_pid.to_string();
    let list = match change {
        SiteChange::Allow(switches) => {
            let params = AllowSite { pattern: pattern.clone(), switches };
            core.invoke::<SitesAllow>(Some(&pid), &params).await?
        }
        SiteChange::Revoke => {
            core.invoke::<SitesRevoke>(Some(&pid), &RevokeSite { pattern: pattern.clone() }).await?
        }
    };
    let shown = list.pattern.as_deref().unwrap_or(&pattern);
    let changed = list.changed.unwrap_or(true);
    let switches = match change {
        SiteChange::Allow(s) => {
            let mut on = Vec::new();
            if s.scripts {
                on.push("scripts may run (evaluate)");
            }
            if s.trusted_input {
                on.push("trusted input through the debugger");
            }
            if s.cookies {
                on.push("cookies and storage, which are credentials");
            }
            if on.is_empty() {
                " (no scripts, no trusted input, no cookies)".to_owned()
            } else {
                format!(" ({})", on.join(", "))
            }
        }
        SiteChange::Revoke => String::new(),
    };
    match (change, changed) {
        (SiteChange::Allow(_), true) => println!(
            "allowed {shown}{switches} in {}; its open tabs get tabwire when they next load",
            browser.label()
        ),
        (SiteChange::Allow(_), false) => {
            println!("{shown} was already allowed{switches} in {}", browser.label())
        }
        (SiteChange::Revoke, true) => {
            println!("revoked {shown} in {}; tabwire no longer reaches its pages", browser.label())
        }
        (SiteChange::Revoke, false) => {
            bail!(
                "{shown} is not among the allowed sites of {}: {}",
                browser.label(),
                list.sites.join(", ")
            )
        }
    }
    Ok(())
}
