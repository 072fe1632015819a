"""Trust asked of the person, through a real MCP client (the official Python SDK) over stdio.

usage: python_trust.py ANSWER ROOT COMMAND [ARGS...]

ANSWER is what the person does with each elicitation: an option's label to choose it,
`decline`, or `none` (a client without elicitation). Two `lsp hover` calls on `app.py`; prints
one JSON line: {"prompts": [messages], "calls": [{"error": bool, "text": str}, ...]}.
"""

import json
import os
import sys

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client, types

prompts = []


def text_of(result):
    return "".join(c.text for c in result.content if getattr(c, "type", "") == "text")


async def main():
    answer, root, command, args = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]

    async def elicit(context, params):
        prompts.append(params.message + " " + json.dumps(params.requested_schema))
        if answer == "decline":
            return types.ElicitResult(action="decline")
        return types.ElicitResult(action="accept", content={"choice": answer})

    params = StdioServerParameters(command=command, args=args, cwd=root, env=dict(os.environ))
    callback = None if answer == "none" else elicit
    calls = []
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, elicitation_callback=callback) as s:
            await s.initialize()
            for _ in range(2):
                r = await s.call_tool(
                    "lsp", {"operation": "hover", "path": "app.py", "symbol": "greet", "line": 5}
                )
                calls.append({"error": bool(r.is_error), "text": text_of(r)})
    print(json.dumps({"prompts": prompts, "calls": calls}))


anyio.run(main)
