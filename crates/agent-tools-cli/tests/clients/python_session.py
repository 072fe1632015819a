"""One MCP session through an installed `agent-tools`, with the official MCP Python SDK.

usage: python_session.py stdio ROOT COMMAND [ARGS...]   # started in ROOT, as a client starts it
       python_session.py http URL [HEADER_NAME HEADER_VALUE]...

What the dist and client-config tests run against the installed packages (the wheel, the npm
tarballs, each README snippet's command): initialize, list the tools, a `read` of `hello.txt`
(or, for a command with `--without files`, that no file tool is listed) and an `ast_grep` over
`calc.py` in the root (the test writes both). Prints one line
`ok <checks>` and exits 0, or raises.
"""

import os
import sys

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

checks = []


def check(name, cond, detail=""):
    if not cond:
        raise AssertionError(f"{name}: {detail}")
    checks.append(name)


def text_of(result):
    return "".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def without_files(args):
    """Whether the server's arguments leave the file family out (`--without files`)."""
    return any(a == "--without" and b.split(",").count("files") for a, b in zip(args, args[1:]))


async def session(s, no_files=False):
    init = await s.initialize()
    check("initialize", init.server_info.name == "agent-tools", str(init.server_info))
    names = {t.name for t in (await s.list_tools()).tools}
    check("tools", "ast_grep" in names, str(sorted(names)))
    if no_files:
        # The client's own file tools stand in for ours: none of ours is listed.
        file_tools = {"read", "grep", "glob", "write", "edit", "apply_patch"}
        check("no-file-tools", not (file_tools & names), str(sorted(names)))
    else:
        r = await s.call_tool("read", {"path": "hello.txt"})
        check("read", not r.is_error and "1| hello from the scratch root" in text_of(r), text_of(r))
    r = await s.call_tool("ast_grep", {"pattern": "return $A + $B", "language": "python"})
    check("ast_grep", not r.is_error and "calc.py" in text_of(r), text_of(r))


async def main():
    mode = sys.argv[1]
    if mode == "stdio":
        root, command, args = sys.argv[2], sys.argv[3], sys.argv[4:]
        params = StdioServerParameters(command=command, args=args, cwd=root, env=dict(os.environ))
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as s:
                await session(s, without_files(args))
    else:
        url, rest = sys.argv[2], sys.argv[3:]
        headers = dict(zip(rest[0::2], rest[1::2]))
        client = create_mcp_http_client(headers=headers)
        async with client, streamable_http_client(url, http_client=client) as (read, write):
            async with ClientSession(read, write) as s:
                await session(s)
    print("ok " + ",".join(checks))


anyio.run(main)
