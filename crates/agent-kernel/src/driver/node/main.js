// The driver's entry point: open the wire, replace the cell's streams, say ready after the
// host's hello, then run each cell the host sends, in order, answering with its "done" frame.
'use strict';

const path = require('path');
const Module = require('module');
const { MAX_DEFINED, cellDisplays, limits } = require('./bounds');
const wire = require('./wire');
const output = require('./output');
const bridge = require('./bridge');
const { display } = require('./display');
const cell = require('./cell');

function run() {
  const input = wire.open();
  output.install();
  cell.install();

  const queue = [];
  let running = false;
  async function drain() {
    if (running) return;
    running = true;
    while (queue.length) {
      const msg = queue.shift();
      if (msg.cap >= 64) limits.cap = msg.cap;
      cellDisplays.sent = 0;
      cellDisplays.dropped = 0;
      let r;
      const before = cell.globalSnapshot();
      try {
        r = await cell.runCell(msg.id, msg.code);
      } catch (e) {
        r = { status: 'error', result: null, error: { ename: 'InternalError', evalue: String(e), traceback: 'internal error in the kernel driver: ' + String(e && e.stack) } };
      }
      const defined = cell.definedSince(before);
      wire.send({ t: 'done', id: msg.id, status: r.status, result: r.result, error: r.error, displays_dropped: cellDisplays.dropped, defined: defined.slice(0, MAX_DEFINED), defined_total: defined.length });
    }
    running = false;
  }

  function onMessage(msg) {
    if (!wire.hasHello()) {
      wire.hello(msg);
      globalThis.require = Module.createRequire(path.join(process.cwd(), '[cell]'));
      globalThis.display = display;
      globalThis.tool = bridge.tool;
      wire.send({ t: 'ready', pid: process.pid, language: 'javascript', version: process.version, executable: process.execPath });
      return;
    }
    const frame = wire.hostFrame(msg);
    if (frame === null) return;
    if (frame.t === 'bridge_result') bridge.resolve(frame);
    else { queue.push(frame); drain(); }
  }
  wire.readMessages(input, onMessage, () => process.exit(0));
}

module.exports = { run };
