// Rich display: a value as a MIME bundle (text, `_repr_html_`, `_repr_markdown_`), and display().
'use strict';

const util = require('util');
const wire = require('./wire');
const { MAX_DISPLAYS, boundedBundle, cellDisplays } = require('./bounds');

function inspect(v) {
  return util.inspect(v, { depth: 6, maxArrayLength: 100, maxStringLength: 10000, breakLength: 100, colors: false });
}
function bundle(v, raw) {
  const data = { 'text/plain': raw && typeof v === 'string' ? v : inspect(v) };
  if (v && typeof v === 'object') {
    for (const [m, mime] of [['_repr_html_', 'text/html'], ['_repr_markdown_', 'text/markdown']]) {
      try { if (typeof v[m] === 'function') data[mime] = String(v[m]()); } catch (_) { /* ignore */ }
    }
  }
  return boundedBundle(data);
}
function display(...values) {
  for (const v of values) {
    if (cellDisplays.sent >= MAX_DISPLAYS) { cellDisplays.dropped++; continue; }
    cellDisplays.sent++;
    wire.send({ t: 'display', data: bundle(v, true) });
  }
}

module.exports = { inspect, bundle, display };
