//! Workers on Windows: each in a job object of its own, so that stopping it ends what it
//! started too (as a process group does on Unix), and so that it ends with this session: the
//! job is made with `JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE` and only this process holds its
//! handle, so when the session's process ends, however it ends, Windows closes the handle and
//! ends every process in the job (as `PR_SET_PDEATHSIG` does on Linux). There are no signals:
//! a stop terminates the job at once, and the worker's exit code is 1.

use std::io;
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle, RawHandle};
use std::process::ExitStatus;
use std::ptr;

use tokio::process::{Child, Command};
use windows_sys::Win32::Foundation::HANDLE;
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION, JobObjectExtendedLimitInformation,
    SetInformationJobObject, TerminateJobObject,
};
use windows_sys::Win32::System::Pipes::CreatePipe;

/// The read end of a worker's output pipe. Anonymous pipes cannot be read asynchronously on
/// Windows: tokio's file reads them on its blocking threads.
pub type OutputReader = tokio::fs::File;
/// The write end, for the worker's stdout and stderr.
pub type OutputWriter = OwnedHandle;

/// One pipe for the worker's stdout and stderr, so their lines keep their order. Neither end
/// is inheritable: `Command` hands the child its own copies of the write end.
pub fn output_pipe() -> io::Result<(OutputReader, OutputWriter)> {
    let (mut read, mut write): (HANDLE, HANDLE) = (ptr::null_mut(), ptr::null_mut());
    // SAFETY: two out-parameters; no security attributes (not inheritable), default size.
    if unsafe { CreatePipe(&mut read, &mut write, ptr::null(), 0) } == 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both handles were just created and are owned by nothing else.
    let (read, write) = unsafe {
        (
            OwnedHandle::from_raw_handle(read as RawHandle),
            OwnedHandle::from_raw_handle(write as RawHandle),
        )
    };
    Ok((tokio::fs::File::from_std(std::fs::File::from(read)), write))
}

/// Set up `cmd`: no console window of its own.
pub fn prepare(cmd: &mut Command, _program: &str) {
    const CREATE_NO_WINDOW: u32 = 0x0800_0000;
    cmd.creation_flags(CREATE_NO_WINDOW);
}

/// A job object holding a worker and what it starts; dropping it (or this process ending) ends
/// them all.
#[derive(Debug)]
pub struct Job {
    handle: OwnedHandle,
}

impl Job {
    /// A new job whose processes end when its last handle closes.
    pub fn new() -> io::Result<Job> {
        // SAFETY: no security attributes (the handle is not inheritable: a worker holding it
        // would keep its own job alive), no name.
        let raw = unsafe { CreateJobObjectW(ptr::null(), ptr::null()) };
        if raw.is_null() {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a handle just created, owned by nothing else.
        let job = Job { handle: unsafe { OwnedHandle::from_raw_handle(raw as RawHandle) } };
        // SAFETY: the struct is plain data, valid zeroed.
        let mut limits: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = unsafe { std::mem::zeroed() };
        limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
        // SAFETY: a job handle, and a pointer to a struct of the size given.
        let ok = unsafe {
            SetInformationJobObject(
                job.raw(),
                JobObjectExtendedLimitInformation,
                (&raw const limits).cast(),
                size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
            )
        };
        if ok == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(job)
    }

    /// Put the running process `process` into the job; what it starts from now on is in it
    /// too.
    pub fn assign(&self, process: RawHandle) -> io::Result<()> {
        // SAFETY: a job handle and a process handle, both open.
        if unsafe { AssignProcessToJobObject(self.raw(), process as HANDLE) } == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// End every process in the job, with exit code 1. Windows has no SIGTERM that any program
    /// can be counted on to handle, so asking and forcing are the same.
    pub fn terminate(&self) {
        // SAFETY: a job handle; terminating an empty job does nothing.
        unsafe { TerminateJobObject(self.raw(), 1) };
    }

    /// As [`Job::terminate`].
    pub fn kill(&self) {
        self.terminate();
    }

    fn raw(&self) -> HANDLE {
        self.handle.as_raw_handle() as HANDLE
    }
}

/// The worker `child` in a job of its own. What it starts before it is assigned (a moment
/// after it started) is not in the job.
pub fn adopt(child: &Child) -> io::Result<Job> {
    let job = Job::new()?;
    let process = child.raw_handle().ok_or_else(|| io::Error::other("the worker is gone"))?;
    job.assign(process)?;
    Ok(job)
}

/// How a stop is described in a report: asked, and then forced (the same on Windows).
pub const TERMINATED: &str = "terminated";
pub const TERMINATED_THEN_KILLED: &str = "terminated";

/// The status reported when the wait for a worker failed: exit code 255.
pub fn unknown_status() -> ExitStatus {
    std::os::windows::process::ExitStatusExt::from_raw(255)
}

#[cfg(test)]
mod tests {
    use std::process::Stdio;
    use std::time::Duration;

    use super::*;

    /// A process that runs for half a minute: `ping` waits a second between its pings.
    fn pinging() -> Child {
        let mut cmd = Command::new("ping.exe");
        cmd.args(["-n", "30", "127.0.0.1"]).stdin(Stdio::null()).stdout(Stdio::null());
        cmd.spawn().unwrap()
    }

    #[tokio::test]
    async fn a_workers_exit_code_is_reported() {
        let mut cmd = Command::new("cmd.exe");
        cmd.args(["/c", "exit 3"]);
        prepare(&mut cmd, "cmd.exe");
        let mut child = cmd.spawn().unwrap();
        let _job = adopt(&child).unwrap();
        let status = child.wait().await.unwrap();
        assert_eq!(status.code(), Some(3));
    }

    /// The job's handle closing (as when the session's process ends) ends the worker in it.
    #[tokio::test]
    async fn closing_the_job_ends_the_worker() {
        let mut child = pinging();
        let job = adopt(&child).unwrap();
        let still = tokio::time::timeout(Duration::from_millis(500), child.wait()).await;
        assert!(still.is_err(), "it runs until stopped: {still:?}");
        drop(job);
        // Well before its 30 s (the exit code of a process ended this way is not specified).
        let ended = tokio::time::timeout(Duration::from_secs(10), child.wait()).await;
        ended.expect("the job's end ended it").unwrap();
    }

    #[tokio::test]
    async fn terminating_the_job_ends_the_worker_with_code_1() {
        let mut child = pinging();
        let job = adopt(&child).unwrap();
        job.terminate();
        let status = tokio::time::timeout(Duration::from_secs(10), child.wait()).await;
        assert_eq!(status.expect("terminated").unwrap().code(), Some(1));
    }

    #[tokio::test]
    async fn the_output_pipe_carries_stdout_and_stderr_to_its_end() {
        use tokio::io::AsyncReadExt;
        let (mut read, write) = output_pipe().unwrap();
        let stderr = write.try_clone().unwrap();
        let mut cmd = Command::new("cmd.exe");
        cmd.args(["/c", "echo out& echo err 1>&2"]).stdin(Stdio::null());
        cmd.stdout(Stdio::from(write)).stderr(Stdio::from(stderr));
        let mut child = cmd.spawn().unwrap();
        drop(cmd);
        let mut text = String::new();
        read.read_to_string(&mut text).await.unwrap();
        child.wait().await.unwrap();
        assert_eq!(text.split_whitespace().collect::<Vec<_>>(), ["out", "err"], "{text:?}");
    }
}
