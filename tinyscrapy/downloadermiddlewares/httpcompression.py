"""
HTTP compression, as Scrapy's C{scrapy.downloadermiddlewares.httpcompression}: the
L{HttpCompressionMiddleware} asks for the encodings this installation can decode
(C{Accept-Encoding}), and the bounded decoders of C{Content-Encoding} -- gzip, deflate,
and br / zstd when their optional packages (C{brotli} 1.2 or later, C{zstandard}) are
installed -- turn the body back into what the server meant.

The decoding happens as the body arrives, in the download handler
(L{tinyscrapy.core.downloader.handlers.http11}), not in C{process_response} as Scrapy's:
that is how the size limits hold for decoded bytes. Why not twisted's C{GzipDecoder}
(which treq always installs): it inflates each network read in one call, so a 64 KiB read
of a gzip bomb becomes about 64 MiB at once, whatever the size limit. Here every decoder
is asked for at most what the limit still allows (C{decompress(data, max_length)},
brotli's C{output_buffer_limit}, zstandard's C{write_size}), the output is counted piece
by piece as it is produced, and the ratio of decoded to compressed bytes is watched: a
body that inflates past C{ratio} times its compressed size (once past C{grace} bytes) is
refused as a bomb, whatever the limit.

    decoder = body_decoder("gzip", maxsize=2**30, ratio=100, grace=2**20)
    for chunk in network_reads:
        pieces = decoder.feed(chunk)      # raises ResponseTooLarge, DecompressionBomb,
    pieces = decoder.finish()             # or ContentDecodingError

L{body_decoder} returns None for an identity body (nothing to decode).

Each stage (one per encoding) pushes its output into a sink: the next stage, or, for the
last one, the counter that enforces the limits. A sink has C{room()} (the most bytes the
next step may produce) and C{put(piece)} (which raises when a limit is crossed), so no
stage ever holds more than one step of output. A stage's C{flush} raises
L{ContentDecodingError} when the body ended before its stream did: neither brotli nor
zstandard says so by itself when fed a stream piece by piece (zstandard's stream writer
not at all, hence L{ZstdFrames}).
"""

import zlib

from tinyscrapy.exceptions import (
    ContentDecodingError,
    DecompressionBomb,
    NotConfigured,
    ResponseTooLarge,
)

#: The most bytes one decoding step may produce.
STEP = 1 << 17
#: The most compressed bytes fed to the decoder at once.
SLICE = 1 << 12


def accept_encoding():
    """The C{Accept-Encoding} value for what this installation can decode."""
    return ", ".join(name.decode() for name in ACCEPTED_ENCODINGS)


class HttpCompressionMiddleware:
    """
    Ask for compressed bodies: C{Accept-Encoding} on every request that has none, naming
    the encodings this installation decodes. Off with C{COMPRESSION_ENABLED = False}
    (then the handler decodes nothing either).
    """

    def __init__(self, encodings=None):
        self.accept_encoding = (encodings or accept_encoding()).encode("latin-1")

    @classmethod
    def from_crawler(cls, crawler):
        """@raise NotConfigured: C{COMPRESSION_ENABLED} is off."""
        if not crawler.settings.getbool("COMPRESSION_ENABLED", True):
            raise NotConfigured("COMPRESSION_ENABLED is off")
        return cls()

    def process_request(self, request, spider=None):
        headers = request.headers
        if b"Accept-Encoding" not in headers:
            headers[b"Accept-Encoding"] = self.accept_encoding


def body_decoder(content_encoding, maxsize=0, ratio=0, grace=0):
    """
    A decoder for a body sent with the C{Content-Encoding} header C{content_encoding}.

    @param content_encoding: the header's value (C{str}), e.g. C{"gzip"} or
        C{"deflate, gzip"} (applied in that order, so decoded in reverse).
    @param maxsize: the most decoded bytes allowed (0: no limit).
    @param ratio: the most decoded bytes per compressed byte (0: no check).
    @param grace: decoded bytes allowed before the ratio is checked.
    @return: a L{BodyDecoder}, or None when there is nothing to decode.
    @raise ContentDecodingError: an encoding this installation cannot decode.
    """
    codings = [name.strip().lower() for name in content_encoding.split(",")]
    codings = [name for name in codings if name and name != "identity"]
    if not codings:
        return None
    return BodyDecoder([_stage(name) for name in reversed(codings)], maxsize, ratio, grace)


