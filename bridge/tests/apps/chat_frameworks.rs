//! Chats built with popular Python chat frameworks from PyPI (Gradio's `ChatInterface`,
//! Streamlit's `st.chat_input`/`st.chat_message`, Chainlit), served on 127.0.0.1 with a fake
//! model that streams a known answer word by word (testkit/harness/pypi.rs, testkit/fixtures/apps/).
//! Each answers through the adapter the detector proposes and through a hand-written one; the
//! ground truth is what the fake model streamed and the page's bubbles, read through the
//! debugger protocol, outside tabwire. The client records progress notifications on a
//! current-thread runtime, where rmcp's client hands them over in the order they came, so that
//! the end's notification is checked to come before the result.

use std::time::Duration;

use rmcp::model::ProgressToken;
use serde_json::{Value, json};
use tabwire_testkit::mcp::text;
use tabwire_testkit::progress::{ProgressMcp, result};
use tabwire_testkit::pypi::{ChatApp, Framework};
use tabwire_testkit::{Cdp, Chromium};

/// A browser with a CDP pipe (the ground truth), `tabwire mcp` on it, and the app open in a
/// tab tabwire knows, in front, with the CDP session on that tab; once its box is there.
async fn open(framework: Framework) -> (Chromium, Cdp, ProgressMcp, Value, String, ChatApp) {
    let app = ChatApp::start(framework).unwrap_or_else(|e| panic!("{e}\nso it cannot be tested"));
    let mut browser = Chromium::start_with_cdp();
    let (to_browser, from_browser) = browser.take_cdp_pipe().unwrap();
    let cdp = Cdp::new(to_browser, from_browser);
    let mcp = ProgressMcp::start_with(&browser.runtime_dir, &[]).await;
    let tab =
        mcp.ok("open_tab", json!({ "url": app.url, "active": true })).await["tab"]["id"].clone();
    let target = cdp.target_id("page", &app.url).await.unwrap();
    let session = cdp.attach(&target).await.unwrap();
    let ready = format!("!!document.querySelector({:?})", framework.input());
    if let Err(e) = cdp.wait_for(&session, &ready, Duration::from_secs(30)).await {
        panic!("{framework:?} shows no box: {e}\n{}", app.log());
    }
    (browser, cdp, mcp, tab, session, app)
}

/// The text of the page's last answer bubble, as the page shows it.
fn last_answer(framework: Framework) -> String {
    answer_at(framework, -1)
}

/// The text of the page's answer bubble at `at` (-1 the last), as the page shows it.
fn answer_at(framework: Framework, at: i32) -> String {
    let bubbles = match framework {
        Framework::Gradio => "[data-testid=\"bot\"]",
        Framework::Streamlit => "[data-testid=\"stChatMessageContent\"]",
        Framework::Chainlit => "[data-step-type=\"assistant_message\"] .message-content",
    };
    format!("[...document.querySelectorAll({bubbles:?})].at({at})?.innerText.trim() ?? ''")
}

/// The message an app adds of its own after an answer its stop control stopped.
fn note_on_stop(framework: Framework) -> Option<&'static str> {
    matches!(framework, Framework::Chainlit).then_some("Task manually stopped.")
}

/// The progress notifications for `token` the client has received so far, as values.
fn told(mcp: &mut ProgressMcp, token: &ProgressToken) -> Vec<f64> {
    let mut got = Vec::new();
    while let Ok(r) = mcp.progress.try_recv() {
        if &r.param.progress_token == token {
            got.push(r.param.progress);
        }
    }
    got
}

/// Send `asked` (with `adapter`, or the detected one), wait for the end; the operation. The
/// end's progress notification (3 of 3) came before the result.
async fn ask(mcp: &mut ProgressMcp, tab: &Value, asked: &str, adapter: Option<&Value>) -> Value {
    let mut args = json!({ "tab_id": tab, "text": asked });
    if let Some(adapter) = adapter {
        args["adapter"] = adapter.clone();
    }
    let started = mcp.ok("send_message_async", args).await;
    let id = started["operation_id"].as_str().expect("operation_id").to_owned();
    let waiting = mcp.start_call("wait_for_operation", json!({ "operation_id": id })).await;
    let token = waiting.progress_token.clone();
    let done = result(waiting.await_response().await.expect("wait_for_operation answers"));
    assert_ne!(done.is_error, Some(true), "{}", text(&done));
    let values = told(mcp, &token);
    assert_eq!(values.last(), Some(&3.0), "the end's notification before the result: {values:?}");
    done.structured_content.clone().unwrap()
}

