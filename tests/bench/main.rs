//! `cargo bench -p tabwire-tests --bench browser` (run by scripts/bench.sh after a release
//! build): latencies through a real headless Chromium, printed as numbers. Not a test: nothing
//! here passes or fails on time. Each section prints its own baseline measured in the same run.

mod round_trip;
mod stats;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    println!("tabwire browser benchmarks (release, real headless Chromium)\n");
    round_trip::run().await;
}
