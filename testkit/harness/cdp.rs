//! A small Chrome DevTools Protocol client over the pipe of `--remote-debugging-pipe`
//! ([`crate::Chromium::start_with_cdp`]): JSON messages each ended by a NUL byte, on two pipes,
//! so no port is opened. Enough to open a page in a tab, read it, and click in it with real
//! input events (`isTrusted`), as a user would.
//!
//! One thread reads the browser's messages and hands each answer to the call that waits for
//! its id; events are skipped. Calls are async (the tests run on tokio) and time out.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::oneshot;

/// How long a call waits for its answer.
const CALL_TIMEOUT: Duration = Duration::from_secs(10);
/// How long [`Cdp::click`] waits for its element to be there, visible and clickable.
const CLICK_WITHIN: Duration = Duration::from_secs(5);
/// How often [`Cdp::wait_for`] and [`Cdp::click`] look again.
const POLL: Duration = Duration::from_millis(50);

/// A CDP connection to one browser.
pub struct Cdp {
    to_browser: Mutex<File>,
    answers: Arc<Mutex<Answers>>,
    next_id: AtomicU64,
}

/// Calls waiting for their answer, by id; and why no more answers come, once that is so.
#[derive(Default)]
struct Answers {
    waiting: HashMap<u64, oneshot::Sender<Value>>,
    closed: Option<String>,
}

impl Cdp {
    /// Talk CDP over the browser's pipe, `Browser::take_cdp_pipe`'s two files. Dropping the
    /// client closes our end toward the browser, which then may exit.
    pub fn new(to_browser: File, from_browser: File) -> Cdp {
        let answers: Arc<Mutex<Answers>> = Arc::default();
        let shared = answers.clone();
        std::thread::Builder::new()
            .name("cdp-reader".into())
            .spawn(move || read_answers(from_browser, &shared))
            .expect("start the CDP reader thread");
        Cdp { to_browser: Mutex::new(to_browser), answers, next_id: AtomicU64::new(1) }
    }

