//! MCP logging in real Chromium (`specs/tools.md`, "Logging"): a client that chose a level
//! (`logging/setLevel`) hears, as `notifications/message`, that its browser went away and how
//! to find out why; a client that chose none hears nothing, and neither does one that asked
//! only for what is more severe.
#![allow(deprecated)] // MCP's logging, deprecated from the 2026 revision on

use std::time::Duration;

use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam, SetLevelRequestParams};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use tabwire_testkit::{Chromium, bins};
use tokio::sync::mpsc;

/// Passes on every log message.
struct Logs(mpsc::UnboundedSender<LoggingMessageNotificationParam>);

impl ClientHandler for Logs {
    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.0.send(params);
    }
}

type Client = RunningService<RoleClient, Logs>;

async fn client(
    browser: &Chromium,
) -> (Client, mpsc::UnboundedReceiver<LoggingMessageNotificationParam>) {
    let mut cmd = tokio::process::Command::new(bins::bin("tabwire"));
    cmd.arg("mcp")
        .env("TABWIRE_RUNTIME_DIR", &browser.runtime_dir)
        .env_remove("TABWIRE_SESSION_ID")
        .env_remove("TABWIRE_BROWSER");
    let (tx, rx) = mpsc::unbounded_channel();
    let client = Logs(tx).serve(TokioChildProcess::new(cmd).unwrap()).await.expect("handshake");
    (client, rx)
}

/// Wait until the server lists one browser.
async fn attached(client: &Client) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let params = rmcp::model::CallToolRequestParams::new("list_browsers");
        let listed = client.call_tool(params).await.expect("list_browsers");
        let browsers = &listed.structured_content.unwrap_or_default()["browsers"];
        if browsers.as_array().is_some_and(|b| b.len() == 1) {
            return;
        }
        assert!(tokio::time::Instant::now() < deadline, "no browser attached: {browsers}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_chose_a_level_hears_its_browser_go_away() {
    let browser = Chromium::start();
    let (warned, mut warnings) = client(&browser).await;
    let (silent, mut nothing) = client(&browser).await;
    let (severe, mut only_errors) = client(&browser).await;
    let logging = warned.peer_info().and_then(|i| i.capabilities.logging.clone());
    assert!(logging.is_some(), "the server says it logs: {:?}", warned.peer_info());
    warned.set_level(SetLevelRequestParams::new(LoggingLevel::Info)).await.expect("setLevel");
    severe.set_level(SetLevelRequestParams::new(LoggingLevel::Error)).await.expect("setLevel");
    for client in [&warned, &silent, &severe] {
        attached(client).await;
    }

    drop(browser); // Chromium killed by PID: its host goes, and with it the browser
    let heard = tokio::time::timeout(Duration::from_secs(15), warnings.recv()).await;
    let heard = heard.expect("no log message within 15 s").expect("a message");
    assert_eq!(heard.level, LoggingLevel::Warning, "{heard:?}");
    assert_eq!(heard.logger.as_deref(), Some("tabwire"));
    let text = heard.data.as_str().unwrap_or_default();
    assert!(text.starts_with("browser went away: "), "{text}");
    assert!(text.contains("browser_disconnected") && text.contains("tabwire doctor"), "{text}");

    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(nothing.try_recv().is_err(), "a client that chose no level heard a message");
    assert!(only_errors.try_recv().is_err(), "a client that asked for errors heard a warning");
    drop((silent, severe));
}
