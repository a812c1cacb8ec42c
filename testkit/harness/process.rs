//! Ending the processes a test started, each system's own way, when the test holds their pid
//! rather than their `Child` (rmcp's child transport keeps that): at once, as a crash would
//! ([`kill`]), or with every process it started ([`kill_tree`]).

/// End `pid` at once, as a crash would: SIGKILL on Unix, `TerminateProcess` on Windows. An
/// error if it could not be, e.g. because it has ended already.
pub fn kill(pid: u32) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        // A pid of 0 or a negative one would be a whole process group.
        assert!(pid > 0 && pid <= i32::MAX as u32, "not a process id: {pid}");
        // SAFETY: kill(2) with a positive pid the test started and a valid signal.
        if unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    #[cfg(windows)]
    {
        use windows_sys::Win32::Foundation::CloseHandle;
        use windows_sys::Win32::System::Threading::{
            OpenProcess, PROCESS_TERMINATE, TerminateProcess,
        };
        // SAFETY: a handle opened here with only the right to terminate, used once and
        // closed; a null handle (no such process) is never used.
        unsafe {
            let handle = OpenProcess(PROCESS_TERMINATE, 0, pid);
            if handle.is_null() {
                return Err(std::io::Error::last_os_error());
            }
            let ended = TerminateProcess(handle, 1);
            let why = std::io::Error::last_os_error();
            CloseHandle(handle);
            if ended == 0 {
                return Err(why);
            }
        }
    }
    Ok(())
}

/// Start `cmd` so that [`kill_tree`] can end it with every process it starts: on Unix in a
/// process group of its own, which its pid names. Windows needs nothing: `taskkill /T` follows
/// each process's parent.
pub fn own_tree(cmd: &mut std::process::Command) -> &mut std::process::Command {
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(cmd, 0);
    cmd
}

/// End `pid`, started with [`own_tree`], and every process it started, at once: SIGKILL to its
/// process group on Unix, `taskkill /F /T` on Windows.
pub fn kill_tree(pid: u32) {
    #[cfg(unix)]
    {
        assert!(pid > 1 && pid <= i32::MAX as u32, "not a process group: {pid}");
        // SAFETY: kill(2) on the process group the test's own child leads (`own_tree`).
        unsafe { libc::kill(-(pid as libc::pid_t), libc::SIGKILL) };
    }
    #[cfg(windows)]
    {
        let _ = std::process::Command::new("taskkill")
            .args(["/F", "/T", "/PID", &pid.to_string()])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status();
    }
}
