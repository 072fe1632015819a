// Bounds on what crosses the pipe: the host's cap, clipping values and bundles, display counts.
//
// Nothing unbounded crosses the pipe: the host sends its cap with every cell; values,
// tracebacks and exception messages are cut (head and tail, with a note) and display() stops
// after MAX_DISPLAYS outputs per cell. The host cuts again whatever arrives.
'use strict';

const limits = { cap: 20000 };
const MAX_DISPLAYS = 50;
const MAX_DEFINED = 30; // names listed as defined by a cell
const cellDisplays = { sent: 0, dropped: 0 };
function clip(s, cap) {
  if (cap === undefined) cap = limits.cap;
  s = String(s);
  if (s.length <= cap) return s;
  const room = Math.max(cap - 80, 16);
  const head = Math.floor(room * 3 / 4);
  const tail = Math.floor(room / 4);
  return `${s.slice(0, head)}\n[… ${s.length - head - tail} characters cut here …]\n${s.slice(s.length - tail)}`;
}
function boundedBundle(data) {
  const out = {};
  for (const [mime, v] of Object.entries(data)) {
    if (typeof v !== 'string') out[mime] = v;
    else if (mime === 'text/plain') out[mime] = clip(v);
    else if (v.length <= limits.cap) out[mime] = v;
  }
  return out;
}


module.exports = { limits, MAX_DISPLAYS, MAX_DEFINED, cellDisplays, clip, boundedBundle };