/// Two questions, each answered completed with exactly what the fake model streamed and the
/// page shows; the second counts two exchanges.
async fn answers_twice(framework: Framework, detected: bool) {
    let (_browser, cdp, mut mcp, tab, session, app) = open(framework).await;
    let hand = framework.adapter(&app.url);
    let adapter = if detected { None } else { Some(&hand) };
    for (n, asked) in
        ["When are you open on Saturdays?", "Do you open on Sundays?"].iter().enumerate()
    {
        let op = ask(&mut mcp, &tab, asked, adapter).await;
        assert_eq!(op["status"], "completed", "{op}\n{}", app.log());
        let name = if detected { "detected" } else { hand["name"].as_str().unwrap() };
        assert_eq!(op["adapter"], name, "{op}");
        let chats = app.chats();
        assert_eq!(chats.len(), n + 1, "{chats:?}");
        assert_eq!(chats[n].0, *asked);
        assert_eq!(op["response_text"], chats[n].1, "{op}");
        assert_eq!(op["response_text"], cdp.eval(&session, &last_answer(framework)).await.unwrap());
        let sent = &op["milestones"][0];
        assert_eq!(
            (&sent["name"], &sent["data"]["excerpt"]),
            (&json!("message_sent"), &json!(asked))
        );
        let end = op["milestones"].as_array().unwrap().last().unwrap();
        assert_eq!(end["data"]["total_messages"], json!(2 * (n + 1)), "{op}");
    }
}

/// In a tab the user is not looking at, an answer is followed as in front. Headed, under Xvfb:
/// the app opened the default way (in the session's own window, where it is visible) answers
/// once through the detected adapter; then its window is covered by another, so that its page
/// is hidden, and it answers again. Both are completed with what the fake model streamed, and
/// the hidden one takes at most twice as long and four seconds; both times are printed.
#[cfg(unix)] // headed, under Xvfb
async fn answers_in_a_hidden_tab(framework: Framework) {
    let app = ChatApp::start(framework).unwrap_or_else(|e| panic!("{e}\nso it cannot be tested"));
    let xvfb = tabwire_testkit::xvfb::Xvfb::start().unwrap_or_else(|e| panic!("{e}"));
    let mut browser = Chromium::start_headed_with_cdp(&xvfb.display);
    let (to_browser, from_browser) = browser.take_cdp_pipe().unwrap();
    let cdp = Cdp::new(to_browser, from_browser);
    let mut mcp = ProgressMcp::start_with(&browser.runtime_dir, &[]).await;
    let tab = mcp.ok("open_tab", json!({ "url": app.url })).await["tab"]["id"].clone();
    let target = cdp.target_id("page", &app.url).await.unwrap();
    let session = cdp.attach(&target).await.unwrap();
    let ready = format!("!!document.querySelector({:?})", framework.input());
    cdp.wait_for(&session, &ready, Duration::from_secs(30)).await.unwrap();
    let mut took = Vec::new();
    for (n, hidden) in [false, true].into_iter().enumerate() {
        if hidden {
            cdp.cover(&target, "about:blank").await.unwrap();
        }
        let seen = if hidden { "hidden" } else { "visible" };
        let is = format!("document.visibilityState === {seen:?}");
        cdp.wait_for(&session, &is, Duration::from_secs(5)).await.unwrap();
        let asked = format!("When are you open? (asked while {seen})");
        let began = std::time::Instant::now();
        let op = ask(&mut mcp, &tab, &asked, None).await;
        took.push(began.elapsed().as_secs_f64() * 1000.0);
        let end = op["milestones"].as_array().and_then(|m| m.last()?["at"].as_f64());
        let last_word = app.last_words().last().copied();
        let after = end.zip(last_word).map_or(f64::NAN, |(end, word)| end - word);
        println!(
            "{framework:?} {seen}: {:.0} ms, completed {after:.0} ms after the last word",
            took[n]
        );
        assert_eq!(op["status"], "completed", "{op}\n{}", app.log());
        assert_eq!(op["response_text"], app.chats()[n].1, "{op}");
        assert_eq!(cdp.eval(&session, "document.visibilityState").await.unwrap(), seen);
    }
    // What the page does by its own timers is woken once a second there, which tabwire does not
    // run: Chainlit's hidden answer once took 5.2 s where the one in front took 1.8 s.
    assert!(took[1] < 2.0 * took[0] + 4000.0, "{framework:?}: {took:?}");
}

