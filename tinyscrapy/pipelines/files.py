"""
L{FilesPipeline}, Scrapy's (C{scrapy.pipelines.files}): the files an item lists in
C{file_urls} (C{FILES_URLS_FIELD}) are downloaded and stored under C{FILES_STORE}, and
the item gets C{files} (C{FILES_RESULT_FIELD}): one dict per file that could be had, with
its C{url}, C{path} (relative to the store), C{checksum} (MD5) and C{status}::

    ITEM_PIPELINES = {"tinyscrapy.pipelines.files.FilesPipeline": 1}
    FILES_STORE = "/data/files"

A file is stored under a name made from the SHA-1 of its URL, with the URL's extension
(C{full/0a79c461a4062ac383dc4fade7bc09f1384a3910.pdf}): never a name from the page. A
stored file younger than C{FILES_EXPIRES} days (90) is not downloaded again (status
C{uptodate}). A response that is not a 200 (a 404; a redirect, unless
C{MEDIA_ALLOW_REDIRECTS}) or is empty is a failed file: logged, left out of C{files}.

L{FSFilesStore} writes each file atomically: into a temporary file beside it, renamed
over the name once complete, so a crawl killed mid-write leaves no half-written file
(only, at worst, a C{.part} file, which nothing reads). Files get the modes feed files
get (C{0666} less the umask). A file that cannot be written (a full disk) stops the
crawl with the finish reason C{files_error} (exit status 1), as a feed does: from then on
no request is acknowledged, so a C{--jobdir} run fetches those pages again. Stores that
need a network service (S3, GCS, FTP) are not in tinyscrapy (docs/differences.md).
"""

import functools
import hashlib
import logging
import mimetypes
import os
import secrets
import time
import warnings
from collections import defaultdict
from contextlib import suppress
from io import BytesIO
from pathlib import Path, PurePosixPath
from urllib.parse import urlparse

from tinyscrapy.exceptions import (
    ConfigurationError,
    IgnoreRequest,
    ScrapyDeprecationWarning,
    UsageError,
)
from tinyscrapy.http.request import NO_CALLBACK, Request
from tinyscrapy.pipelines.media import FileException as _FileException
from tinyscrapy.pipelines.media import (
    MediaPipeline,
    _MediaRequestFiltered,
    _resolved,
)
from tinyscrapy.utils.httpobj import urlparse_cached
from tinyscrapy.utils.misc import MIN_FREE_BYTES
from tinyscrapy.utils.python import to_bytes

logger = logging.getLogger(__name__)


def _md5sum(file):
    """The MD5 of a binary file object's content, read a piece at a time."""
    digest = hashlib.md5()  # noqa: S324 - a checksum, as Scrapy's, not a secret
    for chunk in iter(functools.partial(file.read, 8096), b""):
        digest.update(chunk)
    return digest.hexdigest()


def _referer(request):
    referer = request.headers.get("Referer")
    if isinstance(referer, bytes):
        return referer.decode("latin-1", "replace")
    return referer


