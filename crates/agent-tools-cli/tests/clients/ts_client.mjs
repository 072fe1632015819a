// Drive `agent-tools serve` over stdio with the official MCP TypeScript SDK
// (npm `@modelcontextprotocol/sdk`).
//
// usage: node ts_client.mjs SDK_DIR BIN ROOT
//
// Initialize, list tools on two surfaces (full and plan), a `read`, an `ast_grep`, an `eval`
// whose result carries a PNG image, an `eval` whose output so far arrives as progress
// notifications before its result, an `ask_user` answered through elicitation, and a long
// `eval` cancelled by the client (its timeout sends `notifications/cancelled`) after which the
// kernel answers again. Prints one line `ok <checks>` and exits 0, or exits 1.

import path from "node:path";

const [sdk, bin, root] = process.argv.slice(2);
const load = (p) => import(path.join(sdk, "dist/esm", p));
const { Client } = await load("client/index.js");
const { StdioClientTransport } = await load("client/stdio.js");
const { ElicitRequestSchema } = await load("types.js");

const checks = [];
function check(name, cond, detail = "") {
  if (!cond) throw new Error(`${name}: ${detail}`);
  checks.push(name);
}
const textOf = (r) => r.content.filter((c) => c.type === "text").map((c) => c.text).join("");

async function connect(surface) {
  const client = new Client(
    { name: "ts-client", version: "0" },
    { capabilities: { elicitation: {} } },
  );
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    check("elicitation carries the options", JSON.stringify(req.params.requestedSchema).includes("postgres"));
    return { action: "accept", content: { choice: "postgres" } };
  });
  const transport = new StdioClientTransport({
    command: bin,
    args: ["serve", "--root", root, "--surface", surface],
    stderr: "ignore",
  });
  await client.connect(transport);
  return client;
}

try {
  const plan = await connect("plan");
  check("plan initialize", plan.getServerVersion().name === "agent-tools");
  const planNames = (await plan.listTools()).tools.map((t) => t.name);
  check("plan lists read only", planNames.includes("read") && !planNames.includes("write"), planNames.join());
  await plan.close();

  const s = await connect("full");
  check("full initialize", (s.getInstructions() ?? "").includes("full surface"));
  const tools = Object.fromEntries((await s.listTools()).tools.map((t) => [t.name, t]));
  for (const n of ["read", "write", "eval", "ast_grep", "ask_user"]) check(`lists ${n}`, n in tools);
  check("annotations", tools.read.annotations.readOnlyHint === true && tools.write.annotations.destructiveHint === true);
  check("tier in _meta", tools.eval._meta?.tier === "exec", JSON.stringify(tools.eval._meta));

  let r = await s.callTool({ name: "read", arguments: { path: "hello.txt" } });
  check("read", !r.isError && textOf(r).includes("1| hello from python"), textOf(r));

  r = await s.callTool({ name: "ast_grep", arguments: { pattern: "return $A + $B", language: "python" } });
  check("ast_grep", !r.isError && textOf(r).includes("calc.py"), textOf(r));

  const code = "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\nfig, ax = plt.subplots()\nax.plot([1, 3, 2])\nfig";
  r = await s.callTool({ name: "eval", arguments: { code, description: "plot three points on a line chart" } }, undefined, { timeout: 120000 });
  const img = r.content.find((c) => c.type === "image");
  check("eval image", !r.isError && img && img.mimeType === "image/png", textOf(r));
  check("png bytes", Buffer.from(img.data, "base64").subarray(0, 4).toString("latin1") === "\x89PNG");

  const seen = [];
  r = await s.callTool(
    { name: "eval", arguments: { code: "import time\nprint('first')\ntime.sleep(1.5)\nprint('second')", description: "print two lines with a pause" } },
    undefined,
    { timeout: 60000, onprogress: (p) => seen.push(p) },
  );
  check("eval progress before the result", !r.isError && seen.some((p) => (p.message ?? "").includes("first") && !(p.message ?? "").includes("second")), JSON.stringify(seen));
  check("progress increases", seen.every((p, i) => i === 0 || seen[i - 1].progress < p.progress), JSON.stringify(seen));

  r = await s.callTool({ name: "ask_user", arguments: { question: "Which database?", options: [{ label: "sqlite" }, { label: "postgres" }], allow_free_text: false } });
  check("ask_user answered by elicitation", !r.isError && textOf(r).includes("postgres"), textOf(r));

  let cancelled = false;
  try {
    await s.callTool({ name: "eval", arguments: { code: "import time\ntime.sleep(120)", description: "sleep for two whole minutes now" } }, undefined, { timeout: 3000 });
  } catch (e) {
    cancelled = true;
  }
  check("long eval abandoned", cancelled);
  r = await s.callTool({ name: "eval", arguments: { code: "6 * 7", description: "compute the answer after the cancel" } }, undefined, { timeout: 60000 });
  check("kernel free after cancel", !r.isError && textOf(r).includes("42"), textOf(r));
  await s.close();
  console.log("ok " + checks.join(","));
  process.exit(0);
} catch (e) {
  console.log(`failed after ${checks.join(",")}: ${e.stack ?? e}`);
  process.exit(1);
}
