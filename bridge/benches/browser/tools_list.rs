//! `tools/list` as the official MCP TypeScript SDK client sees it, through
//! `testkit/js/tools-list.mjs`:
//! - what the tool list costs the model, in one run for tabwire (its default tool sets and all
//!   of them) and the peers (Playwright MCP, chrome-devtools-mcp, from npm: `peers.rs`): per
//!   tool its name, description and input schema, in characters ÷ 4 ≈ tokens, the server's
//!   instructions beside it, and the listing's size. Goal: tabwire's default sets at or under
//!   Playwright MCP's 25 tools;
//! - how fast the SDK client lists tabwire's tools (it once took 135–185 ms and printed 66
//!   warnings per listing): the real `tabwire mcp` (release) and, as the floor measured in the
//!   same run, a one-tool server written with the same SDK. Each line: the first listing (the
//!   client compiles the output schemas' validators), the median and p90 of the next ones, the
//!   reply's size, warnings per listing. Goal: median ≤ 25 ms.

use serde_json::Value;
use tabwire_testkit::{bins, js, peers};

const LISTINGS: &str = "200";

pub async fn run() {
    let dir = bins::scratch_dir("tl");
    let tabwire = bins::bin("tabwire");
    let tabwire = tabwire.to_str().unwrap();
    let env = [("TABWIRE_RUNTIME_DIR", &*dir)];

    println!("\nWhat the tool list costs the model (name + description + input schema, chars ÷ 4)");
    println!(
        "  {:<40} {:>5} {:>7} {:>7} {:>12} {:>10}",
        "server", "tools", "chars", "tokens", "+instructions", "list bytes"
    );
    let mut servers: Vec<(String, Vec<String>)> = vec![
        ("tabwire mcp (default sets)".into(), vec![tabwire.into(), "mcp".into()]),
        (
            "tabwire mcp --tools all".into(),
            vec![tabwire.into(), "mcp".into(), "--tools".into(), "all".into()],
        ),
    ];
    match peers::install() {
        Ok(modules) => {
            let module = |p: &str| modules.join(p).to_string_lossy().into_owned();
            let version = |package: &str| {
                let manifest = std::fs::read(modules.join(package).join("package.json"));
                let manifest: Value =
                    serde_json::from_slice(&manifest.unwrap_or_default()).unwrap_or_default();
                manifest["version"].as_str().unwrap_or("?").to_owned()
            };
            servers.push((
                format!("Playwright MCP {}", version("@playwright/mcp")),
                vec!["node".into(), module("@playwright/mcp/cli.js"), "--headless".into()],
            ));
            servers.push((
                format!("chrome-devtools-mcp {}", version("chrome-devtools-mcp")),
                vec![
                    "node".into(),
                    module("chrome-devtools-mcp/build/src/bin/chrome-devtools-mcp.js"),
                    "--headless".into(),
                    "--no-usage-statistics".into(),
                ],
            ));
        }
        Err(e) => println!("  (the peers could not be installed: {e})"),
    }
    for (label, server) in &servers {
        let server: Vec<&str> = server.iter().map(String::as_str).collect();
        let out = js::tools_list(&["tokens"], &server, &env);
        let line = String::from_utf8_lossy(&out.stdout);
        let Ok(got) = serde_json::from_str::<Value>(line.trim()) else {
            println!("  {label:<40} failed: {line}{}", String::from_utf8_lossy(&out.stderr));
            continue;
        };
        let n = |key: &str| got[key].as_u64().unwrap_or_default();
        println!(
            "  {label:<40} {:>5} {:>7} {:>7} {:>12} {:>10}",
            n("tools"),
            n("chars"),
            n("tokens"),
            n("with_instructions_tokens"),
            n("list_bytes")
        );
    }

    println!("\ntools/list with the official TypeScript SDK client (node, stdio)");
    for (label, server) in [
        ("floor: one-tool TypeScript SDK server", vec!["node", "floor-server.mjs"]),
        ("tabwire mcp", vec![tabwire, "mcp"]),
        ("tabwire mcp --tools all", vec![tabwire, "mcp", "--tools", "all"]),
    ] {
        let out = js::tools_list(&["bench", LISTINGS], &server, &env);
        let line = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{label}: {line}{}", String::from_utf8_lossy(&out.stderr));
        println!("  {label:<40} {}", line.trim());
    }
    let _ = std::fs::remove_dir_all(&dir);
}