class FSFilesStore:
    """
    Files in a folder of the local filesystem (a path, or a C{file://} URI).

    @ivar basedir: the folder.
    """

    def __init__(self, basedir):
        """@raise UsageError: the folder cannot be made, or its filesystem is full."""
        basedir = str(basedir)
        if "://" in basedir:
            basedir = basedir.split("://", 1)[1]
        self.basedir = basedir
        self.created_directories = defaultdict(set)
        try:
            self._mkdir(Path(basedir))
            free = os.statvfs(basedir)
        except OSError as e:
            raise UsageError(f"store {basedir}: cannot write to it ({e.strerror or e})") \
                from None
        if free.f_bavail * free.f_frsize < MIN_FREE_BYTES:
            raise UsageError(f"store {basedir}: its filesystem is full")

    def persist_file(self, path, buf, info, meta=None, headers=None):
        """
        Write C{buf}'s content to C{path}, atomically: a temporary file beside it, renamed
        over the name once written.

        @raise OSError: it cannot be written (the temporary file is removed).
        """
        absolute = self._get_filesystem_path(path)
        self._mkdir(absolute.parent, info)
        data = buf.getvalue()
        for _ in range(100):  # a free temporary name: at most a hundred tries
            partial = absolute.with_name(f".{absolute.name}.{secrets.token_hex(4)}.part")
            try:
                fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
                break
            except FileExistsError:
                continue
        else:
            raise FileExistsError(f"no free temporary name beside {absolute}")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(partial, absolute)
        except BaseException:
            with suppress(OSError):
                os.unlink(partial)
            raise

    def stat_file(self, path, info):
        """@return: C{{"last_modified": mtime, "checksum": md5}}, or C{{}}: not stored."""
        absolute = self._get_filesystem_path(path)
        try:
            last_modified = absolute.stat().st_mtime
            with absolute.open("rb") as f:
                checksum = _md5sum(f)
        except OSError:
            return {}
        return {"last_modified": last_modified, "checksum": checksum}

    def _get_filesystem_path(self, path):
        """
        C{path} (C{/}-separated, relative) under the store's folder.

        @raise FileException: it would leave the folder (C{..}, an absolute path).
        """
        parts = PurePosixPath(str(path)).parts
        if not parts or parts[0] == "/" or ".." in parts or "\\" in str(path):
            raise _FileException(f"file path {str(path)!r} would leave the store")
        return Path(self.basedir, *parts)

    def _mkdir(self, dirname, domain=None):
        seen = self.created_directories[domain] if domain else set()
        if str(dirname) not in seen:
            dirname.mkdir(parents=True, exist_ok=True)
            seen.add(str(dirname))


class _RemoteStore:
    """A store of Scrapy's that needs a network service tinyscrapy does not test against:
    building it stops the start with one line."""

    def __init__(self, uri):
        """@raise ConfigurationError: always."""
        raise ConfigurationError(f"store {uri!r}: {type(self).__name__} is not in tinyscrapy (it "
                              "needs a network service; docs/differences.md): use a local "
                              "folder, or a store class of your own in STORE_SCHEMES")


class S3FilesStore(_RemoteStore):
    """Scrapy's C{s3://} store: not in tinyscrapy."""


class GCSFilesStore(_RemoteStore):
    """Scrapy's C{gs://} store: not in tinyscrapy."""


class FTPFilesStore(_RemoteStore):
    """Scrapy's C{ftp://} store: not in tinyscrapy."""


