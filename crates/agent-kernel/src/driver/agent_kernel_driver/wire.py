"""The wire to the host: moving it off the real descriptors, the hello, frames and output batching.

The wire: JSON lines, each prefixed with "\\x1e<nonce>:", on the process's ORIGINAL stdin and
stdout, which boot() moves to private (non-inheritable) descriptors before any cell runs. The
cell's fd 0 is /dev/null and its fds 1 and 2 are internal pipes (out_r, err_r) that the output
module forwards as "stream" frames, so a cell (or anything it starts) that prints anything cannot
corrupt the wire. Every frame this driver sends starts with its "t" field (the host sheds output
frames by that prefix when it is behind).
"""

import _thread
import os
from time import monotonic

from .threads import spawn

try:
    import _json

    def _constant(name):
        return {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}[name]

    class _Ctx:
        strict = False
        object_hook = None
        object_pairs_hook = None
        parse_float = float
        parse_int = int
        parse_constant = staticmethod(_constant)
        memo = {}

    _scan = _json.make_scanner(_Ctx())

    def json_loads(b):
        text = b.decode("utf-8", "replace") if isinstance(b, bytes) else b
        return _scan(text.strip(), 0)[0]

    def _no_default(o):
        raise TypeError("%s is not JSON-serialisable" % type(o).__name__)

    _lenient = _json.make_encoder({}, repr, _json.encode_basestring, None, ":", ",", False, False, False)
    _strict = _json.make_encoder({}, _no_default, _json.encode_basestring, None, ":", ",", False, False, False)

    def json_dumps(obj, strict=False):
        return "".join((_strict if strict else _lenient)(obj, 0))
except (ImportError, AttributeError):
    import json as _jsonmod

    def json_loads(b):
        return _jsonmod.loads(b)

    def json_dumps(obj, strict=False):
        if strict:
            return _jsonmod.dumps(obj, ensure_ascii=False, allow_nan=False)
        return _jsonmod.dumps(obj, ensure_ascii=False, allow_nan=False, default=repr)


# Set by boot(): the wire's descriptors, the frame prefix, the marker the output pumps sync on,
# and the read ends of the cell's stdout and stderr pipes.
wire_out = None
fin = None
prefix = None
sync_mark = None
out_r = None
err_r = None

wlock = _thread.allocate_lock()


def read_line():
    """One line from the host, or None at the end of the wire."""
    chunks = []
    while True:
        b = fin.readline()
        if not b:
            return None
        chunks.append(b)
        if b.endswith(b"\n"):
            return b"".join(chunks)


def boot():
    """Move the wire off fds 0-2, read the host's hello, and start the output flusher."""
    global wire_out, fin, prefix, sync_mark, out_r, err_r
    import _signal as signal

    os.environ["MPLBACKEND"] = "Agg"
    os.environ.setdefault("PIP_DISABLE_PIP_VERSION_CHECK", "1")
    os.environ.setdefault("PIP_NO_INPUT", "1")
    os.environ.setdefault("PAGER", "cat")
    os.environ.setdefault("GIT_PAGER", "cat")

    signal.signal(signal.SIGINT, signal.SIG_IGN)

    wire_in = os.dup(0)
    wire_out = os.dup(1)
    keep_err = os.dup(2)
    nul = os.open(os.devnull, os.O_RDONLY)
    os.dup2(nul, 0)
    os.close(nul)
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    os.dup2(out_w, 1)
    os.dup2(err_w, 2)
    os.close(out_w)
    os.close(err_w)

    fin = os.fdopen(wire_in, "rb", buffering=0)

    hello = read_line()
    if hello is None:
        os._exit(0)
    hello = json_loads(hello)
    prefix = ("\x1e" + hello["nonce"] + ":").encode()
    sync_mark = ("\x00\x1eagent-kernel-sync-" + hello["nonce"] + "\x00").encode()

    try:
        import faulthandler

        faulthandler.enable(file=os.fdopen(keep_err, "w", closefd=False))
    except Exception:
        pass

    spawn(flusher)


# The frames the host sends after its hello (protocol.rs's HostFrame), by kind: each field and
# the types it may have (None: any JSON value, null included). A frame of another shape is said
# on stderr and ignored, never read with a default.
HOST_FRAMES = {
    "exec": (("id", int), ("code", str), ("cap", int)),
    "bridge_result": (("id", int), ("is_error", bool), ("text", str), ("structured", None),
                      ("images", int)),
}


def host_frame(msg):
    """`msg` when it is one of HOST_FRAMES with every field of its type; else None, said on stderr."""
    kind = msg["t"] if isinstance(msg, dict) and "t" in msg else None
    fields = HOST_FRAMES[kind] if isinstance(kind, str) and kind in HOST_FRAMES else None
    if fields is not None:
        wrong = [k for k, t in fields if k not in msg or (t is not None and not isinstance(msg[k], t))]
        if not wrong:
            return msg
        what = "a `%s` message from the host has a missing or mistyped %s" % (
            kind, ", ".join("`%s`" % k for k in wrong))
    else:
        what = "a message from the host is of no kind the kernel driver knows"
    emit("stderr", "[%s, so the kernel driver ignored it]\n" % what)
    return None


def write_frame(obj):
    try:
        body = json_dumps(obj)
    except ValueError:
        body = json_dumps({"t": "stream", "name": "stderr", "text": "(a message could not be encoded)\n"})
    data = prefix + body.encode("utf-8", "replace") + b"\n"
    view = memoryview(data)
    while view:
        n = os.write(wire_out, view)
        view = view[n:]


# Stdout text is batched: a burst of small writes becomes one frame, while a write after a quiet
# spell (> 50 ms) goes out at once and a flusher thread sends the rest within 100 ms, so that the
# host sees progress (which resets the inactivity budget). Stderr is not batched (it is what
# explains a crash). Every other frame flushes the batch first, keeping the order.

pending = {"name": None, "parts": [], "size": 0, "at": 0.0}


def flush_locked():
    if pending["parts"]:
        text = "".join(pending["parts"])
        pending["parts"] = []
        pending["size"] = 0
        write_frame({"t": "stream", "name": pending["name"], "text": text})
    pending["at"] = monotonic()


def send(obj):
    """Send one frame (a dict whose first key is "t"), after any batched output."""
    with wlock:
        flush_locked()
        write_frame(obj)


def emit(name, text):
    """Send `text` printed on stream `name` ("stdout" or "stderr"), batched."""
    if not text:
        return
    with wlock:
        if pending["name"] != name:
            flush_locked()
            pending["name"] = name
        pending["parts"].append(text)
        pending["size"] += len(text)
        if name == "stderr" or pending["size"] >= 16384 or monotonic() - pending["at"] >= 0.05:
            flush_locked()


def flush_output():
    with wlock:
        flush_locked()


def flusher():
    from time import sleep

    while True:
        sleep(0.1)
        if pending["parts"]:
            flush_output()
