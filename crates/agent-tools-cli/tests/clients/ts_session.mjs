// One MCP session through an installed `agent-tools`, with the official MCP TypeScript SDK
// (npm `@modelcontextprotocol/sdk`).
//
// usage: node ts_session.mjs SDK_DIR ROOT COMMAND [ARGS...]   (started in ROOT, as a client does)
//
// What the npm dist test runs against `npx agent-tools-cli serve` from the packed tarballs:
// initialize, list the tools, a `read` of `hello.txt` and an `ast_grep` over `calc.py` in the
// root (the test writes both). Prints one line `ok <checks>` and exits 0, or exits 1.

import path from "node:path";

const [sdk, root, command, ...args] = process.argv.slice(2);
const load = (p) => import(path.join(sdk, "dist/esm", p));
const { Client } = await load("client/index.js");
const { StdioClientTransport } = await load("client/stdio.js");

const checks = [];
function check(name, cond, detail = "") {
  if (!cond) throw new Error(`${name}: ${detail}`);
  checks.push(name);
}
const textOf = (r) => r.content.filter((c) => c.type === "text").map((c) => c.text).join("");

try {
  const client = new Client({ name: "ts-session", version: "0" }, { capabilities: {} });
  const transport = new StdioClientTransport({ command, args, cwd: root, env: process.env, stderr: "inherit" });
  await client.connect(transport);
  check("initialize", client.getServerVersion().name === "agent-tools", JSON.stringify(client.getServerVersion()));
  const names = (await client.listTools()).tools.map((t) => t.name);
  check("tools", names.includes("read") && names.includes("ast_grep"), names.join());
  let r = await client.callTool({ name: "read", arguments: { path: "hello.txt" } });
  check("read", !r.isError && textOf(r).includes("1| hello from the scratch root"), textOf(r));
  r = await client.callTool({ name: "ast_grep", arguments: { pattern: "return $A + $B", language: "python" } });
  check("ast_grep", !r.isError && textOf(r).includes("calc.py"), textOf(r));
  await client.close();
  console.log("ok " + checks.join(","));
  process.exit(0);
} catch (e) {
  console.log(`failed after ${checks.join(",")}: ${e.stack ?? e}`);
  process.exit(1);
}
