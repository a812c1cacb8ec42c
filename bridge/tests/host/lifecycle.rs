//! Start, permissions, refusal and shutdown of the real `tabwire-host`.

use std::time::{Duration, Instant};

use serde_json::json;
use tabwire_testkit::bins::scratch_dir;
use tabwire_testkit::host::{Host, HostOptions};

#[cfg(unix)]
fn mode(path: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// A host with one bridge that has a request in flight.
fn host_with_pending_request() -> (Host, tabwire_testkit::host::Bridge) {
    let host = Host::start_with_hello();
    let mut bridge = host.connect();
    bridge.recv_hello();
    bridge.request("q1", "page.get_state", r#"{"tab_id":1}"#);
    assert_eq!(host.recv()["method"], "page.get_state");
    (host, bridge)
}

/// What every bridge sees when the browser goes: its pending request fails, then the event,
/// then the end of the stream.
fn assert_told_browser_went(bridge: &mut tabwire_testkit::host::Bridge, reason_contains: &str) {
    let reply = bridge.recv();
    assert_eq!(reply["id"], "q1");
    assert_eq!(reply["error"]["code"], "browser_disconnected");
    let event = bridge.recv();
    assert_eq!(event["event"], "browser_disconnected");
    let reason = event["data"]["reason"].as_str().unwrap();
    assert!(reason.contains(reason_contains), "reason: {reason}");
    assert!(bridge.is_closed());
}

#[test]
fn stdin_closing_fails_pending_requests_tells_bridges_cleans_up_and_exits_0_fast() {
    let (mut host, mut bridge) = host_with_pending_request();
    let closed = Instant::now();
    host.close_stdin();
    let status = host.wait_exit(Duration::from_secs(5)).expect("the host exits");
    let took = closed.elapsed();
    assert_eq!(status.code(), Some(0), "stderr:\n{}", host.stderr());
    assert!(took < Duration::from_millis(100), "exit took {took:?}");
    assert!(!host.listening(), "socket removed");
    assert!(!host.record().exists(), "record removed");
    assert_told_browser_went(&mut bridge, "stdin ended");
}

// Unix only: signals; a console program on Windows cannot be asked to end by another.
#[cfg(unix)]
#[test]
fn sigterm_does_the_same() {
    let (mut host, mut bridge) = host_with_pending_request();
    let sent = Instant::now();
    // SAFETY: signalling our own child by its pid.
    assert_eq!(unsafe { libc::kill(host.pid as i32, libc::SIGTERM) }, 0);
    let status = host.wait_exit(Duration::from_secs(5)).expect("the host exits");
    let took = sent.elapsed();
    assert_eq!(status.code(), Some(0));
    assert!(took < Duration::from_millis(100), "exit took {took:?}");
    assert!(!host.listening() && !host.record().exists());
    assert_told_browser_went(&mut bridge, "SIGTERM");
}

// Unix only: signals (Ctrl-C on Windows reaches every process of the console, the test's too).
#[cfg(unix)]
#[test]
fn sigint_too() {
    let mut host = Host::start();
    // SAFETY: signalling our own child by its pid.
    unsafe { libc::kill(host.pid as i32, libc::SIGINT) };
    assert_eq!(host.wait_exit(Duration::from_secs(5)).unwrap().code(), Some(0));
    assert!(!host.listening());
}

// Unix only: file modes. On Windows the runtime directory is in the user's profile and the
// pipe admits only this user by its DACL (proto's socket/pipe.rs tests that).
#[cfg(unix)]
#[test]
fn the_runtime_directory_socket_and_record_are_private() {
    let host = Host::start();
    assert_eq!(mode(&host.runtime), 0o700);
    assert_eq!(mode(&host.hosts_dir()), 0o700);
    assert_eq!(mode(&host.runtime.join("sessions")), 0o700);
    assert_eq!(mode(&host.socket()), 0o600);
    assert_eq!(mode(&host.record()), 0o600);
    let record: serde_json::Value =
        serde_json::from_slice(&std::fs::read(host.record()).unwrap()).unwrap();
    assert_eq!(record["extension_id"], tabwire_proto::extension_id::EXTENSION_ID);
    assert_eq!(record["protocol"], 1);
}

// Unix only: file modes (see above).
#[cfg(unix)]
#[test]
fn a_runtime_directory_others_may_enter_is_refused() {
    let runtime = scratch_dir("host");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&runtime, std::fs::Permissions::from_mode(0o755)).unwrap();
    let opts = HostOptions { wait_ready: false, ..HostOptions::default() };
    let mut host = Host::spawn(opts, runtime);
    let status = host.wait_exit(Duration::from_secs(5)).expect("exits");
    assert_eq!(status.code(), Some(1));
    std::thread::sleep(Duration::from_millis(20));
    assert!(host.stderr().contains("chmod 700"), "stderr: {}", host.stderr());
    assert!(!host.hosts_dir().exists());
}

#[test]
fn an_extension_that_is_not_allowed_is_refused_with_exit_2() {
    let stranger = "chrome-extension://abcdefghijklmnopabcdefghijklmnop/";
    for args in [vec![stranger.to_owned()], vec![]] {
        let opts = HostOptions { args, wait_ready: false, ..HostOptions::default() };
        let mut host = Host::spawn(opts, scratch_dir("host"));
        let status = host.wait_exit(Duration::from_secs(5)).expect("exits");
        assert_eq!(status.code(), Some(2));
        std::thread::sleep(Duration::from_millis(20));
        let stderr = host.stderr();
        assert!(
            stderr.contains("may not use tabwire-host") || stderr.contains("tabwire install"),
            "stderr: {stderr}"
        );
        assert!(!host.hosts_dir().exists(), "nothing was created");
    }
    // Listed in TABWIRE_ALLOWED_EXTENSIONS, it may, and so may the Windows flag after it.
    let opts = HostOptions {
        args: vec![stranger.to_owned(), "--parent-window=0".to_owned()],
        env: vec![(
            "TABWIRE_ALLOWED_EXTENSIONS".into(),
            "other, abcdefghijklmnopabcdefghijklmnop".into(),
        )],
        wait_ready: true,
    };
    let host = Host::spawn(opts, scratch_dir("host"));
    assert!(host.listening());
}

#[test]
fn the_socket_and_record_of_a_dead_host_are_removed_at_start() {
    let runtime = scratch_dir("host");
    let hosts = runtime.join("hosts");
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut std::fs::DirBuilder::new(), 0o700)
        .create(&hosts)
        .unwrap();
    #[cfg(windows)]
    std::fs::create_dir(&hosts).unwrap();
    let dead = i32::MAX as u32 - 11;
    let record = json!({"pid": dead, "socket": hosts.join(format!("{dead}.sock")), "browser": "chromium",
        "profile": "", "extension_id": "", "extension_version": "", "protocol": 1, "started_at": 0});
    std::fs::write(hosts.join(format!("{dead}.json")), record.to_string()).unwrap();
    // A dead host's socket file stays on Unix; on Windows its pipe went with it.
    #[cfg(unix)]
    drop(std::os::unix::net::UnixListener::bind(hosts.join(format!("{dead}.sock"))).unwrap());
    let host = Host::spawn(HostOptions::default(), runtime);
    assert!(!hosts.join(format!("{dead}.json")).exists());
    assert!(!hosts.join(format!("{dead}.sock")).exists());
    assert!(host.listening());
}

#[test]
fn logs_go_to_stderr_and_with_tabwire_log_to_a_file_never_to_stdout() {
    let opts =
        HostOptions { env: vec![("TABWIRE_LOG".into(), "debug".into())], ..Default::default() };
    let mut host = Host::spawn(opts, scratch_dir("host"));
    host.send(&tabwire_testkit::host::extension_hello());
    let mut bridge = host.connect();
    bridge.recv_hello();
    drop(bridge);
    host.wait_bridges(0);
    host.close_stdin();
    assert_eq!(host.wait_exit(Duration::from_secs(5)).unwrap().code(), Some(0));
    // Everything on stdout was a frame the harness parsed; a stray log line would have broken
    // the framing and `recv` would have panicked above. Nothing is left after the frames:
    assert!(host.try_recv(Duration::from_millis(50)).is_none());
    let log = std::fs::read_to_string(host.runtime.join(format!("host-{}.log", host.pid)))
        .expect("TABWIRE_LOG writes a log file");
    assert!(log.contains("tabwire-host ready"), "log: {log}");
    assert!(log.contains("DEBUG"), "debug level is on: {log}");
    assert!(host.stderr().contains("bridge attached"));
}
