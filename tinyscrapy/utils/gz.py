"""
Scrapy's C{scrapy.utils.gz}: L{gunzip}, bounded (a gzip bomb stops at the size limit, or
as soon as it inflates past the ratio page bodies are held to, instead of filling the
memory), for gzipped sitemaps and feeds. The bodies of downloads are decoded as they
arrive, by L{tinyscrapy.downloadermiddlewares.httpcompression}.
"""

import zlib
from gzip import BadGzipFile

GZIP_MAGIC = b"\x1f\x8b\x08"
_CHUNK = 64 * 1024


class SizeExceeded(ValueError):
    """A gzip body grew past the size limit while it was decompressed."""


class NotGzip(BadGzipFile, zlib.error):
    """The data is not gzip at all (Scrapy's C{BadGzipFile}, and zlib's error)."""


def gunzip(data, max_size=0, *, max_ratio=0, grace=0):
    """
    Decompress gzip C{data} (several members one after another included), at most
    C{max_size} bytes of output, and at most C{max_ratio} times the compressed bytes read
    so far once past C{grace} bytes (C{DOWNLOAD_MAXRATIO} and C{DOWNLOAD_MAXRATIO_GRACE},
    as for page bodies); a truncated stream gives what it decoded.

    @param max_size: the most bytes to produce; 0: no limit.
    @param max_ratio: the most output bytes per compressed byte read; 0: no check.
    @param grace: output bytes allowed before the ratio is checked.
    @return: the decompressed bytes.
    @raise SizeExceeded: the output would pass C{max_size}, or the ratio.
    @raise NotGzip: C{data} is not gzip at all (a C{gzip.BadGzipFile} and a
        C{zlib.error}).
    """
    out = []
    size = 0
    total = len(data)
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
                    raise SizeExceeded(f"larger than the size limit ({max_size} bytes) once "
                                       f"decompressed")
                if max_ratio and size > grace and size > max_ratio * (total - len(data)):
                    raise SizeExceeded(f"more than {max_ratio:g} times its compressed size "
                                       f"once decompressed (a compression bomb: "
                                       f"DOWNLOAD_MAXRATIO)")
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
