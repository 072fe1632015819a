# agent-kernel python driver, part 2: the wire reader and the tool() bridge — a fragment of _agent_kernel_main's body;
# kernel.rs joins the parts in order (PYTHON_DRIVER).
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

