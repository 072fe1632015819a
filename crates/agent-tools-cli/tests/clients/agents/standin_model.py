#!/usr/bin/env python3
"""A stand-in model server for driving real agent clients headless, with no API key.

It speaks, on one port, the three model APIs the clients use, each with streaming as the
client uses it:

  * Anthropic Messages API       POST /v1/messages            (SSE when "stream": true)
  * OpenAI Responses API         POST /v1/responses or /responses (SSE when "stream": true)
  * Gemini API                   POST /v1beta/models/M:generateContent
                                 POST /v1beta/models/M:streamGenerateContent?alt=sse

It plays a scripted conversation: `--script FILE.json` is a list of turns, each
`{"tool": "NAME", "args": {...}}` (the model calls that tool) or `{"text": "..."}` (the model
answers in text). Which turn to play is derived from the conversation the client sends (the
number of tool calls the "model" already made in it), not from a request counter, so side
requests the clients make (titles, classifiers, token counts) neither consume nor disturb the
script. A request that declares no tools is such a side request and gets a short text answer.

Script tool names are bare MCP tool names (`read`); each client exposes MCP tools under its
own name (`mcp__agent-tools__read`, `agent-tools__read`, ...). The server calls the declared
tool whose name ends with the bare name (preferring one that names the MCP server).

Every request is appended to `--record FILE.jsonl` as
`{"api": ..., "path": ..., "body": <request json>, "main": bool, "turn": int|null,
  "declared": [tool names], "reply": <what the stand-in answered>}`.

Stdlib only. Prints `listening PORT` on stdout once it accepts connections.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import threading
import time
import uuid
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# --------------------------------------------------------------------------------------------
# Tool declarations and history, per API


def _flatten_tools(tools: Any) -> list[dict]:
    """All tool objects in a (possibly nested) tools list, e.g. OpenAI namespaces."""
    out: list[dict] = []
    if not isinstance(tools, list):
        return out
    for t in tools:
        if not isinstance(t, dict):
            continue
        if isinstance(t.get("tools"), list):  # OpenAI namespace (Codex puts each MCP server in one)
            for inner in _flatten_tools(t["tools"]):
                inner = dict(inner)
                # Shown as "namespace.name"; the bare name is kept to call it.
                inner["_namespace"] = t.get("name")
                inner["_bare"] = inner.get("name")
                inner["name"] = f"{t.get('name')}.{inner.get('name')}"
                out.append(inner)
            continue
        if isinstance(t.get("functionDeclarations"), list):  # Gemini
            out.extend(d for d in t["functionDeclarations"] if isinstance(d, dict))
            continue
        if isinstance(t.get("function"), dict):  # chat-completions style
            out.append(t["function"])
            continue
        if "name" in t:
            out.append(t)
    return out


def declared_tools(api: str, body: dict) -> list[dict]:
    """The function tools a request offers the model: [{"name", "description", ...}]."""
    return _flatten_tools(body.get("tools"))


def tool_calls_so_far(api: str, body: dict) -> int:
    """How many tool calls the model already made in the conversation the request carries."""
    n = 0
    if api == "anthropic":
        for m in body.get("messages") or []:
            if m.get("role") == "assistant" and isinstance(m.get("content"), list):
                n += sum(1 for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_use")
    elif api == "openai":
        items = body.get("input")
        if isinstance(items, list):
            n += sum(
                1
                for it in items
                if isinstance(it, dict)
                and it.get("type") in ("function_call", "custom_tool_call", "mcp_call", "local_shell_call")
            )
    elif api == "gemini":
        for c in body.get("contents") or []:
            if c.get("role") == "model":
                n += sum(1 for p in c.get("parts") or [] if isinstance(p, dict) and "functionCall" in p)
    return n


def pick_tool_name(bare: str, declared: list[str], server_hint: str, require_hint: bool = False) -> str | None:
    """The declared name that stands for the bare MCP tool name `bare`.

    Candidates end with `<separator><bare>` (or are `bare` itself). Among them, one whose prefix
    names the MCP server wins, and among those the shortest prefix: for `edit`,
    `mcp_agent-tools_edit` beats `mcp_agent-tools_ast_edit`. With `require_hint`, only names
    whose prefix names the server count (so a built-in `glob` is not taken for the MCP `glob`).
    """
    seps = ("__", ".", "/", ":", "_", "-")
    hints = [h for h in {server_hint, server_hint.replace("-", "_"), server_hint.replace("_", "-")} if h]
    cands = [d for d in declared if d == bare or any(d.endswith(s + bare) for s in seps)]
    if not cands:
        cands = [d for d in declared if d.endswith(bare)]
    if not cands:
        return None

    def rank(d: str) -> tuple[int, int]:
        prefix = d[: len(d) - len(bare)]
        return (0 if any(h in prefix for h in hints) else 1, len(prefix))

    best = min(cands, key=rank)
    if require_hint and rank(best)[0]:
        return None
    return best


# --------------------------------------------------------------------------------------------
# Replies, per API


def _new_id(prefix: str) -> str:
    return prefix + uuid.uuid4().hex[:24]


def anthropic_message(model: str, turn: dict) -> dict:
    """A complete Messages API response for one scripted turn."""
    if "tool" in turn:
        content = [{"type": "tool_use", "id": _new_id("toolu_"), "name": turn["tool"], "input": turn.get("args", {})}]
        stop = "tool_use"
    else:
        content = [{"type": "text", "text": turn["text"]}]
        stop = "end_turn"
    return {
        "id": _new_id("msg_"),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
    }


def anthropic_sse(msg: dict) -> list[tuple[str, dict]]:
    """The SSE events that stream `msg` the way the Messages API does."""
    start = dict(msg, content=[], stop_reason=None, usage=dict(msg["usage"], output_tokens=1))
    events: list[tuple[str, dict]] = [("message_start", {"type": "message_start", "message": start})]
    for i, block in enumerate(msg["content"]):
        if block["type"] == "text":
            events.append(("content_block_start", {"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}}))
            events.append(("content_block_delta", {"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": block["text"]}}))
        else:
            events.append(
                (
                    "content_block_start",
                    {"type": "content_block_start", "index": i, "content_block": dict(block, input={})},
                )
            )
            events.append(
                (
                    "content_block_delta",
                    {"type": "content_block_delta", "index": i, "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}},
                )
            )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    events.append(
        (
            "message_delta",
            {"type": "message_delta", "delta": {"stop_reason": msg["stop_reason"], "stop_sequence": None}, "usage": {"output_tokens": msg["usage"]["output_tokens"]}},
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def openai_output_item(turn: dict) -> dict:
    if "tool" in turn:
        item = {
            "type": "function_call",
            "id": _new_id("fc_"),
            "call_id": _new_id("call_"),
            "name": turn["tool"],
            "arguments": json.dumps(turn.get("args", {})),
            "status": "completed",
        }
        if turn.get("namespace"):  # a tool declared inside a namespace
            item["namespace"] = turn["namespace"]
            item["name"] = turn["bare_name"]
        return item
    return {
        "type": "message",
        "id": _new_id("msg_"),
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": turn["text"], "annotations": []}],
    }


def openai_response(model: str, item: dict, status: str = "completed") -> dict:
    return {
        "id": _new_id("resp_"),
        "object": "response",
        "created_at": int(time.time()),
        "status": status,
        "model": model,
        "output": [item] if item else [],
        "usage": {
            "input_tokens": 10,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 5,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 15,
        },
    }


def openai_sse(model: str, item: dict) -> list[tuple[str, dict]]:
    """The SSE events of a Responses API stream that produces one output item."""
    resp = openai_response(model, item)
    seq = iter(range(1000))
    ev: list[tuple[str, dict]] = []

    def add(kind: str, data: dict) -> None:
        ev.append((kind, dict(data, type=kind, sequence_number=next(seq))))

    add("response.created", {"response": dict(resp, status="in_progress", output=[])})
    add("response.in_progress", {"response": dict(resp, status="in_progress", output=[])})
    if item["type"] == "message":
        text = item["content"][0]["text"]
        add("response.output_item.added", {"output_index": 0, "item": dict(item, status="in_progress", content=[])})
        add("response.content_part.added", {"output_index": 0, "item_id": item["id"], "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": []}})
        add("response.output_text.delta", {"output_index": 0, "item_id": item["id"], "content_index": 0, "delta": text})
        add("response.output_text.done", {"output_index": 0, "item_id": item["id"], "content_index": 0, "text": text})
        add("response.content_part.done", {"output_index": 0, "item_id": item["id"], "content_index": 0, "part": item["content"][0]})
    else:
        add("response.output_item.added", {"output_index": 0, "item": dict(item, status="in_progress", arguments="")})
        add("response.function_call_arguments.delta", {"output_index": 0, "item_id": item["id"], "delta": item["arguments"]})
        add("response.function_call_arguments.done", {"output_index": 0, "item_id": item["id"], "arguments": item["arguments"]})
    add("response.output_item.done", {"output_index": 0, "item": item})
    add("response.completed", {"response": resp})
    return ev


def gemini_response(model: str, turn: dict) -> dict:
    if "tool" in turn:
        part = {"functionCall": {"name": turn["tool"], "args": turn.get("args", {})}}
    else:
        part = {"text": turn["text"]}
    return {
        "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
        "modelVersion": model,
        "responseId": _new_id("r"),
    }


# --------------------------------------------------------------------------------------------
# The server


class State:
    def __init__(self, script: list[dict], record_path: str, server_hint: str):
        self.script = script
        self.record_path = record_path
        self.server_hint = server_hint
        self.lock = threading.Lock()

    def record(self, entry: dict) -> None:
        with self.lock, open(self.record_path, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")

    def decide(self, api: str, body: dict) -> tuple[dict, dict]:
        """The turn to play for this request, and facts to record about the decision."""
        tools = declared_tools(api, body)
        names = [t.get("name") for t in tools if t.get("name")]
        facts: dict[str, Any] = {"declared": names, "main": bool(names), "turn": None}
        if not names:
            # A side request (title, summary, classifier, next-speaker check...). A request that
            # asks for JSON gets a JSON object so the client's parser does not trip.
            return {"text": side_text(api, body)}, facts
        n = tool_calls_so_far(api, body)
        facts["turn"] = n
        if n >= len(self.script):
            return {"text": "Done."}, facts
        turn = self.script[n]
        if "tool" in turn:
            name = pick_tool_name(turn["tool"], names, self.server_hint)
            if name is None:
                return {"text": f"[stand-in] no declared tool ends with {turn['tool']!r}"}, facts
            turn = dict(turn, tool=name)
            for t in tools:
                if t.get("name") == name and t.get("_namespace"):
                    turn.update(namespace=t["_namespace"], bare_name=t["_bare"])
        return turn, facts


def side_text(api: str, body: dict) -> str:
    blob = json.dumps(body)
    if api == "gemini":
        gc = body.get("generationConfig") or {}
        if gc.get("responseMimeType") == "application/json" or "responseJsonSchema" in gc or "responseSchema" in gc:
            if "next_speaker" in blob:
                return json.dumps({"reasoning": "The model finished its answer.", "next_speaker": "user"})
            return "{}"
    if "next_speaker" in blob:
        return json.dumps({"reasoning": "done", "next_speaker": "user"})
    return "OK"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    state: State  # set on the class by main()

    def log_message(self, fmt: str, *args: Any) -> None:  # quiet; stderr is for errors
        pass

    # -- body reading ------------------------------------------------------------------------
    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                data += self.rfile.read(size)
                self.rfile.readline()
        else:
            data = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        enc = self.headers.get("Content-Encoding", "").lower()
        if enc == "gzip":
            data = gzip.decompress(data)
        elif enc == "deflate":
            data = zlib.decompress(data)
        return data

    # -- replies -----------------------------------------------------------------------------
    def _json(self, code: int, obj: Any) -> None:
        raw = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def _sse(self, events: list[tuple[str | None, dict]]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        for kind, data in events:
            chunk = (f"event: {kind}\n" if kind else "") + f"data: {json.dumps(data)}\n\n"
            self.wfile.write(chunk.encode())
            self.wfile.flush()
        self.close_connection = True

    # -- routing -----------------------------------------------------------------------------
    def do_GET(self) -> None:
        self.state.record({"api": "other", "path": self.path, "method": "GET", "body": None})
        path = self.path.split("?")[0]
        if path.endswith("/models"):
            self._json(200, {"object": "list", "data": [], "models": []})
        else:
            self._json(404, {"error": {"message": f"stand-in: no GET {path}"}})

    def do_POST(self) -> None:
        raw = self._read_body()
        path = self.path.split("?")[0]
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = {"_unparsed": raw.decode("utf-8", "replace")}
        api = (
            "anthropic" if path.endswith("/messages") or path.endswith("/messages/count_tokens")
            else "openai" if path.endswith("/responses")
            else "gemini" if ":generateContent" in path or ":streamGenerateContent" in path or ":countTokens" in path
            else "other"
        )
        entry: dict[str, Any] = {"api": api, "path": self.path, "body": body}
        try:
            self._dispatch(api, path, body, entry)
        finally:
            self.state.record(entry)

    def _dispatch(self, api: str, path: str, body: dict, entry: dict) -> None:
        model = str(body.get("model") or path.split("/models/")[-1].split(":")[0] or "standin")
        if api == "anthropic" and path.endswith("/count_tokens"):
            entry["reply"] = {"input_tokens": 10}
            return self._json(200, entry["reply"])
        if api == "gemini" and ":countTokens" in path:
            entry["reply"] = {"totalTokens": 10}
            return self._json(200, entry["reply"])
        if api == "other":
            entry["reply"] = None
            return self._json(404, {"error": {"message": f"stand-in: no POST {path}"}})

        turn, facts = self.state.decide(api, body)
        entry.update(facts)
        entry["reply"] = turn
        if api == "anthropic":
            msg = anthropic_message(model, turn)
            if body.get("stream"):
                self._sse(anthropic_sse(msg))
            else:
                self._json(200, msg)
        elif api == "openai":
            item = openai_output_item(turn)
            if body.get("stream", False):
                self._sse(openai_sse(model, item))
            else:
                self._json(200, openai_response(model, item))
        else:  # gemini
            resp = gemini_response(model, turn)
            if ":streamGenerateContent" in path:
                self._sse([(None, resp)])
            else:
                self._json(200, resp)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--script", required=True, help="JSON list of turns")
    ap.add_argument("--record", required=True, help="JSONL file to append every request to")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--server-name", default="agent-tools", help="MCP server name, to prefer its tools")
    args = ap.parse_args()
    with open(args.script, encoding="utf-8") as f:
        script = json.load(f)
    assert isinstance(script, list) and all(("tool" in t) != ("text" in t) for t in script), "bad script"
    Handler.state = State(script, args.record, args.server_name)
    httpd = ThreadingHTTPServer((args.host, args.port), Handler)
    httpd.daemon_threads = True
    print(f"listening {httpd.server_address[1]}", flush=True)
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
