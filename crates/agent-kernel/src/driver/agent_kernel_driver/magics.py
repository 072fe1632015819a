"""IPython idioms in a plain interpreter: %line and %%cell magics, !cmd and x = !cmd shell lines."""

import codecs
import os
import sys

from . import public

# CPython's compile() flags (Include/cpython/compile.h), also used by the cell module
PyCF_ONLY_AST = 0x400
PyCF_ALLOW_TOP_LEVEL_AWAIT = 0x2000

LINE_MAGICS = ("pip", "cd", "pwd", "env", "time", "timeit", "matplotlib")
CELL_MAGICS = ("bash", "sh", "timeit", "time")
SUPPORTED = (
    "line magics %pip, %cd, %pwd, %env, %time, %timeit, %matplotlib; cell magics %%bash, "
    "%%sh, %%time, %%timeit; shell lines !cmd and x = !cmd"
)


@public
class MagicError(Exception):
    pass


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
