//! The demo's download and webdev steps. A click on the shopping list's CSV link starts a
//! download: the click's settle report names it and `downloads` gives the file's path, size and
//! SHA-256. Then the user turns the site's Cookies switch on (`tabwire sites allow --cookies`,
//! as they would type it) and `cookies` lists the cookie the page set.

use std::path::Path;

use anyhow::{Context, Result};
use serde_json::{Value, json};
use tabwire_launcher::Browser;

use super::{Session, sites_cli};

/// Where the demo's browser saves downloads, without asking: the profile's preferences,
/// written before Chromium starts (the demo holds no CDP connection to set it at run time).
pub(super) fn set_download_dir(root: &Path) -> Result<()> {
    let default = Browser::profile_dir(root).join("Default");
    std::fs::create_dir_all(&default)?;
    let dir = root.join("downloads");
    let prefs = json!({ "download": { "default_directory": dir, "prompt_for_download": false } });
    std::fs::write(default.join("Preferences"), prefs.to_string())
        .context("writing the demo profile's download preferences")
}

pub(super) async fn download(session: &Session, tab: &Value) -> Result<()> {
    let report = session.call("click", json!({ "tab_id": tab, "selector": "#csv" })).await?;
    let started = &report["download"];
    // Chrome names the file a moment after the click: `downloads` gives its name and path.
    println!(
        "      the click started download {} from {}",
        started["id"],
        started["url_origin"].as_str().unwrap_or("?")
    );
    let waited = json!({ "id": started["id"], "wait_secs": 10 });
    let listed = session.call("downloads", waited).await?;
    let done = &listed["downloads"][0];
    println!(
        "      {} {}: {} bytes, sha256 {}",
        done["state"].as_str().unwrap_or("?"),
        done["path"].as_str().unwrap_or("?"),
        done["size"],
        done["sha256"].as_str().unwrap_or("?")
    );
    Ok(())
}

pub(super) async fn cookies(
    session: &Session,
    exe: &Path,
    browser: &Browser,
    tab: &Value,
    origin: &str,
) -> Result<()> {
    let refused = session.call_err("cookies", json!({ "tab_id": tab })).await?;
    println!("      refused: {}", super::first_line(&refused));
    let pattern = format!("{}:*", origin.rsplit_once(':').map_or(origin, |(host, _)| host));
    sites_cli(exe, browser, &["allow", "--cookies", &pattern]).await?;
    let listed = session.call("cookies", json!({ "tab_id": tab })).await?;
    let cookies: Vec<String> = listed["cookies"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            format!("{}={}", c["name"].as_str().unwrap_or("?"), c["value"].as_str().unwrap_or(""))
        })
        .collect();
    println!(
        "      cookies of {}: {}",
        listed["origin"].as_str().unwrap_or("?"),
        cookies.join(", ")
    );
    // The switch goes off again: the rest of the demo needs no credentials.
    sites_cli(exe, browser, &["allow", &pattern]).await?;
    Ok(())
}
