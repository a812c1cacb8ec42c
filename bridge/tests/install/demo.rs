//! README command 1's program: `tabwire demo` runs its whole scripted MCP session against a
//! real headless Chromium and exits 0, showing what each step found.

use std::process::Command;

use tabwire_testkit::bins;

#[test]
fn the_demo_runs_every_step_against_a_real_browser() {
    let out = Command::new(bins::bin("tabwire"))
        .args(["demo", "--reads", "20"])
        .output()
        .expect("run tabwire demo");
    let text =
        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "tabwire demo failed:\n{text}");
    for seen in [
        "items: [\"bread\",\"milk\"]",
        "of its own; in front of the user, still: tab ",
        "items: [\"bread\",\"milk\",\"coffee\"] (source: cache, updated by assistant)",
        "the page pushed",
        "allowed sites: http://localhost:*, http://127.0.0.1:*, http://[::1]:*",
        "the page's commands: add_item, press_add",
        "refused before the page saw it: invalid_params",
        "clicked button \"Add by hand\" [ref=",
        "effect changed, added [",
        "listitem \\\"item 5\\\"",
        "the click started download ",
        "/downloads/list.csv: 38 bytes, sha256 9a559323035a4f4c2c8ad8c23836fa1cbe97857f62194afa65ff82cda7a0e37a",
        "refused: cookies_not_allowed",
        "cookies of http://127.0.0.1:",
        ": demo_list=shopping",
        "refused: site_not_allowed: tab",
        "allowed: items [\"bread\",\"milk\"] from \"http://127.0.0.2:",
        "revoked, at once: site_not_allowed",
        "the page registered \"greet\" with navigator.modelContext: Greets someone by name.",
        "its execute() answered {\"greeting\":\"Hello, demo!\"}",
        "export_test: steps ",
        "audit_accessibility by axe-core 4.",
        "tabwire call find (exit 0): ",
        "await page.getByRole('button', { name: 'Add by hand', exact: true }).click();",
        "the page's fetch got the mock: [\"paragraph \\\"mocked by tabwire\\\" [ref=",
        "the site answers again: [\"paragraph \\\"served by the lab's own server\\\" [ref=",
        "meanwhile, refused: waiting_for_user: tab ",
        "the user's answer: timeout",
        "the chat detector proposes: input \"#box\", send \"#send\"",
        "response_completed",
        "answer: You asked: “What is tabwire?”",
        "status success, changes: notes.txt (+1 -0)",
        "the lead's workers: demo success, north success, south success",
        "workflow collab: collab-start → gather-session-goals → collab-clear (clear context) → brainstorm-exploring (item 1)",
        "done: browser stopped, its profile removed.",
    ] {
        assert!(text.contains(seen), "the demo did not show {seen:?}:\n{text}");
    }
    // Two workers, each a tabwire session of its own in the demo's browser: each tab is in a
    // group of its own, named after its worker, as the worker's tabwire answered.
    let opened: Vec<(&str, &str)> = text
        .lines()
        .filter_map(|line| line.split("its own session: opened tab ").nth(1))
        .filter_map(|rest| rest.split_once(" in tab group "))
        .collect();
    assert_eq!(opened.len(), 2, "two workers opened a tab each:\n{text}");
    assert_ne!(opened[0].0, opened[1].0, "two tabs: {opened:?}");
    assert_eq!((opened[0].1, opened[1].1), ("\"north\"", "\"south\""), "{opened:?}");
    let read = text.split("read_page: ").nth(1).expect("the demo reads the page");
    let lines: u32 = read.split(' ').next().unwrap().parse().unwrap();
    assert!(lines >= 1, "read_page read the page's controls: {read}");
}
