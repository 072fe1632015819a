#!/usr/bin/env python3
"""Drive one real agent client headless against an MCP server and the stand-in model, and
report what the MODEL received.

    run_agent.py --client claude|codex|gemini --transport stdio --server-cmd "CMD ARGS..." \\
                 --script turns.json --workdir DIR
    run_agent.py --client ... --transport http --url http://127.0.0.1:P/mcp --token TOKEN ...

The client runs with HOME (and CODEX_HOME / CLAUDE_CONFIG_DIR) in a scratch directory, so
the person's own configuration is never read or written; the MCP server is configured there
under the name `agent-tools`. The model is `standin_model.py` (beside this file) on a free
port; it plays `--script` and records every request. The HTTP token reaches the client only
as the environment variable AGENT_TOOLS_TOKEN, which each client's config refers to.

Prints one JSON object on stdout:
  client, version, argv, tools_declared (every tool name the client offered the model),
  mcp_tools ({bare MCP name: name the model saw}), instructions (the server's, from our own
  initialize), instructions_seen (bool: the whole text, or every line of it, is in a request),
  instructions_where (JSON path of the first whole hit), instructions_chars ([longest prefix
  found, length]: shows clipping), instructions_lines ([lines found, lines]),
  results ([{tool, called_as, model_saw (list: text strings and {"image": mime}),
  model_saw_text, raw (the API's tool-result object), is_error_marked}]),
  descriptions ({bare: text sent to the model}), description_lengths ({bare: [sent, served]}),
  requests (count, main), exit_code, timed_out, stdout_tail, stderr_tail, home (kept with
  --keep-home), record (path of the JSONL recording when kept).

Client binaries: `--bin-dir` (default: $AGENT_CLIENTS_BIN, else PATH).

`--entry SNIPPET --entry-lang json|toml`: configure the server with a README client-config
snippet's own entry (tests/agent_clients.rs passes the README's), its command or URL pointed at
the server under test; without it, the entry written here (the shape FINDINGS.md measured).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from standin_model import pick_tool_name  # noqa: E402  (same folder)

SERVER_NAME = "agent-tools"
MODEL = "standin-model-7"  # unknown to every client: no tool search, no model-specific quirks
TOKEN_ENV = "AGENT_TOOLS_TOKEN"
DEFAULT_PROMPT = "Use the agent-tools MCP tools to do the task, then answer."
DEFAULT_BIN_DIR = ""

# Environment every client gets: nothing phones home, nothing auto-updates, nothing prompts.
QUIET_ENV = {
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "DISABLE_BUG_COMMAND": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY": "1",
    "CLAUDE_CODE_DISABLE_TERMINAL_TITLE": "1",
    "GEMINI_CLI_TRUST_WORKSPACE": "true",
    "GEMINI_TELEMETRY_ENABLED": "false",
    "NO_BROWSER": "1",
    "NO_COLOR": "1",
    "CI": "1",
}


# --------------------------------------------------------------------------------------------
# Our own look at the MCP server: its instructions and tool descriptions as served


def _mcp_messages() -> list[dict]:
    return [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "run_agent-probe", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}},
    ]


def probe_stdio(cmd: list[str], cwd: str, env: dict, timeout: float = 60) -> tuple[str | None, dict]:
    """initialize + tools/list over stdio: (instructions, {tool: description})."""
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
    answers: dict[int, dict] = {}

    def reader() -> None:
        assert proc.stdout
        for line in proc.stdout:
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if isinstance(msg.get("id"), int):
                answers[msg["id"]] = msg

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    try:
        assert proc.stdin
        msgs = _mcp_messages()
        proc.stdin.write((json.dumps(msgs[0]) + "\n").encode())
        proc.stdin.flush()
        deadline = time.time() + timeout
        while 1 not in answers and time.time() < deadline:
            time.sleep(0.05)
        for m in msgs[1:]:
            proc.stdin.write((json.dumps(m) + "\n").encode())
        proc.stdin.flush()
        while 2 not in answers and time.time() < deadline:
            time.sleep(0.05)
    finally:
        _kill_group(proc)
    return _from_answers(answers)


def probe_http(url: str, token: str | None, timeout: float = 30) -> tuple[str | None, dict]:
    """initialize + tools/list over Streamable HTTP."""
    answers: dict[int, dict] = {}
    session = None
    for m in _mcp_messages():
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        if session:
            headers["Mcp-Session-Id"] = session
        if answers.get(1):
            headers["MCP-Protocol-Version"] = answers[1].get("result", {}).get("protocolVersion", "2025-06-18")
        req = urllib.request.Request(url, data=json.dumps(m).encode(), headers=headers, method="POST")
        with urllib.request.urlopen(req, timeout=timeout) as r:
            session = r.headers.get("Mcp-Session-Id") or session
            body = r.read().decode("utf-8", "replace")
            if "text/event-stream" in (r.headers.get("Content-Type") or ""):
                datas = [ln[5:].strip() for ln in body.splitlines() if ln.startswith("data:")]
            else:
                datas = [body]
            for d in datas:
                try:
                    msg = json.loads(d)
                except ValueError:
                    continue  # e.g. an empty priming event
                if isinstance(msg, dict) and isinstance(msg.get("id"), int):
                    answers[msg["id"]] = msg
    return _from_answers(answers)


def _from_answers(answers: dict) -> tuple[str | None, dict]:
    instructions = (answers.get(1) or {}).get("result", {}).get("instructions")
    tools = (answers.get(2) or {}).get("result", {}).get("tools") or []
    return instructions, {t["name"]: t.get("description") or "" for t in tools}


# --------------------------------------------------------------------------------------------
# Client set-up: config files, env, argv


def readme_entry(a: argparse.Namespace, stdio: list[str] | None) -> dict[str, Any] | None:
    """The `agent-tools` entry of `--entry FILE` (a client-config snippet of the README, JSON or
    TOML by `--entry-lang`), with only its command (stdio) or its URL (HTTP) pointed at the
    server under test; every other key is the README's."""
    if not a.entry:
        return None
    text = Path(a.entry).read_text(encoding="utf-8")
    if a.entry_lang == "toml":
        import tomllib

        cfg, key = tomllib.loads(text), "mcp_servers"
    else:
        cfg, key = json.loads(text), "mcpServers"
    entry = dict(cfg[key][SERVER_NAME])
    if stdio:
        # With --entry-args, the README's own arguments after `serve` follow the command under
        # test (`--without files`, ...); without it, the command under test is the whole entry.
        after_serve = []
        if a.entry_args:
            args = list(entry.get("args", []))
            after_serve = args[args.index("serve") + 1:] if "serve" in args else []
        entry["command"], entry["args"] = stdio[0], stdio[1:] + after_serve
    else:
        entry["httpUrl" if "httpUrl" in entry else "url"] = a.url
    return entry


