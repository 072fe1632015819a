# agent-kernel python driver, part 0: boot, the wire and output batching. The driver is one
# function (`_agent_kernel_main`) whose body is split by job into driver/python/N_*.py; kernel.rs
# joins the parts in order (PYTHON_DRIVER). Shipped inside the agent-kernel crate; the host runs it in the
# project's own interpreter, importing it from a per-user cache directory (so its bytecode is
# cached) or, inside a sandbox, passing it as source on the command line.
#
# The wire: JSON lines, each prefixed with "\x1e<nonce>:", on the process's ORIGINAL stdin and
# stdout, which this driver moves to private (non-inheritable) descriptors before any cell runs.
# The cell's fd 0 is /dev/null and its fds 1 and 2 are internal pipes that this driver forwards as
# "stream" messages, so a cell (or anything it starts) that prints anything cannot corrupt the wire.


def _agent_kernel_main():
    import os
    import sys

    os.environ["MPLBACKEND"] = "Agg"
    os.environ.setdefault("PIP_DISABLE_PIP_VERSION_CHECK", "1")
    os.environ.setdefault("PIP_NO_INPUT", "1")
    os.environ.setdefault("PAGER", "cat")
    os.environ.setdefault("GIT_PAGER", "cat")

    # Only C-level modules on the way to "ready": the kernel's cold start is measured against a
    # bare `python -c pass`. Everything else is imported when a cell first needs it.
    import _signal as signal
    import _thread
    import builtins
    import codecs

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

    class Flag:
        """A one-waiter event on a bare lock (no `threading` import at start-up)."""

        __slots__ = ("_lock",)

        def __init__(self):
            self._lock = _thread.allocate_lock()
            self._lock.acquire()

        def set(self):
            try:
                self._lock.release()
            except RuntimeError:
                pass

        def clear(self):
            self._lock.acquire(False)

        def wait(self, timeout=-1):
            return self._lock.acquire(True, timeout)

    def spawn(fn, *args):
        _thread.start_new_thread(fn, args)

    DRIVER = globals().get("__file__") or "<agent-kernel>"
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

    def read_line():
        chunks = []
        while True:
            b = fin.readline()
            if not b:
                return None
            chunks.append(b)
            if b.endswith(b"\n"):
                return b"".join(chunks)

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

    wlock = _thread.allocate_lock()

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

    # Stdout text is batched: a burst of small writes becomes one frame, while a write after a
    # quiet spell (> 50 ms) goes out at once and a flusher thread sends the rest within 100 ms,
    # so that the host sees progress (which resets the inactivity budget). Stderr is not batched
    # (it is what explains a crash). Every other frame flushes the batch first, keeping the order.
    from time import monotonic

    pending = {"name": None, "parts": [], "size": 0, "at": 0.0}

    def flush_locked():
        if pending["parts"]:
            text = "".join(pending["parts"])
            pending["parts"] = []
            pending["size"] = 0
            write_frame({"t": "stream", "name": pending["name"], "text": text})
        pending["at"] = monotonic()

    def send(obj):
        with wlock:
            flush_locked()
            write_frame(obj)

    def emit(name, text):
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

    spawn(flusher)

