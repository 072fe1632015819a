"""The driver's entry point: boot in order, say ready, then run each cell the host sends."""

import os
import sys

from . import bridge, cell, output, wire
from .bounds import MAX_DEFINED, cell_displays, clip, limits
from .display import bundle, flush_figures


def run():
    wire.boot()
    output.install()
    bridge.start()
    cell.setup()
    user_ns = cell.user_ns

    wire.send({"t": "ready", "pid": os.getpid(), "language": "python", "version": sys.version.split()[0],
               "executable": sys.executable})

    while True:
        msg = bridge.inbox.get()
        if msg is None:
            os._exit(0)
        # an "exec" frame, its fields checked by wire.host_frame
        cid = msg["id"]
        if msg["cap"] >= 64:
            limits["cap"] = msg["cap"]
        cell_displays["sent"] = 0
        cell_displays["dropped"] = 0
        status, result, err = "error", None, None
        # ids, not references: holding the old values would keep them alive through the cell
        before = {k: id(v) for k, v in user_ns.items()}
        try:
            status, result, err = cell.run_cell(cid, msg["code"])
            res_bundle = None
            if result is not None:
                res_bundle = bundle(result)
            flush_figures()
        except BaseException as e:
            res_bundle = None
            status, err = "error", {"ename": type(e).__name__, "evalue": cell.evalue(e),
                                    "traceback": clip("internal error in the kernel driver: %r" % (e,))}
        try:
            output.sync_fds()
        except BaseException:
            pass
        # the top-level names this cell bound or rebound (what an interrupt leaves behind)
        try:
            defined = [k for k, v in list(user_ns.items())
                       if k != "_" and not k.startswith("__") and before.get(k) != id(v)]
        except BaseException:
            defined = []
        before = None
        wire.send({"t": "done", "id": cid, "status": status, "result": res_bundle, "error": err,
                   "displays_dropped": cell_displays["dropped"], "defined": defined[:MAX_DEFINED],
                   "defined_total": len(defined)})
