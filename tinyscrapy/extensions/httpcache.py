"""
L{FilesystemCacheStorage}: the files of L{tinyscrapy.downloadermiddlewares.httpcache}, one per
request fingerprint: C{DIR/<spider name>/<fp[:2]>/<fp>}, holding a line of JSON (url,
status, headers, the time it was stored, the body's length), then the body as it is.
"""

import errno
import json
import os
from urllib.parse import urlsplit

from tinyscrapy.http.headers import Headers
from tinyscrapy.responsetypes import response_for
from tinyscrapy.utils.request import request_fingerprint

# the process's umask, read once (it can only be read by setting it)
_UMASK = os.umask(0o022)
os.umask(_UMASK)


class UnusableEntry(ValueError):
    """A cache entry this crawl cannot use: a miss; the file stays."""


class CorruptEntry(UnusableEntry):
    """A cache file that does not read back as an entry: a miss, and the file goes."""


class FilesystemCacheStorage:
    """
    Cached responses in files, one directory per spider, one file per request fingerprint.

    @ivar directory: the root, C{HTTPCACHE_DIR} resolved
        (L{tinyscrapy.downloadermiddlewares.httpcache.cache_dir}).
    @ivar expiration: seconds after which an entry is stale; 0: never.
    """

    def __init__(self, directory, clock, expiration=0.0):
        self.directory = directory
        self.clock = clock
        self.expiration = expiration

    def path(self, spider_name, request, fingerprint=None):
        """
        The file that holds C{request}'s entry (it may not exist).

        @param fingerprint: C{request}'s L{request_fingerprint}, when the caller has it
            already (each method takes it likewise); else it is computed.
        """
        if fingerprint is None:
            fingerprint = request_fingerprint(request)
        name = f"{fingerprint:016x}"
        return os.path.join(self.directory, spider_name, name[:2], name)

    def retrieve(self, spider_name, request, fingerprint=None):
        """
        @return: the cached L{HttpResponse} for C{request}, with C{"cached"} in its
            C{flags}; None when there is none, or it is older than C{expiration}.
        @raise CorruptEntry: the file is there but does not read back as an entry.
        @raise OSError: it cannot be read (not there, or a directory missing on its
            path, is no error: None).
        """
        try:
            f = open(self.path(spider_name, request, fingerprint), "rb")
        except OSError as e:
            if e.errno in (errno.ENOENT, errno.ENOTDIR):
                return None
            raise
        with f:
            meta, body = _read_entry(f)
        if 0 < self.expiration < self.clock.seconds() - meta["time"]:
            return None
        headers = Headers(meta["headers"], encoding="latin-1")  # the bytes as received
        headers.encoding = "utf-8"
        return response_for(meta["url"], meta["status"], headers, body, request,
                            flags=["cached"])

    def store(self, spider_name, request, response, fingerprint=None):
        """
        Write C{response} as C{request}'s entry, replacing any older one. The file is
        written beside its place under a name of its own (C{<fp>XXXXXXXX.partial}) and
        renamed into it, so neither a crash midway nor another process writing the same
        entry at once ever leaves half an entry under the fingerprint: the last rename wins.

        @raise OSError: the directory or the file cannot be written.
        """
        path = self.path(spider_name, request, fingerprint)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        meta = {"url": response.url, "status": response.status,
                "headers": {name.decode("latin-1"): [value.decode("latin-1") for value in values]
                            for name, values in response.headers.items()},
                "time": self.clock.seconds(),
                "length": len(response.body)}
        directory, name = os.path.split(path)
        # a name of its own for every write: two crawls sharing the directory may store the
        # same entry at once, and each must rename only the file it wrote
        import tempfile  # here: the module is loaded by every crawl, the cache is often off
        fd, partial = tempfile.mkstemp(suffix=".partial", prefix=name, dir=directory)
        try:
            os.fchmod(fd, 0o666 & ~_UMASK)  # mkstemp's 0600, back to what open() gives
            with os.fdopen(fd, "wb") as f:
                f.write(json.dumps(meta).encode("utf-8") + b"\n")
                f.write(response.body)
            os.replace(partial, path)
        except OSError:
            _remove(partial)
            raise

    def remove(self, spider_name, request, fingerprint=None):
        """Remove C{request}'s entry, if it can be."""
        _remove(self.path(spider_name, request, fingerprint))


def error_kind(error):
    """C{"ENOSPC"} for an C{OSError} with that errno, else the exception's class name."""
    return errno.errorcode.get(getattr(error, "errno", None), type(error).__name__)


def _remove(path):
    try:
        os.remove(path)
    except OSError:
        pass


#: The longest header line read: a garbage file without a newline is not read whole.
MAX_HEADER = 1 << 20


def _read_entry(f):
    """
    @return: C{(meta dict, body bytes)} read from the cache file C{f}: its header line,
        then exactly its body, read once (no copy of it is made).
    @raise CorruptEntry: it is not an entry L{FilesystemCacheStorage.store} wrote.
    @raise OSError: reading failed.
    """
    line = f.readline(MAX_HEADER)
    try:
        meta = json.loads(line)
    except ValueError:  # UnicodeDecodeError included
        raise CorruptEntry("its first line is not JSON") from None
    if not line.endswith(b"\n") or not isinstance(meta, dict):
        raise CorruptEntry("no entry header")
    _check_header(meta)
    length = meta["length"]
    body = f.read(length)
    if len(body) != length or f.read(1):
        raise CorruptEntry(f"the body is not {length} bytes long")
    return meta, body


def _check_header(meta):
    """
    @raise CorruptEntry: C{meta} is not what L{FilesystemCacheStorage.store} writes: an
        http(s) URL with a host, a status in 100-599, headers as a dict of C{str} names to
        lists of C{str}, a time and a length of zero or more.
    """
    url = meta.get("url")
    if not isinstance(url, str) or not _is_http_url(url):
        raise CorruptEntry(f"its url {url!r} is not an http(s) URL")
    status = meta.get("status")
    if type(status) is not int or not 100 <= status <= 599:  # bool is no status
        raise CorruptEntry(f"its status {status!r} is not in 100-599")
    headers = meta.get("headers")
    if not isinstance(headers, dict) or not all(
            isinstance(values, list) and all(isinstance(v, str) for v in values)
            for values in headers.values()):
        raise CorruptEntry("its headers are not names with lists of strings")
    stored = meta.get("time")
    if type(stored) not in (int, float):
        raise CorruptEntry(f"its time {stored!r} is not a number")
    length = meta.get("length")
    if type(length) is not int or length < 0:
        raise CorruptEntry(f"its length {length!r} is not a size")


def _is_http_url(url):
    """Whether C{url} is an http(s) URL with a host."""
    try:
        parts = urlsplit(url)
        return parts.scheme in ("http", "https") and bool(parts.hostname)
    except ValueError:  # a bad port or IPv6 literal
        return False