class FilesPipeline(MediaPipeline):
    """
    Downloads the files an item lists (see the module docstring): C{new} ones, and
    C{expired} ones (older than C{FILES_EXPIRES} days); C{uptodate} ones are not.

    @cvar STORE_SCHEMES: a store class by URI scheme (C{""} and C{"file"}: L{FSFilesStore};
        Scrapy's S3, GCS and FTP stores are not in tinyscrapy).
    @ivar store: the store of C{FILES_STORE}.
    @ivar expires: days a stored file stays up to date.
    """

    MEDIA_NAME = "file"
    EXPIRES = 90
    STORE_SCHEMES = {"": FSFilesStore, "file": FSFilesStore, "s3": S3FilesStore,
                     "gs": GCSFilesStore, "ftp": FTPFilesStore}
    DEFAULT_FILES_URLS_FIELD = "file_urls"
    DEFAULT_FILES_RESULT_FIELD = "files"

    def __init__(self, store_uri, download_func=None, *, crawler):
        """@raise ConfigurationError: no store is set.
        @raise UsageError: the store's scheme is not one of L{STORE_SCHEMES}."""
        store_uri = str(store_uri) if store_uri else ""
        if not store_uri:
            setting = "IMAGES_STORE" if self.MEDIA_NAME == "image" else "FILES_STORE"
            raise ConfigurationError(f"{setting} setting must be set to a valid path (not empty) "
                                  f"to enable {type(self).__name__}.")
        settings = crawler.settings
        self.store = self._get_store(store_uri)
        resolve = functools.partial(self._key_for_pipe, base_class_name="FilesPipeline",
                                    settings=settings)
        self.expires = settings.getint(resolve("FILES_EXPIRES"), self.EXPIRES)
        if not hasattr(self, "FILES_URLS_FIELD"):
            self.FILES_URLS_FIELD = self.DEFAULT_FILES_URLS_FIELD
        if not hasattr(self, "FILES_RESULT_FIELD"):
            self.FILES_RESULT_FIELD = self.DEFAULT_FILES_RESULT_FIELD
        self.files_urls_field = settings.get(resolve("FILES_URLS_FIELD"), self.FILES_URLS_FIELD)
        self.files_result_field = settings.get(resolve("FILES_RESULT_FIELD"),
                                               self.FILES_RESULT_FIELD)
        self._store_failed = False
        super().__init__(crawler=crawler)

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler.settings["FILES_STORE"], crawler=crawler)

    def _get_store(self, uri):
        """@raise UsageError: no store class takes C{uri}'s scheme."""
        scheme = "file" if os.path.isabs(uri) else urlparse(uri).scheme
        cls = self.STORE_SCHEMES.get(scheme)
        if cls is None:
            raise UsageError(f"store {uri!r}: no store class for {scheme}:// URIs (known: "
                             + ", ".join(f"{s}://" for s in self.STORE_SCHEMES if s) + ")")
        return cls(uri)

    # what is up to date

    async def media_to_download(self, request, info, *, item=None):
        """@return: the file info of a stored file younger than C{expires} days, else
            None (download it)."""
        path = self.file_path(request, info=info, item=item)
        try:
            stat = await _resolved(self.store.stat_file(path, info))
        except Exception:
            logger.error("%s.store.stat_file", type(self).__name__, exc_info=True)
            return None
        last_modified = (stat or {}).get("last_modified")
        if not last_modified:
            return None
        if (time.time() - last_modified) / 86400 > self.expires:
            return None
        logger.debug("File (uptodate): Downloaded %(medianame)s from %(request)s referred in "
                     "<%(referer)s>", {"medianame": self.MEDIA_NAME, "request": request,
                                      "referer": _referer(request)})
        self.inc_stats("uptodate")
        return {"url": request.url, "path": path, "checksum": stat.get("checksum"),
                "status": "uptodate"}

    # a download's outcome

    def media_failed(self, failure, request, info):
        """
        @raise _MediaRequestFiltered: a rule refused the request (logged at DEBUG).
        @raise FileException: any other failure (logged as a warning, unless it is a
            L{FileException} of L{media_downloaded}'s, logged where it was raised).
        """
        referer = _referer(request)
        if isinstance(failure.value, _FileException):
            failure.raiseException()
        if isinstance(failure.value, IgnoreRequest):
            logger.debug(f"File (filtered): Not downloading {self.MEDIA_NAME} from {request} "
                         f"referred in <{referer}>: {failure.value}")
            raise _MediaRequestFiltered(str(failure.value)) from failure.value
        logger.warning(f"File (unknown-error): Error downloading {self.MEDIA_NAME} from "
                       f"{request} referred in <{referer}>: {failure.value}")
        raise _FileException

    async def media_downloaded(self, response, request, info, *, item=None):
        """
        Store a 200 response's body.

        @return: its file info.
        @raise FileException: another status, an empty body, or it cannot be stored.
        """
        referer = _referer(request)
        if response.status != 200:
            logger.warning("File (code: %(status)s): Error downloading file from %(request)s "
                           "referred in <%(referer)s>",
                           {"status": response.status, "request": request, "referer": referer})
            raise _FileException("download-error")
        if not response.body:
            logger.warning("File (empty-content): Empty file from %(request)s referred in "
                           "<%(referer)s>: no-content", {"request": request, "referer": referer})
            raise _FileException("empty-content")
        status = "cached" if "cached" in response.flags else "downloaded"
        logger.debug("File (%(status)s): Downloaded file from %(request)s referred in "
                     "<%(referer)s>", {"status": status, "request": request, "referer": referer})
        self.inc_stats(status)
        try:
            path = self.file_path(request, response=response, info=info, item=item)
            checksum = await _resolved(self.file_downloaded(response, request, info, item=item))
        except _FileException as e:
            logger.warning("File (error): Error processing file from %(request)s referred in "
                           "<%(referer)s>: %(errormsg)s",
                           {"request": request, "referer": referer, "errormsg": str(e)})
            raise
        except OSError as e:  # the store cannot be written: nothing more can be kept
            logger.warning("File (error): Error processing file from %(request)s referred in "
                           "<%(referer)s>: %(errormsg)s",
                           {"request": request, "referer": referer, "errormsg": str(e)})
            self._stop_for_store(e, request)
            raise _FileException(str(e)) from e
        except Exception as e:
            logger.error("File (unknown-error): Error processing file from %(request)s "
                         "referred in <%(referer)s>", {"request": request, "referer": referer},
                         exc_info=True)
            raise _FileException(str(e)) from e
        return {"url": request.url, "path": path, "checksum": checksum, "status": status}

    def _stop_for_store(self, error, request):
        """The store cannot be written (a full disk): stop the crawl (C{files_error}),
        acknowledging nothing more; logged once."""
        self.crawler.stats.inc_value("file_status_count/store_error")
        if not self._store_failed:
            self._store_failed = True
            logger.error("cannot store the %s from %s (%s: %s): the crawl stops "
                         "(files_error); its page and the later ones are not acknowledged "
                         "(a run with the same --jobdir fetches them again)", self.MEDIA_NAME,
                         request.url, type(error).__name__, error.strerror or error)
        engine = self.crawler.engine
        if engine is not None:
            engine.stop_for_error("files_error")

    def inc_stats(self, status):
        stats = self.crawler.stats
        stats.inc_value("file_count")
        stats.inc_value(f"file_status_count/{status}")

    async def _file_downloaded(self, response, request, info, *, item=None):
        path = self.file_path(request, response=response, info=info, item=item)
        buf = BytesIO(response.body)
        checksum = _md5sum(buf)
        buf.seek(0)
        await _resolved(self.store.persist_file(path, buf, info))
        return checksum

    # the hooks a subclass may change

    def get_media_requests(self, item, info):
        """@return: a request for each URL of the item's C{files_urls_field}.
        @raise TypeError: that field is not a list."""
        return _requests_for(item, self.files_urls_field)

    def file_downloaded(self, response, request, info, *, item=None):
        """Store the response's body. @return: its checksum (or an awaitable of it)."""
        return self._file_downloaded(response, request, info, item=item)

    def item_completed(self, results, item, info):
        """Set the item's C{files_result_field} to the files that could be had."""
        return _with_results(item, self.files_result_field, results)

    def file_path(self, request, response=None, info=None, *, item=None):
        """C{full/<SHA-1 of the URL><the URL's extension>}, the extension guessed from the
        URL when it has none known."""
        guid = hashlib.sha1(to_bytes(request.url)).hexdigest()  # noqa: S324
        extension = Path(urlparse_cached(request).path).suffix
        if extension not in mimetypes.types_map:
            extension = Path(request.url).suffix
        if extension not in mimetypes.types_map:
            extension = ""
            media_type = mimetypes.guess_type(request.url)[0]
            if media_type:
                extension = mimetypes.guess_extension(media_type) or ""
        return f"full/{guid}{extension}"


def _requests_for(item, field):
    """A request for each URL of C{item[field]}. @raise TypeError: it is not a list."""
    from itemadapter import ItemAdapter
    urls = ItemAdapter(item).get(field, [])
    if not isinstance(urls, list):
        raise TypeError(f"{field} must be a list of URLs, got {type(urls).__name__}. ")
    return [Request(url, callback=NO_CALLBACK) for url in urls]


def _with_results(item, field, results):
    """C{item} with C{item[field]} the file infos of the downloads that succeeded (an
    C{Item} that does not declare the field is left as it is). @return: the item."""
    from itemadapter import ItemAdapter
    with suppress(KeyError):
        ItemAdapter(item)[field] = [value for ok, value in results if ok]
    return item


def __getattr__(name):
    """C{FileException} moved to L{tinyscrapy.pipelines.media}, as in Scrapy."""
    if name == "FileException":
        warnings.warn("scrapy.pipelines.files.FileException is deprecated, use "
                      "scrapy.pipelines.media.FileException instead.",
                      ScrapyDeprecationWarning, stacklevel=2)
        return _FileException
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
