"""
The HTTP cache's policies and storages, at Scrapy's path (C{scrapy.extensions.httpcache}),
for L{tinyscrapy.downloadermiddlewares.httpcache.HttpCacheMiddleware}:

    - C{HTTPCACHE_POLICY}: L{DummyPolicy} (the default: every response stored, every entry
      served), L{RFC2616Policy} (HTTP's caching rules: C{Cache-Control}, C{Expires},
      validators, revalidation with C{If-None-Match} / C{If-Modified-Since});
    - C{HTTPCACHE_STORAGE}: L{FilesystemCacheStorage} (the default: one file per request
      fingerprint), L{DbmCacheStorage} (one C{dbm} database per spider,
      C{HTTPCACHE_DBM_MODULE}).

Both storages keep an entry in tinyscrapy's own format, as data only: a line of JSON (the
response's url, the request's, status, headers, the time it was stored, the body's
length), then the body as it is
(C{HTTPCACHE_GZIP}: the whole gzip-compressed, read back within the download limits).
Nothing read back is unpickled or run; a cache Scrapy wrote (pickles) is not read. An entry
that does not read back as one (cut short, edited, crafted), or whose URL is not the
request's, is a miss, logged once with its URL (L{CorruptEntry}, L{UnusableEntry}). The
cache's folders are C{0700} and its files C{0600}, as a job directory's: they hold pages
fetched with the crawl's cookies and credentials.
"""

import errno
import json
import logging
import os
import time
from email.utils import parsedate_to_datetime
from urllib.parse import quote, urlsplit

from tinyscrapy.http.headers import Headers
from tinyscrapy.responsetypes import response_for
from tinyscrapy.utils.misc import names_one_entry
from tinyscrapy.utils.request import request_fingerprint

logger = logging.getLogger(__name__)


class UnusableEntry(ValueError):
    """A cache entry this crawl cannot use: a miss; the entry stays."""


class CorruptEntry(UnusableEntry):
    """A cache entry that does not read back as one: a miss, and the entry goes."""


class MismatchedEntry(CorruptEntry):
    """A cache entry stored for another URL than the request's (a crafted entry, or a
    fingerprint shared by two URLs): a miss, and the entry goes."""


# policies


class DummyPolicy:
    """Scrapy's default policy: every request and response of a scheme not in
    C{HTTPCACHE_IGNORE_SCHEMES} is cached (but the statuses of
    C{HTTPCACHE_IGNORE_HTTP_CODES}), and an entry is always fresh (C{HTTPCACHE_EXPIRATION_SECS}
    is the storage's)."""

    def __init__(self, settings):
        self.ignore_schemes = [scheme.lower() for scheme in
                               settings.getlist("HTTPCACHE_IGNORE_SCHEMES")]
        self.ignore_http_codes = [int(code) for code in
                                  settings.getlist("HTTPCACHE_IGNORE_HTTP_CODES")]

    def should_cache_request(self, request):
        return _scheme(request) not in self.ignore_schemes

    def should_cache_response(self, response, request):
        return response.status not in self.ignore_http_codes

    def is_cached_response_fresh(self, cachedresponse, request):
        return True

    def is_cached_response_valid(self, cachedresponse, response, request):
        return True


