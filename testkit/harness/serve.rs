//! `tabwire serve --http` as a child, and rmcp's streamable-HTTP client for it: the HTTP
//! variant of [`crate::Mcp`].
//!
//! Every real-browser test that starts its clients with [`crate::Mcp::start`] runs over HTTP
//! when `TABWIRE_TEST_MCP=http` (`scripts/test.sh` runs the state, event, session and
//! operation tests both ways). The clients of one runtime dir then share one server process,
//! as HTTP clients of one user do: several sessions in one process.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use rmcp::service::{RunningService, ServiceExt};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, RoleClient};

use crate::bins;

/// Whether [`crate::Mcp::start`] goes over HTTP in this test run (`TABWIRE_TEST_MCP=http`).
pub fn http_wanted() -> bool {
    std::env::var("TABWIRE_TEST_MCP").is_ok_and(|v| v == "http")
}

/// A running `tabwire serve --http 127.0.0.1:0`. Dropping the last handle stops it
/// ([`Serve::stop`]).
pub struct Serve {
    child: Mutex<Child>,
    /// `http://127.0.0.1:<port>/mcp`
    pub url: String,
    pub token: String,
    /// Everything it wrote on stderr after the banner.
    pub log: Arc<Mutex<String>>,
}

impl Serve {
    /// A new server for the hosts in `runtime_dir`, with extra arguments (`--max-sessions 2`).
    pub fn start(runtime_dir: &Path, args: &[&str]) -> Serve {
        Self::start_with(runtime_dir, args, &[])
    }

    pub fn start_with(runtime_dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Serve {
        let mut cmd = Command::new(bins::bin("tabwire"));
        cmd.args(["serve", "--http", "127.0.0.1:0"])
            .args(args)
            .env("TABWIRE_RUNTIME_DIR", runtime_dir)
            .env("TABWIRE_TOOLS", "all") // every tool set, as crate::Mcp has
            .env("TABWIRE_OUTPUT_SCHEMAS", "1") // and their output schemas, which the tests check
            .env_remove("TABWIRE_SESSION_ID")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("spawn tabwire serve");
        let stderr = child.stderr.take().expect("piped stderr");
        let (tx, rx) = std::sync::mpsc::channel();
        let log = Arc::new(Mutex::new(String::new()));
        let rest = log.clone();
        std::thread::spawn(move || {
            let (mut url, mut told) = (None::<String>, false);
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if url.is_none() && line.contains("streamable HTTP at ") {
                    url = line.rsplit(' ').next().map(str::to_owned);
                    continue;
                }
                let token = line.split("Bearer ").nth(1).and_then(|t| t.split('`').next());
                if let (false, Some(url), Some(token)) = (told, &url, token) {
                    told = true;
                    let _ = tx.send((url.clone(), token.to_owned()));
                    continue;
                }
                rest.lock().unwrap().push_str(&(line + "\n"));
            }
        });
        let (url, token) = rx.recv_timeout(Duration::from_secs(20)).unwrap_or_else(|_| {
            let status = child.try_wait();
            panic!("tabwire serve printed no URL and token ({status:?}): {}", log.lock().unwrap())
        });
        assert!(url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"), "{url}");
        Serve { child: Mutex::new(child), url, token, log }
    }

    /// The one server of `runtime_dir` in this test process (started on first use).
    pub fn shared(runtime_dir: &Path) -> Arc<Serve> {
        static SERVERS: Mutex<Option<HashMap<PathBuf, Weak<Serve>>>> = Mutex::new(None);
        let mut servers = SERVERS.lock().unwrap();
        let servers = servers.get_or_insert_with(HashMap::new);
        if let Some(serve) = servers.get(runtime_dir).and_then(Weak::upgrade) {
            return serve;
        }
        let serve = Arc::new(Serve::start(runtime_dir, &[]));
        servers.insert(runtime_dir.to_owned(), Arc::downgrade(&serve));
        serve
    }

    /// The server's pid.
    pub fn pid(&self) -> u32 {
        self.child.lock().unwrap().id()
    }

    /// `host:port`
    pub fn authority(&self) -> String {
        self.url.trim_start_matches("http://").trim_end_matches("/mcp").to_owned()
    }

    /// An MCP client session over HTTP, with `handler` as the client side.
    pub async fn client<H: ClientHandler>(&self, handler: H) -> RunningService<RoleClient, H> {
        let config = StreamableHttpClientTransportConfig::with_uri(self.url.clone())
            .auth_header(&self.token);
        let transport = StreamableHttpClientTransport::from_config(config);
        handler.serve(transport).await.expect("MCP handshake with tabwire serve")
    }

    /// Kill it at once, as a crash would, and reap it (a zombie's pid still looks alive).
    pub fn kill(&self) {
        let mut child = self.child.lock().unwrap();
        let _ = child.kill();
        let _ = child.wait();
    }

    /// Stop it as a user would and wait for it; its exit status. On Unix SIGTERM, then SIGKILL
    /// if it does not end within 5 s. Windows has no way to ask a console program started by
    /// another to end (Ctrl-C reaches every process of the console, the test's too): there it
    /// is ended at once, as [`Serve::kill`] does.
    pub fn stop(&self) -> std::process::ExitStatus {
        let mut child = self.child.lock().unwrap();
        // SAFETY: kill(2) on our own child's pid.
        #[cfg(unix)]
        unsafe {
            libc::kill(child.id() as i32, libc::SIGTERM)
        };
        #[cfg(windows)]
        let _ = child.kill();
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            if let Some(status) = child.try_wait().expect("wait for tabwire serve") {
                return status;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                return child.wait().expect("wait for tabwire serve");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        self.stop();
    }
}