/// `list_adapters` with the tab shows a clear proposal for the app: selectors that find, in the
/// page, exactly its box and its send button.
async fn detects(framework: Framework, submit: &str) {
    let (_browser, cdp, mcp, tab, session, _app) = open(framework).await;
    let listed = mcp.ok("list_adapters", json!({ "tab_id": tab })).await;
    let found = &listed["tab"]["detected"];
    assert_eq!(found["clear"], true, "{listed}");
    let adapter = &found["adapter"];
    assert_eq!(adapter["name"], "detected", "{listed}");
    assert_eq!(adapter["detected"], true, "{listed}");
    // No stop control shows while the chat is idle, and none other says stop: Gradio's hidden
    // "Stop Recording" button (of its API recorder) is no answer's.
    assert_eq!(adapter["stop"], Value::Null, "{listed}");
    for (field, known) in [("input", framework.input()), ("submit", submit)] {
        let chosen = adapter[field].as_str().unwrap();
        let same = format!(
            "document.querySelectorAll({chosen:?}).length === 1 && \
             document.querySelector({chosen:?}) === document.querySelector({known:?})"
        );
        assert_eq!(cdp.eval(&session, &same).await.unwrap(), true, "{field}: {listed}");
    }
}

#[tokio::test(flavor = "current_thread")]
async fn gradio_chat_interface_is_detected_clearly() {
    detects(Framework::Gradio, "button.submit-button").await;
}

#[tokio::test(flavor = "current_thread")]
async fn gradio_chat_interface_answers_through_the_detected_adapter() {
    answers_twice(Framework::Gradio, true).await;
}

#[tokio::test(flavor = "current_thread")]
async fn gradio_chat_interface_answers_through_a_hand_written_adapter() {
    answers_twice(Framework::Gradio, false).await;
}

#[tokio::test(flavor = "current_thread")]
async fn streamlit_chat_is_detected_clearly() {
    detects(Framework::Streamlit, "button[data-testid=\"stChatInputSubmitButton\"]").await;
}

#[tokio::test(flavor = "current_thread")]
async fn streamlit_chat_answers_through_the_detected_adapter() {
    answers_twice(Framework::Streamlit, true).await;
}

#[tokio::test(flavor = "current_thread")]
async fn streamlit_chat_answers_through_a_hand_written_adapter() {
    answers_twice(Framework::Streamlit, false).await;
}

/// `cancel_operation` while the answer streams presses the app's stop control: the operation
/// ends `stopped` with the part streamed so far, and the page streams no more. The detected
/// adapter knows no stop control (these apps add theirs only while they answer): it presses
/// the one that came after the send.
async fn stops(framework: Framework, detected: bool) {
    stops_when(framework, detected, Cancel::MidAnswer).await;
}

/// When the test cancels.
#[derive(PartialEq)]
enum Cancel {
    /// Once the answer streams and the app shows its stop control.
    MidAnswer,
    /// As soon as send_message_async returns: before the app shows its stop control
    /// (Streamlit's comes once its script has run for 500 ms), as a user may.
    AtOnce,
}

