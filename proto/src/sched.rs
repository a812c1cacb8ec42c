//! A short scheduler slice for the relays (`tabwire-host`, `tabwire mcp`): each message wakes
//! them for a few microseconds of work, and on a busy CPU a woken thread whose slice is the
//! default waits for the running one's slice to end — on a kernel without preemption, until the
//! next tick (4 ms at `CONFIG_HZ=250`). Measured on the 2-vCPU CI machine, Linux 6.18: an echo
//! through the extension's worker had a second mode 4–5 ms above its median in 7–14 % of calls;
//! with a 0.1 ms slice for the host's and the bridge's threads, in 1–1.5 % (README,
//! "Performance").
//!
//! Linux's EEVDF scheduler (6.12 and later) takes a custom slice for an ordinary thread from
//! `sched_setattr(2)` (`sched_runtime`, 0.1–100 ms), without privileges: the thread gets the
//! same share of the CPU, only sooner after waking. Older kernels ignore it; other systems have
//! nothing to set. Called first thing in `main`, so every thread created later inherits it.

/// The slice asked for: the shortest the kernel takes.
pub const SLICE_NS: u64 = 100_000;

/// Set `TABWIRE_SCHED_SLICE=default` to keep the kernel's default slice (the benchmark
/// measures both in one run).
pub const SLICE_ENV: &str = "TABWIRE_SCHED_SLICE";

/// Ask for [`SLICE_NS`] for the calling thread (and so for the threads it creates next).
/// Returns why not when the kernel refused; never fails the program.
pub fn prefer_short_slices() -> Result<(), String> {
    if std::env::var_os(SLICE_ENV).is_some_and(|v| v == "default") {
        return Ok(());
    }
    imp::set(SLICE_NS)
}

#[cfg(target_os = "linux")]
mod imp {
    /// `struct sched_attr` of `sched_setattr(2)` (SCHED_ATTR_SIZE_VER1).
    #[repr(C)]
    struct SchedAttr {
        size: u32,
        policy: u32,
        flags: u64,
        nice: i32,
        priority: u32,
        runtime: u64,
        deadline: u64,
        period: u64,
        util_min: u32,
        util_max: u32,
    }

    pub fn set(slice_ns: u64) -> Result<(), String> {
        // The thread's nice value stays as it is: lowering it would need privileges.
        // SAFETY: getpriority reads the calling thread's nice value; errno is reset first
        // because -1 is also a valid answer.
        let nice = unsafe {
            *libc::__errno_location() = 0;
            libc::getpriority(libc::PRIO_PROCESS, 0)
        };
        let attr = SchedAttr {
            size: std::mem::size_of::<SchedAttr>() as u32,
            policy: libc::SCHED_OTHER as u32,
            flags: 0,
            nice,
            priority: 0,
            runtime: slice_ns,
            deadline: 0,
            period: 0,
            util_min: 0,
            util_max: 0,
        };
        // SAFETY: `attr` is a valid, initialised sched_attr whose `size` says how long it is;
        // pid 0 is the calling thread.
        let rc = unsafe { libc::syscall(libc::SYS_sched_setattr, 0, &attr as *const SchedAttr, 0) };
        if rc == 0 { Ok(()) } else { Err(std::io::Error::last_os_error().to_string()) }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    pub fn set(_slice_ns: u64) -> Result<(), String> {
        Ok(())
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// The slice the kernel reports for this thread in /proc (absent before EEVDF).
    fn slice_now() -> Option<u64> {
        let tid = unsafe { libc::gettid() };
        let sched = std::fs::read_to_string(format!("/proc/self/task/{tid}/sched")).ok()?;
        let line = sched.lines().find(|l| l.starts_with("se.slice"))?;
        line.split(':').nth(1)?.trim().parse().ok()
    }

    #[test]
    fn the_calling_thread_and_the_threads_it_starts_get_the_short_slice() {
        std::thread::spawn(|| {
            let before = slice_now();
            prefer_short_slices().expect("the kernel takes a slice");
            if before.is_none() {
                return; // a kernel without EEVDF custom slices: nothing to see
            }
            assert_eq!(slice_now(), Some(SLICE_NS));
            let child = std::thread::spawn(slice_now).join().unwrap();
            assert_eq!(child, Some(SLICE_NS), "inherited by threads started after");
        })
        .join()
        .unwrap();
    }
}