class RFC2616Policy:
    """
    HTTP's caching rules, as Scrapy's policy of that name applies them: a response is
    stored when it says how long it stays fresh (C{max-age}, C{Expires}), or can be
    revalidated (C{ETag}, C{Last-Modified}), never with C{no-store}; a stored one is served
    while fresh, and otherwise asked for again with its validators: a C{304} (or a 5xx,
    unless it said C{must-revalidate}) keeps it.

    @cvar MAXAGE: the lifetime of a permanent redirect that says none (a year).
    """

    MAXAGE = 3600 * 24 * 365

    def __init__(self, settings):
        self.always_store = settings.getbool("HTTPCACHE_ALWAYS_STORE")
        self.ignore_schemes = [scheme.lower() for scheme in
                               settings.getlist("HTTPCACHE_IGNORE_SCHEMES")]
        self.ignore_response_cache_controls = [
            control.encode("latin-1") if isinstance(control, str) else control
            for control in settings.getlist("HTTPCACHE_IGNORE_RESPONSE_CACHE_CONTROLS")]

    def _controls(self, message, response=False):
        directives = parse_cachecontrol(message.headers.get(b"Cache-Control") or b"")
        if response:
            for ignored in self.ignore_response_cache_controls:
                directives.pop(ignored, None)
        return directives

    def should_cache_request(self, request):
        if _scheme(request) in self.ignore_schemes:
            return False
        return b"no-store" not in self._controls(request)

    def should_cache_response(self, response, request):
        controls = self._controls(response, True)
        if b"no-store" in controls or response.status == 304:
            return False
        if self.always_store:
            return True
        if b"max-age" in controls or b"Expires" in response.headers:
            return True
        if response.status in (300, 301, 308):  # kept a year, as browsers do
            return True
        if response.status in (200, 203, 401):  # without a lifetime: a validator
            return b"Last-Modified" in response.headers or b"ETag" in response.headers
        return False

    def is_cached_response_fresh(self, cachedresponse, request):
        controls = self._controls(cachedresponse, True)
        asked = self._controls(request)
        if b"no-cache" in controls or b"no-cache" in asked:
            return False
        now = time.time()
        lifetime = self._lifetime(cachedresponse, now)
        age = self._age(cachedresponse, now)
        wanted = _max_age(asked)
        if wanted is not None:
            lifetime = min(lifetime, wanted)
        if age < lifetime:
            return True
        if b"max-stale" in asked and b"must-revalidate" not in controls:
            stale = asked[b"max-stale"]
            if stale is None:
                return True
            try:
                if age < lifetime + max(0, int(stale)):
                    return True
            except ValueError:
                pass
        # stale: ask again, with the validators the entry has
        if b"Last-Modified" in cachedresponse.headers:
            request.headers[b"If-Modified-Since"] = cachedresponse.headers[b"Last-Modified"]
        if b"ETag" in cachedresponse.headers:
            request.headers[b"If-None-Match"] = cachedresponse.headers[b"ETag"]
        return False

    def is_cached_response_valid(self, cachedresponse, response, request):
        if response.status >= 500 and \
                b"must-revalidate" not in self._controls(cachedresponse, True):
            return True
        return response.status == 304

    def _lifetime(self, response, now):
        """Seconds C{response} stays fresh: max-age, else Expires - Date, else a tenth of
        its age since Last-Modified, else a year for a permanent redirect, else 0."""
        max_age = _max_age(self._controls(response, True))
        if max_age is not None:
            return max_age
        headers = response.headers
        date = rfc1123_to_epoch(headers.get(b"Date")) or now
        if b"Expires" in headers:
            expires = rfc1123_to_epoch(headers[b"Expires"])
            return max(0, expires - date) if expires else 0  # a bad Expires: in the past
        modified = rfc1123_to_epoch(headers.get(b"Last-Modified"))
        if modified and modified <= date:
            return (date - modified) / 10
        if response.status in (300, 301, 308):
            return self.MAXAGE
        return 0

    def _age(self, response, now):
        """Seconds since C{response} left the server: its Date, or its Age if larger."""
        date = rfc1123_to_epoch(response.headers.get(b"Date")) or now
        age = max(0.0, now - date)
        try:
            age = max(age, int(response.headers.get(b"Age") or b""))
        except ValueError:
            pass
        return age


def parse_cachecontrol(header):
    """C{Cache-Control} as a dict: C{b"public, max-age=3600"} is C{{b"public": None,
    b"max-age": b"3600"}} (names lower-cased)."""
    directives = {}
    for directive in header.split(b","):
        name, sep, value = directive.strip().partition(b"=")
        if name:
            directives[name.lower()] = value if sep else None
    return directives


def rfc1123_to_epoch(date_str):
    """An HTTP date (bytes or str) as seconds since the epoch, or None if it is not one."""
    if not date_str:
        return None
    try:
        text = date_str.decode("latin-1") if isinstance(date_str, bytes) else date_str
        return parsedate_to_datetime(text).timestamp()
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


def _max_age(directives):
    try:
        return max(0, int(directives[b"max-age"]))
    except (KeyError, TypeError, ValueError):
        return None


def _scheme(request):
    return request.url.partition(":")[0].lower()


# storages


