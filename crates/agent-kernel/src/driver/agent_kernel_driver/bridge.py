"""The wire reader and the tool() bridge: host frames to the cell loop, bridge replies to callers."""

import _thread

from . import public, wire
from .threads import Flag, spawn


class Inbox:
    """A single-consumer queue on a bare lock."""

    def __init__(self):
        self._items = []
        self._avail = Flag()

    def put(self, item):
        self._items.append(item)
        self._avail.set()

    def get(self):
        while not self._items:
            self._avail.wait()
        return self._items.pop(0)


# the host's frames other than bridge replies ("exec", each checked by wire.host_frame), then
# None at the end of the wire
inbox = Inbox()
waiters = {}
ids = [0]
ids_lock = _thread.allocate_lock()


def reader():
    while True:
        line = wire.read_line()
        if line is None:
            break
        try:
            msg = wire.host_frame(wire.json_loads(line))
        except ValueError:
            continue
        if msg is None:
            continue
        if msg["t"] == "bridge_result":
            w = waiters.pop(msg["id"], None)
            if w is not None:
                w[1] = msg
                w[0].set()
        else:
            inbox.put(msg)
    inbox.put(None)


def start():
    """Start reading the host's frames (after boot)."""
    spawn(reader)


@public
class ToolError(Exception):
    """A tool called through the bridge returned an error result."""


@public
class ToolResult(str):
    """The text of a tool result; `.structured` holds its structured data (or None)."""

    structured = None
    images = 0


def tool(name, args=None):
    """Call one of the run's tools through the host: tool("read", {"path": "x"}).

    Returns the result text (a str whose .structured holds structured data); raises
    ToolError when the tool returns an error result."""
    if not isinstance(name, str):
        raise TypeError("tool(name, args): name must be a str such as 'read'")
    if args is None:
        args = {}
    if not isinstance(args, dict):
        raise TypeError("tool(name, args): args must be a dict of the tool's arguments")
    try:
        wire.json_dumps(args, strict=True)
    except (TypeError, ValueError, RecursionError) as e:
        raise TypeError("tool(name, args): args must be JSON-serialisable: %s" % e) from None
    with ids_lock:
        ids[0] += 1
        bid = ids[0]
    slot = [Flag(), None]
    waiters[bid] = slot
    wire.send({"t": "bridge", "id": bid, "name": name, "args": args})
    slot[0].wait()
    res = slot[1]
    if res["is_error"]:
        raise ToolError("tool %r failed: %s" % (name, res["text"]))
    out = ToolResult(res["text"])
    out.structured = res["structured"]
    out.images = res["images"]
    return out