/// Cancel, as `when` says, while a wait_for_operation follows the answer: the operation ends
/// `stopped` with the part the page shows (not a note the app adds on stopping), and the wait
/// ends with it, its end's notification first.
async fn stops_when(framework: Framework, detected: bool, when: Cancel) {
    let (_browser, cdp, mut mcp, tab, session, app) = open(framework).await;
    let asked = "Tell me a long story";
    let mut args = json!({ "tab_id": tab, "text": asked });
    if !detected {
        args["adapter"] = framework.adapter(&app.url);
    }
    let started = mcp.ok("send_message_async", args).await;
    assert_eq!(started["adapter"] == "detected", detected, "{started}");
    let id = started["operation_id"].as_str().expect("operation_id").to_owned();
    let waiting = mcp.start_call("wait_for_operation", json!({ "operation_id": id })).await;
    let token = waiting.progress_token.clone();
    if when == Cancel::MidAnswer {
        let streaming = format!("({}).includes('word10')", last_answer(framework));
        cdp.wait_for(&session, &streaming, Duration::from_secs(30)).await.unwrap();
        // And the app shows its stop control: Streamlit's comes only once its script has run
        // for 500 ms, which a loaded machine may reach after the tenth word.
        let stop = framework.adapter(&app.url)["stop"].as_str().unwrap().to_owned();
        let shows = format!("!!document.querySelector({stop:?})?.getClientRects().length");
        cdp.wait_for(&session, &shows, Duration::from_secs(30)).await.unwrap();
    }
    let stopped = mcp.ok("cancel_operation", json!({ "operation_id": id })).await;
    assert_eq!(stopped["status"], "stopped", "{stopped}\n{}", app.log());
    let last = stopped["milestones"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["name"], "response_stopped", "{stopped}");
    assert_eq!(last["data"]["by"], "cancel_operation", "{stopped}");
    let said = stopped["response_text"].as_str().expect("the text so far").to_owned();
    let whole = &app.chats()[0].1;
    assert!(whole.starts_with(&said) && said.len() < whole.len(), "{said:?} of {whole:?}");
    let ended = result(waiting.await_response().await.expect("the wait answers"));
    assert_eq!(ended.structured_content.unwrap()["status"], "stopped", "the wait ends with it");
    let values = told(&mut mcp, &token);
    assert_eq!(values.last(), Some(&3.0), "the end's notification before the result: {values:?}");
    // The app itself stopped: the page shows what the operation says, and stays so; after it,
    // the app's own note, if it adds one.
    let note = note_on_stop(framework);
    let answer = answer_at(framework, if note.is_some() { -2 } else { -1 });
    if let Some(note) = note {
        let noted = format!("{} === {note:?}", last_answer(framework));
        cdp.wait_for(&session, &noted, Duration::from_secs(10)).await.unwrap();
    }
    let shown = cdp.eval(&session, &answer).await.unwrap();
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert_eq!(cdp.eval(&session, &answer).await.unwrap(), shown, "it streams no more");
    assert_eq!(shown, json!(said));
}

#[tokio::test(flavor = "current_thread")]
async fn gradio_chat_interface_stops_at_cancel_operation() {
    stops(Framework::Gradio, false).await;
}

#[tokio::test(flavor = "current_thread")]
async fn streamlit_chat_stops_at_cancel_operation() {
    stops(Framework::Streamlit, false).await;
}

#[tokio::test(flavor = "current_thread")]
async fn streamlit_chat_stops_at_a_cancel_before_its_stop_control_shows() {
    stops_when(Framework::Streamlit, false, Cancel::AtOnce).await;
}

#[tokio::test(flavor = "current_thread")]
async fn gradio_chat_interface_stops_at_cancel_operation_with_the_detected_adapter() {
    stops(Framework::Gradio, true).await;
}

#[tokio::test(flavor = "current_thread")]
async fn streamlit_chat_stops_at_cancel_operation_with_the_detected_adapter() {
    stops(Framework::Streamlit, true).await;
}

#[tokio::test(flavor = "current_thread")]
async fn chainlit_chat_answers_through_a_hand_written_adapter() {
    answers_twice(Framework::Chainlit, false).await;
}

#[tokio::test(flavor = "current_thread")]
async fn chainlit_chat_stops_at_cancel_operation_and_its_note_is_not_the_answer() {
    stops(Framework::Chainlit, false).await;
}

#[tokio::test(flavor = "current_thread")]
async fn chainlit_chat_is_detected_clearly() {
    detects(Framework::Chainlit, "#chat-submit").await;
}

#[tokio::test(flavor = "current_thread")]
async fn chainlit_chat_answers_through_the_detected_adapter() {
    answers_twice(Framework::Chainlit, true).await;
}

#[tokio::test(flavor = "current_thread")]
async fn chainlit_chat_stops_at_cancel_operation_with_the_detected_adapter() {
    stops(Framework::Chainlit, true).await;
}

#[cfg(unix)] // headed, under Xvfb
#[tokio::test(flavor = "current_thread")]
async fn gradio_chat_interface_answers_in_a_hidden_tab_as_in_front() {
    answers_in_a_hidden_tab(Framework::Gradio).await;
}

#[cfg(unix)] // headed, under Xvfb
#[tokio::test(flavor = "current_thread")]
async fn streamlit_chat_answers_in_a_hidden_tab_as_in_front() {
    answers_in_a_hidden_tab(Framework::Streamlit).await;
}

#[cfg(unix)] // headed, under Xvfb
#[tokio::test(flavor = "current_thread")]
async fn chainlit_chat_answers_in_a_hidden_tab_as_in_front() {
    answers_in_a_hidden_tab(Framework::Chainlit).await;
}