class _EntryStorage:
    """
    What both storages share: the entry format, the fingerprint, the clock, the checks on
    what is read back, Scrapy's C{open_spider} / C{close_spider} /
    C{retrieve_response} / C{store_response}.

    @ivar expiration: seconds after which an entry is stale (C{HTTPCACHE_EXPIRATION_SECS});
        0: never.
    @ivar use_gzip: entries are stored gzip-compressed (C{HTTPCACHE_GZIP}).
    @ivar clock: gives the time entries are stored at and aged against (the crawler's
        reactor once open; a C{task.Clock} in tests).
    """

    def __init__(self, settings, clock=None):
        self.expiration = settings.getfloat("HTTPCACHE_EXPIRATION_SECS")
        self.use_gzip = settings.getbool("HTTPCACHE_GZIP")
        self.maxsize = settings.getint("DOWNLOAD_MAXSIZE")
        self.ratio = settings.getfloat("DOWNLOAD_MAXRATIO", 100.0)
        self.grace = settings.getint("DOWNLOAD_MAXRATIO_GRACE", 1 << 20)
        self.clock = clock
        self.fingerprint = request_fingerprint

    def open_spider(self, spider):
        """Take the crawl's clock (Scrapy's hook)."""
        crawler = getattr(spider, "crawler", None)
        if self.clock is None and crawler is not None:
            self.clock = crawler.reactor

    def close_spider(self, spider):
        """Nothing to release (Scrapy's hook; the dbm storage closes its database)."""

    def _now(self):
        if self.clock is None:
            return time.time()
        return self.clock.seconds()

    def retrieve_response(self, spider, request):
        """
        Scrapy's storage method: the cached response for C{request} (C{"cached"} not yet
        in its flags: the middleware adds it), or None when there is none, or it expired.

        @raise CorruptEntry: the entry does not read back as one, or is another URL's.
        @raise OSError: it cannot be read.
        """
        entry = self._read(spider.name, request)
        if entry is None:
            return None
        return self._response(request, *entry)

    def store_response(self, spider, request, response):
        """Scrapy's storage method: keep C{response} as C{request}'s entry.
        @raise OSError: it cannot be written."""
        self._write(spider.name, request, self._entry(request, response))

    def _entry(self, request, response):
        meta = {"url": response.url, "request_url": _stored_url(request),
                "status": response.status,
                "headers": {name.decode("latin-1"): [value.decode("latin-1") for value in values]
                            for name, values in response.headers.items()},
                "time": self._now(), "length": len(response.body)}
        data = json.dumps(meta).encode("utf-8") + b"\n" + response.body
        if self.use_gzip:
            import gzip
            data = gzip.compress(data, compresslevel=5)
        return data

    def _decode(self, data):
        """C{(meta, body)} of stored bytes. @raise CorruptEntry."""
        if self.use_gzip:
            from tinyscrapy.utils.gz import SizeExceeded, gunzip
            try:
                data = gunzip(data, self.maxsize + MAX_HEADER if self.maxsize else 0,
                              max_ratio=self.ratio, grace=self.grace)
            except SizeExceeded as e:
                raise UnusableEntry(str(e)) from None
            except Exception as e:  # zlib.error, EOFError
                raise CorruptEntry(f"not gzip ({e})") from None
        line, newline, body = data.partition(b"\n")
        if not newline or len(line) > MAX_HEADER:
            raise CorruptEntry("no entry header")
        meta = _header(line)
        if len(body) != meta["length"]:
            raise CorruptEntry(f"the body is not {meta['length']} bytes long")
        return meta, body

    def _response(self, request, meta, body):
        """The response an entry read back holds, checked against C{request}.
        @return: None when it expired. @raise MismatchedEntry: it is another URL's."""
        stored_for = meta.get("request_url", meta["url"])  # older entries: the response's
        if stored_for != _stored_url(request):
            raise MismatchedEntry(f"it was stored for {str(stored_for)[:200]}, not this URL")
        if 0 < self.expiration < self._now() - meta["time"]:
            return None
        headers = Headers(meta["headers"], encoding="latin-1")  # the bytes as received
        headers.encoding = "utf-8"
        request.meta["cache_timestamp"] = meta["time"]
        return response_for(meta["url"], meta["status"], headers, body, request)


