//! Keep a CPU awake while a call to a browser is in flight, so that its answer is read at once
//! (opt-in: `TABWIRE_BUSY_POLL=1` in `tabwire mcp`'s environment).
//!
//! On a virtual machine an idle vCPU halts, and waking it for the answer (an interrupt through
//! the hypervisor) costs a few hundred microseconds. While at least one call is in flight, a
//! thread of the lowest priority spins (no `pause`: a hypervisor may take a pause loop as a
//! hint to deschedule the vCPU), so the vCPU this bridge last ran on stays awake; any other
//! runnable thread, the browser's included, preempts it at once. It stops when the last call
//! ends, and after [`MAX_SPIN`] in any case: a call that slow gains nothing from it.
//!
//! Measured on the README's 2-vCPU machine (floors bench): a forced `get_state` p50 1.38 →
//! 1.23 ms and an echo from the worker 0.65 → 0.57 ms in one interleaved run (1.53 → 1.13 and
//! 0.79 → 0.55 in two separate runs), with p99 no better (6.9 → 7.7 ms in that run).
//! The same in the host too made p50 a little better still (1.28 ms) but p99 worse (10.0 ms):
//! two spinners leave the browser no idle vCPU, so the host does not spin. Off by default: it
//! spends a core's idle time, at the lowest priority, on a millisecond that a model's turn of
//! seconds does not notice.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread::{self, Thread};
use std::time::{Duration, Instant};

/// The longest one spin lasts; past it the thread parks until the calls in flight are over.
pub const MAX_SPIN: Duration = Duration::from_millis(20);

static IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);
static SPINNER: OnceLock<Option<Thread>> = OnceLock::new();

/// Held for as long as a call is in flight; see the module's doc.
#[must_use = "the CPU stays awake only while this is held"]
pub struct Warm(bool);

/// Hold the CPU awake until the returned guard is dropped (a no-op unless enabled).
pub fn hold() -> Warm {
    let Some(spinner) = SPINNER.get_or_init(start) else { return Warm(false) };
    if IN_FLIGHT.fetch_add(1, Ordering::AcqRel) == 0 {
        spinner.unpark();
    }
    Warm(true)
}

impl Drop for Warm {
    fn drop(&mut self) {
        if self.0 {
            IN_FLIGHT.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

fn start() -> Option<Thread> {
    if std::env::var("TABWIRE_BUSY_POLL").as_deref() != Ok("1") {
        return None;
    }
    spawn()
}

fn spawn() -> Option<Thread> {
    let spawned = thread::Builder::new().name("tabwire-warm".into()).spawn(|| {
        // SAFETY: plain syscalls on this thread's own id.
        unsafe { libc::setpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t, 19) };
        loop {
            while IN_FLIGHT.load(Ordering::Acquire) == 0 {
                thread::park();
            }
            let since = Instant::now();
            while IN_FLIGHT.load(Ordering::Relaxed) > 0 && since.elapsed() < MAX_SPIN {}
            while IN_FLIGHT.load(Ordering::Acquire) > 0 {
                thread::park_timeout(Duration::from_millis(5));
            }
        }
    });
    match spawned {
        Ok(handle) => Some(handle.thread().clone()),
        Err(e) => {
            tracing::warn!("cannot start the busy-poll thread, going on without: {e}");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// CPU time the spinner thread has used, in clock ticks (10 ms each).
    fn spinner_ticks() -> u64 {
        // The thread names itself once it runs.
        for _ in 0..100 {
            if let Some(ticks) = ticks_of("tabwire-warm") {
                return ticks;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("no tabwire-warm thread");
    }

    fn ticks_of(name: &str) -> Option<u64> {
        for task in std::fs::read_dir("/proc/self/task").unwrap() {
            let dir = task.unwrap().path();
            if std::fs::read_to_string(dir.join("comm")).unwrap_or_default().trim() == name {
                let stat = std::fs::read_to_string(dir.join("stat")).unwrap();
                let after_name = &stat[stat.rfind(')').unwrap() + 2..];
                let fields: Vec<&str> = after_name.split(' ').collect();
                // utime and stime: fields 14 and 15 of stat, 12 and 13 after the name.
                return Some(
                    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap(),
                );
            }
        }
        None
    }

    #[test]
    fn it_spins_only_while_held_and_at_most_max_spin_at_a_time() {
        SPINNER.get_or_init(spawn).as_ref().expect("the spinner started");
        let before = spinner_ticks();
        let held = hold();
        std::thread::sleep(Duration::from_millis(200)); // ten times MAX_SPIN
        drop(held);
        let spun = spinner_ticks() - before;
        // 20 ms of spinning, counted in 10 ms ticks (the CPU may have been shared meanwhile).
        assert!(spun <= 4, "spun {spun} ticks in 200 ms held: the cap did not hold");
        std::thread::sleep(Duration::from_millis(50));
        let idle = spinner_ticks();
        std::thread::sleep(Duration::from_millis(200));
        assert_eq!(spinner_ticks(), idle, "the spinner went on with nothing in flight");
        // And it comes back for the next call.
        let held = hold();
        let t = Instant::now();
        while spinner_ticks() == idle && t.elapsed() < Duration::from_secs(2) {
            std::thread::sleep(Duration::from_millis(5));
        }
        drop(held);
        assert!(spinner_ticks() > idle, "the spinner did not wake for the next call");
    }
}
