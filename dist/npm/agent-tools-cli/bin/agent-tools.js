#!/usr/bin/env node
// The `agent-tools` launcher of the npm package `agent-tools-cli`: it finds the binary of this
// platform, shipped in the optional dependency `agent-tools-cli-<platform>-<arch>` (the pattern of
// esbuild and @biomejs/biome: npm installs only the one whose `os`/`cpu`/`libc` match), and runs it
// with this process's arguments, stdin, stdout and stderr, so that `npx -y agent-tools-cli serve`
// is an MCP stdio server. AGENT_TOOLS_BINARY names another binary to run instead.
"use strict";

const { spawn } = require("node:child_process");

function binary() {
  const override = process.env.AGENT_TOOLS_BINARY;
  if (override) return override;
  const pkg = `agent-tools-cli-${process.platform}-${process.arch}`;
  try {
    return require.resolve(`${pkg}/bin/agent-tools`);
  } catch {
    process.stderr.write(
      `agent-tools: the package ${pkg} is not installed, so there is no agent-tools binary for ` +
        `${process.platform}-${process.arch} here.\n` +
        "Prebuilt binaries exist for linux-x64 and linux-arm64 (glibc); npm installs the one that " +
        "matches as an optional dependency, unless optional dependencies are omitted " +
        "(--omit=optional, --no-optional).\n" +
        "Elsewhere: `cargo install agent-tools-cli`, or set AGENT_TOOLS_BINARY to a built binary.\n",
    );
    process.exit(1);
  }
}

const child = spawn(binary(), process.argv.slice(2), { stdio: "inherit" });
// A signal for the launcher is meant for the host: pass it on and let the host decide.
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(sig, () => child.kill(sig));
}
child.on("error", (e) => {
  process.stderr.write(`agent-tools: cannot start ${e.path ?? "the binary"}: ${e.message}\n`);
  process.exit(1);
});
child.on("exit", (code, signal) => {
  if (signal) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  } else {
    process.exit(code ?? 1);
  }
});