def _stage(name):
    if name in ("gzip", "x-gzip"):
        return _Zlib(16 + zlib.MAX_WBITS, name)
    if name == "deflate":
        return _Deflate()
    if name == "br" and brotli is not None:
        return Brotli()
    if name == "zstd" and zstandard is not None:
        return Zstd(write_size=STEP)
    raise ContentDecodingError(f"unsupported Content-Encoding {name!r}")


class BodyDecoder:
    """
    Decodes a body chunk by chunk through one stage per encoding, within the limits.
    It is the sink of the last stage.

    @ivar wire: compressed bytes fed so far.
    @ivar size: decoded bytes produced so far.
    """

    def __init__(self, stages, maxsize, ratio, grace):
        self.maxsize = maxsize
        self.ratio = ratio
        self.grace = grace
        self.wire = 0
        self.size = 0
        self._out = []
        self._stages = stages
        self._sinks = [self]  # the sink of each stage: the next stage, or self at the end
        for stage in reversed(stages[1:]):
            self._sinks.insert(0, _Relay(stage, self._sinks[0]))

    def feed(self, data):
        """
        Decode one chunk of the body as received.

        @return: a list of decoded pieces (possibly empty).
        @raise ResponseTooLarge: the decoded body crossed C{maxsize}.
        @raise DecompressionBomb: it crossed C{ratio} times the compressed size.
        @raise ContentDecodingError: the data is not what its encoding says.
        """
        # fed in slices, so that C{wire} is never far ahead of what was decoded and the
        # ratio check cannot be fooled by one large read
        decode, sink = self._stages[0].decode, self._sinks[0]
        for start in range(0, len(data), SLICE):
            piece = data[start:start + SLICE] if len(data) > SLICE else data
            self.wire += len(piece)
            self._guarded(decode, piece, sink)
        out, self._out = self._out, []
        return out

    def finish(self):
        """The body is complete: flush every stage. @return: the last decoded pieces."""
        if self.wire:  # no body at all (HEAD, 204, 304): nothing to decode
            for stage, sink in zip(self._stages, self._sinks, strict=True):
                self._guarded(stage.flush, sink)
        out, self._out = self._out, []
        return out

    def _guarded(self, step, *args):
        try:
            step(*args)
        except (ResponseTooLarge, ContentDecodingError):
            raise
        except Exception as e:  # zlib.error, brotli.error, zstandard.ZstdError, ...
            names = "/".join(stage.name for stage in self._stages)
            raise ContentDecodingError(f"the body is not valid {names}: {e}") from None

    def room(self):
        """The most bytes the next step may produce: what the limit leaves, plus one (one
        byte over is enough to know the limit is crossed), at most L{STEP}."""
        if not self.maxsize:
            return STEP
        return max(1, min(STEP, self.maxsize - self.size + 1))

    def put(self, piece):
        """Keep one decoded piece; refuse the body when a limit is crossed."""
        self.size += len(piece)
        if self.maxsize and self.size > self.maxsize:
            raise ResponseTooLarge(
                f"decoded body is larger than the limit {self.maxsize} "
                f"({self.wire} bytes on the wire)")
        if self.ratio and self.size > self.grace and self.size > self.ratio * self.wire:
            raise DecompressionBomb(
                f"decoded body is more than {self.ratio:g} times its compressed size "
                f"({self.size} bytes from {self.wire})")
        self._out.append(piece)


class _Relay:
    """The sink between two stages: passes each piece straight on to the next stage."""

    def __init__(self, stage, sink):
        self.stage = stage
        self.sink = sink

    def room(self):
        return STEP

    def put(self, piece):
        self.stage.decode(piece, self.sink)