def toml_value(v: Any) -> str:
    """A TOML value for a string, number, boolean, list or table of them (JSON's spelling is
    TOML's for these, but for tables)."""
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {toml_value(x)}" for k, x in v.items()) + " }"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    return json.dumps(v)


def client_setup(a: argparse.Namespace, home: Path, port: int, bin_dir: str | None) -> tuple[list[str], dict[str, str]]:
    """Write the client's config under `home`; return (argv, extra env)."""
    base = f"http://127.0.0.1:{port}"
    workdir = str(Path(a.workdir).resolve())
    stdio = shlex.split(a.server_cmd) if a.transport == "stdio" else None
    readme = readme_entry(a, stdio)

    def exe(name: str) -> str:
        if bin_dir and (Path(bin_dir) / name).exists():
            return str(Path(bin_dir) / name)
        return shutil.which(name) or name

    if a.client == "claude":
        if readme is not None:
            server = readme
        elif stdio:
            server = {"type": "stdio", "command": stdio[0], "args": stdio[1:], "env": {}}
        else:
            # Claude Code expands ${VAR} in .mcp.json / --mcp-config values.
            server = {"type": "http", "url": a.url, "headers": {"Authorization": "Bearer ${%s}" % TOKEN_ENV}}
        if a.claude_settings:
            # The client's own settings (hooks): where CLAUDE_CONFIG_DIR points.
            (home / ".claude").mkdir(exist_ok=True)
            shutil.copy(a.claude_settings, home / ".claude" / "settings.json")
        cfg = home / "mcp.json"
        cfg.write_text(json.dumps({"mcpServers": {SERVER_NAME: server}}, indent=2))
        # Skip onboarding / first-run screens (-p skips them anyway; harmless).
        (home / ".claude.json").write_text(json.dumps({"hasCompletedOnboarding": True, "numStartups": 1}))
        argv = [
            exe("claude"), "-p", a.prompt,
            "--model", MODEL,
            "--mcp-config", str(cfg), "--strict-mcp-config",
            "--allowedTools", ",".join([f"mcp__{SERVER_NAME}__*"] + [t for t in a.allow_native.split(",") if t]),
            "--output-format", "text",
        ]
        env = {
            "ANTHROPIC_BASE_URL": base,
            "ANTHROPIC_API_KEY": "sk-ant-standin-dummy",
            "ANTHROPIC_MODEL": MODEL,
            "ANTHROPIC_SMALL_FAST_MODEL": MODEL,
            "ANTHROPIC_DEFAULT_HAIKU_MODEL": MODEL,
            "ANTHROPIC_DEFAULT_SONNET_MODEL": MODEL,
            "ANTHROPIC_DEFAULT_OPUS_MODEL": MODEL,
            "CLAUDE_CONFIG_DIR": str(home / ".claude"),
            "MCP_TIMEOUT": "60000",
            # Otherwise MCP tools are "deferred" behind ToolSearch (even for an unknown model):
            # the first request names them in the system prompt but declares no schema.
            "ENABLE_TOOL_SEARCH": "false",
        }
        return argv, env

    if a.client == "codex":
        codex_home = home / ".codex"
        codex_home.mkdir()
        lines = [
            f'model = "{MODEL}"',
            'model_provider = "standin"',
            'approval_policy = "never"',
            'sandbox_mode = "danger-full-access"',
            "check_for_update_on_startup = false",
            "",
            "[analytics]",
            "enabled = false",
            "",
            "[feedback]",
            "enabled = false",
            "",
            "[model_providers.standin]",
            'name = "standin"',
            f'base_url = "{base}/v1"',
            'wire_api = "responses"',
            'env_key = "STANDIN_API_KEY"',
            "request_max_retries = 0",
            "stream_max_retries = 0",
            "",
            f"[projects.{json.dumps(workdir)}]",
            'trust_level = "trusted"',
            "",
            f'[mcp_servers.{json.dumps(SERVER_NAME)}]',
        ]
        if readme is not None:
            lines += [f"{k} = {toml_value(v)}" for k, v in readme.items()]
        else:
            if stdio:
                lines += [f"command = {json.dumps(stdio[0])}", f"args = {json.dumps(stdio[1:])}", f"cwd = {json.dumps(workdir)}"]
            else:
                lines += [f"url = {json.dumps(a.url)}", f'bearer_token_env_var = "{TOKEN_ENV}"']
            lines += [
                "startup_timeout_sec = 60",
                "tool_timeout_sec = 120",
                # Headless: approve every tool of this server without asking.
                'default_tools_approval_mode = "approve"',
            ]
        (codex_home / "config.toml").write_text("\n".join(lines) + "\n")
        argv = [exe("codex"), "exec", "--skip-git-repo-check", "-C", workdir, a.prompt]
        env = {"CODEX_HOME": str(codex_home), "STANDIN_API_KEY": "standin-dummy"}
        return argv, env

    if a.client == "gemini":
        gdir = home / ".gemini"
        gdir.mkdir()
        if readme is not None:
            server = readme
        elif stdio:
            server = {"command": stdio[0], "args": stdio[1:], "cwd": workdir, "trust": True, "timeout": 120000}
        else:
            # Gemini CLI expands $VAR / ${VAR} in settings.json string values.
            server = {"httpUrl": a.url, "headers": {"Authorization": "Bearer ${%s}" % TOKEN_ENV}, "trust": True, "timeout": 120000}
        settings = {
            "mcpServers": {SERVER_NAME: server},
            "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
            "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
            "model": {"name": MODEL},
            "ui": {"hideTips": True},
        }
        (gdir / "settings.json").write_text(json.dumps(settings, indent=2))
        argv = [
            exe("gemini"), "-p", a.prompt,
            "-m", MODEL,
            "--approval-mode", "yolo",
            "--allowed-mcp-server-names", SERVER_NAME,
            "--output-format", "text",
        ]
        env = {"GEMINI_API_KEY": "standin-dummy", "GOOGLE_GEMINI_BASE_URL": base, "GOOGLE_API_KEY": ""}
        return argv, env

    raise SystemExit(f"unknown client {a.client}")


