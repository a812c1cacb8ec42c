//! Workers on Unix: a process group of their own, signals to stop them, and (on Linux) a
//! parent-death signal. `os_windows.rs` does the same with a job object.

use std::os::fd::OwnedFd;
use std::process::ExitStatus;

use tokio::net::unix::pipe;
use tokio::process::{Child, Command};

/// The read end of a worker's output pipe, registered with the reactor.
pub type OutputReader = pipe::Receiver;
/// The write end, for the worker's stdout and stderr.
pub type OutputWriter = OwnedFd;

/// One pipe for the worker's stdout and stderr, so their lines keep their order.
pub fn output_pipe() -> std::io::Result<(OutputReader, OutputWriter)> {
    let (write_end, read_end) = pipe::pipe()?;
    Ok((read_end, write_end.into_blocking_fd()?))
}

/// Set up `cmd`, started for the template's `program`: it keeps that name as its `argv[0]`,
/// leads a process group of its own (so stopping it reaches what it started and nothing else)
/// and, on Linux, gets SIGTERM if this process dies without stopping it.
pub fn prepare(cmd: &mut Command, program: &str) {
    cmd.arg0(program).process_group(0);
    #[cfg(target_os = "linux")]
    {
        let parent = std::process::id() as libc::pid_t;
        // SAFETY: between fork and exec only async-signal-safe calls (prctl, getppid) happen.
        unsafe {
            cmd.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                if libc::getppid() != parent {
                    return Err(std::io::Error::other("the session ended while it started"));
                }
                Ok(())
            });
        }
    }
}

/// A started worker and what it started: its process group.
#[derive(Debug)]
pub struct Job {
    pid: u32,
}

/// The worker `child` as a [`Job`] (its group exists already: `prepare`).
pub fn adopt(child: &Child) -> std::io::Result<Job> {
    let pid = child.id().expect("a child that was just started has a pid");
    Ok(Job { pid })
}

impl Job {
    /// Ask it to stop: SIGTERM to it and its group.
    pub fn terminate(&self) {
        signal(self.pid, libc::SIGTERM);
    }

    /// Stop it now: SIGKILL to it and its group.
    pub fn kill(&self) {
        signal(self.pid, libc::SIGKILL);
    }
}

/// How a stop is described in a report: asked, and then forced.
pub const TERMINATED: &str = "SIGTERM";
pub const TERMINATED_THEN_KILLED: &str = "SIGTERM, then SIGKILL 5 s later";

/// Send `signal` to the worker whose pid is `pid` and to its process group. Only call it while
/// the worker has not been reaped (its pid cannot have been reused).
fn signal(pid: u32, signal: i32) {
    let pid = pid as libc::pid_t;
    // SAFETY: kill(2) on a process this session started and has not reaped, and on the process
    // group it leads (`process_group(0)` made its pgid its pid).
    unsafe {
        libc::kill(-pid, signal);
        libc::kill(pid, signal);
    }
}

/// The status reported when the wait for a worker failed: exit code 255.
pub fn unknown_status() -> ExitStatus {
    std::os::unix::process::ExitStatusExt::from_raw(255 << 8)
}
