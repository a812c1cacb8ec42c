#!/usr/bin/env node
// Runs the prebuilt `tabwire` of this system. npm installed it with this package: it is the one
// optional dependency (@tabwire/<os>-<cpu>) whose `os` and `cpu` match, so nothing is downloaded
// here. The program gets this process's stdin, stdout and stderr themselves (an MCP client talks
// to it directly), and this process ends the way it ends: same exit code, same signal.
"use strict";

const { spawn } = require("child_process");
const path = require("path");

const PLATFORMS = {
  "linux x64": "@tabwire/linux-x64",
  "linux arm64": "@tabwire/linux-arm64",
  "darwin arm64": "@tabwire/darwin-arm64",
  "darwin x64": "@tabwire/darwin-x64",
  "win32 x64": "@tabwire/win32-x64",
};

function fail(message) {
  process.stderr.write(`tabwire: ${message}\n`);
  process.exit(1);
}

function binary() {
  const system = `${process.platform} ${process.arch}`;
  const pkg = PLATFORMS[system];
  if (!pkg) {
    fail(
      `no prebuilt program for ${system} (there is one for ${Object.keys(PLATFORMS).join(", ")}). ` +
        "Build it from source with Rust: `cargo install --locked tabwire`.",
    );
  }
  let dir;
  try {
    dir = path.dirname(require.resolve(`${pkg}/package.json`));
  } catch {
    fail(
      `the package ${pkg}, which holds the program for ${system}, is not installed. npm leaves ` +
        "optional dependencies out with --omit=optional (or --no-optional), and a lockfile " +
        `written on another system may lack it: install it with \`npm install ${pkg}\`, or ` +
        "reinstall tabwire without those options.",
    );
  }
  return path.join(dir, "bin", process.platform === "win32" ? "tabwire.exe" : "tabwire");
}

const exe = binary();

// A signal sent to this process (a client ending its MCP server, `kill`) goes on to the program,
// which shuts down cleanly; this process ends when the program has. The handlers are in place
// before the program starts: a signal that came between its start and theirs would end this
// process by default and leave the program running with no one to stop it. Node runs them from
// its event loop, so by then `child` is set.
let child;
const forwarded = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"];
const forward = (signal) => {
  try {
    child.kill(signal);
  } catch {
    // already gone
  }
};
for (const signal of forwarded) {
  try {
    process.on(signal, forward);
  } catch {
    // a signal this system does not have (Windows)
  }
}
child = spawn(exe, process.argv.slice(2), { stdio: "inherit", windowsHide: false });

child.on("error", (e) => fail(`cannot run ${exe}: ${e.message}`));
child.on("exit", (code, signal) => {
  if (signal) {
    for (const s of forwarded) process.removeAllListeners(s);
    process.kill(process.pid, signal);
    // A signal that does not end this process (ignored here): the shell's convention.
    process.exit(128 + (require("os").constants.signals[signal] || 0));
  }
  process.exit(code ?? 1);
});
