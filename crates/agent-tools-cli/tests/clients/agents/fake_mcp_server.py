#!/usr/bin/env python3
"""A tiny MCP server (official Python SDK, PyPI `mcp`) for measuring what agent clients
forward to their model. Stdio by default; Streamable HTTP on 127.0.0.1:PORT/mcp with
`--http PORT` (and, with `--token T`, every request must carry `Authorization: Bearer T`).

Its `instructions` is the sentence INSTRUCTIONS below. Its tools return:

  text_only        (a) one text block
  text_structured  (b) a text block and structuredContent that say different things
  text_image       (c) a text block and a 1x1 PNG image
  all_three        (d) text, image and structuredContent
  fails            (e) isError: true with a text block
  long_description (f) a plain text result; its description is LONG_DESCRIPTION_CHARS long,
                       made of numbered words so a clipped copy shows where it was cut

Every marker string is unique so the recording shows which block a client forwarded.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import sys

import mcp.types as types
from mcp.server.lowlevel import Server

INSTRUCTIONS = "FAKE-INSTRUCTIONS: the fake server asks the model to say the word pelican."

# A 1x1 red PNG.
PNG_B64 = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)

LONG_DESCRIPTION_CHARS = 1500


def long_description(n: int = LONG_DESCRIPTION_CHARS) -> str:
    """`w0001 w0002 ...` up to exactly n characters, ending with the marker END-OF-DESCRIPTION."""
    tail = " END-OF-DESCRIPTION"
    words, i = [], 1
    while sum(len(w) + 1 for w in words) + len(tail) < n:
        words.append(f"w{i:04d}")
        i += 1
    text = " ".join(words) + tail
    return text[-n:] if len(text) > n else text


EMPTY_SCHEMA = {"type": "object", "properties": {}}


def make_tools(description_chars: int) -> list[types.Tool]:
    """The six tools; (f)'s description is `description_chars` long."""
    return [
        types.Tool(name="text_only", description="(a) Returns one text block.", input_schema=EMPTY_SCHEMA),
        types.Tool(
            name="text_structured",
            description="(b) Returns a text block and structuredContent.",
            input_schema=EMPTY_SCHEMA,
            output_schema={"type": "object", "properties": {"marker": {"type": "string"}}},
        ),
        types.Tool(name="text_image", description="(c) Returns a text block and a PNG image.", input_schema=EMPTY_SCHEMA),
        types.Tool(
            name="all_three",
            description="(d) Returns text, a PNG image and structuredContent.",
            input_schema=EMPTY_SCHEMA,
            output_schema={"type": "object", "properties": {"marker": {"type": "string"}}},
        ),
        types.Tool(name="fails", description="(e) Returns isError with a text block.", input_schema=EMPTY_SCHEMA),
        types.Tool(name="long_description", description=long_description(description_chars), input_schema=EMPTY_SCHEMA),
    ]


def text(s: str) -> types.TextContent:
    return types.TextContent(type="text", text=s)


def image() -> types.ImageContent:
    return types.ImageContent(type="image", data=PNG_B64, mime_type="image/png")


def result(name: str) -> types.CallToolResult:
    if name == "text_only":
        return types.CallToolResult(content=[text("TEXT-A only text")])
    if name == "text_structured":
        return types.CallToolResult(
            content=[text("TEXT-B the text block")], structured_content={"marker": "STRUCT-B the structured block"}
        )
    if name == "text_image":
        return types.CallToolResult(content=[text("TEXT-C the text block"), image()])
    if name == "all_three":
        return types.CallToolResult(
            content=[text("TEXT-D the text block"), image()],
            structured_content={"marker": "STRUCT-D the structured block"},
        )
    if name == "fails":
        return types.CallToolResult(content=[text("ERROR-E the tool failed")], is_error=True)
    if name == "long_description":
        return types.CallToolResult(content=[text("TEXT-F long description tool ran")])
    return types.CallToolResult(content=[text(f"unknown tool {name}")], is_error=True)


# Set from the command line in main().
TOOLS = make_tools(LONG_DESCRIPTION_CHARS)
SERVER_INSTRUCTIONS = INSTRUCTIONS


def padded_instructions(n: int) -> str:
    """INSTRUCTIONS, then numbered words `i0001 ...` up to n characters, ending with END-OF-INSTRUCTIONS."""
    tail = " END-OF-INSTRUCTIONS"
    words, i = [INSTRUCTIONS], 1
    while sum(len(w) + 1 for w in words) + len(tail) < n:
        words.append(f"i{i:04d}")
        i += 1
    return " ".join(words) + tail


async def on_list_tools(ctx, params) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def on_call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
    return result(params.name)


def make_server() -> Server:
    return Server(
        "fake-mcp",
        version="1.0.0",
        instructions=SERVER_INSTRUCTIONS,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )


async def run_stdio() -> None:
    from mcp.server.stdio import stdio_server

    server = make_server()
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def run_http(port: int, token: str | None) -> None:
    import uvicorn

    app = make_server().streamable_http_app(host="127.0.0.1")

    async def guarded(scope, receive, send):
        """Refuse requests without the bearer token (when one is set)."""
        if token and scope["type"] == "http":
            headers = dict(scope.get("headers") or [])
            if headers.get(b"authorization", b"").decode() != f"Bearer {token}":
                await send({"type": "http.response.start", "status": 401, "headers": [(b"content-type", b"text/plain")]})
                await send({"type": "http.response.body", "body": b"missing or wrong bearer token"})
                return
        await app(scope, receive, send)

    print(f"fake-mcp http on 127.0.0.1:{port}/mcp", file=sys.stderr, flush=True)
    uvicorn.run(guarded, host="127.0.0.1", port=port, log_level="warning", lifespan="on")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--http", type=int, metavar="PORT", help="serve Streamable HTTP on this port instead of stdio")
    ap.add_argument("--token", help="require Authorization: Bearer TOKEN (HTTP only)")
    ap.add_argument("--description-chars", type=int, default=LONG_DESCRIPTION_CHARS, help="length of (f)'s description")
    ap.add_argument("--instructions-chars", type=int, default=0, help="pad the instructions to this length")
    ap.add_argument("--read-only-hint", action="store_true", help="annotate every tool readOnlyHint: true")
    args = ap.parse_args()
    global TOOLS, SERVER_INSTRUCTIONS
    TOOLS = make_tools(args.description_chars)
    if args.read_only_hint:
        TOOLS = [t.model_copy(update={"annotations": types.ToolAnnotations(read_only_hint=True)}) for t in TOOLS]
    if args.instructions_chars > len(INSTRUCTIONS):
        SERVER_INSTRUCTIONS = padded_instructions(args.instructions_chars)
    if args.http is not None:
        run_http(args.http, args.token)
    else:
        asyncio.run(run_stdio())


if __name__ == "__main__":
    main()
