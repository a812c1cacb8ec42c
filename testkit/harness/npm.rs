//! npm packages that tests and benches drive (the Claude Code CLI, the TypeScript SDK client and
//! Ajv, the peer MCP servers), installed into the target dir — from the npm registry only, never
//! a browser download.

use std::path::Path;
use std::process::Command;

/// Hold this while checking and installing into `dir`: one install at a time, across the test
/// threads and the test processes (nextest). Two npm runs into one directory remove each
/// other's files (seen in CI: ENOENT on Claude Code's `claude.exe`). Unlocked when dropped.
pub fn lock(dir: &Path) -> std::fs::File {
    let name = format!("{}.lock", dir.file_name().unwrap().to_string_lossy());
    let parent = dir.parent().unwrap();
    std::fs::create_dir_all(parent).unwrap();
    let lock = std::fs::File::create(parent.join(name)).unwrap();
    lock.lock().unwrap();
    lock
}

/// `npm install --prefix DIR PACKAGES…` with `env` (no packages: what `DIR/package.json` lists).
/// The error says what failed and how to fix it.
pub fn install(dir: &Path, packages: &[&str], env: &[(&str, &str)]) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("create {}: {e}", dir.display()))?;
    let out = Command::new("npm")
        .args(["install", "--no-audit", "--no-fund", "--loglevel=error", "--prefix"])
        .arg(dir)
        .args(packages)
        .envs(env.iter().copied())
        .output()
        .map_err(|e| {
            format!("cannot run npm (is Node.js installed? `apt-get install nodejs npm`): {e}")
        })?;
    if !out.status.success() {
        let what = if packages.is_empty() {
            "in ".to_owned() + &dir.display().to_string()
        } else {
            packages.join(" ")
        };
        return Err(format!(
            "`npm install {what}` failed (offline?):\n{}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(())
}

/// The real apps' packages (`testkit/fixtures/apps/package.json`), installed from the committed
/// lock file when one of them is missing; under a lock in the target dir, so that tests and
/// benches running at once install them once.
pub fn install_apps() -> Result<(), String> {
    let dir = crate::bins::repo_root().join("testkit/fixtures/apps");
    let _lock = lock(&crate::bins::bin("tabwire").parent().unwrap().join("real-apps"));
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("package.json")).unwrap()).unwrap();
    let missing = manifest["dependencies"]
        .as_object()
        .unwrap()
        .keys()
        .any(|name| !dir.join("node_modules").join(name).join("package.json").exists());
    if missing { install(&dir, &[], &[]) } else { Ok(()) }
}

/// `@playwright/test` (pinned), installed once into the target dir — no browser download: the
/// tests it runs use Debian's Chromium. What a test exported by export_test is run with.
pub fn playwright_test() -> Result<std::path::PathBuf, String> {
    let dir = crate::bins::bin("tabwire").parent().unwrap().join("playwright-test");
    let _lock = lock(&dir);
    if !dir.join("node_modules/@playwright/test/package.json").exists() {
        let skip = [("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")];
        install(&dir, &["@playwright/test@1.65.1"], &skip)?;
    }
    Ok(dir)
}

/// Run the test file `spec` with `@playwright/test` in Debian's Chromium (headless,
/// `--no-sandbox`), with `env`, sending `headers` with every request: whether it passed, and
/// what the runner printed.
pub fn run_playwright_test(
    spec: &str,
    env: &[(&str, &str)],
    headers: &[(&str, &str)],
) -> Result<(bool, String), String> {
    use std::sync::atomic::{AtomicU32, Ordering};
    static RUN: AtomicU32 = AtomicU32::new(0);
    let dir = playwright_test()?;
    let run =
        dir.join(format!("runs/{}-{}", std::process::id(), RUN.fetch_add(1, Ordering::SeqCst)));
    let _ = std::fs::remove_dir_all(&run);
    std::fs::create_dir_all(&run).map_err(|e| format!("create {}: {e}", run.display()))?;
    std::fs::write(run.join("exported.spec.ts"), spec).unwrap();
    let headers: serde_json::Map<String, serde_json::Value> =
        headers.iter().map(|(k, v)| (k.to_string(), (*v).into())).collect();
    let config = format!(
        "export default {{ testDir: '.', reporter: 'line', timeout: 30000, retries: 0, workers: 1, \
         use: {{ headless: true, extraHTTPHeaders: {}, launchOptions: {{ executablePath: \
         '/usr/bin/chromium', args: ['--no-sandbox'] }} }} }};\n",
        serde_json::Value::Object(headers)
    );
    std::fs::write(run.join("playwright.config.mjs"), config).unwrap();
    let out = Command::new("node")
        .arg(dir.join("node_modules/@playwright/test/cli.js"))
        .args(["test", "--config", "playwright.config.mjs"])
        .current_dir(&run)
        .envs(env.iter().copied())
        .env_remove("BASE_URL")
        .output()
        .map_err(|e| format!("cannot run node (is Node.js installed?): {e}"))?;
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    Ok((out.status.success(), text))
}
