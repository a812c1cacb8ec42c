//! `tabwire call` as a shell runs it: the real program, its exit code and what it printed.

use std::io::{Read, Seek};
use std::path::Path;

/// `tabwire call ARGS` against the browser of `runtime_dir`, in session `session` (its
/// TABWIRE_SESSION_ID; `""`: no session, a call of the user's own); its exit code and what it
/// printed, stderr after stdout.
pub fn call(runtime_dir: &Path, session: &str, args: &[&str]) -> (i32, String) {
    let mut cmd = std::process::Command::new(crate::bins::bin("tabwire"));
    cmd.arg("call")
        .args(args)
        .env("TABWIRE_RUNTIME_DIR", runtime_dir)
        .env("TABWIRE_CALL_IDLE_SECS", "120") // a test ends its session with `--end`
        .env_remove("TABWIRE_BROWSER");
    match session {
        "" => cmd.env_remove("TABWIRE_SESSION_ID"),
        id => cmd.env("TABWIRE_SESSION_ID", id),
    };
    // Into files, not pipes: the session a first call starts in the background would hold a
    // pipe open under Wine, whose processes inherit every Unix descriptor.
    let out = tempfile::tempfile().expect("a file for what it prints");
    let err = tempfile::tempfile().expect("a file for what it says on stderr");
    cmd.stdout(out.try_clone().unwrap()).stderr(err.try_clone().unwrap());
    let status = cmd.status().expect("run tabwire call");
    let mut said = Vec::new();
    for mut file in [out, err] {
        file.rewind().unwrap();
        file.read_to_end(&mut said).unwrap();
    }
    (status.code().unwrap_or(-1), String::from_utf8_lossy(&said).into_owned())
}
