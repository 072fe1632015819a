// Rewriting a cell's source so that its top-level declarations persist across cells (as global
// bindings, so redeclaring is fine), top-level `await` works, the last expression is echoed, and
// static `import` statements become dynamic imports. A small tokenizer finds the statements;
// nothing is evaluated here.
'use strict';

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

module.exports = { tokenize, rewrite, rewriteImports };
