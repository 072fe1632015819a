// The wire to the host: where it comes in and goes out, the hello's nonce, and frames both ways.
//
// The wire: JSON lines, each prefixed with "\x1e<nonce>:", in on fd 3 (the host's launcher moves
// it there from stdin, leaving /dev/null on fd 0) and out on stdout. Cells never see the real
// stdout (the output module replaces every stream object), and anything that still reaches fd 1
// raw is not a frame (it lacks the nonce), so the host shows it as output instead of misreading
// it. Every frame this driver sends starts with its "t" field (the host sheds output frames by
// that prefix when it is behind).
'use strict';

const fs = require('fs');

let prefix = null;

function writeAll(fd, buf) {
  let off = 0;
  while (off < buf.length) {
    try {
      off += fs.writeSync(fd, buf, off, buf.length - off);
    } catch (e) {
      if (e.code !== 'EAGAIN') throw e;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
    }
  }
}

const LONE = /\\ud[89ab][0-9a-f]{2}(?!\\ud[c-f][0-9a-f]{2})|(?<!\\ud[89ab][0-9a-f]{2})\\ud[c-f][0-9a-f]{2}/gi;
/** Send one frame (an object whose first key is "t"). */
function send(obj) {
  const json = JSON.stringify(obj).replace(LONE, '\\ufffd');
  writeAll(1, Buffer.from(prefix + json + '\n', 'utf8'));
}

/** The host's first line: its nonce prefixes every frame from now on. */
function hello(msg) {
  if (!msg || typeof msg.nonce !== 'string') throw new Error('agent-kernel driver: the host\'s first message has no nonce');
  prefix = '\x1e' + msg.nonce + ':';
}

// The frames the host sends after its hello (protocol.rs's HostFrame), by kind: each field and
// the type it must have. A frame of another shape is said on stderr and ignored, never read with
// a default.
const HOST_FRAMES = {
  exec: { id: 'integer', code: 'string', cap: 'integer' },
  bridge_result: { id: 'integer', is_error: 'boolean', text: 'string', structured: 'any', images: 'integer' },
};

function fits(v, type) {
  if (type === 'integer') return Number.isInteger(v);
  if (type === 'any') return v !== undefined;
  return typeof v === type;
}

/** `msg` when it is one of HOST_FRAMES with every field of its type; else null, said on stderr. */
function hostFrame(msg) {
  const known = msg !== null && typeof msg === 'object' && Object.prototype.hasOwnProperty.call(HOST_FRAMES, msg.t);
  const fields = known ? HOST_FRAMES[msg.t] : {};
  const wrong = Object.keys(fields).filter((k) => !fits(msg[k], fields[k]));
  if (known && !wrong.length) return msg;
  const what = known
    ? `a \`${msg.t}\` message from the host has a missing or mistyped ${wrong.map((k) => '`' + k + '`').join(', ')}`
    : 'a message from the host is of no kind the kernel driver knows';
  send({ t: 'stream', name: 'stderr', text: `[${what}, so the kernel driver ignored it]\n` });
  return null;
}

/** The wire's input: fd 3, where the host's launcher puts it; without the launcher, stdin. */
function open() {
  try {
    return new (require('net').Socket)({ fd: 3, readable: true, writable: false });
  } catch (_) {
    return process.stdin;
  }
}

/** Call `onMessage` with each JSON line the host sends (lines that are not JSON are skipped). */
function readMessages(input, onMessage, onEnd) {
  let buf = '';
  let scanned = 0;
  input.setEncoding('utf8');
  input.on('data', (chunk) => {
    // each byte is searched once, however a long message is split into reads
    buf += chunk;
    let k;
    while ((k = buf.indexOf('\n', scanned)) >= 0) {
      const line = buf.slice(0, k);
      buf = buf.slice(k + 1);
      scanned = 0;
      if (!line.trim()) continue;
      let msg;
      try { msg = JSON.parse(line); } catch (_) { continue; }
      onMessage(msg);
    }
    scanned = buf.length;
  });
  input.on('end', onEnd);
}

module.exports = { send, hello, hostFrame, open, readMessages, hasHello: () => prefix !== null };
