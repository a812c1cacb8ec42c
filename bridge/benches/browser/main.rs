//! `cargo bench -p tabwire --bench browser` (run by scripts/bench.sh after a release
//! build): latencies through a real headless Chromium, printed as numbers. Not a test: nothing
//! here passes or fails on time. Each section prints its own baseline measured in the same run.

mod bare;
mod chat_frameworks;
mod cpu;
mod dom;
mod dom_tasks;
mod extra;
mod floors;
mod http;
mod operations;
mod page_cost;
mod real_apps;
mod sessions;
mod sites;
mod state;
mod stats;
mod tail;
mod tools_list;
mod workflows;

// One thread, like the MCP clients this stands in for (Claude Code runs on Node's event loop):
// on 2 cores, a multi-thread client adds a cross-thread wake-up to every call it measures.
#[tokio::main(flavor = "current_thread")]
async fn main() {
    println!("tabwire browser benchmarks (release, real headless Chromium)\n");
    // `cargo bench -p tabwire --bench browser -- operations` runs only that section.
    let only = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let wanted = |name: &str| only.as_deref().is_none_or(|o| name.contains(o));
    if wanted("floors") {
        floors::run().await;
    }
    if wanted("state") {
        state::run().await;
    }
    if wanted("operations") {
        operations::run().await;
    }
    if wanted("chat_frameworks") {
        chat_frameworks::run().await;
    }
    if wanted("sites") {
        sites::run().await;
    }
    if wanted("workflows") {
        workflows::run().await;
    }
    if wanted("http") {
        http::run().await;
    }
    if wanted("tools_list") {
        tools_list::run().await;
    }
    if wanted("dom") {
        dom::run().await;
    }
    if wanted("dom_tasks") {
        dom_tasks::run().await;
    }
    if wanted("extra") {
        extra::run().await;
    }
    if wanted("page_cost") {
        page_cost::run().await;
    }
    if wanted("real_apps") {
        real_apps::run().await;
    }
    if wanted("sessions") {
        sessions::run().await;
    }
    if wanted("apps_sessions") {
        sessions::on_real_apps().await;
    }
    // Needs root and tracefs, so only when asked for by name.
    if only.as_deref() == Some("tail") {
        tail::run().await;
    }
}
