"""
Content-Encoding: bounded decoding (L{tinyscrapy.downloadermiddlewares.httpcompression}) on its
own, then through the fetcher against servers sending gzip, deflate, bombs and bodies that lie.
"""

import gzip
import tracemalloc
import zlib
from types import SimpleNamespace

from twisted.internet import defer
from twisted.trial import unittest

from tinyscrapy.downloadermiddlewares import httpcompression as decoding
from tinyscrapy.downloadermiddlewares.httpcompression import (
    HttpCompressionMiddleware,
    accept_encoding,
    body_decoder,
    bounded_brotli,
)
from tinyscrapy.exceptions import (
    ContentDecodingError,
    DecompressionBomb,
    NotConfigured,
    ResponseTooLarge,
)
from tinyscrapy.http.request import Request
from tinyscrapy.utils.test import get_crawler

from .fetchutil import connections_closed, failure_of, get, make_fetcher
from .helpers import serve
from .servers import CheapGzipBomb, Echo, Gzip, GzipBomb, Page

TEXT = b"".join(b"<p>line %d of a page that compresses well</p>\n" % i for i in range(2000))


def decode_all(encoding, blob, chunk=997, **limits):
    """Feed C{blob} in C{chunk}-byte reads; return the decoded bytes."""
    decoder = body_decoder(encoding, **limits)
    pieces = []
    for start in range(0, len(blob), chunk):
        pieces += decoder.feed(blob[start:start + chunk])
    pieces += decoder.finish()
    return b"".join(pieces)


def raw_deflate(data):
    compressor = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return compressor.compress(data) + compressor.flush()


def zero_bomb(size, read=1 << 16):
    """Gzip of C{size} zero bytes, in reads of C{read} bytes as a socket would give them
    (64 KiB of it inflate to 64 MiB)."""
    compressor = zlib.compressobj(wbits=31)
    zeros = bytes(1 << 20)
    pending = b""
    for _ in range(size >> 20):
        pending += compressor.compress(zeros)
        while len(pending) >= read:
            yield pending[:read]
            pending = pending[read:]
    yield pending + compressor.flush()


class BodyDecoderTests(unittest.TestCase):
    """The decoder alone, fed the way the network feeds it."""

    def test_gzip_in_small_reads(self):
        """gzip decodes the same whatever the read sizes."""
        blob = gzip.compress(TEXT)
        for chunk in (1, 7, 4096, len(blob)):
            self.assertEqual(decode_all("gzip", blob, chunk), TEXT)

    def test_deflate_zlib_and_raw(self):
        """deflate is accepted zlib-wrapped (the RFC) and raw (what some servers send)."""
        self.assertEqual(decode_all("deflate", zlib.compress(TEXT)), TEXT)
        self.assertEqual(decode_all("deflate", raw_deflate(TEXT)), TEXT)
        self.assertEqual(decode_all("deflate", raw_deflate(TEXT), chunk=1), TEXT)

    def test_gzip_members_and_trailing_bytes(self):
        """Concatenated gzip members are all decoded; zero padding after the end is not
        an error."""
        blob = gzip.compress(TEXT) + gzip.compress(b"tail") + b"\x00\x00"
        self.assertEqual(decode_all("gzip", blob), TEXT + b"tail")

    def test_stacked_encodings(self):
        """C{Content-Encoding: deflate, gzip} is undone in reverse order."""
        blob = gzip.compress(zlib.compress(TEXT))
        self.assertEqual(decode_all("deflate, gzip", blob, chunk=100), TEXT)

    def test_identity_needs_no_decoder(self):
        """identity (or nothing) means no decoder at all."""
        self.assertIsNone(body_decoder("identity"))
        self.assertIsNone(body_decoder(" , "))

    def test_lies_are_errors(self):
        """A plain body said to be gzip, a truncated stream, an unknown encoding."""
        for encoding, blob in [("gzip", TEXT), ("gzip", gzip.compress(TEXT)[:-30]),
                               ("deflate", b"\xff" * 50), ("x-gzip", b"\x1f\x8b\x08junk")]:
            with self.assertRaises(ContentDecodingError, msg=encoding):
                decode_all(encoding, blob)
        with self.assertRaises(ContentDecodingError):
            body_decoder("compress")

    def test_empty_body_is_fine(self):
        """An empty body (HEAD, 204) with a Content-Encoding decodes to nothing."""
        self.assertEqual(decode_all("gzip", b""), b"")

    def test_maxsize_applies_to_decoded_bytes(self):
        """The limit counts decoded bytes, and the decoder is never asked for more than
        the limit allows: it stops one byte over."""
        blob = gzip.compress(TEXT)
        self.assertEqual(decode_all("gzip", blob, maxsize=len(TEXT)), TEXT)
        decoder = body_decoder("gzip", maxsize=1000)
        with self.assertRaises(ResponseTooLarge):
            decoder.feed(blob)
        self.assertEqual(decoder.size, 1001)

    def test_bomb_memory_bounded_by_the_limit(self):
        """A 4 GiB zero bomb against an 8 MiB limit (ratio check off): refused, and the
        memory in use peaks near the limit, not near the bomb."""
        limit = 8 << 20
        decoder = body_decoder("gzip", maxsize=limit)
        kept = []
        tracemalloc.start()
        try:
            with self.assertRaises(ResponseTooLarge):
                for chunk in zero_bomb(4 << 30):
                    kept += decoder.feed(chunk)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        self.assertLessEqual(sum(map(len, kept)), limit)
        self.assertLess(peak, limit + (2 << 20))

    def test_ratio_refuses_a_bomb_early(self):
        """Past the grace bytes, output over ratio x input is a bomb, whatever the
        limit."""
        decoder = body_decoder("gzip", maxsize=1 << 30, ratio=100, grace=1 << 20)
        with self.assertRaises(DecompressionBomb):
            for chunk in zero_bomb(1 << 30):
                decoder.feed(chunk)
        self.assertLess(decoder.size, 2 << 20)

    def test_ratio_spares_ordinary_pages(self):
        """A large, repetitive but ordinary page (about 20:1) is not a bomb."""
        page = TEXT * 20
        blob = gzip.compress(page)
        self.assertEqual(decode_all("gzip", blob, ratio=100, grace=1 << 16), page)

    def test_accept_encoding_names_what_is_installed(self):
        """gzip and deflate always; br and zstd only with their packages."""
        names = accept_encoding().split(", ")
        self.assertEqual(names[:2], ["gzip", "deflate"])
        self.assertEqual("br" in names, decoding.brotli is not None)
        self.assertEqual("zstd" in names, decoding.zstandard is not None)


