#!/usr/bin/env python3
"""A scripted stand-in for `dart language-server`, speaking real LSP (JSON-RPC over stdio).

No Dart SDK is reachable from CI, so this covers the dart entry of the server table. It answers
with UTF-16 columns (the LSP default, so the client's conversion is exercised), a single
`Location` for definition, `documentChanges` for rename, asks the client for configuration and a
progress token, and misbehaves on request:
  - any request on the word `crash`: writes to stderr and exits with code 3 (dies mid-request);
  - hover on the word `hang`: touches `<root>/.hanging` and never answers;
  - references of a word that starts with `lossy`: only its first occurrence (a server whose
    rename reaches further than its own references, which the rename check must catch);
  - workspace/symbol: the functions and class methods of the root's `.dart` files by a line
    pattern (no parser), with the name's range;
  - hover on the word `huge`: announces a frame of 1 TiB (`Content-Length: 1099511627776`) and
    stays alive; on the word `garbage`: answers with a body that is not JSON.
"""
import json
import os
import re
import sys
import time

docs = {}
root = None
next_id = 1000


def send(msg):
    msg["jsonrpc"] = "2.0"
    body = json.dumps(msg).encode()
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    sys.stdout.buffer.flush()


def read():
    headers = {}
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            sys.exit(0)
        line = line.strip()
        if not line:
            break
        k, _, v = line.decode().partition(":")
        headers[k.strip().lower()] = v.strip()
    return json.loads(sys.stdin.buffer.read(int(headers["content-length"])))


def u16_to_index(line, units):
    n = 0
    for i, ch in enumerate(line):
        if n >= units:
            return i
        n += 2 if ord(ch) > 0xFFFF else 1
    return len(line)


def index_to_u16(line, idx):
    return sum(2 if ord(c) > 0xFFFF else 1 for c in line[:idx])


def word_at(uri, pos):
    lines = docs[uri].split("\n")
    line = lines[pos["line"]]
    i = u16_to_index(line, pos["character"])
    for m in re.finditer(r"\w+", line):
        if m.start() <= i < m.end() or m.start() == i:
            return m.group(0)
    return None


def occurrences(uri, word):
    out = []
    for ln, line in enumerate(docs[uri].split("\n")):
        for m in re.finditer(r"\b%s\b" % re.escape(word), line):
            out.append({"start": {"line": ln, "character": index_to_u16(line, m.start())},
                        "end": {"line": ln, "character": index_to_u16(line, m.end())}})
    return out


def publish(uri, version):
    diags = []
    for r in occurrences(uri, "undefinedThing"):
        diags.append({"range": r, "severity": 1, "code": "undefined_identifier",
                      "source": "dart", "message": "Undefined name 'undefinedThing'."})
    send({"method": "textDocument/publishDiagnostics",
          "params": {"uri": uri, "version": version, "diagnostics": diags}})


def check_crash(word):
    if word == "crash":
        sys.stderr.write("fake dart: crashing on purpose\n")
        sys.stderr.flush()
        os._exit(3)


def workspace_symbols(query):
    """Every function (top level) and method (in a class) of the root's `.dart` files whose name
    contains the query, as `SymbolInformation` with the name's range, like the real server."""
    out = []
    for base, dirs, files in os.walk(root or "."):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for fname in sorted(files):
            if not fname.endswith(".dart"):
                continue
            path = os.path.join(base, fname)
            uri = "file://" + path
            text = docs.get(uri)
            if text is None:
                # A file the server cannot open (a symlink out of a sandboxed root) is skipped,
                # as real servers do.
                try:
                    with open(path, encoding="utf-8", errors="replace") as f:
                        text = f.read()
                except OSError:
                    continue
            cls = None
            for ln, line in enumerate(text.split("\n")):
                m = re.match(r"class\s+(\w+)", line)
                if m:
                    cls = m.group(1)
                    continue
                m = re.match(r"(\s*)((?:[\w<>?]+\s+)+)(\w+)\s*\(", line)
                if not m or m.group(2).split()[0] in ("return", "await", "new", "throw", "else"):
                    continue
                indented = bool(m.group(1))
                if indented and cls is None:
                    continue
                if query.lower() not in m.group(3).lower():
                    continue
                r = {"start": {"line": ln, "character": m.start(3)},
                     "end": {"line": ln, "character": m.end(3)}}
                item = {"name": m.group(3), "kind": 6 if indented else 12,
                        "location": {"uri": uri, "range": r}}
                if indented:
                    item["containerName"] = cls
                out.append(item)
                if not indented:
                    cls = None
    return out


