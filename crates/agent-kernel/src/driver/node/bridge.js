// The tool() bridge: a cell's call goes to the host as a "bridge" frame and waits for its
// "bridge_result".
'use strict';

const wire = require('./wire');

const waiters = new Map();
let nextBridge = 0;
function callTool(name, args) {
  return new Promise((resolve, reject) => {
    if (typeof name !== 'string') throw new TypeError("tool(name, args): name must be a string such as 'read'");
    if (args === undefined || args === null) args = {};
    if (typeof args !== 'object' || Array.isArray(args)) throw new TypeError("tool(name, args): args must be an object of the tool's arguments");
    const id = ++nextBridge;
    waiters.set(id, { resolve, reject, name });
    try {
      wire.send({ t: 'bridge', id, name, args });
    } catch (e) {
      waiters.delete(id);
      throw new TypeError('tool(name, args): args must be JSON-serialisable: ' + e.message);
    }
  });
}
async function tool(name, args) {
  const res = await callTool(name, args);
  if (res.is_error) {
    const e = new Error(`tool \`${name}\` failed: ${res.text}`);
    e.name = 'ToolError';
    throw e;
  }
  return res.text;
}
tool.raw = callTool;

/** Hand a "bridge_result" frame to the call waiting for it. */
function resolve(msg) {
  const w = waiters.get(msg.id);
  if (w) { waiters.delete(msg.id); w.resolve(msg); }
}

module.exports = { tool, resolve };
