"""Drive a program on a real pseudo-terminal.

Reads a JSON spec on stdin: {"argv": [...], "env": {...}, "steps": [{"expect": str, "send": str}],
"deadline": seconds}. Starts argv with stdin, stdout and stderr on the pty's slave side, waits for
each step's `expect` text to appear in the output (after the previous match) and then types its
`send` text, reads until the program exits, and prints {"transcript", "status", "error"} as JSON.
"""

import json
import os
import pty
import select
import subprocess
import sys
import time


def main():
    spec = json.load(sys.stdin)
    deadline = time.monotonic() + spec.get("deadline", 60)
    env = dict(os.environ)
    env.update(spec.get("env", {}))
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        spec["argv"], stdin=slave, stdout=slave, stderr=slave, env=env,
        start_new_session=True, close_fds=True,
    )
    os.close(slave)
    buf = b""
    eof = False
    error = None

    def pump(wait):
        nonlocal buf, eof
        if eof:
            return
        ready, _, _ = select.select([master], [], [], wait)
        if ready:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: every slave fd is closed, the program is gone
                chunk = b""
            if chunk:
                buf += chunk
            else:
                eof = True

    pos = 0
    for step in spec.get("steps", []):
        want = step["expect"].encode()
        while want not in buf[pos:]:
            if eof or time.monotonic() > deadline:
                error = "did not see %r" % step["expect"]
                break
            pump(0.2)
        if error:
            break
        pos = buf.index(want, pos) + len(want)
        os.write(master, step["send"].encode())
    while not eof and time.monotonic() < deadline:
        pump(0.2)
    # The pty reports end of file when the program closes it, which can be just before the
    # program can be reaped: wait for the exit itself.
    try:
        proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        error = error or "the program did not exit before the deadline"
        proc.kill()
    status = proc.wait()
    os.close(master)
    print(json.dumps({"transcript": buf.decode("utf-8", "replace"), "status": status, "error": error}))


main()
