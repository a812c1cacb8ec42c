//! Bad input to the real `tabwire-host`: from the browser it ends the host (a byte stream
//! cannot be resynchronised), from a bridge it ends that bridge only. And strangers are kept
//! out.

use std::time::Duration;

use serde_json::json;
use tabwire_proto::limits;
use tabwire_testkit::host::{Bridge, Host};

/// A host with one bridge that has a request in flight.
fn host_with_pending_request() -> (Host, Bridge) {
    let host = Host::start_with_hello();
    let mut bridge = host.connect();
    bridge.recv_hello();
    bridge.request("q1", "tabs.list", "{}");
    assert_eq!(host.recv()["method"], "tabs.list");
    (host, bridge)
}

/// The host must exit 1, fail the pending request, tell the bridge why, and clean up.
fn assert_host_gave_up(mut host: Host, mut bridge: Bridge, log_contains: &str) {
    let status = host.wait_exit(Duration::from_secs(5)).expect("the host exits");
    assert_eq!(status.code(), Some(1));
    let reply = bridge.recv();
    assert_eq!(reply["id"], "q1");
    assert_eq!(reply["error"]["code"], "browser_disconnected");
    let event = bridge.recv();
    assert_eq!(event["event"], "browser_disconnected");
    assert!(event["data"]["reason"].as_str().unwrap().contains(log_contains), "{event}");
    assert!(bridge.is_closed());
    assert!(!host.listening() && !host.record().exists());
    std::thread::sleep(Duration::from_millis(20));
    assert!(host.stderr().contains(log_contains), "stderr:\n{}", host.stderr());
}

#[test]
fn a_frame_from_the_browser_over_64_mib_ends_the_host() {
    let (mut host, bridge) = host_with_pending_request();
    host.send_bytes(&tabwire_testkit::host::header(limits::MAX_FROM_BROWSER + 1));
    assert_host_gave_up(host, bridge, "over the limit");
}

#[test]
fn malformed_json_from_the_browser_ends_the_host() {
    let (mut host, bridge) = host_with_pending_request();
    host.send(r#"{"type":"response","id":"h1","result":"#);
    assert_host_gave_up(host, bridge, "not a message");
}

#[test]
fn an_unknown_message_type_from_the_browser_ends_the_host() {
    let (mut host, bridge) = host_with_pending_request();
    host.send(r#"{"type":"teleport","id":"h1"}"#);
    assert_host_gave_up(host, bridge, "teleport");
}

#[test]
fn bad_frames_from_a_bridge_close_that_bridge_only() {
    let mut host = Host::start_with_hello();
    let mut good = host.connect();
    good.recv_hello();
    let cases: Vec<(Vec<u8>, &str, &str)> = vec![
        // (bytes sent, error code, reply id)
        (frame(b"{not json"), "invalid_message", ""),
        (frame(&[0xff, 0xfe, 0x00]), "invalid_message", ""),
        (frame(br#"{"type":"request","id":"r9"}"#), "invalid_message", "r9"),
        (frame(br#"{"type":"teleport","id":"t1"}"#), "invalid_message", "t1"),
        (frame(br#"{"type":"event","event":"x","data":1}"#), "invalid_message", ""),
        (frame(br#"{"type":"response","id":"h1","result":1}"#), "invalid_message", "h1"),
        (tabwire_testkit::host::header(limits::MAX_SOCKET_FRAME + 1).to_vec(), "too_large", ""),
    ];
    for (n, (bytes, code, id)) in cases.into_iter().enumerate() {
        let mut bad = host.connect();
        bad.recv_hello();
        bad.send_bytes(&bytes);
        let reply = bad.recv();
        assert_eq!(reply["type"], "response", "case {n}");
        assert_eq!(reply["id"], id, "case {n}: {reply}");
        assert_eq!(reply["error"]["code"], code, "case {n}: {reply}");
        let message = reply["error"]["message"].as_str().unwrap();
        assert!(message.len() > 20, "case {n}: the message explains: {message}");
        assert!(bad.is_closed(), "case {n}: the bad bridge is closed");

        // The good bridge still works.
        let id = format!("ok{n}");
        good.request(&id, "ping", "null");
        let req = host.recv();
        host.send(
            &json!({"type": "response", "id": req["id"], "result": {"pong": true}}).to_string(),
        );
        assert_eq!(good.recv(), json!({"type": "response", "id": id, "result": {"pong": true}}));
    }
    assert!(host.child.try_wait().unwrap().is_none(), "the host keeps running");
}

#[test]
fn a_bridge_that_is_told_off_gets_no_more_of_its_requests_answered() {
    // After the error reply the connection is gone: later frames on it are not forwarded.
    let host = Host::start_with_hello();
    let mut bad = host.connect();
    bad.recv_hello();
    let mut bytes = frame(br#"{"type":"event","event":"x","data":1}"#);
    bytes.extend(frame(br#"{"type":"request","id":"1","method":"ping"}"#));
    bad.send_bytes(&bytes);
    assert_eq!(bad.recv()["error"]["code"], "invalid_message");
    assert!(bad.is_closed());
    assert_eq!(host.try_recv(Duration::from_millis(200)), None, "the ping was not forwarded");
}

/// Another user's process that reaches the socket (here: after the test opened the
/// directory and socket modes) is refused by its uid and logged. Unix only: uids and modes;
/// on Windows a pipe's peer of another SID is refused by proto's socket/pipe.rs, which its
/// unit tests check.
#[cfg(unix)]
#[test]
fn a_peer_of_another_user_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: needs root to act as another user");
        return;
    }
    let host = Host::start_with_hello();
    let open = |p: &std::path::Path, m| {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap()
    };
    open(&host.runtime, 0o711);
    open(&host.hosts_dir(), 0o711);
    open(&host.socket(), 0o666);
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "bad_input::stranger_probe", "--nocapture", "--test-threads=1"])
        .env("TABWIRE_PROBE_SOCKET", host.socket())
        .uid(65534)
        .gid(65534)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("PROBE: closed without a word"),
        "probe said: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    host.wait_for_log("refused a bridge connection: its peer is uid 65534");
    // Our own user is still welcome.
    host.connect().recv_hello();
}

/// Run as uid 65534 by the test above; does nothing otherwise.
#[cfg(unix)]
#[test]
fn stranger_probe() {
    let Some(path) = std::env::var_os("TABWIRE_PROBE_SOCKET") else { return };
    let mut bridge = Bridge::connect(std::path::Path::new(&path));
    bridge.stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    match tabwire_testkit::host::read_frame(&mut bridge.stream) {
        Ok(None) => println!("PROBE: closed without a word"),
        Ok(Some(frame)) => println!("PROBE: got {}", String::from_utf8_lossy(&frame)),
        Err(e) => println!("PROBE: error {e}"),
    }
}

fn frame(payload: &[u8]) -> Vec<u8> {
    let mut out = tabwire_testkit::host::header(payload.len()).to_vec();
    out.extend_from_slice(payload);
    out
}