def client_version(argv0: str, env: dict) -> str:
    try:
        out = subprocess.run([argv0, "--version"], env=env, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
        return out.stdout.strip().splitlines()[-1] if out.stdout.strip() else out.stderr.strip()[-200:]
    except Exception as e:  # noqa: BLE001
        return f"unknown ({e})"


# --------------------------------------------------------------------------------------------
# Reading the recording


def _parts(api: str, payload: Any) -> list:
    """A tool result as the model got it: text strings and {"image": mime} markers."""
    out: list = []
    if payload is None:
        return out
    if isinstance(payload, str):
        return [payload]
    if isinstance(payload, dict):
        payload = [payload]
    for p in payload:
        if isinstance(p, str):
            out.append(p)
        elif not isinstance(p, dict):
            out.append(json.dumps(p))
        elif p.get("type") in ("text", "input_text", "output_text"):
            out.append(p.get("text", ""))
        elif p.get("type") == "image":  # Anthropic
            src = p.get("source") or {}
            out.append({"image": src.get("media_type") or src.get("type")})
        elif p.get("type") == "input_image":  # OpenAI
            url = str(p.get("image_url") or "")
            out.append({"image": url[5:].split(";")[0] if url.startswith("data:") else url[:60]})
        elif "inlineData" in p or "inline_data" in p:  # Gemini
            d = p.get("inlineData") or p.get("inline_data") or {}
            out.append({"image": d.get("mimeType") or d.get("mime_type")})
        elif "text" in p and len(p) == 1:
            out.append(p["text"])
        else:
            out.append(json.dumps(p))
    return out


def conversation(api: str, body: dict) -> tuple[list[tuple[str, str]], dict[str, dict]]:
    """(calls in order as (call_id, name), {call_id: {"parts", "raw", "is_error"}})."""
    calls: list[tuple[str, str]] = []
    results: dict[str, dict] = {}
    if api == "anthropic":
        for m in body.get("messages") or []:
            content = m.get("content")
            if not isinstance(content, list):
                continue
            for b in content:
                if not isinstance(b, dict):
                    continue
                if b.get("type") == "tool_use" and m.get("role") == "assistant":
                    calls.append((b.get("id"), b.get("name")))
                elif b.get("type") == "tool_result":
                    results[b.get("tool_use_id")] = {"parts": _parts(api, b.get("content")), "raw": b, "is_error": bool(b.get("is_error"))}
    elif api == "openai":
        for it in body.get("input") or []:
            if not isinstance(it, dict):
                continue
            if it.get("type") in ("function_call", "custom_tool_call"):
                name = it.get("name")
                if it.get("namespace"):
                    name = f"{it['namespace']}{name}" if str(it["namespace"]).endswith(("_", ".")) else f"{it['namespace']}.{name}"
                calls.append((it.get("call_id"), name))
            elif it.get("type") in ("function_call_output", "custom_tool_call_output"):
                results[it.get("call_id")] = {"parts": _parts(api, it.get("output")), "raw": it, "is_error": None}
    elif api == "gemini":
        # Gemini pairs calls and responses by order (ids are optional).
        k_call = k_resp = 0
        for c in body.get("contents") or []:
            parts = c.get("parts") or []
            resp_key = None
            for p in parts:
                if not isinstance(p, dict):
                    continue
                if "functionCall" in p and c.get("role") == "model":
                    calls.append((f"g{k_call}", p["functionCall"].get("name")))
                    k_call += 1
                elif "functionResponse" in p:
                    fr = p["functionResponse"]
                    resp_key = f"g{k_resp}"
                    k_resp += 1
                    shown = [json.dumps(fr.get("response"), ensure_ascii=False)] + _parts(api, fr.get("parts") or [])
                    resp = fr.get("response") or {}
                    results[resp_key] = {"parts": shown, "raw": fr, "is_error": isinstance(resp, dict) and "error" in resp}
                elif resp_key and c.get("role") == "user":
                    # Parts after a functionResponse in the same turn (e.g. inline images).
                    results[resp_key]["parts"] += _parts(api, [p])
                    results[resp_key].setdefault("sibling_parts", []).append(_summarize_part(p))
    return calls, results


def _summarize_part(p: dict) -> Any:
    if "inlineData" in p:
        return {"inlineData": {"mimeType": p["inlineData"].get("mimeType"), "bytes_b64": len(p["inlineData"].get("data") or "")}}
    return p


def find_string(obj: Any, needle: str, path: str = "$") -> str | None:
    """JSON path of the first string in `obj` that contains `needle`."""
    if isinstance(obj, str):
        return path if needle in obj else None
    if isinstance(obj, dict):
        for k, v in obj.items():
            hit = find_string(v, needle, f"{path}.{k}")
            if hit:
                return hit
    if isinstance(obj, list):
        for i, v in enumerate(obj):
            hit = find_string(v, needle, f"{path}[{i}]")
            if hit:
                return hit
    return None


def all_strings(obj: Any):
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from all_strings(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from all_strings(v)


def analyse(records: list[dict], script: list[dict], served: dict[str, str], instructions: str | None) -> dict:
    main = [r for r in records if r.get("main")]
    declared: list[str] = []
    descriptions_raw: dict[str, str] = {}
    for r in main:
        from standin_model import declared_tools

        for t in declared_tools(r["api"], r["body"]):
            n = t.get("name")
            if n and n not in declared:
                declared.append(n)
                descriptions_raw[n] = t.get("description") or ""
    bare_names = list(served) or [t["tool"] for t in script if "tool" in t]
    mcp_tools = {b: pick_tool_name(b, declared, SERVER_NAME, require_hint=True) for b in bare_names}
    descriptions = {b: descriptions_raw.get(n) for b, n in mcp_tools.items() if n}
    lengths = {b: [len(descriptions[b] or ""), len(served.get(b, ""))] for b in descriptions}

    # Each tool result, from the first request that carries it.
    seen: dict[str, dict] = {}
    order: list[tuple[str, str]] = []
    for r in main:
        calls, results = conversation(r["api"], r["body"])
        for cid, name in calls:
            if (cid, name) not in order:
                order.append((cid, name))
        for cid, res in results.items():
            seen.setdefault(cid, res)
    out_results = []
    for k, (cid, name) in enumerate(order):
        bare = script[k]["tool"] if k < len(script) and "tool" in script[k] else name
        res = seen.get(cid)
        out_results.append(
            {
                "tool": bare,
                "called_as": name,
                "model_saw": res["parts"] if res else None,
                "model_saw_text": "\n".join(p for p in res["parts"] if isinstance(p, str)) if res else None,
                "raw": res["raw"] if res else None,
                "sibling_parts": res.get("sibling_parts") if res else None,
                "is_error_marked": res["is_error"] if res else None,
            }
        )

    where = None
    chars_seen = 0
    if instructions:
        needle = instructions.strip()
        for r in main:
            where = find_string(r["body"], needle)
            if where:
                break
        # How much of the instructions got through, if clipped: the longest prefix present.
        head = needle[:40]
        for r in main:
            for s in all_strings(r["body"]):
                i = s.find(head)
                while i >= 0:
                    n = 0
                    while n < len(needle) and i + n < len(s) and s[i + n] == needle[n]:
                        n += 1
                    chars_seen = max(chars_seen, n)
                    i = s.find(head, i + 1)
    # Servers may tailor instructions to the client (e.g. a line about elicitation), so the
    # probe's copy can differ from the client's: also count its lines found in the request.
    lines = [ln.strip() for ln in (instructions or "").splitlines() if ln.strip()]
    strings = [s for r in main for s in all_strings(r["body"])]
    lines_seen = sum(1 for ln in lines if any(ln in s for s in strings))
    # Texts the client added to the conversation as its own (system-role) messages: a hook's
    # additional context, in the longest main request.
    system_texts: list[str] = []
    if main:
        longest = max(main, key=lambda r: len(json.dumps(r["body"])))
        for m in longest["body"].get("messages", []) or []:
            if isinstance(m, dict) and m.get("role") == "system":
                system_texts += [s for s in all_strings(m.get("content"))]
    return {
        "system_texts": system_texts,
        "tools_declared": declared,
        "mcp_tools": mcp_tools,
        "instructions": instructions,
        "instructions_seen": bool(where) or (bool(lines) and lines_seen == len(lines)),
        "instructions_where": where,
        "instructions_chars": [chars_seen, len(instructions.strip()) if instructions else 0],
        "instructions_lines": [lines_seen, len(lines)],
        "results": out_results,
        "descriptions": descriptions,
        "description_lengths": lengths,
        "requests": {"count": len(records), "main": len(main), "paths": sorted({r["path"].split("?")[0] for r in records})},
    }


# --------------------------------------------------------------------------------------------


def _kill_group(proc: subprocess.Popen) -> None:
    """Kill the process group we started (by its id), then reap."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=5)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--client", required=True, choices=["claude", "codex", "gemini"])
    ap.add_argument("--transport", required=True, choices=["stdio", "http"])
    ap.add_argument("--server-cmd", help="stdio: the command line that starts the MCP server")
    ap.add_argument("--url", help="http: the MCP endpoint")
    ap.add_argument("--token", help="http: bearer token")
    ap.add_argument("--script", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--prompt", default=DEFAULT_PROMPT)
    ap.add_argument("--timeout", type=float, default=240, help="seconds for the client run")
    ap.add_argument("--bin-dir", default=os.environ.get("AGENT_CLIENTS_BIN") or DEFAULT_BIN_DIR)
    ap.add_argument("--home-base", help="where to make the scratch HOME (default: system temp)")
    ap.add_argument("--keep-home", action="store_true", help="keep the scratch HOME and recording")
    ap.add_argument("--python", default=sys.executable, help="python for standin_model.py")
    ap.add_argument("--entry", help="a README client-config snippet: use its agent-tools entry (command or URL replaced)")
    ap.add_argument("--entry-lang", default="json", choices=["json", "toml"], help="the snippet's language")
    ap.add_argument("--entry-args", action="store_true", help="stdio: keep the entry's arguments after `serve`")
    ap.add_argument("--claude-settings", help="claude: a settings.json (hooks) for the scratch config dir")
    ap.add_argument("--allow-native", default="", help="claude: built-in tools to allow too, comma-separated (Read,Edit)")
    ap.add_argument(
        "--client-arg", action="append", default=[],
        help="extra argument for the client, placed before the prompt (repeatable), e.g. for codex: -c KEY=VALUE",
    )
    a = ap.parse_args()
    if a.transport == "stdio" and not a.server_cmd:
        ap.error("--server-cmd is required for stdio")
    if a.transport == "http" and not a.url:
        ap.error("--url is required for http")

    with open(a.script, encoding="utf-8") as f:
        script = json.load(f)
    home = Path(tempfile.mkdtemp(prefix=f"agent-{a.client}-home-", dir=a.home_base))
    record = home / "record.jsonl"
    record.touch()
    model = None
    proc = None
    report: dict[str, Any] = {"client": a.client, "transport": a.transport}
    try:
        base_env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "GEMINI_", "GOOGLE_", "CLAUDE", "CODEX_"))}
        base_env.update(QUIET_ENV)
        base_env["HOME"] = str(home)
        base_env["XDG_CONFIG_HOME"] = str(home / ".config")
        base_env["XDG_CACHE_HOME"] = str(home / ".cache")
        base_env["XDG_DATA_HOME"] = str(home / ".local/share")
        base_env["XDG_STATE_HOME"] = str(home / ".local/state")
        base_env["TMPDIR"] = str(home / "tmp")
        (home / "tmp").mkdir()
        if a.token:
            base_env[TOKEN_ENV] = a.token

        # What the server itself says, to compare with what reaches the model.
        try:
            if a.transport == "stdio":
                instructions, served = probe_stdio(shlex.split(a.server_cmd), a.workdir, base_env)
            else:
                instructions, served = probe_http(a.url, a.token)
        except Exception as e:  # noqa: BLE001
            instructions, served = None, {}
            report["probe_error"] = repr(e)

        model = subprocess.Popen(
            [a.python, str(HERE / "standin_model.py"), "--script", a.script, "--record", str(record), "--port", "0", "--server-name", SERVER_NAME],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        )
        assert model.stdout
        line = model.stdout.readline()
        if not line.startswith("listening "):
            raise SystemExit(f"stand-in model did not start: {line!r} {model.stderr.read() if model.stderr else ''}")
        port = int(line.split()[1])

        argv, env = client_setup(a, home, port, a.bin_dir)
        if a.client_arg:  # after `codex exec` / after the binary, before everything else
            at = 2 if a.client == "codex" else 1
            argv[at:at] = a.client_arg
        env = {**base_env, **env}
        report["version"] = client_version(argv[0], env)
        report["argv"] = argv
        out_f = open(home / "client.stdout", "w+b")
        err_f = open(home / "client.stderr", "w+b")
        proc = subprocess.Popen(argv, cwd=a.workdir, env=env, stdin=subprocess.DEVNULL, stdout=out_f, stderr=err_f, start_new_session=True)
        timed_out = False
        try:
            proc.wait(timeout=a.timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
        _kill_group(proc)
        report["exit_code"] = proc.returncode
        report["timed_out"] = timed_out
        for name, f in (("stdout_tail", out_f), ("stderr_tail", err_f)):
            f.seek(0)
            report[name] = f.read().decode("utf-8", "replace")[-3000:]
            f.close()

        records = [json.loads(ln) for ln in record.read_text().splitlines() if ln.strip()]
        report.update(analyse(records, script, served, instructions))
        report["served_descriptions_len"] = {k: len(v) for k, v in served.items()}
    finally:
        if model:
            _kill_group(model)
        if proc and proc.poll() is None:
            _kill_group(proc)
        if a.keep_home:
            report["home"] = str(home)
            report["record"] = str(record)
        else:
            shutil.rmtree(home, ignore_errors=True)
    print(json.dumps(report, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
