# agent-kernel python driver, part 6: running a cell — a fragment of _agent_kernel_main's body;
# kernel.rs joins the parts in order (PYTHON_DRIVER).
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
