"""The cell's stdout, stderr and stdin: stream objects, the fd pumps, and syncing them per cell."""

import builtins
import codecs
import os
import sys

from . import public, wire
from .threads import Flag, spawn


class _Buffer:
    def __init__(self, stream):
        self._stream = stream

    def write(self, b):
        self._stream.write(bytes(b).decode("utf-8", "replace"))
        return len(b)

    def flush(self):
        wire.flush_output()


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
            wire.emit(self._name, s)
        return len(s)

    def writelines(self, lines):
        for line in lines:
            self.write(line)

    def flush(self):
        wire.flush_output()

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


@public
class StdinNotAvailable(RuntimeError):
    pass


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


def patch_getpass():
    # getpass reads /dev/tty, not stdin; patched as soon as something has imported it (not
    # imported here: it would cost the cold start several milliseconds).
    gp = sys.modules.get("getpass")
    if gp is not None and getattr(gp, "getpass", None) is not no_input:
        gp.getpass = no_input


synced = {"stdout": Flag(), "stderr": Flag()}


def pump(fd, name):
    sync_mark = wire.sync_mark
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
                wire.emit(name, text)
            synced[name].set()
        keep = 0
        for k in range(min(len(sync_mark) - 1, len(pending)), 0, -1):
            if pending.endswith(sync_mark[:k]):
                keep = k
                break
        flush, pending = pending[: len(pending) - keep], pending[len(pending) - keep:]
        text = dec.decode(flush)
        if text:
            wire.emit(name, text)


def install():
    """Replace sys.stdout/stderr/stdin and input(), and start pumping the cell's fds 1 and 2."""
    sys.stdout = sys.__stdout__ = Stream("stdout", 1)
    sys.stderr = sys.__stderr__ = Stream("stderr", 2)
    sys.stdin = sys.__stdin__ = Stdin()
    builtins.input = no_input
    for fd, name in ((wire.out_r, "stdout"), (wire.err_r, "stderr")):
        spawn(pump, fd, name)


def sync_fds():
    """Wait (at most 2 s each) until what the cell wrote to fds 1 and 2 has been sent."""
    for name, fd in (("stdout", 1), ("stderr", 2)):
        synced[name].clear()
        try:
            os.write(fd, wire.sync_mark)
        except OSError:
            synced[name].set()
    for name in ("stdout", "stderr"):
        synced[name].wait(2.0)