    /// Send `method` with `params` (to the browser, or to an attached target's session) and
    /// wait for its answer: its `result`, or a message naming the method and the error.
    pub async fn call(
        &self,
        method: &str,
        params: Value,
        session_id: Option<&str>,
    ) -> Result<Value, String> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut message = json!({ "id": id, "method": method, "params": params });
        if let Some(session) = session_id {
            message["sessionId"] = json!(session);
        }
        let (tx, rx) = oneshot::channel();
        {
            let mut answers = self.answers.lock().unwrap();
            if let Some(why) = &answers.closed {
                return Err(format!("{method}: {why}"));
            }
            answers.waiting.insert(id, tx);
        }
        let mut bytes = serde_json::to_vec(&message).expect("a JSON message");
        bytes.push(0);
        // A small write to a pipe the browser keeps reading: it does not block for long.
        if let Err(e) = self.to_browser.lock().unwrap().write_all(&bytes) {
            self.answers.lock().unwrap().waiting.remove(&id);
            return Err(format!("{method}: cannot write to the CDP pipe: {e}"));
        }
        let answer = match tokio::time::timeout(CALL_TIMEOUT, rx).await {
            Ok(Ok(answer)) => answer,
            Ok(Err(_)) => {
                let why = self.answers.lock().unwrap().closed.clone();
                return Err(format!("{method}: {}", why.unwrap_or_else(|| "no answer".into())));
            }
            Err(_) => {
                self.answers.lock().unwrap().waiting.remove(&id);
                return Err(format!(
                    "{method}: the browser did not answer within {CALL_TIMEOUT:?}"
                ));
            }
        };
        match answer.get("error") {
            Some(error) => Err(format!("{method} {params}: {error}", params = message["params"])),
            None => Ok(answer.get("result").cloned().unwrap_or(Value::Null)),
        }
    }

    /// Open `url` in a new tab (`Target.createTarget`); its target id.
    pub async fn create_target(&self, url: &str) -> Result<String, String> {
        let created = self.call("Target.createTarget", json!({ "url": url }), None).await?;
        str_field(&created, "targetId")
    }

    /// Put a new window showing `url`, of the same size and place, over the window of
    /// `target_id` (X stacks the newer on top; headed only): Chrome then counts the one below
    /// as covered, and its page as hidden, as when the user's own window covers it.
    pub async fn cover(&self, target_id: &str, url: &str) -> Result<(), String> {
        let window =
            self.call("Browser.getWindowForTarget", json!({ "targetId": target_id }), None);
        let b = window.await?["bounds"].clone();
        let over = json!({ "url": url, "newWindow": true, "background": true,
            "left": b["left"], "top": b["top"], "width": b["width"], "height": b["height"] });
        self.call("Target.createTarget", over, None).await.map(|_| ())
    }

    /// Attach to a target with a flat session (`Target.attachToTarget`); the session id to
    /// pass to [`Cdp::call`] and the helpers below.
    pub async fn attach(&self, target_id: &str) -> Result<String, String> {
        let attached = self
            .call("Target.attachToTarget", json!({ "targetId": target_id, "flatten": true }), None)
            .await?;
        str_field(&attached, "sessionId")
    }

    /// The id of the first target of type `kind` (`page`, `service_worker`…) whose url
    /// contains `url_part`.
    pub async fn target_id(&self, kind: &str, url_part: &str) -> Result<String, String> {
        let targets = self.call("Target.getTargets", json!({}), None).await?;
        let found =
            targets["targetInfos"].as_array().into_iter().flatten().find(|t| {
                t["type"] == kind && t["url"].as_str().is_some_and(|u| u.contains(url_part))
            });
        let found =
            found.ok_or_else(|| format!("no {kind} target at {url_part} among {targets}"))?;
        str_field(found, "targetId")
    }

    /// Open `url` in a new tab and attach to it; the session id.
    pub async fn open(&self, url: &str) -> Result<String, String> {
        let target = self.create_target(url).await?;
        self.attach(&target).await
    }

    /// Evaluate `expression` in the page (promises awaited); its value as JSON (`null` for
    /// `undefined`), or what it threw.
    pub async fn eval(&self, session: &str, expression: &str) -> Result<Value, String> {
        let params =
            json!({ "expression": expression, "returnByValue": true, "awaitPromise": true });
        let got = self.call("Runtime.evaluate", params, Some(session)).await?;
        if let Some(thrown) = got.get("exceptionDetails") {
            let what = thrown["exception"]["description"].as_str().or(thrown["text"].as_str());
            return Err(format!("{expression} threw: {}", what.unwrap_or("an exception")));
        }
        Ok(got["result"].get("value").cloned().unwrap_or(Value::Null))
    }

    /// Evaluate `expression` until its value is neither `null` nor `false` (errors, such as
    /// a page still loading, count as not yet), for up to `within`; that value.
    pub async fn wait_for(
        &self,
        session: &str,
        expression: &str,
        within: Duration,
    ) -> Result<Value, String> {
        let deadline = Instant::now() + within;
        loop {
            let last = match self.eval(session, expression).await {
                Ok(Value::Null | Value::Bool(false)) => "null or false".to_owned(),
                Ok(value) => return Ok(value),
                Err(e) => e,
            };
            if Instant::now() > deadline {
                return Err(format!("{expression}: not true within {within:?} (last: {last})"));
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// Click the first element matching `css_selector` as a user would: wait (up to 5 s)
    /// until it exists, is visible and is what a click at its centre would hit, scroll it into
    /// view, then move the mouse there, press and release the left button — real input
    /// events, so the page sees a trusted click.
    pub async fn click(&self, session: &str, css_selector: &str) -> Result<(), String> {
        let selector = serde_json::to_string(css_selector).expect("a JSON string");
        let locate = format!(
            r#"(() => {{
                const e = document.querySelector({selector});
                if (!e) return {{ missing: "no element matches" }};
                if (!e.checkVisibility({{ visibilityProperty: true, opacityProperty: true }}))
                    return {{ missing: "it is not visible" }};
                e.scrollIntoView({{ block: "center", inline: "center" }});
                const r = e.getBoundingClientRect();
                if (r.width === 0 || r.height === 0) return {{ missing: "it has no size" }};
                const x = r.left + r.width / 2, y = r.top + r.height / 2;
                const hit = document.elementFromPoint(x, y);
                if (!hit || !(hit === e || e.contains(hit)))
                    return {{ missing: `a click at its centre would hit ${{hit?.outerHTML.slice(0, 80)}}` }};
                return {{ x, y }};
            }})()"#
        );
        let deadline = Instant::now() + CLICK_WITHIN;
        let (x, y) = loop {
            let last = match self.eval(session, &locate).await {
                Ok(at) => match (at["x"].as_f64(), at["y"].as_f64()) {
                    (Some(x), Some(y)) => break (x, y),
                    _ => at["missing"].as_str().unwrap_or("?").to_owned(),
                },
                Err(e) => e,
            };
            if Instant::now() > deadline {
                return Err(format!("cannot click {css_selector} within {CLICK_WITHIN:?}: {last}"));
            }
            tokio::time::sleep(POLL).await;
        };
        for (kind, button, buttons, count) in [
            ("mouseMoved", "none", 0, 0),
            ("mousePressed", "left", 1, 1),
            ("mouseReleased", "left", 0, 1),
        ] {
            let event = json!({
                "type": kind, "x": x, "y": y, "button": button, "buttons": buttons, "clickCount": count,
            });
            self.call("Input.dispatchMouseEvent", event, Some(session)).await?;
        }
        Ok(())
    }
}