class _Zlib:
    """
    gzip (C{wbits=31}), zlib (C{wbits=15}) or raw deflate (C{wbits=-15}). Concatenated
    gzip members are decoded in turn, as C{gzip.decompress} does; other bytes after the
    end of the stream are ignored, as browsers do.
    """

    def __init__(self, wbits, name):
        self.wbits = wbits
        self.name = name
        self.inflater = zlib.decompressobj(wbits)
        self.ended = False

    def decode(self, data, sink):
        """Inflate C{data} into C{sink}, never more than C{sink.room()} bytes a step."""
        while data and not self.ended:
            if self.inflater.eof:
                if self.wbits > 16 and data[:2] == b"\x1f\x8b":  # another gzip member
                    self.inflater = zlib.decompressobj(self.wbits)
                else:  # trailing bytes after the stream: ignored
                    self.ended = True
                    return
            inflater = self.inflater
            piece = inflater.decompress(data, sink.room())
            if piece:
                sink.put(piece)
            data = inflater.unused_data if inflater.eof else inflater.unconsumed_tail

    def flush(self, sink):
        """The input ended: check the stream did too. (Everything was inflated already:
        C{decompress} is called until no input is left.)"""
        if not self.ended and not self.inflater.eof:
            raise ContentDecodingError(f"the {self.name} body ends early")


class _Deflate(_Zlib):
    """C{Content-Encoding: deflate}: zlib-wrapped as the RFC says, or raw deflate as
    some servers send it; the first two bytes decide."""

    def __init__(self):
        super().__init__(zlib.MAX_WBITS, "deflate")
        self.start = b""
        self.decided = False

    def decode(self, data, sink):
        if not self.decided:
            self.start += data
            if len(self.start) < 2:
                return
            data, self.start, self.decided = self.start, b"", True
            if data[0] & 0x0F != 8 or (data[0] << 8 | data[1]) % 31:  # no zlib header
                self.wbits = -zlib.MAX_WBITS
                self.inflater = zlib.decompressobj(self.wbits)
        super().decode(data, sink)

    def flush(self, sink):
        if not self.decided:
            raise ContentDecodingError("the deflate body ends early")
        super().flush(sink)

def bounded_brotli(module):
    """C{module} (brotli) when it bounds each step's output (1.2 or later), else None:
    an older brotli returns all a chunk decodes to at once, gigabytes for a bomb, so br
    is then neither asked for nor decoded."""
    if module is None or not hasattr(module.Decompressor(), "can_accept_more_data"):
        return None
    return module


try:  # optional
    import brotli
except ImportError:  # pragma: no cover - depends on the environment
    brotli = None
brotli = bounded_brotli(brotli)
try:  # optional
    import zstandard
except ImportError:  # pragma: no cover - depends on the environment
    zstandard = None

#: The encodings this installation can decode, as Scrapy names its list.
ACCEPTED_ENCODINGS = [b"gzip", b"deflate"] + ([b"br"] if brotli is not None else []) \
    + ([b"zstd"] if zstandard is not None else [])


class Brotli:
    """br through C{brotli.Decompressor}, each step bounded by C{output_buffer_limit}
    (brotli 1.2 or later: an older brotli is not used at all)."""

    name = "br"

    def __init__(self):
        self.decompressor = brotli.Decompressor()

    def decode(self, data, sink):
        decompressor = self.decompressor
        piece = decompressor.process(data, output_buffer_limit=sink.room())
        while True:
            if piece:
                sink.put(piece)
            if decompressor.can_accept_more_data():
                return
            piece = decompressor.process(b"", output_buffer_limit=sink.room())

    def flush(self, sink):
        if not self.decompressor.is_finished():
            raise ContentDecodingError("the br body ends early")


