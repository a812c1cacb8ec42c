//! The machine's own floors, with no tabwire code on the path: what a round trip between two
//! processes costs here, measured beside the floors F0 and F1 in the same rounds, so a tail
//! that is the machine's (a halted vCPU waking for each hop) shows as the machine's.
//!
//! - [`Cat`]: a line echoed by `cat` over two pipes — the shape of MCP stdio (F0) without the
//!   bridge: this process writes a line, `cat` wakes, writes it back, this process wakes.
//! - [`WorkerEcho`]: a WebSocket text echoed by a handler in the extension's service worker —
//!   the shape of the fast link (F1) without `tabwire mcp`, `tabwire-host` or the extension's
//!   dispatch: set up through the debugger, which then detaches. With a tab, the worker passes
//!   each text to a content script in that tab by a port and sends back its answer: the shape
//!   of F2, the least any extension pays to ask a page something, with no tabwire code.

use futures::{SinkExt, StreamExt};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::sync::Mutex;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;

use tabwire_testkit::Cdp;

/// What both echo: the bytes of an F0 request as an MCP client sends them.
const LINE: &str = r#"{"jsonrpc":"2.0","id":1234,"method":"tools/call","params":{"name":"list_browsers","arguments":{}}}"#;

/// `cat`, its pipes, and a buffer for the line that comes back.
pub struct Cat {
    _child: Child,
    io: Mutex<(ChildStdin, BufReader<ChildStdout>, String)>,
}

impl Cat {
    pub fn start() -> Cat {
        let mut child = Command::new("cat")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("start cat");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Cat { _child: child, io: Mutex::new((stdin, stdout, String::new())) }
    }

    /// One line there and back.
    pub async fn round_trip(&self) {
        let (stdin, stdout, back) = &mut *self.io.lock().await;
        stdin.write_all(LINE.as_bytes()).await.unwrap();
        stdin.write_all(b"\n").await.unwrap();
        back.clear();
        stdout.read_line(back).await.unwrap();
        assert_eq!(back.trim_end(), LINE);
    }
}

/// A WebSocket whose other end is an echo handler in the extension's service worker.
pub struct WorkerEcho {
    ws: Mutex<WebSocketStream<TcpStream>>,
}

impl WorkerEcho {
    /// Listen on loopback, have the worker (through the debugger, then detached) connect and
    /// echo every text it gets: itself, or with `tab`, by a content script in that tab's top
    /// frame (injected into the extension's isolated world, where tabwire's relay runs, and
    /// connected as the relay is: `chrome.runtime.connect` from the tab, messages as objects).
    pub async fn start(cdp: &Cdp, tab: Option<i64>) -> WorkerEcho {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let worker = crate::sites::service_worker(cdp).await;
        let script = match tab {
            None => format!(
                "(() => {{ const ws = new WebSocket('ws://127.0.0.1:{port}/'); \
                 ws.onmessage = (e) => ws.send(e.data); globalThis.benchEcho = ws; return true; }})()"
            ),
            // tabwire's own onConnect listeners ignore a port of another name.
            Some(tab) => format!(
                "(async () => {{ \
                   const port = await new Promise((resolve, reject) => {{ \
                     const on = (p) => {{ if (p.name !== 'bench-bare-echo') return; \
                       chrome.runtime.onConnect.removeListener(on); resolve(p); }}; \
                     chrome.runtime.onConnect.addListener(on); \
                     chrome.scripting.executeScript({{ target: {{ tabId: {tab} }}, func: () => {{ \
                       const p = chrome.runtime.connect({{ name: 'bench-bare-echo' }}); \
                       p.onMessage.addListener((m) => p.postMessage(m)); }} }}).catch(reject); \
                   }}); \
                   const ws = new WebSocket('ws://127.0.0.1:{port}/'); \
                   ws.onmessage = (e) => port.postMessage({{ text: e.data }}); \
                   port.onMessage.addListener((m) => ws.send(m.text)); \
                   globalThis.benchTabEcho = {{ ws, port }}; return true; }})()"
            ),
        };
        cdp.eval(&worker, &script).await.expect("open the echo socket in the worker");
        let (tcp, _) = listener.accept().await.unwrap();
        tcp.set_nodelay(true).unwrap();
        let ws = tokio_tungstenite::accept_async(tcp).await.expect("the worker's handshake");
        let detach = serde_json::json!({ "sessionId": worker });
        cdp.call("Target.detachFromTarget", detach, None).await.expect("detach from the worker");
        WorkerEcho { ws: Mutex::new(ws) }
    }

    /// One text there and back.
    pub async fn round_trip(&self) {
        let mut ws = self.ws.lock().await;
        ws.send(Message::text(LINE)).await.unwrap();
        loop {
            match ws.next().await {
                Some(Ok(Message::Text(t))) => {
                    assert_eq!(t.as_str(), LINE);
                    return;
                }
                Some(Ok(_)) => continue,
                other => panic!("the worker's echo socket: {other:?}"),
            }
        }
    }
}
