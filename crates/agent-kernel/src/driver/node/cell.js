// Running a cell: compiling its rewritten source as a script in this context, awaiting it under
// the interrupt, its exception as a traceback of the cell's own frames, and the global names it
// bound or rebound.
'use strict';

const path = require('path');
const vm = require('vm');
const { clip, limits } = require('./bounds');
const { err } = require('./output');
const { bundle, inspect } = require('./display');
const { rewrite, rewriteImports, tokenize } = require('./rewrite');

const scriptOptions = (filename, extra) => Object.assign(
  { filename },
  vm.constants && vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER ? { importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER } : {},
  extra || {},
);

let interruptCell = null;

/** Hide that warning; interrupt the running cell on SIGINT; report what escapes a cell. */
function install() {
  // node 20 marks the main-context loader for vm scripts experimental; the warning is noise here
  const emitWarning = process.emitWarning;
  process.emitWarning = function (warning, ...rest) {
    if (String(warning && warning.message !== undefined ? warning.message : warning).includes('USE_MAIN_CONTEXT_DEFAULT_LOADER')) return;
    return emitWarning.call(process, warning, ...rest);
  };
  process.on('SIGINT', () => { if (interruptCell) interruptCell(); });
  process.on('uncaughtException', (e) => { try { err.write('Uncaught exception (outside the cell that started it): ' + formatError(e).traceback + '\n'); } catch (_) { /* ignore */ } });
  process.on('unhandledRejection', (e) => { try { err.write('Unhandled promise rejection: ' + formatError(e).traceback + '\n'); } catch (_) { /* ignore */ } });
}

// A stack frame of node itself or of this driver (its files, or its modules passed as source:
// named `<agent-kernel NAME>`), never shown in a cell's traceback.
const DRIVER_DIR = __dirname + path.sep;
function driverFrame(line) {
  return line.includes('node:') || line.includes('[eval]') || line.includes('<agent-kernel') || line.includes(DRIVER_DIR);
}

const cellSources = new Map();
function formatError(e) {
  if (!(e instanceof Error)) return { ename: 'Uncaught', evalue: clip(inspect(e), limits.cap / 8), traceback: clip('Uncaught ' + inspect(e)) };
  let stack;
  try { stack = String(e.stack || e); } catch (_) { stack = 'Error'; }
  // a huge message is cut before the stack is split into lines
  const lines = clip(stack, limits.cap * 4).split('\n');
  const kept = [];
  let frames = 0;
  let pointed = /^<cell \d+>:\d+/.test(lines[0] || '');
  for (const line of lines) {
    if (/^\s+at /.test(line)) {
      if (driverFrame(line)) continue;
      if (frames >= 8) continue;
      frames++;
      kept.push(line);
      const m = /<cell (\d+)>:(\d+):(\d+)/.exec(line);
      if (m && !pointed) {
        pointed = true;
        const src = (cellSources.get(Number(m[1])) || '').split('\n')[Number(m[2]) - 1];
        if (src !== undefined) kept.push('        ' + src.trim());
      }
    } else {
      kept.push(line);
    }
  }
  return {
    ename: clip(e.name || 'Error', 200),
    evalue: clip(e.message || '', limits.cap / 8),
    traceback: clip(kept.join('\n').replace(/\n+$/, '')),
  };
}

function withInterrupt(p) {
  return new Promise((resolve, reject) => {
    interruptCell = () => { const e = new Error('interrupted'); e.name = 'Interrupted'; reject(e); };
    Promise.resolve(p).then(resolve, reject);
  }).finally(() => { interruptCell = null; });
}

async function runCell(id, original) {
  const filename = `<cell ${id}>`;
  cellSources.set(id, original);
  let code = original;
  let value;
  try {
    if (/\bimport\b/.test(code)) code = rewriteImports(code);
    let script = null;
    let asyncMode = false;
    try {
      script = new vm.Script(rewrite(code, false).code, scriptOptions(filename));
    } catch (e) {
      const awaits = e instanceof SyntaxError && tokenize(code).some((t) => t.k === 'id' && t.v === 'await');
      if (awaits) asyncMode = true;
      else throw e;
    }
    if (!asyncMode) {
      value = script.runInThisContext({ breakOnSigint: true, displayErrors: true });
      if (value && typeof value.then === 'function') value = await withInterrupt(value);
    } else {
      const r = rewrite(code, true);
      let wrapped = null;
      if (r.echoAt !== null) {
        const body = r.code.slice(0, r.echoAt) + '\nreturn (' + r.code.slice(r.echoAt).replace(/[\s;]+$/, '') + '\n)';
        wrapped = '(async () => {' + r.head + '\n' + body + '\n})()';
        try { new vm.Script(wrapped, scriptOptions(filename)); } catch (_) { wrapped = null; }
      }
      if (wrapped === null) wrapped = '(async () => {' + r.head + '\n' + r.code + '\n})()';
      script = new vm.Script(wrapped, scriptOptions(filename, { lineOffset: -1 }));
      value = await withInterrupt(script.runInThisContext({ breakOnSigint: true, displayErrors: true }));
    }
  } catch (e) {
    const interrupted = e && (e.code === 'ERR_SCRIPT_EXECUTION_INTERRUPTED' || e.name === 'Interrupted');
    return { status: interrupted ? 'interrupted' : 'error', result: null, error: formatError(e) };
  }
  if (value !== undefined) globalThis._ = value;
  return { status: 'ok', result: value === undefined ? null : bundle(value), error: null };
}

// The global bindings (top-level declarations persist as globals) by name, without calling
// any getter; after the cell, the names it added or rebound (not node's lazy globals, whose
// getter turns into a value on first use).
function globalSnapshot() {
  const m = new Map();
  for (const k of Object.getOwnPropertyNames(globalThis)) {
    const d = Object.getOwnPropertyDescriptor(globalThis, k);
    if (d) m.set(k, 'value' in d ? { v: d.value } : { g: d.get });
  }
  return m;
}
function definedSince(before) {
  const out = [];
  try {
    for (const [k, now] of globalSnapshot()) {
      const was = before.get(k);
      if (k === '_' || (was && ('g' in was ? 'v' in now || was.g === now.g : Object.is(was.v, now.v)))) continue;
      out.push(k);
    }
  } catch (_) { /* ignore */ }
  return out;
}


module.exports = { install, runCell, globalSnapshot, definedSince };
