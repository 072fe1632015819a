"""Drive `agent-tools serve` with the official MCP Python SDK (PyPI `mcp`).

usage: python_client.py stdio BIN ROOT
       python_client.py http URL_FULL URL_PLAN TOKEN

Initialize, list tools on two surfaces (full and plan), a `read`, an `ast_grep`, an `eval` whose
result carries a PNG image, an `eval` whose output so far arrives as progress notifications
before its result, an `ask_user` answered through elicitation, and a long `eval`
cancelled by the client (its timeout sends `notifications/cancelled`) after which the kernel
answers again. Prints one line `ok <checks>` and exits 0, or raises.
"""

import base64
import contextlib
import sys

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

checks = []


def check(name, cond, detail=""):
    if not cond:
        raise AssertionError(f"{name}: {detail}")
    checks.append(name)


def text_of(result):
    return "".join(c.text for c in result.content if getattr(c, "type", "") == "text")


async def answer(context, params):
    # The card for "Which database?" offers sqlite and postgres; the person picks postgres.
    schema = params.requested_schema
    check("elicitation carries the options", "postgres" in str(schema), str(schema))
    return types.ElicitResult(action="accept", content={"choice": "postgres"})


@contextlib.asynccontextmanager
async def connect(mode, target, surface, token=None):
    if mode == "stdio":
        params = StdioServerParameters(
            command=target[0], args=["serve", "--root", target[1], "--surface", surface]
        )
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write, elicitation_callback=answer) as s:
                yield s
    else:
        client = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
        async with client, streamable_http_client(target, http_client=client) as (read, write):
            async with ClientSession(read, write, elicitation_callback=answer) as s:
                yield s


async def main():
    mode = sys.argv[1]
    if mode == "stdio":
        full, plan, token = (sys.argv[2], sys.argv[3]), (sys.argv[2], sys.argv[3]), None
    else:
        full, plan, token = sys.argv[2], sys.argv[3], sys.argv[4]

    async with connect(mode, plan, "plan", token) as s:
        init = await s.initialize()
        check("plan initialize", init.server_info.name == "agent-tools", str(init))
        names = {t.name for t in (await s.list_tools()).tools}
        check("plan lists read only", "read" in names and "write" not in names and "eval" not in names, str(names))

    async with connect(mode, full, "full", token) as s:
        init = await s.initialize()
        check("full initialize", "full surface" in (init.instructions or ""), str(init.instructions))
        tools = {t.name: t for t in (await s.list_tools()).tools}
        check("full lists write and eval", {"read", "write", "eval", "ast_grep", "ask_user"} <= set(tools), str(list(tools)))
        check("annotations", tools["read"].annotations.read_only_hint is True and tools["write"].annotations.destructive_hint is True)
        check("tier in _meta", (tools["eval"].meta or {}).get("tier") == "exec", str(tools["eval"].meta))

        r = await s.call_tool("read", {"path": "hello.txt"})
        check("read", not r.is_error and "1| hello from python" in text_of(r), text_of(r))

        r = await s.call_tool("ast_grep", {"pattern": "return $A + $B", "language": "python"})
        check("ast_grep", not r.is_error and "calc.py" in text_of(r), text_of(r))

        code = (
            "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
            "fig, ax = plt.subplots()\nax.plot([1, 3, 2])\nfig"
        )
        r = await s.call_tool("eval", {"code": code, "description": "plot three points on a line chart"}, read_timeout_seconds=120)
        images = [c for c in r.content if getattr(c, "type", "") == "image"]
        check("eval image", not r.is_error and images and images[0].mime_type == "image/png", text_of(r))
        check("png bytes", base64.b64decode(images[0].data)[:8] == b"\x89PNG\r\n\x1a\n")

        seen = []

        async def on_progress(progress, total, message):
            seen.append((progress, message or ""))

        r = await s.call_tool(
            "eval",
            {"code": "import time\nprint('first')\ntime.sleep(1.5)\nprint('second')", "description": "print two lines with a pause"},
            read_timeout_seconds=60,
            progress_callback=on_progress,
        )
        check("eval progress before the result", not r.is_error and any("first" in m and "second" not in m for _, m in seen), str(seen))
        check("progress increases", all(a[0] < b[0] for a, b in zip(seen, seen[1:])), str(seen))

        r = await s.call_tool("ask_user", {
            "question": "Which database?",
            "options": [{"label": "sqlite"}, {"label": "postgres"}],
            "allow_free_text": False,
        })
        check("ask_user answered by elicitation", not r.is_error and "postgres" in text_of(r), text_of(r))

        cancelled = False
        try:
            await s.call_tool(
                "eval",
                {"code": "import time\ntime.sleep(120)", "description": "sleep for two whole minutes now"},
                read_timeout_seconds=3,
            )
        except Exception:
            cancelled = True
        check("long eval abandoned", cancelled)
        r = await s.call_tool("eval", {"code": "6 * 7", "description": "compute the answer after the cancel"}, read_timeout_seconds=60)
        check("kernel free after cancel", not r.is_error and "42" in text_of(r), text_of(r))

    print("ok " + ",".join(checks))


anyio.run(main)
