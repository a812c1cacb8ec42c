//! CPU time of a process, for the benchmarks' "CPU per call" columns: the time every thread of
//! it spent running, in nanoseconds, from the scheduler's own count (`/proc/PID/task/*/schedstat`,
//! first field), which, unlike `/proc/PID/stat`'s 10 ms ticks, is exact enough for a few
//! hundred calls of tens of microseconds.

use std::path::Path;

/// Nanoseconds the threads of `pid` have run so far; 0 when the process is gone. A thread that
/// exited in between takes its time with it, so this is for processes whose threads stay.
pub fn run_ns(pid: u32) -> u64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return 0 };
    tasks.flatten().map(|t| thread_ns(&t.path())).sum()
}

fn thread_ns(task: &Path) -> u64 {
    let stat = std::fs::read_to_string(task.join("schedstat")).unwrap_or_default();
    stat.split_whitespace().next().and_then(|ns| ns.parse().ok()).unwrap_or(0)
}
