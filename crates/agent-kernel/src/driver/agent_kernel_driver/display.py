"""Rich display: MIME bundles for values (DataFrames, figures, _repr_*_), display(), figures."""

import sys

from . import wire
from .bounds import MAX_DISPLAYS, bounded_bundle, bounded_repr, cell_displays, clip, limits


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
        wire.send({"t": "display", "data": d})


def flush_figures():
    """Send every open matplotlib figure as a display, then close them."""
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is None:
        return
    try:
        for num in plt.get_fignums():
            fig = plt.figure(num)
            wire.send({"t": "display", "data": {"image/png": figure_png(fig), "text/plain": repr(fig)}})
    except Exception as e:
        wire.send({"t": "stream", "name": "stderr", "text": "could not render a figure: %s\n" % e})
    finally:
        try:
            plt.close("all")
        except Exception:
            pass
