"""Bounds on what crosses the pipe: the host's cap, clipping values and reprs, display counts.

Nothing unbounded crosses the pipe: the host sends its cap with every cell; values, tracebacks
and exception messages are cut (head and tail, with a note) and display() stops after
MAX_DISPLAYS outputs per cell. The host cuts again whatever arrives.
"""

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
