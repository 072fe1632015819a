"""Threading primitives cheap at start-up: a one-waiter flag and a thread starter, on `_thread`."""

import _thread


class Flag:
    """A one-waiter event on a bare lock (no `threading` import at start-up)."""

    __slots__ = ("_lock",)

    def __init__(self):
        self._lock = _thread.allocate_lock()
        self._lock.acquire()

    def set(self):
        try:
            self._lock.release()
        except RuntimeError:
            pass

    def clear(self):
        self._lock.acquire(False)

    def wait(self, timeout=-1):
        return self._lock.acquire(True, timeout)


def spawn(fn, *args):
    _thread.start_new_thread(fn, args)
