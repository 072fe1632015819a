#!/usr/bin/env python3
"""A language server that reports what it can see and do from where it runs.

Started by the host as an untrusted project's server is (contained), it answers `hover` with one
JSON object: its pid namespace, capabilities, session and controlling terminal, environment,
`/proc/1`, whether the test process (the host's parent, named in `<root>/.inside/outside.json`)
is visible and can be signalled, whether any visible process's environment holds the HTTP token,
whether it can write a file outside its private folders (directly and through
`/proc/<pid>/root`), and whether `TIOCSTI` into its controlling terminal works. It changes
nothing it can reach: a probe that succeeds is the finding. Speaks just enough LSP for `hover`.
"""
import errno
import fcntl
import json
import os
import sys
import termios

root = None


def send(msg):
    msg["jsonrpc"] = "2.0"
    body = json.dumps(msg).encode()
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    sys.stdout.buffer.flush()


def read():
    headers = {}
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            sys.exit(0)
        line = line.strip()
        if not line:
            break
        k, _, v = line.decode().partition(":")
        headers[k.strip().lower()] = v.strip()
    return json.loads(sys.stdin.buffer.read(int(headers["content-length"])))


def attempt(f):
    """`ok` (with what f returned, if anything), or the errno's name of the failure."""
    try:
        r = f()
        return "ok" if r is None else "ok: %s" % r
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e))


def cap_eff():
    for line in open("/proc/self/status"):
        if line.startswith("CapEff:"):
            return line.split()[1]
    return "?"


def token_seen(token):
    """The pids whose environment this process can read and that hold `token`."""
    seen = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open("/proc/%s/environ" % p, "rb") as f:
                if token.encode() in f.read():
                    seen.append(int(p))
        except OSError:
            pass
    return seen


def write_through(path):
    with open(path, "a") as f:
        f.write("written from inside the sandbox\n")


def tiocsti():
    fd = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
    try:
        # A NUL byte: pushed into the terminal's input, it would still show the finding
        # without typing a command.
        fcntl.ioctl(fd, termios.TIOCSTI, b"\0")
    finally:
        os.close(fd)


def view():
    out = json.load(open(os.path.join(root, ".inside", "outside.json")))
    pid = out["test_pid"]
    marker = out["marker"]
    return {
        "pid": os.getpid(),
        "pid_ns_is_outsides": os.readlink("/proc/self/ns/pid") == out["pid_ns"],
        "user_ns_is_outsides": os.readlink("/proc/self/ns/user") == out["user_ns"],
        "cap_eff": cap_eff(),
        "session_leader_or_below_one": os.getsid(0) != out["test_sid"],
        "open_dev_tty": attempt(lambda: os.close(os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY))),
        "tiocsti": attempt(tiocsti),
        "env_names": sorted(os.environ),
        "token_in_env": out["token"] in "".join(os.environ.values()),
        "token_readable_in_pids": token_seen(out["token"]),
        "proc1": attempt(lambda: open("/proc/1/cmdline", "rb").read().split(b"\0")[0].decode()),
        "outside_pid_visible": os.path.exists("/proc/%d" % pid),
        "signal_outside": attempt(lambda: os.kill(pid, 0)),
        "write_outside": attempt(lambda: write_through(marker)),
        "write_via_proc_root": [
            p for p in os.listdir("/proc") if p.isdigit()
            and attempt(lambda: write_through("/proc/%s/root%s" % (p, marker))) == "ok"
        ],
        "write_private_tmp": attempt(
            lambda: write_through(os.path.join(os.environ.get("TMPDIR", "/tmp"), "inside-probe"))),
    }


while True:
    msg = read()
    method = msg.get("method")
    if method == "initialize":
        root = msg["params"]["rootPath"]
        send({"id": msg["id"], "result": {"capabilities": {
            "hoverProvider": True, "textDocumentSync": 1}}})
    elif method == "textDocument/hover":
        try:
            value = json.dumps(view())
        except Exception as e:  # the probe itself failed: say so, never a partial view
            value = json.dumps({"probe_failed": repr(e)})
        send({"id": msg["id"], "result": {"contents": {"kind": "plaintext", "value": value}}})
    elif method == "shutdown":
        send({"id": msg["id"], "result": None})
    elif method == "exit":
        sys.exit(0)
    elif "id" in msg:
        send({"id": msg["id"], "result": None})
