"""
Scrapy's C{scrapy.squeues}: queues of requests, in memory or on disk, by Scrapy's names, for
a component or a plugin that keeps requests of its own (a scheduler of a plugin's, say).
tinyscrapy's own scheduler keeps its queues in L{tinyscrapy.pqueues} and, with C{--jobdir},
in L{tinyscrapy.frontier}.

    - L{FifoMemoryQueue}, L{LifoMemoryQueue}: any objects, in this process;
    - the disk queues (C{PickleFifoDiskQueue}, C{MarshalLifoSQLiteQueue}, ... : the eight
      names of Scrapy's) keep requests in one SQLite file at the path they are given
      (mode 0600, its folders made), first in first out or last in first out. Whatever
      their name says, they store each request with tinyscrapy's codec
      (L{tinyscrapy.frontier.codec}: data only, the callbacks by name), never as a pickle
      or with marshal, so nothing read back can run code.

Each has C{push(obj)}, C{pop()} (None when empty), C{peek()}, C{close()} and C{len()}.
"""

import os
import sqlite3
from collections import deque


class _MemoryQueue:
    """Objects in a deque; L{pop} takes from the end C{_pop_left} says."""

    _pop_left = True

    def __init__(self):
        self._items = deque()

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        return cls()

    def push(self, obj):
        self._items.append(obj)

    def pop(self):
        """@return: the next object, or None when the queue is empty."""
        if not self._items:
            return None
        return self._items.popleft() if self._pop_left else self._items.pop()

    def peek(self):
        """@return: what L{pop} would return, left in the queue (None when empty)."""
        if not self._items:
            return None
        return self._items[0] if self._pop_left else self._items[-1]

    def close(self):
        self._items.clear()

    def __len__(self):
        return len(self._items)


class FifoMemoryQueue(_MemoryQueue):
    """First in, first out, in memory."""


class LifoMemoryQueue(_MemoryQueue):
    """Last in, first out, in memory."""

    _pop_left = False


class _DiskQueue:
    """
    Requests in a SQLite file at C{path}, stored with tinyscrapy's codec: what L{pop}
    gives back has its callbacks bound to C{crawler.spider} again.

    @raise tinyscrapy.exceptions.UnserializableRequest: from L{push}, for a request the
        codec cannot store (a callback that is not a method of the spider, C{meta}
        holding something other than plain data).
    @raise tinyscrapy.frontier.codec.StoredRequestError: from L{pop}, for an entry this
        code did not write.
    """

    _order = "ASC"

    def __init__(self, crawler, key):
        self.spider = getattr(crawler, "spider", None)
        self.path = os.fspath(key)
        folder = os.path.dirname(os.path.abspath(self.path))
        os.makedirs(folder, exist_ok=True)
        os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o600))
        self._db = sqlite3.connect(self.path)
        self._db.execute("CREATE TABLE IF NOT EXISTS queue "
                         "(id INTEGER PRIMARY KEY AUTOINCREMENT, item BLOB)")
        self._db.commit()

    @classmethod
    def from_crawler(cls, crawler, key, *args, **kwargs):
        return cls(crawler, key)

    def push(self, request):
        from tinyscrapy.frontier.codec import request_to_bytes
        data = request_to_bytes(request, self.spider)
        self._db.execute("INSERT INTO queue (item) VALUES (?)", (data,))
        self._db.commit()

    def _next(self):
        return self._db.execute(
            f"SELECT id, item FROM queue ORDER BY id {self._order} LIMIT 1").fetchone()

    def pop(self):
        """@return: the next request, or None when the queue is empty."""
        row = self._next()
        if row is None:
            return None
        self._db.execute("DELETE FROM queue WHERE id = ?", (row[0],))
        self._db.commit()
        return self._load(row[1])

    def peek(self):
        """@return: what L{pop} would return, left in the queue (None when empty)."""
        row = self._next()
        return None if row is None else self._load(row[1])

    def _load(self, data):
        from tinyscrapy.frontier.codec import request_from_bytes
        return request_from_bytes(data, self.spider)

    def close(self):
        """Close the file; the requests stay in it for the next queue at this path."""
        self._db.close()

    def __len__(self):
        return self._db.execute("SELECT COUNT(*) FROM queue").fetchone()[0]


class _FifoDiskQueue(_DiskQueue):
    """First in, first out, on disk."""


class _LifoDiskQueue(_DiskQueue):
    """Last in, first out, on disk."""

    _order = "DESC"


# Scrapy's names: one store under all of them (see the module's docstring)
PickleFifoDiskQueue = type("PickleFifoDiskQueue", (_FifoDiskQueue,), {})
PickleLifoDiskQueue = type("PickleLifoDiskQueue", (_LifoDiskQueue,), {})
MarshalFifoDiskQueue = type("MarshalFifoDiskQueue", (_FifoDiskQueue,), {})
MarshalLifoDiskQueue = type("MarshalLifoDiskQueue", (_LifoDiskQueue,), {})
PickleFifoSQLiteQueue = type("PickleFifoSQLiteQueue", (_FifoDiskQueue,), {})
PickleLifoSQLiteQueue = type("PickleLifoSQLiteQueue", (_LifoDiskQueue,), {})
MarshalFifoSQLiteQueue = type("MarshalFifoSQLiteQueue", (_FifoDiskQueue,), {})
MarshalLifoSQLiteQueue = type("MarshalLifoSQLiteQueue", (_LifoDiskQueue,), {})
