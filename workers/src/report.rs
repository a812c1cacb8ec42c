//! How a worker ended, as the `worker_complete` event tabwire posts for it: `success` when it
//! exited with 0, else `error` with the exit code or the signal; the files it changed; the last
//! lines it printed.

use std::process::ExitStatus;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Serialize;

use super::git::FileChange;
use super::log::Output;
use tabwire_link::events::CompletionStatus;

/// Why tabwire stopped a worker, if it did.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Stopped {
    /// It ran past its `timeout_secs`.
    Timeout,
    /// `stop_worker` asked for it.
    StopWorker,
    /// The session that started it ended.
    SessionEnded,
}

/// The data of the `worker_complete` tabwire posts when a worker exits.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Report {
    /// Who sent it: `null`, tabwire itself (a worker's own report names its session).
    pub from: Option<String>,
    pub worker_id: String,
    /// The name `spawn_worker` was given.
    pub name: String,
    /// `success` (exit code 0) or `error`.
    pub status: CompletionStatus,
    /// Its exit code, when it exited by itself.
    pub exit_code: Option<i32>,
    /// The signal that ended it (`SIGTERM`, `SIGKILL`, …), when one did.
    pub signal: Option<String>,
    /// Why tabwire stopped it, if it did: `timeout`, `stop_worker` or `session_ended`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped: Option<Stopped>,
    /// The files it changed (when its `cwd` is in a git work tree), relative to the tree's top.
    pub changes: Vec<String>,
    /// The same files with their added and removed lines (`git diff --numstat`).
    pub diff_stat: Vec<FileChange>,
    /// Why `changes` is incomplete or missing, when it is (git failed, too many files).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub changes_note: Option<String>,
    /// The last lines it printed; for an error, first what ended it.
    pub message: String,
    /// Its whole output (stdout and stderr): a file only the user can read.
    pub log: String,
    pub duration_ms: u64,
}

/// Everything known about a worker once it ended.
pub struct Ending {
    pub worker_id: String,
    pub name: String,
    pub status: ExitStatus,
    pub stopped: Option<Stopped>,
    /// With `stopped`: whether SIGKILL was needed after SIGTERM.
    pub killed: bool,
    pub timeout: Option<Duration>,
    pub output: Output,
    /// `None` when its `cwd` is in no git work tree.
    pub changes: Option<Result<(Vec<FileChange>, usize), String>>,
    pub log: String,
    pub duration: Duration,
}

impl Ending {
    pub fn report(self) -> Report {
        let exit_code = self.status.code();
        #[cfg(unix)]
        let signal = std::os::unix::process::ExitStatusExt::signal(&self.status).map(signal_name);
        // Windows ends processes with exit codes, never signals.
        #[cfg(not(unix))]
        let signal: Option<String> = None;
        let status = if exit_code == Some(0) && self.stopped.is_none() {
            CompletionStatus::Success
        } else {
            CompletionStatus::Error
        };
        let headline = match (self.stopped, exit_code, &signal) {
            (Some(Stopped::Timeout), ..) => Some(format!(
                "timed out after {} s and was stopped ({})",
                self.timeout.unwrap_or_default().as_secs(),
                if self.killed { super::os::TERMINATED_THEN_KILLED } else { super::os::TERMINATED }
            )),
            (Some(Stopped::StopWorker), ..) => Some("stopped by stop_worker".to_owned()),
            (Some(Stopped::SessionEnded), ..) => {
                Some("stopped: the session that started it ended".to_owned())
            }
            (None, Some(0), _) => None,
            (None, Some(code), _) => Some(format!("exited with code {code}")),
            (None, None, Some(signal)) => Some(format!("killed by {signal}")),
            (None, None, None) => Some(format!("ended: {}", self.status)),
        };
        let last = self.output.last_lines();
        let message = match (headline, last.is_empty()) {
            (None, true) => "(it printed nothing)".to_owned(),
            (None, false) => last,
            (Some(headline), true) => format!("{headline}; it printed nothing"),
            (Some(headline), false) => format!("{headline}. Its last output:\n{last}"),
        };
        let (diff_stat, changes_note) = match self.changes {
            None => (Vec::new(), None),
            Some(Ok((files, 0))) => (files, None),
            Some(Ok((files, more))) => {
                (files, Some(format!("{more} more changed files are not listed")))
            }
            Some(Err(why)) => (Vec::new(), Some(format!("the changes are unknown: {why}"))),
        };
        Report {
            from: None,
            worker_id: self.worker_id,
            name: self.name,
            status,
            exit_code,
            signal,
            stopped: self.stopped,
            changes: diff_stat.iter().map(|c| c.path.clone()).collect(),
            diff_stat,
            changes_note,
            message,
            log: self.log,
            duration_ms: self.duration.as_millis() as u64,
        }
    }
}

/// `SIGTERM` for 15, and so on; `signal 42` for the others.
#[cfg(unix)]
pub fn signal_name(signal: i32) -> String {
    let name = match signal {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGUSR1 => "SIGUSR1",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGUSR2 => "SIGUSR2",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGXFSZ => "SIGXFSZ",
        _ => return format!("signal {signal}"),
    };
    name.to_owned()
}

// Unix-only: the statuses are made from raw wait(2) statuses, with signals.
#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::process::ExitStatusExt;

    use super::*;

    fn ending(raw_status: i32, stopped: Option<Stopped>, printed: &str) -> Ending {
        Ending {
            worker_id: "w-1".into(),
            name: "w".into(),
            status: ExitStatus::from_raw(raw_status),
            stopped,
            killed: false,
            timeout: Some(Duration::from_secs(3)),
            output: Output { tail: printed.as_bytes().to_vec() },
            changes: None,
            log: "/l".into(),
            duration: Duration::from_millis(1500),
        }
    }

    #[test]
    fn the_report_says_how_it_ended_and_what_it_printed_last() {
        let ok = ending(0, None, "done\n").report();
        assert_eq!(
            (ok.status, ok.exit_code, ok.message.as_str()),
            (CompletionStatus::Success, Some(0), "done")
        );
        let failed = ending(2 << 8, None, "boom\n").report();
        assert_eq!(failed.status, CompletionStatus::Error);
        assert_eq!(failed.message, "exited with code 2. Its last output:\nboom");
        let killed = ending(libc::SIGKILL, None, "").report();
        assert_eq!(killed.signal.as_deref(), Some("SIGKILL"));
        assert_eq!(killed.message, "killed by SIGKILL; it printed nothing");
        let late = ending(libc::SIGTERM, Some(Stopped::Timeout), "working\n").report();
        assert_eq!(late.status, CompletionStatus::Error);
        assert!(late.message.starts_with("timed out after 3 s and was stopped (SIGTERM)"));
        let json = serde_json::to_value(&late).unwrap();
        assert_eq!(json["stopped"], "timeout");
        assert_eq!(json["from"], serde_json::Value::Null);
        assert_eq!(signal_name(64), "signal 64");
    }
}
