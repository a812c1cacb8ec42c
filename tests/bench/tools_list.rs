//! `tools/list` as the official MCP TypeScript SDK client sees it (issue 12: it took 135–185 ms
//! and printed 66 warnings per listing), through `tests/js/tools-list.mjs`: the real
//! `tabwire mcp` (release) and, as the floor measured in the same run, a one-tool server written
//! with the same SDK. Each line: the first listing (the client compiles the output schemas'
//! validators), the median and p90 of the next ones, the reply's size, warnings per listing.
//! Goal: median ≤ 25 ms.

use tabwire_tests::{bins, js};

const LISTINGS: &str = "200";

pub async fn run() {
    println!("\ntools/list with the official TypeScript SDK client (node, stdio)");
    let dir = bins::scratch_dir("tl");
    let tabwire = bins::bin("tabwire");
    let env = [("TABWIRE_RUNTIME_DIR", &*dir)];
    for (label, server) in [
        ("floor: one-tool TypeScript SDK server", vec!["node", "floor-server.mjs"]),
        ("tabwire mcp", vec![tabwire.to_str().unwrap(), "mcp"]),
    ] {
        let out = js::tools_list(&["bench", LISTINGS], &server, &env);
        let line = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{label}: {line}{}", String::from_utf8_lossy(&out.stderr));
        println!("  {label:<40} {}", line.trim());
    }
    let _ = std::fs::remove_dir_all(&dir);
}
