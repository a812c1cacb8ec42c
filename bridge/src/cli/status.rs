//! `tabwire status`: which browsers a session would see, and how many tabs each has open.

use serde::Serialize;

use tabwire_link::browser::BrowserInfo;
use tabwire_link::core::Core;
use tabwire_link::error::NO_BROWSER;
use tabwire_link::methods::TabsList;

#[derive(Serialize)]
struct Status {
    runtime_dir: String,
    /// Oldest first; the last one is the default.
    browsers: Vec<BrowserStatus>,
}

#[derive(Serialize)]
struct BrowserStatus {
    #[serde(flatten)]
    info: BrowserInfo,
    /// Open tabs, or null when the browser did not say (see `error`).
    tabs: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

pub async fn run(core: Core, json: bool) -> anyhow::Result<()> {
    core.ready().await;
    let mut browsers = Vec::new();
    for info in core.browsers() {
        let pid = info.host_pid.to_string();
        let (tabs, error) = match core.invoke::<TabsList>(Some(&pid), &()).await {
            Ok(tabs) => (Some(tabs.len()), None),
            Err(e) => (None, Some(e.to_string())),
        };
        browsers.push(BrowserStatus { info, tabs, error });
    }
    let status = Status { runtime_dir: core.runtime_dir().display().to_string(), browsers };
    if json {
        println!("{}", serde_json::to_string_pretty(&status)?);
    } else {
        print!("{}", text(&status));
    }
    Ok(())
}

fn text(status: &Status) -> String {
    let mut out = format!("runtime dir: {}\n", status.runtime_dir);
    if status.browsers.is_empty() {
        out.push_str(NO_BROWSER);
        out.push('\n');
        return out;
    }
    let last = status.browsers.len() - 1;
    for (i, b) in status.browsers.iter().enumerate() {
        let tabs = match (&b.tabs, &b.error) {
            (Some(1), _) => "1 tab".to_owned(),
            (Some(n), _) => format!("{n} tabs"),
            (None, Some(e)) => format!("tabs unknown: {e}"),
            (None, None) => "tabs unknown".to_owned(),
        };
        let default = if i == last { ", default" } else { "" };
        out.push_str(&format!(
            "{}: host pid {}, profile {}, extension {}, {tabs}{default}\n",
            b.info.browser, b.info.host_pid, b.info.profile, b.info.extension_version
        ));
    }
    out
}