class FilesystemCacheStorage(_EntryStorage):
    """
    Cached responses in files, one directory per spider, one file per request fingerprint:
    C{HTTPCACHE_DIR/<spider name>/<fp[:2]>/<fp>} (L{request_fingerprint} in 16 hex
    digits). The directory is C{HTTPCACHE_DIR} as it is when absolute, else under
    C{.tinyscrapy/} in the current directory (Scrapy uses C{.scrapy/}).

    @ivar directory: the root, C{HTTPCACHE_DIR} resolved (L{cache_dir}).
    """

    def __init__(self, settings, clock=None):
        super().__init__(settings, clock)
        self.directory = cache_dir(settings)

    @classmethod
    def at(cls, directory, clock=None, expiration=0.0, use_gzip=False):
        """A storage on C{directory} itself, built without settings (for a script, a
        test)."""
        from tinyscrapy.settings import Settings
        storage = cls(Settings({"HTTPCACHE_EXPIRATION_SECS": expiration,
                                "HTTPCACHE_GZIP": use_gzip}), clock)
        storage.directory = directory
        return storage

    def open_spider(self, spider):
        super().open_spider(spider)
        logger.debug("Using filesystem cache storage in %s", self.directory)

    def path(self, spider_name, request, fingerprint=None):
        """
        The file that holds C{request}'s entry (it may not exist).

        @param fingerprint: C{request}'s L{request_fingerprint}, when the caller has it
            already (each method takes it likewise); else it is computed.
        """
        if fingerprint is None:
            fingerprint = self.fingerprint(request)
        name = f"{fingerprint:016x}"
        return os.path.join(self.directory, name_in_directory(spider_name), name[:2], name)

    def retrieve(self, spider_name, request, fingerprint=None):
        """
        @return: the cached L{HttpResponse} for C{request}, with C{"cached"} in its
            C{flags}; None when there is none, or it is older than C{expiration}.
        @raise CorruptEntry: the file is there but does not read back as an entry, or is
            another URL's.
        @raise OSError: it cannot be read (not there, or a directory missing on its path,
            is no error: None).
        """
        entry = self._read(spider_name, request, fingerprint)
        if entry is None:
            return None
        response = self._response(request, *entry)
        if response is not None:
            response.flags.append("cached")
        return response

    def _read(self, spider_name, request, fingerprint=None):
        try:
            f = open(self.path(spider_name, request, fingerprint), "rb")
        except OSError as e:
            if e.errno in (errno.ENOENT, errno.ENOTDIR):
                return None
            raise
        with f:
            if self.use_gzip:
                return self._decode(f.read())
            return _read_entry(f)

    def store(self, spider_name, request, response, fingerprint=None):
        """
        Write C{response} as C{request}'s entry, replacing any older one. The file is
        written beside its place under a name of its own (C{<fp>XXXXXXXX.partial}) and
        renamed into it, so neither a crash midway nor another process writing the same
        entry at once ever leaves half an entry under the fingerprint: the last rename wins.

        @raise OSError: the directory or the file cannot be written.
        """
        self._write(spider_name, request, self._entry(request, response), fingerprint)

    def _write(self, spider_name, request, data, fingerprint=None):
        path = self.path(spider_name, request, fingerprint)
        directory, name = os.path.split(path)
        make_private_dirs(directory, self.directory)
        # a name of its own for every write: two crawls sharing the directory may store the
        # same entry at once, and each must rename only the file it wrote
        import tempfile  # here: the module is loaded by every crawl, the cache is often off
        fd, partial = tempfile.mkstemp(suffix=".partial", prefix=name, dir=directory)  # 0600
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(partial, path)
        except OSError:
            _remove(partial)
            raise

    def remove(self, spider_name, request, fingerprint=None):
        """Remove C{request}'s entry, if it can be."""
        _remove(self.path(spider_name, request, fingerprint))


class DbmCacheStorage(_EntryStorage):
    """
    Cached responses in one C{dbm} database per spider (C{HTTPCACHE_DIR/<spider>.db},
    with the module C{HTTPCACHE_DBM_MODULE}), keyed by request fingerprint, each value an
    entry in tinyscrapy's format (Scrapy pickles its values: a database Scrapy wrote is not
    read, its entries are misses).
    """

    def __init__(self, settings, clock=None):
        super().__init__(settings, clock)
        from importlib import import_module
        self.directory = cache_dir(settings)
        self.dbmodule = import_module(settings.get("HTTPCACHE_DBM_MODULE") or "dbm")
        self.db = None

    def open_spider(self, spider):
        super().open_spider(spider)
        make_private_dirs(self.directory, self.directory)
        path = os.path.join(self.directory, name_in_directory(f"{spider.name}.db"))
        self.db = self.dbmodule.open(path, "c", 0o600)
        logger.debug("Using DBM cache storage in %s", path)

    def close_spider(self, spider):
        if self.db is not None:
            self.db.close()
            self.db = None

    def _key(self, request):
        return f"{self.fingerprint(request):016x}".encode("ascii")

    def _read(self, spider_name, request, fingerprint=None):
        try:
            data = self.db.get(self._key(request))
        except Exception as e:  # the dbm module's own error: a damaged database
            raise CorruptEntry(f"the database could not be read ({e})") from None
        if data is None:
            return None
        return self._decode(bytes(data))

    def _write(self, spider_name, request, data, fingerprint=None):
        self.db[self._key(request)] = data

    def remove(self, spider_name, request, fingerprint=None):
        try:
            del self.db[self._key(request)]
        except (KeyError, OSError):
            pass

    def path(self, spider_name, request, fingerprint=None):
        """Where C{request}'s entry is (the database, and its key), for a log line."""
        return f"{os.path.join(self.directory, spider_name + '.db')}[{self._key(request)}]"


