"""Two clients of one `agent-tools serve --listen` host, with the official MCP Python SDK (PyPI
`mcp`): a prompt goes to the session whose call caused it, never to the other one (issue 23).

usage: python_sessions.py URL TOKEN ROOT

Clients A and B both declare elicitation and answer differently: A accepts (typed text
`from A`, and `approve` for a permission prompt), B declines everything. The host runs with
`--approval write`. A runs an `eval` cell (Python) that marks itself started, waits until B has
made a call, and then, through its `tool()` bridge, calls `ask_user` and then `write` (which
needs approval). B makes a call after A's cell started and keeps calling (`tools/list`, `read`)
until A's cell is done. A's cell must see A's answer and A's approval; B must never be asked.
Prints one line `ok <checks>` and exits 0, or raises.
"""

import contextlib
import json
import os
import sys

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


asked = {"A": [], "B": []}


async def answer_as_a(context, params):
    asked["A"].append(params.message)
    if params.message.startswith("May "):
        return types.ElicitResult(action="accept", content={"choice": "approve"})
    return types.ElicitResult(action="accept", content={"text": "from A"})


async def answer_as_b(context, params):
    asked["B"].append(params.message)
    return types.ElicitResult(action="decline")


@contextlib.asynccontextmanager
async def connect(url, token, callback):
    client = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with client, streamable_http_client(url, http_client=client) as (read, write):
        async with ClientSession(read, write, elicitation_callback=callback) as s:
            await s.initialize()
            yield s


async def wait_for(path):
    while not os.path.exists(path):
        await anyio.sleep(0.02)


async def main():
    url, token, root = sys.argv[1], sys.argv[2], sys.argv[3]
    started = os.path.join(root, "cell-started")
    go = os.path.join(root, "b-has-called")
    code = f"""
import json, os, time
open({started!r}, "w").close()
while not os.path.exists({go!r}):
    time.sleep(0.02)
try:
    answer = tool("ask_user", {{"question": "Which name should the module get?"}}).structured
except ToolError as e:
    answer = {{"error": str(e)}}
try:
    wrote = str(tool("write", {{"path": "from_a.txt", "content": "written by A's cell\\n"}}))
except ToolError as e:
    wrote = "refused: " + str(e)
print("RESULT " + json.dumps({{"answer": answer, "wrote": wrote}}))
"""
    async with connect(url, token, answer_as_a) as a, connect(url, token, answer_as_b) as b:
        done = anyio.Event()
        result = {}

        async def run_cell():
            try:
                result["r"] = await a.call_tool(
                    "eval",
                    {"code": code, "description": "ask a question and write a file through the bridge"},
                    read_timeout_seconds=120,
                )
            finally:
                done.set()

        async def keep_b_busy():
            await wait_for(started)
            # The cell runs: B calls now, and goes on calling until the cell is done.
            r = await b.call_tool("read", {"path": "hello.txt"})
            check("B reads while A's cell runs", not r.is_error, text_of(r))
            open(go, "w").close()
            calls = 1
            while not done.is_set():
                await b.list_tools()
                r = await b.call_tool("read", {"path": "hello.txt"})
                check("B's calls succeed", not r.is_error, text_of(r))
                calls += 1
            result["b_calls"] = calls

        async with anyio.create_task_group() as tg:
            tg.start_soon(run_cell)
            tg.start_soon(keep_b_busy)

        r = result["r"]
        out = text_of(r)
        check("A's cell ran", not r.is_error and "RESULT " in out, out)
        seen = json.loads(out.split("RESULT ", 1)[1].splitlines()[0])
        answer = seen["answer"] or {}
        check(
            "A's cell sees A's answer",
            answer.get("outcome") == "answered" and answer.get("text") == "from A",
            json.dumps(seen),
        )
        check("A's cell's write approved by A", seen["wrote"].startswith("wrote "), json.dumps(seen))
        with open(os.path.join(root, "from_a.txt")) as f:
            check("the write happened", f.read() == "written by A's cell\n")
        check("B was never asked", asked["B"] == [], json.dumps(asked))
        check("A was asked the question and the approval", len(asked["A"]) == 2, json.dumps(asked))
        check("B kept calling", result["b_calls"] >= 1, str(result))

    print("ok " + ",".join(checks))


anyio.run(main)