impl Cdp {
    /// A PNG of the whole page (beyond the viewport too), written to `path`; its size in bytes.
    pub async fn screenshot(&self, session: &str, path: &std::path::Path) -> Result<usize, String> {
        let params = json!({ "format": "png", "captureBeyondViewport": true });
        let shot = self.call("Page.captureScreenshot", params, Some(session)).await?;
        let data = shot["data"].as_str().ok_or_else(|| format!("no data in {shot}"))?;
        let png = base64_decode(data)?;
        std::fs::write(path, &png).map_err(|e| format!("write {}: {e}", path.display()))?;
        Ok(png.len())
    }
}

/// Standard base64 (CDP's encoding of binary data), padding ignored.
fn base64_decode(text: &str) -> Result<Vec<u8>, String> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    };
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let (mut acc, mut bits) = (0u32, 0);
    for c in text.bytes().filter(|&c| c != b'=' && !c.is_ascii_whitespace()) {
        let v = value(c).ok_or_else(|| format!("not base64: {:?}", c as char))?;
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Ok(out)
}

/// The reader thread: hand each answer to its call until the pipe ends; then fail every call
/// still waiting, and every later one, saying why.
fn read_answers(from_browser: File, answers: &Mutex<Answers>) {
    let mut reader = BufReader::new(from_browser);
    let mut message = Vec::new();
    let why = loop {
        message.clear();
        match reader.read_until(0, &mut message) {
            Ok(0) => break "the browser closed the CDP pipe (did it exit?)".to_owned(),
            Ok(_) if message.last() != Some(&0) => {
                break "the CDP pipe ended in the middle of a message".to_owned();
            }
            Ok(_) => {}
            Err(e) => break format!("cannot read the CDP pipe: {e}"),
        }
        message.pop();
        let value: Value = match serde_json::from_slice(&message) {
            Ok(value) => value,
            Err(e) => {
                eprintln!("cdp: skipped a message that is not JSON ({e})");
                continue;
            }
        };
        // Answers carry the id of their call; events have none.
        let Some(id) = value.get("id").and_then(Value::as_u64) else { continue };
        if let Some(waiting) = answers.lock().unwrap().waiting.remove(&id) {
            let _ = waiting.send(value);
        }
    };
    let mut answers = answers.lock().unwrap();
    answers.closed = Some(why);
    answers.waiting.clear();
}

fn str_field(value: &Value, field: &str) -> Result<String, String> {
    value[field].as_str().map(str::to_owned).ok_or_else(|| format!("no {field} in {value}"))
}