def cache_dir(settings):
    """
    The directory of C{HTTPCACHE_DIR}: an absolute path as it is, a relative one under
    C{.tinyscrapy/} in the current directory (Scrapy uses C{.scrapy/}).
    """
    path = os.path.expanduser(settings.get("HTTPCACHE_DIR") or "httpcache")
    if os.path.isabs(path):
        return path
    return os.path.join(os.getcwd(), ".tinyscrapy", path)


def make_private_dirs(directory, root):
    """
    Make C{directory} if missing, each folder from C{root} down to it C{0700}
    (C{makedirs} would give the ones above the last the umask's mode); the folders above
    C{root} are made as C{makedirs} makes them, and those that were there are left as they
    are.

    @raise OSError: one cannot be made.
    """
    directory, root = os.path.abspath(directory), os.path.abspath(root)
    if os.path.isdir(directory):
        return
    missing = []
    each = directory
    while each != root and each.startswith(root + os.sep) and len(missing) < 64:
        missing.insert(0, each)
        each = os.path.dirname(each)
    missing.insert(0, root)
    os.makedirs(os.path.dirname(root), exist_ok=True)
    for each in missing:
        try:
            os.mkdir(each, 0o700)
        except FileExistsError:
            if not os.path.isdir(each):  # a file in the way: as makedirs would say it
                raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR),
                                         each) from None
            continue
        os.chmod(each, 0o700)  # the umask may have taken bits off, never added


def error_kind(error):
    """C{"ENOSPC"} for an C{OSError} with that errno, else the exception's class name."""
    return errno.errorcode.get(getattr(error, "errno", None), type(error).__name__)


def _remove(path):
    try:
        os.remove(path)
    except OSError:
        pass


def _stored_url(request):
    """The URL an entry of C{request} is stored under: the request's, less its fragment
    (the response's URL at the cache's place in the chain)."""
    url = request.url
    return url.partition("#")[0] if "#" in url else url


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
    if not line.endswith(b"\n"):
        raise CorruptEntry("no entry header")
    meta = _header(line)
    length = meta["length"]
    body = f.read(length)
    if len(body) != length or f.read(1):
        raise CorruptEntry(f"the body is not {length} bytes long")
    return meta, body


def _header(line):
    """The entry header of C{line}. @raise CorruptEntry: it is not one (L{_check_header})."""
    try:
        meta = json.loads(line)
    except ValueError:  # UnicodeDecodeError included
        raise CorruptEntry("its first line is not JSON") from None
    if not isinstance(meta, dict):
        raise CorruptEntry("no entry header")
    _check_header(meta)
    return meta


def _check_header(meta):
    """
    @raise CorruptEntry: C{meta} is not what L{FilesystemCacheStorage.store} writes: a
        URL (an http(s) one with a host), a status in 100-599, headers as a dict of C{str} names to
        lists of C{str}, a time and a length of zero or more.
    """
    url = meta.get("url")
    if not isinstance(url, str) or not _is_url(url):
        raise CorruptEntry(f"its url {url!r} is not a URL")
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


def _is_url(url):
    """Whether C{url} is an absolute URL (an http(s) one with a host)."""
    try:
        parts = urlsplit(url)
        if parts.scheme in ("http", "https"):
            return bool(parts.hostname)
        return bool(parts.scheme)
    except ValueError:  # a bad port or IPv6 literal
        return False


def name_in_directory(name):
    """C{name} (a spider's) as one entry of the cache directory: unchanged when it can be
    one, else percent-encoded, so that no name (C{../../evil}, C{..}, an absolute path)
    reaches outside C{HTTPCACHE_DIR}."""
    if names_one_entry(name) and not name.startswith("%"):
        return name
    return "%" + quote(name, safe="").replace(".", "%2E")
