# Written by agent-dap into a private directory prepended to the debuggee's PYTHONPATH.
# debugpy's adapter <-> debuggee socket sends small messages back to back; with Nagle's
# algorithm and delayed ACKs each step waits ~40-80 ms. Set TCP_NODELAY on every TCP socket
# this process connects or accepts, then run the next sitecustomize on the path, if any.
import socket as _socket


def _agent_dap_nodelay(sock):
    try:
        if sock.family in (_socket.AF_INET, _socket.AF_INET6):
            sock.setsockopt(_socket.IPPROTO_TCP, _socket.TCP_NODELAY, 1)
    except Exception:
        pass


_agent_dap_connect = _socket.socket.connect
_agent_dap_accept = _socket.socket.accept


def _connect(self, *args):
    result = _agent_dap_connect(self, *args)
    _agent_dap_nodelay(self)
    return result


def _accept(self):
    conn, addr = _agent_dap_accept(self)
    _agent_dap_nodelay(conn)
    return conn, addr


_socket.socket.connect = _connect
_socket.socket.accept = _accept


def _agent_dap_chain():
    import importlib.util
    import os
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    for d in sys.path:
        if not d or os.path.abspath(d) == here:
            continue
        path = os.path.join(d, "sitecustomize.py")
        if os.path.isfile(path):
            spec = importlib.util.spec_from_file_location("sitecustomize", path)
            module = importlib.util.module_from_spec(spec)
            sys.modules["sitecustomize"] = module
            spec.loader.exec_module(module)
            return


_agent_dap_chain()
