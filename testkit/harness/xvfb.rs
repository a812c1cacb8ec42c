//! A virtual X display (Debian's `xvfb`; scripts/setup.sh installs it) for a headed Chromium:
//! a browser with windows and tabs as a user has them, where only the active tab of a window is
//! visible and Chrome throttles the others. The server picks a free display itself
//! (`-displayfd`); dropping it ends the server by its PID.

use std::io::Read;
use std::os::fd::FromRawFd;
use std::process::{Child, Command, Stdio};

pub struct Xvfb {
    child: Child,
    /// `:N`, for `DISPLAY`.
    pub display: String,
}

impl Xvfb {
    /// Start Xvfb and wait until it serves its display; an error says how to install it.
    pub fn start() -> Result<Xvfb, String> {
        let mut fds = [0; 2];
        // SAFETY: a pipe whose write end the server inherits and writes its display number to.
        if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
            return Err(format!("pipe: {}", std::io::Error::last_os_error()));
        }
        // SAFETY: both fds were just created by pipe() and are owned here alone.
        let (mut read, write) =
            unsafe { (std::fs::File::from_raw_fd(fds[0]), std::fs::File::from_raw_fd(fds[1])) };
        let mut cmd = Command::new("Xvfb");
        cmd.args(["-displayfd", &fds[1].to_string(), "-screen", "0", "1280x900x24", "-nolisten"])
            .arg("tcp")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let child = cmd.spawn().map_err(|e| {
            format!("cannot start Xvfb ({e}): install it with `sudo apt-get install -y xvfb`")
        })?;
        drop(write); // the server holds its own copy; EOF here means it is gone
        let mut number = String::new();
        let mut byte = [0u8; 1];
        while read.read(&mut byte).map_err(|e| format!("read Xvfb's display: {e}"))? == 1 {
            if byte[0] == b'\n' {
                break;
            }
            number.push(byte[0] as char);
        }
        let xvfb = Xvfb { child, display: format!(":{}", number.trim()) };
        if number.trim().is_empty() {
            return Err("Xvfb exited before it named its display".into());
        }
        Ok(xvfb)
    }
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        // SAFETY: signalling the server we started, by its PID.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let _ = self.child.wait();
    }
}
