"""Two clients of one `agent-tools serve --listen --vibe` host, with the official MCP Python SDK
(PyPI `mcp`): each session is a room of its own (issue 23). What one conversation holds — its
kernel's variables, its staged edits, its debug breakpoints, its workers, the questions its
person refused — is not the other's, and it ends when the session ends (the SDK deletes the
session on close) while the other session's goes on.

usage: python_rooms.py URL TOKEN ROOT WORKER_PIDS

ROOT holds `mod.py`. The host's `fast` worker program writes its pid to a file in the folder
WORKER_PIDS and sleeps. Prints one line `ok <checks>` and exits 0, or raises.
"""

import contextlib
import json
import os
import sys
import time

import anyio
from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

checks = []


def check(name, cond, detail=""):
    if not cond:
        raise AssertionError(f"{name}: {detail}")
    checks.append(name)


def text_of(result):
    return "".join(c.text for c in result.content if getattr(c, "type", "") == "text")


async def a_declines(context, params):
    return types.ElicitResult(action="decline")


async def b_answers(context, params):
    return types.ElicitResult(action="accept", content={"text": "from B"})


@contextlib.asynccontextmanager
async def connect(url, token, callback):
    client = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with client, streamable_http_client(url, http_client=client) as (read, write):
        async with ClientSession(read, write, elicitation_callback=callback) as s:
            await s.initialize()
            yield s


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie has ended; only its parent has not reaped it yet.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def wait_gone(pid, seconds=15):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return False


async def call(s, name, args, timeout=120):
    return await s.call_tool(name, args, read_timeout_seconds=timeout)


async def cell(s, code):
    r = await call(s, "eval", {"code": code, "description": "check what this session's kernel holds"})
    return r, text_of(r)


async def worker_pid(folder, known):
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        for name in os.listdir(folder):
            if name not in known:
                with open(os.path.join(folder, name)) as f:
                    text = f.read().strip()
                if text:
                    known.add(name)
                    return int(text)
        await anyio.sleep(0.05)
    raise AssertionError("the worker never wrote its pid")


async def main():
    url, token, root, pids = sys.argv[1:5]
    known = set()
    async with connect(url, token, b_answers) as b:
        async with connect(url, token, a_declines) as a:
            # Kernels: A's variables are A's.
            r, out = await cell(a, "import os\nx = 41\nprint('PID', os.getpid())")
            check("A's cell ran", not r.is_error, out)
            a_kernel = int(out.split("PID ", 1)[1].split()[0])
            r, out = await cell(b, "import os\nprint('PID', os.getpid(), 'x' in globals())")
            check("B's cell ran", not r.is_error, out)
            b_kernel = int(out.split("PID ", 1)[1].split()[0])
            check("B has a kernel of its own", b_kernel != a_kernel, out)
            check("B does not see A's variables", "False" in out.split("PID ", 1)[1], out)
            r, out = await cell(a, "print('X', x + 1)")
            check("A's variables survive B's cells", "X 42" in out, out)

            # Staged edits: A's edit is A's to accept.
            r = await call(a, "ast_edit", {"pattern": "print($A)", "rewrite": "print($A, 1)", "path": "mod.py"})
            a_edit = (r.structured_content or {}).get("edit_id")
            check("A staged an edit", not r.is_error and a_edit, text_of(r))
            r = await call(b, "resolve", {"edit_id": a_edit, "action": "accept"})
            check("B cannot accept A's edit", r.is_error and "no edit is staged in this conversation" in text_of(r), text_of(r))
            with open(os.path.join(root, "mod.py")) as f:
                check("B's attempt wrote nothing", f.read() == 'print("hi")\n')
            r = await call(a, "resolve", {"edit_id": a_edit, "action": "accept"})
            check("A accepts its own edit", not r.is_error, text_of(r))

            # Debug: A's breakpoints are A's.
            r = await call(a, "debug", {"op": "breakpoints", "file": "mod.py", "lines": [1]})
            check("A set a breakpoint", not r.is_error, text_of(r))
            r = await call(b, "debug", {"op": "status"})
            check("B's debug room has no breakpoint", "0 breakpoint(s)" in text_of(r), text_of(r))
            r = await call(a, "debug", {"op": "status"})
            check("A's debug room has its breakpoint", "1 breakpoint(s)" in text_of(r), text_of(r))

            # Workers: A's are A's.
            r = await call(a, "vibe_spawn", {"brief": "sleep", "label": "sleeper"})
            check("A spawned a worker", not r.is_error, text_of(r))
            a_worker = await worker_pid(pids, known)
            r = await call(b, "vibe_list", {})
            check("B's roster is empty", "sleeper" not in text_of(r), text_of(r))
            r = await call(b, "vibe_kill", {"worker_id": "w1"})
            check("B cannot kill A's worker", r.is_error, text_of(r))
            check("A's worker still runs", alive(a_worker))
            r = await call(b, "vibe_spawn", {"brief": "sleep", "label": "b-sleeper"})
            check("B spawned a worker", not r.is_error, text_of(r))
            b_worker = await worker_pid(pids, known)

            # Ask ledger: a question A's person declined is still put to B's person.
            q = {"question": "Which database should the service use?"}
            r = await call(a, "ask_user", q)
            check("A's person declined", (r.structured_content or {}).get("outcome") == "declined", text_of(r))
            r = await call(b, "ask_user", q)
            got = r.structured_content or {}
            check("B's person is asked and answers", got.get("outcome") == "answered" and got.get("text") == "from B", text_of(r))
            r = await call(a, "ask_user", q)
            check("A's refusal is remembered for A", (r.structured_content or {}).get("repeated") is True, text_of(r))

        # A's session is closed (the SDK sends DELETE): its room ends, B's goes on.
        check("A's kernel ended with its session", wait_gone(a_kernel), str(a_kernel))
        check("A's worker ended with its session", wait_gone(a_worker), str(a_worker))
        check("B's kernel lives", alive(b_kernel))
        check("B's worker lives", alive(b_worker))
        r, out = await cell(b, "print('PID', os.getpid())")
        check("B's kernel still holds its state", f"PID {b_kernel}" in out, out)
        r = await call(b, "vibe_list", {})
        check("B's roster still has its worker", "b-sleeper" in text_of(r), text_of(r))
        r = await call(b, "vibe_kill", {"worker_id": "w1"})
        check("B kills its own worker", not r.is_error, text_of(r))

    print("ok " + ",".join(checks))


anyio.run(main)
