"""
L{FileDownloadHandler}: C{file:} URLs, read from the local disk, as Scrapy's handler.

Off by default in tinyscrapy (C{DOWNLOAD_HANDLERS_BASE} maps C{file} to None): a page of a
site must not make the crawler read the machine's files (a redirect is never followed to
C{file:}, and a link to one is dropped by the scope). A project that crawls local files
enables it::

    DOWNLOAD_HANDLERS = {"file": "tinyscrapy.core.downloader.handlers.file.FileDownloadHandler"}

The file is read in the reactor's thread pool; its response class comes from the file
name and the body, as in Scrapy.
"""

from tinyscrapy.core.downloader.handlers.base import BaseDownloadHandler


class FileDownloadHandler(BaseDownloadHandler):
    """The C{file} scheme's handler, when a project names it in C{DOWNLOAD_HANDLERS}."""

    def download_request(self, request, spider=None):
        """
        Read the file of C{request.url} in a thread.

        @return: a Deferred firing with a response of status 200 holding the file's
            bytes; it errbacks with the C{OSError} of a file that cannot be read
            (C{FileNotFoundError}, C{IsADirectoryError}, ...).
        """
        from twisted.internet.threads import deferToThreadPool
        from w3lib.url import file_uri_to_path
        path = file_uri_to_path(request.url)
        reactor = self.crawler.reactor
        d = deferToThreadPool(reactor, reactor.getThreadPool(), _read, path)
        d.addCallback(_cb_read, request, path)
        return d


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def _cb_read(body, request, path):
    from tinyscrapy.responsetypes import response_class
    return response_class(url=path, body=body)(request.url, 200, None, body, request=request)
