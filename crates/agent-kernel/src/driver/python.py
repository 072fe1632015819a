# agent-kernel python driver. Shipped inside the agent-kernel crate; the host runs it in the
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

    # ---- output -----------------------------------------------------------------------------

    class _Buffer:
        def __init__(self, stream):
            self._stream = stream

        def write(self, b):
            self._stream.write(bytes(b).decode("utf-8", "replace"))
            return len(b)

        def flush(self):
            flush_output()

    class Stream:
        encoding = "utf-8"
        errors = "replace"
        closed = False
        line_buffering = True

        def __init__(self, name, fd):
            self.name = "<" + name + ">"
            self._name = name
            self._fd = fd
            self.buffer = _Buffer(self)

        def write(self, s):
            if not isinstance(s, str):
                raise TypeError("write() argument must be str, not " + type(s).__name__)
            if s:
                emit(self._name, s)
            return len(s)

        def writelines(self, lines):
            for line in lines:
                self.write(line)

        def flush(self):
            flush_output()

        def isatty(self):
            return False

        def fileno(self):
            return self._fd

        def readable(self):
            return False

        def writable(self):
            return True

        def seekable(self):
            return False

    class StdinNotAvailable(RuntimeError):
        pass

    def public(cls):
        cls.__qualname__ = cls.__name__
        cls.__module__ = "builtins"
        return cls

    public(StdinNotAvailable)

    NO_INPUT = (
        "input() and stdin are not available in an eval cell: nobody can type into it; "
        "put the value in the code instead"
    )

    def no_input(*_args, **_kwargs):
        raise StdinNotAvailable(NO_INPUT)

    class Stdin:
        encoding = "utf-8"
        closed = False
        name = "<stdin>"

        def fileno(self):
            return 0

        def isatty(self):
            return False

        def readable(self):
            return True

        read = readline = readlines = __next__ = no_input

        def __iter__(self):
            return self

    sys.stdout = sys.__stdout__ = Stream("stdout", 1)
    sys.stderr = sys.__stderr__ = Stream("stderr", 2)
    sys.stdin = sys.__stdin__ = Stdin()
    builtins.input = no_input

    def patch_getpass():
        # getpass reads /dev/tty, not stdin; patched as soon as something has imported it (not
        # imported here: it would cost the cold start several milliseconds).
        gp = sys.modules.get("getpass")
        if gp is not None and getattr(gp, "getpass", None) is not no_input:
            gp.getpass = no_input

    synced = {"stdout": Flag(), "stderr": Flag()}

    def pump(fd, name):
        dec = codecs.getincrementaldecoder("utf-8")("replace")
        pending = b""
        while True:
            try:
                chunk = os.read(fd, 65536)
            except InterruptedError:
                continue
            except OSError:
                return
            if not chunk:
                return
            pending += chunk
            while True:
                i = pending.find(sync_mark)
                if i < 0:
                    break
                before, pending = pending[:i], pending[i + len(sync_mark):]
                text = dec.decode(before)
                if text:
                    emit(name, text)
                synced[name].set()
            keep = 0
            for k in range(min(len(sync_mark) - 1, len(pending)), 0, -1):
                if pending.endswith(sync_mark[:k]):
                    keep = k
                    break
            flush, pending = pending[: len(pending) - keep], pending[len(pending) - keep:]
            text = dec.decode(flush)
            if text:
                emit(name, text)

    for fd, name in ((out_r, "stdout"), (err_r, "stderr")):
        spawn(pump, fd, name)

    def sync_fds():
        for name, fd in (("stdout", 1), ("stderr", 2)):
            synced[name].clear()
            try:
                os.write(fd, sync_mark)
            except OSError:
                synced[name].set()
        for name in ("stdout", "stderr"):
            synced[name].wait(2.0)

    # ---- wire reader and the bridge ----------------------------------------------------------

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

    inbox = Inbox()
    waiters = {}
    ids = [0]
    ids_lock = _thread.allocate_lock()

    def reader():
        while True:
            line = read_line()
            if line is None:
                break
            try:
                msg = json_loads(line)
            except ValueError:
                continue
            if msg.get("t") == "bridge_result":
                w = waiters.pop(msg.get("id"), None)
                if w is not None:
                    w[1] = msg
                    w[0].set()
            else:
                inbox.put(msg)
        inbox.put(None)

    spawn(reader)

    class ToolError(Exception):
        """A tool called through the bridge returned an error result."""

    class ToolResult(str):
        """The text of a tool result; `.structured` holds its structured data (or None)."""

        structured = None
        images = 0

    public(ToolError)
    public(ToolResult)

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
            json_dumps(args, strict=True)
        except (TypeError, ValueError, RecursionError) as e:
            raise TypeError("tool(name, args): args must be JSON-serialisable: %s" % e) from None
        with ids_lock:
            ids[0] += 1
            bid = ids[0]
        slot = [Flag(), None]
        waiters[bid] = slot
        send({"t": "bridge", "id": bid, "name": name, "args": args})
        slot[0].wait()
        res = slot[1]
        if res.get("is_error"):
            raise ToolError("tool %r failed: %s" % (name, res.get("text", "")))
        out = ToolResult(res.get("text", ""))
        out.structured = res.get("structured")
        out.images = res.get("images", 0)
        return out

    # ---- bounds -------------------------------------------------------------------------------
    # Nothing unbounded crosses the pipe: the host sends its cap with every cell; values,
    # tracebacks and exception messages are cut (head and tail, with a note) and display() stops
    # after MAX_DISPLAYS outputs per cell. The host cuts again whatever arrives.

    limits = {"cap": 20000}
    MAX_DISPLAYS = 50
    MAX_DEFINED = 30  # names listed as defined by a cell
    MAX_PNG = 8 * 1024 * 1024
    cell_displays = {"sent": 0, "dropped": 0}

    def clip(s, cap=None):
        cap = limits["cap"] if cap is None else cap
        if len(s) <= cap:
            return s
        room = max(cap - 80, 16)
        head, tail = room * 3 // 4, room // 4
        return "%s\n[… %d characters cut here …]\n%s" % (s[:head], len(s) - head - tail, s[len(s) - tail:])

    def clip_items(obj, cap, depth):
        # A long builtin container: repr its first and last items only, so that the time and
        # memory spent do not grow with its length.
        t = type(obj)
        n = len(obj)
        if t is dict:
            def fmt(k):
                return bounded_repr(k, cap, depth + 1) + ": " + bounded_repr(obj[k], cap, depth + 1)
            back = reversed(obj)
        else:
            def fmt(x):
                return bounded_repr(x, cap, depth + 1)
            back = reversed(obj) if t in (list, tuple) else None
        head, used = [], 0
        for x in obj:
            if used >= cap * 3 // 4 - 100:
                break
            r = fmt(x)
            head.append(r)
            used += len(r) + 2
        tail, used = [], 0
        if back is not None:
            for x in back:
                if used >= cap // 4 - 100 or len(head) + len(tail) >= n:
                    break
                r = fmt(x)
                tail.append(r)
                used += len(r) + 2
            tail.reverse()
        left = n - len(head) - len(tail)
        parts = head + (["… %d more items cut here …" % left] if left else []) + tail
        o, c = {list: ("[", "]"), tuple: ("(", ")"), dict: ("{", "}"), set: ("{", "}"),
                frozenset: ("frozenset({", "})")}[t]
        return o + ", ".join(parts) + c

    def bounded_repr(obj, cap, depth=0):
        t = type(obj)
        if t in (str, bytes, bytearray) and len(obj) > cap:
            room = max(cap - 80, 16)
            head, tail = room * 3 // 4, room // 4
            return "%s\n[… %d characters cut here …]\n%s" % (
                repr(obj[:head]), len(obj) - head - tail, repr(obj[len(obj) - tail:]))
        if t in (list, tuple, dict, set, frozenset) and len(obj) > 64 and depth < 4:
            return clip_items(obj, cap, depth)
        return clip(repr(obj), cap)

    def bounded_bundle(data):
        cap = limits["cap"]
        out = {}
        for mime, v in data.items():
            if not isinstance(v, str):
                out[mime] = v
            elif mime == "text/plain":
                out[mime] = clip(v, cap)
            elif mime == "image/png":
                if len(v) <= MAX_PNG:
                    out[mime] = v
                else:
                    out["text/plain"] = "[image not returned: its PNG is %d bytes of base64, over %d]" % (len(v), MAX_PNG)
            elif len(v) <= cap:
                out[mime] = v
        return out

    # ---- rich display -------------------------------------------------------------------------

    def b64(data):
        import binascii

        return binascii.b2a_base64(bytes(data), newline=False).decode()

    def figure_png(fig):
        import io

        buf = io.BytesIO()
        fig.savefig(buf, format="png", bbox_inches="tight")
        return b64(buf.getvalue())

    def bundle(obj):
        data = {}
        cls = type(obj)
        mod = getattr(cls, "__module__", "") or ""
        if mod.startswith("pandas") and cls.__name__ in ("DataFrame", "Series"):
            try:
                if cls.__name__ == "DataFrame":
                    data["text/plain"] = obj.to_string(max_rows=60, max_cols=30, show_dimensions=True)
                    data["text/html"] = obj.to_html(max_rows=60, max_cols=30, show_dimensions=True)
                else:
                    data["text/plain"] = obj.to_string(max_rows=60, length=True, dtype=True, name=True)
                try:
                    data["text/markdown"] = obj.head(60).to_markdown()
                except Exception:
                    pass
            except Exception:
                pass
        if mod.startswith("matplotlib") and cls.__name__ == "Figure":
            try:
                data["image/png"] = figure_png(obj)
            except Exception:
                pass
        for attr, mime in (
            ("_repr_html_", "text/html"),
            ("_repr_markdown_", "text/markdown"),
            ("_repr_png_", "image/png"),
        ):
            if mime in data:
                continue
            try:
                meth = getattr(obj, attr, None)
                if meth is None or isinstance(obj, type):
                    continue
                v = meth()
                if v is None:
                    continue
                if mime == "image/png":
                    if isinstance(v, (bytes, bytearray)):
                        data[mime] = b64(v)
                elif isinstance(v, str):
                    data[mime] = v
            except Exception:
                pass
        if "text/plain" not in data:
            if True:
                try:
                    cap = limits["cap"]
                    text = bounded_repr(obj, cap)
                    # pretty-printing is pure Python: only for containers whose repr is short
                    if 100 < len(text) <= cap and isinstance(obj, (dict, list, tuple, set, frozenset)):
                        import pprint  # costly to import; only for long containers

                        text = pprint.pformat(obj, width=100, compact=True)
                    data["text/plain"] = text
                except Exception as e:
                    data["text/plain"] = "<repr failed: %s: %s>" % (type(e).__name__, clip(str(e), 500))
        return bounded_bundle(data)

    def display(*objs, **_kwargs):
        """Show objects as rich output (tables, images, text) in this cell's result."""
        for obj in objs:
            if cell_displays["sent"] >= MAX_DISPLAYS:
                cell_displays["dropped"] += 1
                continue
            cell_displays["sent"] += 1
            if isinstance(obj, str):
                d = {"text/plain": clip(obj)}
            else:
                d = bundle(obj)
            send({"t": "display", "data": d})

    def flush_figures():
        plt = sys.modules.get("matplotlib.pyplot")
        if plt is None:
            return
        try:
            for num in plt.get_fignums():
                fig = plt.figure(num)
                send({"t": "display", "data": {"image/png": figure_png(fig), "text/plain": repr(fig)}})
        except Exception as e:
            send({"t": "stream", "name": "stderr", "text": "could not render a figure: %s\n" % e})
        finally:
            try:
                plt.close("all")
            except Exception:
                pass

    # ---- IPython idioms ----------------------------------------------------------------------

    LINE_MAGICS = ("pip", "cd", "pwd", "env", "time", "timeit", "matplotlib")
    CELL_MAGICS = ("bash", "sh", "timeit", "time")
    SUPPORTED = (
        "line magics %pip, %cd, %pwd, %env, %time, %timeit, %matplotlib; cell magics %%bash, "
        "%%sh, %%time, %%timeit; shell lines !cmd and x = !cmd"
    )

    class MagicError(Exception):
        pass

    public(MagicError)

    def expand(cmd, ns):
        import re

        def sub(m):
            expr = m.group(1) or m.group(2)
            root = expr.split(".")[0]
            if root not in ns:
                return m.group(0)
            try:
                return str(eval(expr, ns))
            except Exception:
                return m.group(0)

        return re.sub(r"\{([A-Za-z_][\w.]*)\}|(?<!\$)\$([A-Za-z_]\w*)", sub, cmd)

    def run_shell(cmd, capture=False, shell="/bin/sh"):
        import subprocess

        p = subprocess.Popen(
            [shell, "-c", cmd],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        lines = []
        dec = codecs.getincrementaldecoder("utf-8")("replace")
        try:
            while True:
                chunk = p.stdout.read1(65536)
                if not chunk:
                    break
                text = dec.decode(chunk)
                if capture:
                    lines.append(text)
                else:
                    sys.stdout.write(text)
        finally:
            p.stdout.close()
            rc = p.wait()
        if capture:
            return "".join(lines).splitlines()
        if rc != 0:
            sys.stderr.write("(exit status %d)\n" % rc)
        return None

    class Magics:
        def __init__(self):
            self.ns = None

        def shell(self, cmd, shell="/bin/sh"):
            return run_shell(expand(cmd, self.ns), shell=shell)

        def shell_capture(self, cmd):
            return run_shell(expand(cmd, self.ns), capture=True)

        def cell(self, name, args, body):
            if name in ("bash", "sh"):
                return run_shell(body, shell="/bin/bash" if name == "bash" else "/bin/sh")
            if name == "timeit":
                return self.timeit(body, args, setup_in_args=True)
            if name == "time":
                return self.time(body)
            raise MagicError("unknown cell magic %%" + name)

        def line(self, name, args):
            if name not in ("time", "timeit"):  # code, not a command line: no {var} expansion
                args = expand(args, self.ns)
            return getattr(self, "m_" + name)(args.strip())

        def m_pip(self, args):
            import importlib
            import importlib.metadata as md
            import shlex
            import subprocess

            def dists():
                out = {}
                for d in md.distributions():
                    try:
                        out[(d.metadata["Name"] or "").lower()] = (d.version, d)
                    except Exception:
                        pass
                return out

            before = dists()
            argv = shlex.split(args)
            cmd = [sys.executable, "-m", "pip"] + argv
            p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            dec = codecs.getincrementaldecoder("utf-8")("replace")
            while True:
                chunk = p.stdout.read1(65536)
                if not chunk:
                    break
                sys.stdout.write(dec.decode(chunk))
            p.stdout.close()
            rc = p.wait()
            importlib.invalidate_caches()
            after = dists()
            changed = [n for n in after if before.get(n, (None,))[0] != after[n][0]]
            changed += [n for n in before if n not in after]
            tops = set()
            for n in changed:
                tops.add(n.replace("-", "_"))
                entry = after.get(n) or before.get(n)
                d = entry[1]
                try:
                    txt = d.read_text("top_level.txt")
                except Exception:
                    txt = None
                if txt:
                    tops.update(t.strip() for t in txt.split() if t.strip())
                else:
                    for f in d.files or []:
                        part = str(f).split("/")[0]
                        if part.endswith(".py"):
                            part = part[:-3]
                        if part and not part.endswith((".dist-info", ".egg-info", ".data", ".pth")) and part not in ("..", "__pycache__", "bin"):
                            tops.add(part)
            evicted = sorted(m for m in list(sys.modules) if m.split(".")[0] in tops)
            for m in evicted:
                sys.modules.pop(m, None)
            if evicted:
                print("(evicted %d module(s) from sys.modules so the next import sees the new install: %s)" % (len(evicted), ", ".join(evicted[:10]) + (" …" if len(evicted) > 10 else "")))
            if rc != 0:
                raise RuntimeError("%%pip %s: pip exited with status %d (see its output above)" % (args, rc))

        def m_cd(self, args):
            target = os.path.expanduser(args.strip("'\"")) if args else os.path.expanduser("~")
            os.chdir(target)
            print(os.getcwd())

        def m_pwd(self, _args):
            return os.getcwd()

        def m_env(self, args):
            import re

            if not args:
                for k in sorted(os.environ):
                    print("%s=%s" % (k, os.environ[k]))
                return None
            m = re.match(r"^([A-Za-z_]\w*)\s*(?:=\s*|\s+)(.*)$", args)
            if m:
                os.environ[m.group(1)] = m.group(2)
                print("env: %s=%s" % (m.group(1), m.group(2)))
                return None
            return os.environ.get(args)

        def m_matplotlib(self, _args):
            return None

        def m_time(self, stmt):
            return self.time(stmt)

        def m_timeit(self, args):
            return self.timeit(None, args, setup_in_args=False)

        def time(self, code):
            import time

            try:
                co = compile(code, "<time>", "eval")
            except SyntaxError:
                co = compile(code, "<time>", "exec")
            w0, c0 = time.perf_counter(), time.process_time()
            try:
                return eval(co, self.ns)
            finally:
                w, c = time.perf_counter() - w0, time.process_time() - c0
                print("CPU times: %s\nWall time: %s" % (fmt_time(c), fmt_time(w)))

        def timeit(self, body, args, setup_in_args):
            import re
            import statistics
            import timeit

            m = re.match(r"^((?:\s*-[nr]\s*\d+)*)\s*(.*)$", args, re.S)
            opts, rest = m.group(1), m.group(2)
            number = repeat = None
            for flag, val in re.findall(r"-([nr])\s*(\d+)", opts):
                if flag == "n":
                    number = int(val)
                else:
                    repeat = int(val)
            if setup_in_args:
                stmt, setup = body, rest.strip() or "pass"
            else:
                stmt, setup = rest, "pass"
            if not stmt.strip():
                raise MagicError("%timeit needs a statement, e.g. %timeit sum(range(100))")
            t = timeit.Timer(stmt, setup, globals=self.ns)
            if number is None:
                number, _ = t.autorange()
            repeat = repeat or 5
            runs = [x / number for x in t.repeat(repeat=repeat, number=number)]
            mean = statistics.mean(runs)
            std = statistics.pstdev(runs) if len(runs) > 1 else 0.0
            print(
                "%s ± %s per loop (mean ± std. dev. of %d runs, %d loops each)"
                % (fmt_time(mean), fmt_time(std), repeat, number)
            )

    def fmt_time(s):
        for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
            if s >= scale:
                return "%.3g %s" % (s / scale, unit)
        return "%.3g ns" % (s * 1e9)

    magics = Magics()

    ASSIGN_SHELL = r"^([A-Za-z_][\w\s,.\[\]]*?)\s*=\s*!(.*)$"
    LINE_MAGIC = r"^%([A-Za-z_]\w*)\s*(.*)$"

    def transform(src):
        """Rewrite IPython idioms into plain calls; returns source with the same line count."""
        lines = src.split("\n")
        first = lines[0].strip()
        if first.startswith("%%"):
            name, _, args = first[2:].partition(" ")
            if name not in CELL_MAGICS:
                raise MagicError("unknown magic `%%" + name + "`; supported: " + SUPPORTED)
            body = "\n".join(lines[1:])
            return "_agent_magics.cell(%r, %r, %r)" % (name, args, body) + "\n" * (len(lines) - 1)
        try:
            compile(src, "<check>", "exec", PyCF_ONLY_AST | PyCF_ALLOW_TOP_LEVEL_AWAIT)
            return src
        except SyntaxError:
            pass
        import re

        out = []
        in_string = False
        for line in lines:
            if in_string:
                out.append(line)
            else:
                stripped = line.lstrip()
                indent = line[: len(line) - len(stripped)]
                m = re.match(ASSIGN_SHELL, stripped)
                if stripped.startswith("!"):
                    out.append("%s_agent_magics.shell(%r)" % (indent, stripped[1:]))
                elif stripped.startswith("%") and not stripped.startswith("%%"):
                    lm = re.match(LINE_MAGIC, stripped)
                    if not lm or lm.group(1) not in LINE_MAGICS:
                        name = lm.group(1) if lm else stripped.split()[0][1:]
                        raise MagicError("unknown magic `%" + name + "`; supported: " + SUPPORTED)
                    out.append("%s_agent_magics.line(%r, %r)" % (indent, lm.group(1), lm.group(2)))
                elif m:
                    out.append("%s%s = _agent_magics.shell_capture(%r)" % (indent, m.group(1), m.group(2)))
                else:
                    out.append(line)
            # crude triple-quote tracking so that lines inside a string are left alone
            for q in ('"""', "'''"):
                if line.count(q) % 2 == 1:
                    in_string = not in_string
        return "\n".join(out)

    # ---- running a cell ----------------------------------------------------------------------

    import _ast as ast

    PyCF_ONLY_AST = 0x400
    PyCF_ALLOW_TOP_LEVEL_AWAIT = 0x2000
    CO_COROUTINE = 0x80

    class AggWarning:
        """Matches matplotlib's warning that plt.show() cannot show under Agg (the figure is
        returned after the cell instead). Installed in the C filter list, without importing
        `warnings` (whose option parsing would import `re`)."""

        @staticmethod
        def match(text):
            return str(text).startswith("FigureCanvasAgg is non-interactive")

    try:
        import _warnings

        _warnings.filters.insert(0, ("ignore", AggWarning(), Warning, None, 0))
        _warnings._filters_mutated()
    except Exception:
        pass
    cell_sources = {}

    main_mod = type(sys)("__main__")
    sys.modules["__main__"] = main_mod
    user_ns = main_mod.__dict__
    user_ns.update({"__builtins__": builtins, "display": display, "tool": tool, "ToolError": ToolError,
                    "_agent_magics": magics})
    magics.ns = user_ns
    sys.argv = [""]
    loop_box = [None]

    def run_coro(coro):
        import asyncio

        if loop_box[0] is None:
            loop_box[0] = asyncio.new_event_loop()
        return loop_box[0].run_until_complete(coro)

    def format_error(e):
        import linecache
        import traceback

        for fn, code in cell_sources.items():
            linecache.cache[fn] = (len(code), None, [l + "\n" for l in code.split("\n")], fn)
        te = traceback.TracebackException.from_exception(e)
        if isinstance(getattr(te, "_str", None), str):
            te._str = clip(te._str, limits["cap"] // 2)  # a huge message is cut before it is formatted
        frames = [f for f in te.stack if f.filename != DRIVER and not f.filename.startswith("<time")]
        keep = []
        omitted = 0
        for i, f in enumerate(frames):
            if f.filename.startswith("<cell ") or i >= len(frames) - 2:
                keep.append(f)
            else:
                omitted += 1
        te.stack = traceback.StackSummary.from_list(keep)
        te.__cause__ = None
        te.__context__ = None
        lines = list(te.format())
        if omitted:
            lines.insert(1, "  … %d frame(s) inside libraries omitted …\n" % omitted)
        return clip("".join(lines).rstrip("\n"))

    def evalue(e):
        try:
            return clip(str(e), limits["cap"] // 8)
        except Exception as x:
            return "<str() failed: %s>" % type(x).__name__

    def run_cell(cid, code):
        filename = "<cell %d>" % cid
        cell_sources[filename] = code
        result = None
        try:
            compile(code, filename, "exec", PyCF_ONLY_AST | PyCF_ALLOW_TOP_LEVEL_AWAIT)
            src = code
        except SyntaxError:
            src = None
        try:
            if src is None:
                src = transform(code)
        except MagicError as e:
            return "error", None, {"ename": "UsageError", "evalue": evalue(e), "traceback": clip("UsageError: %s" % e)}
        flags = PyCF_ALLOW_TOP_LEVEL_AWAIT
        try:
            tree = compile(src, filename, "exec", PyCF_ONLY_AST | flags)
            last = None
            if tree.body and isinstance(tree.body[-1], ast.Expr) and not code.rstrip().endswith(";"):
                last = ast.Expression(tree.body.pop().value)
            body = compile(tree, filename, "exec", flags)
            last_co = compile(last, filename, "eval", flags) if last is not None else None
        except SyntaxError as e:
            return "error", None, {"ename": "SyntaxError", "evalue": evalue(e), "traceback": format_error(e)}
        patch_getpass()
        signal.signal(signal.SIGINT, signal.default_int_handler)
        try:
            r = eval(body, user_ns)
            if body.co_flags & CO_COROUTINE:
                run_coro(r)
            if last_co is not None:
                value = eval(last_co, user_ns)
                if last_co.co_flags & CO_COROUTINE:
                    value = run_coro(value)
                if value is not None:
                    user_ns["_"] = value
                    result = value
            status, err = "ok", None
        except KeyboardInterrupt as e:
            status, err = "interrupted", {"ename": "KeyboardInterrupt", "evalue": "", "traceback": format_error(e)}
        except SystemExit as e:
            status, err = "error", {"ename": "SystemExit", "evalue": clip(str(e.code), limits["cap"] // 8),
                                    "traceback": clip("SystemExit: %s (sys.exit() ends the cell, not the kernel)" % (e.code,))}
        except BaseException as e:
            status, err = "error", {"ename": type(e).__name__, "evalue": evalue(e), "traceback": format_error(e)}
        finally:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        return status, result, err

    send({"t": "ready", "pid": os.getpid(), "language": "python", "version": sys.version.split()[0],
          "executable": sys.executable})

    while True:
        msg = inbox.get()
        if msg is None:
            os._exit(0)
        if msg.get("t") != "exec":
            continue
        cid = msg["id"]
        cap = msg.get("cap")
        if isinstance(cap, int) and cap >= 64:
            limits["cap"] = cap
        cell_displays["sent"] = 0
        cell_displays["dropped"] = 0
        status, result, err = "error", None, None
        # ids, not references: holding the old values would keep them alive through the cell
        before = {k: id(v) for k, v in user_ns.items()}
        try:
            status, result, err = run_cell(cid, msg.get("code", ""))
            res_bundle = None
            if result is not None:
                res_bundle = bundle(result)
            flush_figures()
        except BaseException as e:
            res_bundle = None
            status, err = "error", {"ename": type(e).__name__, "evalue": evalue(e), "traceback": clip("internal error in the kernel driver: %r" % (e,))}
        try:
            sync_fds()
        except BaseException:
            pass
        # the top-level names this cell bound or rebound (what an interrupt leaves behind)
        try:
            defined = [k for k, v in list(user_ns.items())
                       if k != "_" and not k.startswith("__") and before.get(k) != id(v)]
        except BaseException:
            defined = []
        before = None
        send({"t": "done", "id": cid, "status": status, "result": res_bundle, "error": err,
              "displays_dropped": cell_displays["dropped"], "defined": defined[:MAX_DEFINED],
              "defined_total": len(defined)})


if __name__ == "__main__":
    _agent_kernel_main()
