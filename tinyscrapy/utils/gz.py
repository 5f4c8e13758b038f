"""
Scrapy's C{scrapy.utils.gz}: L{gunzip}, bounded (a gzip bomb stops at the size limit
instead of filling the memory), for gzipped sitemaps and feeds. The bodies of downloads are
decoded as they arrive, by L{tinyscrapy.downloadermiddlewares.httpcompression}.
"""

import zlib
from gzip import BadGzipFile

GZIP_MAGIC = b"\x1f\x8b\x08"
_CHUNK = 64 * 1024


class SizeExceeded(ValueError):
    """A gzip body grew past the size limit while it was decompressed."""


class NotGzip(BadGzipFile, zlib.error):
    """The data is not gzip at all (Scrapy's C{BadGzipFile}, and zlib's error)."""


def gunzip(data, max_size=0):
    """
    Decompress gzip C{data} (several members one after another included), at most
    C{max_size} bytes of output; a truncated stream gives what it decoded.

    @param max_size: the most bytes to produce; 0: no limit.
    @return: the decompressed bytes.
    @raise SizeExceeded: the output would pass C{max_size}.
    @raise NotGzip: C{data} is not gzip at all (a C{gzip.BadGzipFile} and a
        C{zlib.error}).
    """
    out = []
    size = 0
    while True:
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            while not inflater.eof:
                # max_length bounds each step: a bomb never inflates more than one chunk
                chunk = inflater.decompress(data, _CHUNK)
                data = inflater.unconsumed_tail
                if not chunk and not data:
                    break  # the input ran out before the end: truncated
                size += len(chunk)
                if max_size and size > max_size:
                    raise SizeExceeded(f"more than {max_size} bytes once decompressed")
                out.append(chunk)
        except zlib.error as e:
            if not out:
                raise NotGzip(str(e)) from None
            break  # truncated or trailing garbage: keep what was read
        data = inflater.unused_data if inflater.eof else b""
        if data[:2] != GZIP_MAGIC[:2]:
            break
    return b"".join(out)


def gzip_magic_number(response):
    """Whether C{response}'s body starts as a gzip stream does."""
    return response.body[:3] == GZIP_MAGIC