def needs(package):
    """Skip the test when the optional C{package} (an attribute of the decoders' module)
    is missing."""
    if getattr(decoding, package) is None:
        raise unittest.SkipTest(f"{package} is not installed (pip install '.[compression]')")
    return getattr(decoding, package)


def zstd_frames(zstandard):
    """Complete zstd bodies: with and without checksum and content size, in several
    frames, with a skippable frame; each with the bytes it decodes to."""
    skippable = (0x184D2A53).to_bytes(4, "little") + (5).to_bytes(4, "little") + b"hello"
    compressors = [zstandard.ZstdCompressor(level=level, write_checksum=checksum,
                                            write_content_size=size)
                   for level, checksum, size in [(3, False, True), (1, True, False),
                                                 (19, True, True)]]
    streamed = compressors[1].compressobj()
    return [(compressors[0].compress(TEXT), TEXT),
            (compressors[2].compress(TEXT), TEXT),
            (streamed.compress(TEXT) + streamed.flush(), TEXT),
            (compressors[0].compress(TEXT) + skippable + compressors[1].compress(b"tail"),
             TEXT + b"tail"),
            (compressors[1].compress(b""), b"")]


class OldBrotliDecompressor:
    """brotli < 1.2's C{Decompressor}: C{process(data)} with no output bound, and no
    C{can_accept_more_data}."""

    def process(self, data):
        raise AssertionError("an unbounded brotli is never used")

    def is_finished(self):
        return False


