"""Running one cell: the user namespace, compiling with an echoed last expression, tracebacks."""

import _ast as ast
import _signal as signal
import builtins
import os
import sys

from . import SOURCE_NAME, magics as _magics
from .bounds import clip, limits
from .bridge import ToolError, tool
from .display import display
from .magics import PyCF_ALLOW_TOP_LEVEL_AWAIT, PyCF_ONLY_AST, MagicError, transform
from .output import patch_getpass

CO_COROUTINE = 0x80

# The driver's own frames are left out of a cell's traceback: its modules' directory, or the
# "<agent-kernel …>" names they are compiled under when passed as source.
_DRIVER_DIR = os.path.dirname(globals().get("__file__") or "") or None


def is_driver_file(filename):
    return filename.startswith(SOURCE_NAME) or (
        _DRIVER_DIR is not None and os.path.dirname(filename) == _DRIVER_DIR
    )


class AggWarning:
    """Matches matplotlib's warning that plt.show() cannot show under Agg (the figure is
    returned after the cell instead). Installed in the C filter list, without importing
    `warnings` (whose option parsing would import `re`)."""

    @staticmethod
    def match(text):
        return str(text).startswith("FigureCanvasAgg is non-interactive")


cell_sources = {}
# the cells' globals: a fresh __main__ module's (set up by setup())
user_ns = {}
loop_box = [None]


def setup():
    """Install the warning filter and a fresh __main__ whose globals the cells share."""
    global user_ns
    try:
        import _warnings

        _warnings.filters.insert(0, ("ignore", AggWarning(), Warning, None, 0))
        _warnings._filters_mutated()
    except Exception:
        pass
    main_mod = type(sys)("__main__")
    sys.modules["__main__"] = main_mod
    user_ns = main_mod.__dict__
    user_ns.update({"__builtins__": builtins, "display": display, "tool": tool, "ToolError": ToolError,
                    "_agent_magics": _magics.magics})
    _magics.magics.ns = user_ns
    sys.argv = [""]


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
    frames = [f for f in te.stack if not is_driver_file(f.filename) and not f.filename.startswith("<time")]
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
    """Run cell `cid`; returns (status, the last expression's value or None, error or None)."""
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
