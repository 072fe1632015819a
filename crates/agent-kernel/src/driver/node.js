// agent-kernel JavaScript driver. Shipped inside the agent-kernel crate and passed to `node -e`;
// never required by anything else.
//
// The wire: JSON lines, each prefixed with "\x1e<nonce>:", in on fd 3 (the host's launcher moves
// it there from stdin, leaving /dev/null on fd 0) and out on stdout.
// Cells never see the real stdout: `console`, `process.stdout` and `process.stderr` are replaced
// by streams that send "stream" messages, and anything that still reaches fd 1 raw is not a frame
// (it lacks the nonce), so the host shows it as output instead of misreading it.
(function agentKernelMain() {
  'use strict';
  const fs = require('fs');
  const vm = require('vm');
  const util = require('util');
  const path = require('path');
  const { Console } = require('console');
  const Module = require('module');

  let prefix = null;
  const pendingOut = [];

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
  function send(obj) {
    const json = JSON.stringify(obj).replace(LONE, '\\ufffd');
    writeAll(1, Buffer.from(prefix + json + '\n', 'utf8'));
  }

  // ---- output -------------------------------------------------------------------------------
  function emit(name, chunk, encoding) {
    let text;
    if (typeof chunk === 'string') text = chunk;
    else if (chunk instanceof Uint8Array) text = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString('utf8');
    else text = String(chunk);
    if (text.length) send({ t: 'stream', name, text });
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
  // The host's launcher puts the wire on fd 3 (and /dev/null on fd 0); without it, stdin.
  let wireIn;
  try {
    wireIn = new (require('net').Socket)({ fd: 3, readable: true, writable: false });
  } catch (_) {
    wireIn = process.stdin;
  }
  const NO_INPUT = 'stdin is not available in an eval cell: nobody can type into it; put the value in the code instead';
  const fakeIn = new (require('stream').Readable)({
    read() { this.destroy(new Error(NO_INPUT)); },
  });
  for (const [k, v] of [['stdout', out], ['stderr', err], ['stdin', fakeIn]]) {
    Object.defineProperty(process, k, { configurable: true, enumerable: false, get() { return v; } });
  }
  const cellConsole = new Console({ stdout: out, stderr: err, colorMode: false });
  Object.defineProperty(globalThis, 'console', { configurable: true, writable: true, value: cellConsole });
  globalThis.prompt = () => { throw new Error(NO_INPUT); };

  // ---- the bridge ---------------------------------------------------------------------------
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
        send({ t: 'bridge', id, name, args });
      } catch (e) {
        waiters.delete(id);
        throw new TypeError('tool(name, args): args must be JSON-serialisable: ' + e.message);
      }
    });
  }
  async function tool(name, args) {
    const res = await callTool(name, args);
    if (res.is_error) {
      const e = new Error(`tool \`${name}\` failed: ${res.text || ''}`);
      e.name = 'ToolError';
      throw e;
    }
    return res.text || '';
  }
  tool.raw = callTool;

  // ---- bounds -------------------------------------------------------------------------------
  // Nothing unbounded crosses the pipe: the host sends its cap with every cell; values,
  // tracebacks and exception messages are cut (head and tail, with a note) and display() stops
  // after MAX_DISPLAYS outputs per cell. The host cuts again whatever arrives.
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

  // ---- display ------------------------------------------------------------------------------
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
      send({ t: 'display', data: bundle(v, true) });
    }
  }

  // ---- rewriting top-level declarations --------------------------------------------------------
  const PUNCTS = ['>>>=', '...', '===', '!==', '**=', '<<=', '>>=', '>>>', '&&=', '||=', '??=', '=>', '==', '!=', '<=', '>=',
    '&&', '||', '??', '?.', '++', '--', '+=', '-=', '*=', '/=', '%=', '&=', '|=', '^=', '**', '<<', '>>'];
  const REGEX_AFTER_KW = new Set(['return', 'typeof', 'instanceof', 'in', 'of', 'new', 'delete', 'void', 'throw', 'case', 'do', 'else', 'yield', 'await']);

  // Tokens: {v, s, e, d, nl}; d = bracket depth outside the token, nl = newline before it.
  function tokenize(src) {
    const toks = [];
    const stack = [];
    let i = 0;
    let nl = false;
    const n = src.length;
    const isId = (c) => /[A-Za-z0-9_$\u0080-\uffff]/.test(c);
    function prevAllowsRegex() {
      const p = toks[toks.length - 1];
      if (!p) return true;
      if (p.k === 'id') return REGEX_AFTER_KW.has(p.v);
      if (p.k === 'num' || p.k === 'str' || p.k === 'tmpl' || p.k === 're') return false;
      return !(p.v === ')' || p.v === ']');
    }
    function scanTemplate(start) {
      // i is just after ` or after the } that closes a ${ } part
      while (i < n) {
        const c = src[i];
        if (c === '\\') { i += 2; continue; }
        if (c === '`') { i++; toks.push({ k: 'tmpl', v: '`', s: start, e: i, d: stack.length, nl }); nl = false; return; }
        if (c === '$' && src[i + 1] === '{') { i += 2; toks.push({ k: 'tmpl', v: '${', s: start, e: i, d: stack.length, nl }); nl = false; stack.push('${'); return; }
        i++;
      }
      toks.push({ k: 'tmpl', v: '`', s: start, e: i, d: stack.length, nl });
    }
    while (i < n) {
      const c = src[i];
      if (c === '\n') { nl = true; i++; continue; }
      if (c === ' ' || c === '\t' || c === '\r' || c === '\f' || c === '\v' || c === '\u00a0' || c === '\ufeff') { i++; continue; }
      if (c === '/' && src[i + 1] === '/') { while (i < n && src[i] !== '\n') i++; continue; }
      if (c === '/' && src[i + 1] === '*') {
        const j = src.indexOf('*/', i + 2);
        const end = j < 0 ? n : j + 2;
        if (src.slice(i, end).includes('\n')) nl = true;
        i = end;
        continue;
      }
      const s = i;
      if (c === '"' || c === "'") {
        i++;
        while (i < n && src[i] !== c && src[i] !== '\n') { if (src[i] === '\\') i++; i++; }
        i++;
        toks.push({ k: 'str', v: c, s, e: i, d: stack.length, nl }); nl = false;
        continue;
      }
      if (c === '`') { i++; scanTemplate(s); continue; }
      if (c === '}' && stack[stack.length - 1] === '${') { stack.pop(); i++; scanTemplate(s); continue; }
      if (c === '/' && prevAllowsRegex()) {
        i++;
        let cls = false;
        while (i < n && src[i] !== '\n') {
          const ch = src[i];
          if (ch === '\\') { i += 2; continue; }
          if (ch === '[') cls = true; else if (ch === ']') cls = false; else if (ch === '/' && !cls) break;
          i++;
        }
        i++;
        while (i < n && isId(src[i])) i++;
        toks.push({ k: 're', v: '/', s, e: i, d: stack.length, nl }); nl = false;
        continue;
      }
      if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(src[i + 1] || ''))) {
        i++;
        while (i < n && /[0-9A-Za-z_.]/.test(src[i])) i++;
        toks.push({ k: 'num', v: src.slice(s, i), s, e: i, d: stack.length, nl }); nl = false;
        continue;
      }
      if (isId(c) || c === '\\' || c === '#') {
        i++;
        while (i < n && isId(src[i])) i++;
        toks.push({ k: 'id', v: src.slice(s, i), s, e: i, d: stack.length, nl }); nl = false;
        continue;
      }
      if (c === '(' || c === '[' || c === '{') {
        toks.push({ k: 'p', v: c, s, e: i + 1, d: stack.length, nl }); nl = false;
        stack.push(c); i++;
        continue;
      }
      if (c === ')' || c === ']' || c === '}') {
        if (stack.length) stack.pop();
        toks.push({ k: 'p', v: c, s, e: i + 1, d: stack.length, nl }); nl = false;
        i++;
        continue;
      }
      const p = PUNCTS.find((q) => src.startsWith(q, i)) || c;
      i += p.length;
      toks.push({ k: 'p', v: p, s, e: i, d: stack.length, nl }); nl = false;
    }
    return toks;
  }

  const CONTINUES = new Set(['.', ',', '?', ':', '=', '==', '===', '!=', '!==', '+', '-', '*', '/', '%', '&', '|', '^', '<', '>',
    '<=', '>=', '&&', '||', '??', '?.', '=>', '**', '<<', '>>', '>>>', 'instanceof', 'in', '+=', '-=', '*=', '/=']);

  function statementStarts(toks) {
    const starts = [];
    for (let j = 0; j < toks.length; j++) {
      const t = toks[j];
      if (t.d !== 0) continue;
      const p = toks[j - 1];
      if (!p) { starts.push(j); continue; }
      if (p.d === 0 && (p.v === ';' || p.v === '}')) {
        if (p.v === ';' || t.nl || t.k === 'id') { starts.push(j); continue; }
      }
      if (t.nl && p.d === 0 && !(p.k === 'p' && CONTINUES.has(p.v) && p.v !== '++' && p.v !== '--') && !(t.k === 'p' && CONTINUES.has(t.v))
        && !(p.k === 'p' && (p.v === '(' || p.v === '[' || p.v === '{'))) {
        starts.push(j);
      }
    }
    return starts;
  }

  // The token index just past the declaration that starts at token j.
  function declarationEnd(toks, j, starts) {
    const later = starts.find((s) => s > j);
    for (let k = j + 1; k < toks.length; k++) {
      if (toks[k].d === 0 && toks[k].v === ';') return k;
      if (later !== undefined && k >= later) return k;
    }
    return toks.length;
  }

  function isDecl(toks, j) {
    const t = toks[j];
    if (t.k !== 'id') return null;
    const nx = toks[j + 1];
    if ((t.v === 'let' || t.v === 'const' || t.v === 'var') && nx && (nx.k === 'id' || nx.v === '{' || nx.v === '[')) return 'var';
    if (t.v === 'class' && nx && nx.k === 'id') return 'class';
    if (t.v === 'function') return 'function';
    if (t.v === 'async' && nx && nx.v === 'function' && !nx.nl) return 'function';
    return null;
  }

  // rewrite(src, asyncMode): returns {code, echo}
  function rewrite(src, asyncMode) {
    const toks = tokenize(src);
    const starts = statementStarts(toks);
    const edits = [];
    const hoisted = [];
    for (const j of starts) {
      const kind = isDecl(toks, j);
      if (!kind) continue;
      const t = toks[j];
      if (kind === 'class') {
        const name = toks[j + 1].v;
        let k = j + 1;
        while (k < toks.length && !(toks[k].v === '{' && toks[k].d === 0)) k++;
        let m = k + 1;
        while (m < toks.length && !(toks[m].v === '}' && toks[m].d === 0)) m++;
        if (m >= toks.length) continue;
        edits.push({ at: t.s, del: 0, ins: asyncMode ? `;${name} = ` : `var ${name} = ` });
        edits.push({ at: toks[m].e, del: 0, ins: ';' });
      } else if (kind === 'function' && asyncMode) {
        let k = j + 1;
        while (k < toks.length && (toks[k].v === 'function' || toks[k].v === '*')) k++;
        if (toks[k] && toks[k].k === 'id') hoisted.push(toks[k].v);
      } else if (kind === 'var') {
        if (!asyncMode) {
          if (t.v !== 'var') edits.push({ at: t.s, del: t.e - t.s, ins: 'var' });
          continue;
        }
        const end = declarationEnd(toks, j, starts);
        // split declarators at depth-0 commas; append `= undefined` where there is no initialiser
        let hasInit = false;
        edits.push({ at: t.s, del: t.e - t.s, ins: ';(' });
        for (let k = j + 1; k <= end; k++) {
          const tk = toks[k];
          if (k === end || (tk.d === 0 && tk.v === ',')) {
            if (!hasInit) edits.push({ at: toks[k - 1].e, del: 0, ins: ' = undefined' });
            hasInit = false;
            continue;
          }
          if (tk.d === 0 && tk.v === '=') hasInit = true;
        }
        const last = toks[end - 1];
        edits.push({ at: last.e, del: 0, ins: ')' });
      }
    }
    let echoAt = null;
    if (asyncMode && starts.length) {
      const j = starts[starts.length - 1];
      const t = toks[j];
      const STMT = new Set(['let', 'const', 'var', 'class', 'function', 'if', 'for', 'while', 'do', 'switch', 'try', 'return', 'throw', 'break', 'continue', 'import', 'export']);
      if (!(t.k === 'id' && STMT.has(t.v)) && !isDecl(toks, j) && t.v !== '{' && t.v !== ';') echoAt = t.s;
    }
    edits.forEach((e, k) => { e.k = k; });
    edits.sort((a, b) => b.at - a.at || b.k - a.k);
    let code = src;
    for (const e of edits) code = code.slice(0, e.at) + e.ins + code.slice(e.at + e.del);
    let shift = 0;
    if (echoAt !== null) for (const e of edits) if (e.at <= echoAt) shift += e.ins.length - e.del;
    const head = hoisted.map((h) => `globalThis.${h} = ${h};`).join('');
    return { code, head, echoAt: echoAt === null ? null : echoAt + shift };
  }

  // Static `import` statements (not valid in a script) become dynamic imports, so the reflexive
  // `import fs from 'fs'` works in a cell and its bindings persist like any other declaration.
  function rewriteImports(src) {
    const toks = tokenize(src);
    const starts = statementStarts(toks);
    const edits = [];
    for (const j of starts) {
      const t = toks[j];
      const nx = toks[j + 1];
      if (t.k !== 'id' || t.v !== 'import' || !nx || nx.v === '(' || nx.v === '.') continue;
      let k = j + 1;
      let spec = null;
      const names = [];
      let ns = null;
      let def = null;
      if (nx.k === 'str') {
        spec = nx;
      } else {
        while (k < toks.length && !(toks[k].k === 'id' && toks[k].v === 'from' && toks[k].d === 0)) {
          const tk = toks[k];
          if (tk.v === '*' && toks[k + 1] && toks[k + 1].v === 'as') { ns = toks[k + 2].v; k += 3; continue; }
          if (tk.k === 'id' && tk.d === 0 && def === null && ns === null && tk.v !== 'type') { def = tk.v; k++; continue; }
          if (tk.k === 'id' && tk.d === 1) {
            const local = toks[k + 1] && toks[k + 1].v === 'as' ? toks[k + 2].v : null;
            names.push(local ? `${tk.v}: ${local}` : tk.v);
            k += local ? 3 : 1;
            continue;
          }
          if (tk.k === 'str' && tk.d === 1) {
            const local = toks[k + 1] && toks[k + 1].v === 'as' ? toks[k + 2].v : null;
            if (local) names.push(`${src.slice(tk.s, tk.e)}: ${local}`);
            k += local ? 3 : 1;
            continue;
          }
          k++;
        }
        spec = toks[k + 1];
      }
      if (!spec || spec.k !== 'str') continue;
      let end = spec.e;
      const after = toks[toks.indexOf(spec) + 1];
      if (after && after.v === ';') end = after.e;
      const m = src.slice(spec.s, spec.e);
      let out;
      if (ns !== null) {
        out = `const ${ns} = await import(${m});` + (def ? ` const ${def} = ${ns}.default;` : '');
      } else if (def === null && !names.length) {
        out = `await import(${m});`;
      } else {
        const parts = (def ? [`default: ${def}`] : []).concat(names);
        out = `const { ${parts.join(', ')} } = await import(${m});`;
      }
      edits.push({ at: t.s, del: end - t.s, ins: out });
    }
    edits.sort((a, b) => b.at - a.at);
    let code = src;
    for (const e of edits) code = code.slice(0, e.at) + e.ins + code.slice(e.at + e.del);
    return code;
  }

  // node 20 marks the main-context loader for vm scripts experimental; the warning is noise here
  const emitWarning = process.emitWarning;
  process.emitWarning = function (warning, ...rest) {
    if (String(warning && warning.message !== undefined ? warning.message : warning).includes('USE_MAIN_CONTEXT_DEFAULT_LOADER')) return;
    return emitWarning.call(process, warning, ...rest);
  };
  const scriptOptions = (filename, extra) => Object.assign(
    { filename },
    vm.constants && vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER ? { importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER } : {},
    extra || {},
  );

  // ---- running a cell ---------------------------------------------------------------------------
  let interruptCell = null;
  let running = false;
  process.on('SIGINT', () => { if (interruptCell) interruptCell(); });
  process.on('uncaughtException', (e) => { try { err.write('Uncaught exception (outside the cell that started it): ' + formatError(e).traceback + '\n'); } catch (_) { /* ignore */ } });
  process.on('unhandledRejection', (e) => { try { err.write('Unhandled promise rejection: ' + formatError(e).traceback + '\n'); } catch (_) { /* ignore */ } });

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
        if (line.includes('node:') || line.includes('[eval]') || line.includes('agentKernelMain')) continue;
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

  // ---- the wire reader --------------------------------------------------------------------------
  const queue = [];
  async function drain() {
    if (running) return;
    running = true;
    while (queue.length) {
      const msg = queue.shift();
      if (Number.isInteger(msg.cap) && msg.cap >= 64) limits.cap = msg.cap;
      cellDisplays.sent = 0;
      cellDisplays.dropped = 0;
      let r;
      const before = globalSnapshot();
      try {
        r = await runCell(msg.id, String(msg.code || ''));
      } catch (e) {
        r = { status: 'error', result: null, error: { ename: 'InternalError', evalue: String(e), traceback: 'internal error in the kernel driver: ' + String(e && e.stack) } };
      }
      const defined = definedSince(before);
      send({ t: 'done', id: msg.id, status: r.status, result: r.result, error: r.error, displays_dropped: cellDisplays.dropped, defined: defined.slice(0, MAX_DEFINED), defined_total: defined.length });
    }
    running = false;
  }

  let buf = '';
  let scanned = 0;
  function onLine(line) {
    if (!line.trim()) return;
    let msg;
    try { msg = JSON.parse(line); } catch (_) { return; }
    if (prefix === null) {
      prefix = '\x1e' + msg.nonce + ':';
      globalThis.require = Module.createRequire(path.join(process.cwd(), '[cell]'));
      globalThis.display = display;
      globalThis.tool = tool;
      send({ t: 'ready', pid: process.pid, language: 'javascript', version: process.version, executable: process.execPath });
      return;
    }
    if (msg.t === 'bridge_result') {
      const w = waiters.get(msg.id);
      if (w) { waiters.delete(msg.id); w.resolve(msg); }
      return;
    }
    if (msg.t === 'exec') { queue.push(msg); drain(); }
  }
  wireIn.setEncoding('utf8');
  wireIn.on('data', (chunk) => {
    // each byte is searched once, however a long message is split into reads
    buf += chunk;
    let k;
    while ((k = buf.indexOf('\n', scanned)) >= 0) {
      const line = buf.slice(0, k);
      buf = buf.slice(k + 1);
      scanned = 0;
      onLine(line);
    }
    scanned = buf.length;
  });
  wireIn.on('end', () => process.exit(0));
})();
