"""
The decoding stages of the optional C{Content-Encoding}s br (package C{brotli}) and zstd
(package C{zstandard}), for L{tinyscrapy.download.contentencoding}. Each stage has
C{decode(data, sink)}, C{flush(sink)} and C{name}, and never hands the sink more than
C{sink.room()} bytes at once where its package allows it (see L{Brotli} for brotli < 1.2).

A stage's C{flush} raises L{ContentDecodingError} when the body ended before its stream
did, as the gzip stage does: neither package says so by itself when it is fed a stream
piece by piece (zstandard's stream writer not at all, hence L{ZstdFrames}).
"""

from tinyscrapy.errors import ContentDecodingError

try:  # optional
    import brotli
except ImportError:  # pragma: no cover - depends on the environment
    brotli = None
try:  # optional
    import zstandard
except ImportError:  # pragma: no cover - depends on the environment
    zstandard = None


class Brotli:
    """
    br through C{brotli.Decompressor}.

    With brotli >= 1.2 each step is bounded by C{output_buffer_limit}. Older versions
    have no output bound: C{process(data)} returns everything C{data} decodes to, which
    for a bomb is gigabytes from a few kilobytes. There the input is fed one byte at a time:
    a brotli meta-block holds at most 16 MiB, and one byte cannot both finish one
    meta-block and describe the next (a meta-block header alone is longer than 8 bits),
    so one step yields at most 16 MiB, and the limits are checked after each. The price
    is about a microsecond per compressed byte, some 50 times brotli 1.2's.

    @ivar bounded: True when the installed brotli bounds its output (1.2 or later).
    """

    name = "br"

    def __init__(self):
        self.decompressor = brotli.Decompressor()
        self.bounded = hasattr(self.decompressor, "can_accept_more_data")

    def decode(self, data, sink):
        decompressor = self.decompressor
        if not self.bounded:
            self._decode_bytewise(data, sink)
            return
        piece = decompressor.process(data, output_buffer_limit=sink.room())
        while True:
            if piece:
                sink.put(piece)
            if decompressor.can_accept_more_data():
                return
            piece = decompressor.process(b"", output_buffer_limit=sink.room())

    def _decode_bytewise(self, data, sink):
        """brotli < 1.2: one byte a step, so that one step yields at most a meta-block."""
        process = self.decompressor.process
        for start in range(len(data)):
            piece = process(data[start:start + 1])
            if piece:
                sink.put(piece)

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