def handle(msg):
    global root, next_id
    method = msg.get("method")
    params = msg.get("params") or {}
    mid = msg.get("id")
    if method is None:
        return  # a response to one of our requests
    if method == "initialize":
        root = params.get("rootPath")
        send({"id": mid, "result": {"capabilities": {
            "textDocumentSync": {"openClose": True, "change": 1, "save": {"includeText": False}},
            "definitionProvider": True, "referencesProvider": True, "hoverProvider": True,
            "documentSymbolProvider": True, "workspaceSymbolProvider": True,
            "codeActionProvider": True, "renameProvider": {"prepareProvider": True}},
            "serverInfo": {"name": "fake-dart"}}})
    elif method == "initialized":
        send({"id": next_id, "method": "workspace/configuration",
              "params": {"items": [{"section": "dart"}]}})
        next_id += 1
        send({"id": next_id, "method": "window/workDoneProgress/create", "params": {"token": "analyzing"}})
        next_id += 1
        send({"method": "$/progress", "params": {"token": "analyzing", "value": {"kind": "begin", "title": "Analyzing"}}})
        time.sleep(0.3)
        send({"method": "$/progress", "params": {"token": "analyzing", "value": {"kind": "end"}}})
    elif method == "textDocument/didOpen":
        td = params["textDocument"]
        docs[td["uri"]] = td["text"]
        publish(td["uri"], td["version"])
    elif method == "textDocument/didChange":
        td = params["textDocument"]
        docs[td["uri"]] = params["contentChanges"][-1]["text"]
        publish(td["uri"], td["version"])
    elif method in ("textDocument/definition", "textDocument/hover", "textDocument/references",
                    "textDocument/prepareRename", "textDocument/rename", "textDocument/codeAction"):
        uri = params["textDocument"]["uri"]
        pos = params.get("position") or params.get("range", {}).get("start")
        word = word_at(uri, pos)
        check_crash(word)
        if method == "textDocument/hover" and word == "hang":
            open(os.path.join(root, ".hanging"), "w").close()
            return
        if method == "textDocument/hover" and word in ("huge", "garbage"):
            frame = (b"Content-Length: 1099511627776\r\n\r\n" if word == "huge"
                     else b"Content-Length: 8\r\n\r\nnot json")
            sys.stdout.buffer.write(frame)
            sys.stdout.buffer.flush()
            time.sleep(600)
            return
        occ = occurrences(uri, word) if word else []
        if method == "textDocument/definition":
            result = {"uri": uri, "range": occ[0]} if occ else None
        elif method == "textDocument/hover":
            result = {"contents": {"kind": "markdown", "value": "```dart\n%s\n```\nfake hover for `%s`" % (word, word)}}
        elif method == "textDocument/references":
            result = [{"uri": uri, "range": r} for r in (occ[:1] if word.startswith("lossy") else occ)]
        elif method == "textDocument/prepareRename":
            result = next((r for r in occ if r["start"]["line"] == pos["line"]), None)
        elif method == "textDocument/codeAction":
            result = [{"title": "Fake fix for %s" % word, "kind": "quickfix", "isPreferred": True},
                      {"title": "Extract %s" % word, "kind": "refactor.extract"}]
        else:
            result = {"documentChanges": [{"textDocument": {"uri": uri, "version": None},
                                           "edits": [{"range": r, "newText": params["newName"]} for r in occ]}]}
        send({"id": mid, "result": result})
    elif method == "textDocument/documentSymbol":
        uri = params["textDocument"]["uri"]
        out = []
        for ln, line in enumerate(docs[uri].split("\n")):
            m = re.match(r"(class|\w+)\s+(\w+)", line)
            if m and not line.startswith(" "):
                kind = 5 if m.group(1) == "class" else 12
                r = {"start": {"line": ln, "character": m.start(2)}, "end": {"line": ln, "character": m.end(2)}}
                out.append({"name": m.group(2), "kind": kind, "location": {"uri": uri, "range": r}})
        send({"id": mid, "result": out})
    elif method == "workspace/symbol":
        send({"id": mid, "result": workspace_symbols(params.get("query", ""))})
    elif method == "shutdown":
        send({"id": mid, "result": None})
    elif method == "exit":
        sys.exit(0)
    elif mid is not None:
        send({"id": mid, "error": {"code": -32601, "message": "not implemented: %s" % method}})


while True:
    handle(read())