class BrotliZstdTests(unittest.TestCase):
    """The optional decoders, when their packages are installed."""

    def test_zstd_truncated_is_an_error(self):
        """A zstd body cut anywhere (in a block, a header, the checksum) fails as
        ContentDecodingError at its end, whatever the read sizes; whole ones decode."""
        zstandard = needs("zstandard")
        for blob, expected in zstd_frames(zstandard):
            for chunk in (1, 5, 997, len(blob)):
                self.assertEqual(decode_all("zstd", blob, chunk), expected)
                for cut in (1, 3, 4, 7, len(blob) // 2, len(blob) - 1):
                    with self.assertRaises(ContentDecodingError, msg=(len(blob), chunk, cut)):
                        decode_all("zstd", blob[:-cut], chunk)

    def test_zstd_error_messages(self):
        """A cut body says it ends early; bytes that are no zstd frame say so."""
        zstandard = needs("zstandard")
        blob = zstandard.ZstdCompressor().compress(TEXT)
        error = self.assertRaises(ContentDecodingError, decode_all, "zstd", blob[:-10])
        self.assertIn("the zstd body ends early", str(error))
        self.assertRaises(ContentDecodingError, decode_all, "zstd", TEXT)
        self.assertRaises(ContentDecodingError, decode_all, "zstd", blob + b"junk")

    def test_brotli_truncated_is_an_error(self):
        """A br body cut short fails as ContentDecodingError, as gzip and zstd do."""
        brotli = needs("brotli")
        blob = brotli.compress(TEXT)
        for cut in (1, len(blob) // 2):
            self.assertRaises(ContentDecodingError, decode_all, "br", blob[:-cut])

    def test_old_brotli_is_not_used(self):
        """A brotli before 1.2 (no output bound) is not used: br is neither asked for nor
        decoded, rather than decoded unbounded."""
        self.assertIsNone(bounded_brotli(SimpleNamespace(Decompressor=OldBrotliDecompressor)))
        self.assertIsNone(bounded_brotli(None))
        brotli = needs("brotli")
        self.assertIs(bounded_brotli(brotli), brotli)

    def test_brotli(self):
        """br decodes, and its bombs are bounded like gzip's."""
        brotli = needs("brotli")
        blob = brotli.compress(TEXT)
        self.assertEqual(decode_all("br", blob), TEXT)
        bomb = brotli.compress(bytes(16 << 20), quality=1)
        decoder = body_decoder("br", maxsize=1 << 20)
        with self.assertRaises(ResponseTooLarge):
            decoder.feed(bomb)
        self.assertLess(decoder.size, 2 << 20)

    def test_zstd(self):
        """zstd decodes, and its bombs are bounded like gzip's."""
        compressor = needs("zstandard").ZstdCompressor()
        self.assertEqual(decode_all("zstd", compressor.compress(TEXT)), TEXT)
        bomb = compressor.compress(bytes(64 << 20))
        decoder = body_decoder("zstd", maxsize=1 << 20)
        with self.assertRaises(ResponseTooLarge):
            decoder.feed(bomb)
        self.assertLess(decoder.size, 2 << 20)


class FetchDecodingTests(unittest.TestCase):
    """Through the fetcher, against a real server."""

    def setUp(self):
        self.server = serve(self)

    @defer.inlineCallbacks
    def test_gzip_page_decoded_and_counted(self):
        """The body is decoded, Content-Encoding dropped, and the stats keep wire and
        decoded bytes apart."""
        fetcher = make_fetcher(self)
        url = self.server.add("/", Gzip(TEXT))
        response = yield get(fetcher, url)
        self.assertEqual(response.body, TEXT)
        self.assertNotIn("Content-Encoding", response.headers)
        stats = fetcher.stats
        self.assertEqual(stats.get_value("downloader/response_bytes"), len(gzip.compress(TEXT)))
        self.assertEqual(stats.get_value("downloader/response_bytes_decoded"), len(TEXT))
        self.assertEqual(stats.get_value("httpcompression/response_count"), 1)

    @defer.inlineCallbacks
    def test_deflate_page(self):
        """deflate, raw or zlib-wrapped, is decoded."""
        fetcher = make_fetcher(self)
        for path, blob in [("/zlib", zlib.compress(TEXT)), ("/raw", raw_deflate(TEXT))]:
            url = self.server.add(path, Page(blob, headers={"content-encoding": "deflate"}))
            response = yield get(fetcher, url)
            self.assertEqual(response.body, TEXT)

    @defer.inlineCallbacks
    def test_accept_encoding_sent(self):
        """Accept-Encoding names what can be decoded; a request's own value wins; with
        COMPRESSION_ENABLED off nothing is asked for and nothing decoded."""
        fetcher = make_fetcher(self)
        middleware = HttpCompressionMiddleware()
        url = self.server.add("/echo", Echo())
        request = Request(url)
        middleware.process_request(request)
        response = yield fetcher.fetch(request)
        self.assertEqual(response.json()["headers"]["accept-encoding"], [accept_encoding()])
        request = Request(url, headers={"Accept-Encoding": "identity"})
        middleware.process_request(request)
        response = yield fetcher.fetch(request)
        self.assertEqual(response.json()["headers"]["accept-encoding"], ["identity"])
        crawler = get_crawler(settings_dict={"COMPRESSION_ENABLED": False})
        self.assertRaises(NotConfigured, HttpCompressionMiddleware.from_crawler, crawler)
        plain = make_fetcher(self, {"COMPRESSION_ENABLED": False})
        response = yield get(plain, url)
        self.assertNotIn("accept-encoding", response.json()["headers"])
        response = yield get(plain, self.server.add("/gz", Gzip(TEXT)))
        self.assertEqual(response.body, gzip.compress(TEXT, mtime=0))  # as sent

    @defer.inlineCallbacks
    def test_lying_encoding_fails_that_page_only(self):
        """A plain body sent as gzip is an error for that page; the next page is fine."""
        fetcher = make_fetcher(self)
        liar = self.server.add("/liar", Page(TEXT, headers={"content-encoding": "gzip"}))
        failure, _ = yield failure_of(get(fetcher, liar))
        self.assertIsInstance(failure, ContentDecodingError)
        response = yield get(fetcher, self.server.add("/ok", Gzip(TEXT)))
        self.assertEqual(response.body, TEXT)

    @defer.inlineCallbacks
    def test_truncated_zstd_fails_that_page_only(self):
        """A server sends a zstd body cut short (a whole HTTP response): that page fails
        with ContentDecodingError; the next one on the connection is fine."""
        compressor = needs("zstandard").ZstdCompressor()
        fetcher = make_fetcher(self)
        cut = compressor.compress(TEXT)[:-20]
        url = self.server.add("/cut", Page(cut, headers={"content-encoding": "zstd"}))
        failure, _ = yield failure_of(get(fetcher, url))
        self.assertIsInstance(failure, ContentDecodingError)
        self.assertIn("ends early", str(failure))
        whole = compressor.compress(TEXT)
        url = self.server.add("/whole", Page(whole, headers={"content-encoding": "zstd"}))
        response = yield get(fetcher, url)
        self.assertEqual(response.body, TEXT)

    @defer.inlineCallbacks
    def test_unknown_encoding_is_an_error(self):
        """An encoding that cannot be decoded is refused, not passed on as text."""
        fetcher = make_fetcher(self)
        url = self.server.add("/x", Page(TEXT, headers={"content-encoding": "x-unknown"}))
        failure, _ = yield failure_of(get(fetcher, url))
        self.assertIsInstance(failure, ContentDecodingError)

    @defer.inlineCallbacks
    def test_head_with_gzip_header(self):
        """A HEAD answer says gzip but has no body: not an error."""
        fetcher = make_fetcher(self)
        response = yield get(fetcher, self.server.add("/", Gzip(TEXT)), method="HEAD")
        self.assertEqual((response.status, response.body), (200, b""))

    @defer.inlineCallbacks
    def assert_bomb_refused(self, settings, expected, limit):
        fetcher = make_fetcher(self, settings)
        url = self.server.add("/bomb", CheapGzipBomb(16 << 30))
        tracemalloc.start()
        try:
            failure, _ = yield failure_of(get(fetcher, url))
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        self.assertIsInstance(failure, expected)
        self.assertLess(peak, limit)
        closed = yield connections_closed(self.server)
        self.assertTrue(closed, "the server still has the connection open")
        self.assertEqual(self.server.hits["/bomb"], 1)

    def test_gzip_bomb_cut_at_maxsize(self):
        """A 16 GiB bomb with the ratio check off: cut at DOWNLOAD_MAXSIZE (8 MiB), with
        memory bounded by the limit (server included), not by the bomb."""
        return self.assert_bomb_refused(
            {"DOWNLOAD_MAXSIZE": 8 << 20, "DOWNLOAD_MAXRATIO": 0}, ResponseTooLarge,
            limit=12 << 20)

    def test_gzip_bomb_refused_by_ratio(self):
        """The same bomb with the default 1 GiB limit: refused as a bomb after about
        1 MiB, memory staying far below the limit."""
        return self.assert_bomb_refused({}, DecompressionBomb, limit=4 << 20)

    @defer.inlineCallbacks
    def test_single_stream_bomb(self):
        """The classic bomb, one gzip stream compressed as it is sent (the server's own
        work bounds its size here): refused by the ratio check."""
        fetcher = make_fetcher(self)
        url = self.server.add("/bomb", GzipBomb(512 << 20))
        failure, _ = yield failure_of(get(fetcher, url))
        self.assertIsInstance(failure, DecompressionBomb)
