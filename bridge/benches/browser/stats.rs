//! Percentiles of a latency sample, printed one line per measurement.

use std::time::Duration;

#[derive(Default)]
pub struct Sample(Vec<Duration>);

impl Sample {
    pub fn new() -> Sample {
        Sample(Vec::new())
    }

    pub fn push(&mut self, d: Duration) {
        self.0.push(d);
    }

    /// A duration the system measured itself (a report's `ms`).
    pub fn push_ms(&mut self, ms: f64) {
        self.0.push(Duration::from_secs_f64(ms.max(0.0) / 1000.0));
    }

    /// `n` runs of `call`, one after another, each timed.
    pub async fn time(n: usize, mut call: impl AsyncFnMut()) -> Sample {
        let mut sample = Sample::new();
        for _ in 0..n {
            let t = std::time::Instant::now();
            call().await;
            sample.push(t.elapsed());
        }
        sample
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn durations(&self) -> impl Iterator<Item = Duration> + '_ {
        self.0.iter().copied()
    }

    pub fn percentile(&mut self, q: f64) -> Duration {
        self.0.sort_unstable();
        self.0[((self.0.len() as f64 - 1.0) * q).round() as usize]
    }

    /// `label  n=…  p50 … ms  p99 … ms`
    pub fn print(&mut self, label: &str) -> (f64, f64) {
        let (p50, p99) = (ms(self.percentile(0.5)), ms(self.percentile(0.99)));
        println!("  {label:<58} n={:<6} p50 {p50:>8.3} ms   p99 {p99:>8.3} ms", self.0.len());
        (p50, p99)
    }
}

pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The CPU time the whole machine has spent busy since boot, in core-seconds: every process's,
/// the browser's, the X server's and the bench's own (Linux's `/proc/stat`, in its clock ticks of
/// 1/100 s). Time stolen by the hypervisor is not counted: it was not ours to use.
pub fn machine_busy_secs() -> f64 {
    let ticks = tabwire_testkit::soak::machine_ticks();
    // user nice system idle iowait irq softirq steal …
    let busy: u64 = [0, 1, 2, 5, 6].iter().filter_map(|&i| ticks.get(i)).sum();
    busy as f64 / 100.0
}