class Zstd:
    """
    zstd through zstandard's C{stream_writer}, which hands its output over in pieces of
    at most C{write_size} bytes: the sink counts each one as it comes. The writer does
    not tell where a frame ends, so L{ZstdFrames} follows the input alongside.
    """

    name = "zstd"

    def __init__(self, write_size):
        self.output = _ZstdOutput()
        self.writer = zstandard.ZstdDecompressor().stream_writer(
            self.output, write_size=write_size, write_return_read=True)
        self.frames = ZstdFrames()

    def decode(self, data, sink):
        self.output.sink = sink
        self.writer.write(data)
        self.frames.feed(data)  # after the decoder, whose errors say more

    def flush(self, sink):
        self.output.sink = sink
        self.writer.flush()
        if not self.frames.complete():
            raise ContentDecodingError("the zstd body ends early (in the middle of a frame)")


class _ZstdOutput:
    """The file-like object zstandard writes decoded pieces to."""

    sink = None

    def write(self, piece):
        self.sink.put(bytes(piece))
        return len(piece)

    def flush(self):
        pass


#: A zstd frame starts with this (little-endian); a skippable frame with 0x184D2A5?.
ZSTD_MAGIC = 0xFD2FB528
SKIPPABLE_MAGIC = 0x184D2A50
#: Frame_Content_Size field sizes by its flag (the first one: when not single-segment).
_FCS_SIZES = (0, 2, 4, 8)
_DICTIONARY_ID_SIZES = (0, 1, 2, 4)


class ZstdFrames:
    """
    Follows a zstd stream by its frame and block headers alone (RFC 8878, section 3.1),
    passing over block contents, to tell whether the input stopped where a frame ends.

    It reads one header at a time: a magic number (4 bytes), the frame header descriptor
    (1 byte) and the rest of the frame header, then block headers (3 bytes each: last
    block flag, type, size) until the last block and the optional 4-byte checksum; a
    skippable frame is a magic number, a 4-byte size and that many bytes.
    """

    def __init__(self):
        self.read = self._magic  # what to do with the next header once it is all here
        self.want = 4            # the length of that header
        self.header = b""        # its bytes so far
        self.skip = 0            # content bytes to pass over first
        self.frames = 0          # frames seen to their end
        self.checksum = False    # the current frame ends with a 4-byte checksum

    def complete(self):
        """True when the input so far ends exactly where a frame ends."""
        return (self.frames > 0 and self.read == self._magic and not self.header
                and not self.skip)

    def feed(self, data):
        """Follow C{data}. @raise ContentDecodingError: it is not a zstd frame."""
        position, end = 0, len(data)
        while position < end:
            if self.skip:
                step = min(self.skip, end - position)
                self.skip -= step
                position += step
                continue
            step = min(self.want - len(self.header), end - position)
            self.header += data[position:position + step]
            position += step
            if len(self.header) == self.want:
                header, self.header = self.header, b""
                self.read(header)

    def _expect(self, read, want):
        self.read, self.want = read, want

    def _magic(self, header):
        magic = int.from_bytes(header, "little")
        if magic == ZSTD_MAGIC:
            self._expect(self._descriptor, 1)
        elif magic & 0xFFFFFFF0 == SKIPPABLE_MAGIC:
            self._expect(self._skippable_size, 4)
        else:
            raise ContentDecodingError(f"the body is not valid zstd: magic {magic:#010x}")

    def _descriptor(self, header):
        descriptor = header[0]
        single_segment = descriptor >> 5 & 1
        self.checksum = bool(descriptor & 4)
        fcs_size = _FCS_SIZES[descriptor >> 6] or single_segment  # 1 byte when single
        window_size = 0 if single_segment else 1
        # at least one byte follows: the window descriptor, or the content size
        self._expect(self._rest_of_frame_header,
                     window_size + _DICTIONARY_ID_SIZES[descriptor & 3] + fcs_size)

    def _rest_of_frame_header(self, header):
        self._expect(self._block, 3)

    def _block(self, header):
        value = int.from_bytes(header, "little")
        last, kind, size = value & 1, value >> 1 & 3, value >> 3
        self.skip = 1 if kind == 1 else size  # an RLE block holds one byte, repeated
        if last:
            self.skip += 4 if self.checksum else 0
            self.frames += 1
            self._expect(self._magic, 4)

    def _skippable_size(self, header):
        self.skip = int.from_bytes(header, "little")
        self.frames += 1
        self._expect(self._magic, 4)
