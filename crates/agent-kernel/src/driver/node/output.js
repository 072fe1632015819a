// The cell's output and input: `console`, `process.stdout` and `process.stderr` replaced by
// streams that send "stream" frames, and a stdin (and `prompt`) that fails at once.
'use strict';

const { Console } = require('console');
const wire = require('./wire');

function emit(name, chunk, encoding) {
  let text;
  if (typeof chunk === 'string') text = chunk;
  else if (chunk instanceof Uint8Array) text = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString('utf8');
  else text = String(chunk);
  if (text.length) wire.send({ t: 'stream', name, text });
}
function makeStream(name) {
  const s = new (require('stream').Writable)({
    write(chunk, enc, cb) { emit(name, chunk, enc); cb(); },
  });
  s.write = function (chunk, enc, cb) {
    emit(name, chunk, enc);
    if (typeof enc === 'function') enc();
    else if (typeof cb === 'function') cb();
    return true;
  };
  s.isTTY = false;
  s.columns = 120;
  s.fd = name === 'stdout' ? 1 : 2;
  return s;
}
const out = makeStream('stdout');
const err = makeStream('stderr');

const NO_INPUT = 'stdin is not available in an eval cell: nobody can type into it; put the value in the code instead';

/** Replace the process's streams and `console` (after the wire is open: it may be stdin). */
function install() {
  const fakeIn = new (require('stream').Readable)({
    read() { this.destroy(new Error(NO_INPUT)); },
  });
  for (const [k, v] of [['stdout', out], ['stderr', err], ['stdin', fakeIn]]) {
    Object.defineProperty(process, k, { configurable: true, enumerable: false, get() { return v; } });
  }
  const cellConsole = new Console({ stdout: out, stderr: err, colorMode: false });
  Object.defineProperty(globalThis, 'console', { configurable: true, writable: true, value: cellConsole });
  globalThis.prompt = () => { throw new Error(NO_INPUT); };
}

module.exports = { out, err, install };
