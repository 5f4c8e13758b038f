"""
Post-processing of feeds, Scrapy's (C{scrapy.extensions.postprocessing}): a feed's
C{postprocessing} option lists plugins (classes or dotted paths) that the exporter's bytes
pass through, in order, before they reach the file:

    FEEDS = {"items.jsonl.gz": {
        "format": "jsonlines",
        "postprocessing": ["tinyscrapy.extensions.postprocessing.GzipPlugin"],
        "gzip_compresslevel": 5}}

A plugin is built as C{plugin(file, feed_options)}, where C{file} is the next plugin (or
the feed's file), and has C{write(data)} and C{close()}; closing it finishes its own
output and closes C{file}, so that the next plugin finishes too (the feed's own file is
handed to the last plugin behind a guard that keeps it open: the feed's storage closes
it). L{GzipPlugin}, L{Bz2Plugin} and L{LZMAPlugin} compress,
each reading its options from the feed's (C{gzip_compresslevel}, C{gzip_mtime},
C{gzip_filename}; C{bz2_compresslevel}; C{lzma_format}, C{lzma_check}, C{lzma_preset},
C{lzma_filters}). A post-processed feed is complete once the crawl has closed it.
"""

import io
from bz2 import BZ2File
from gzip import GzipFile
from lzma import LZMAFile

from tinyscrapy.utils.misc import load_object


class GzipPlugin:
    """Compress with gzip (C{gzip_compresslevel}, 9 by default; C{gzip_mtime};
    C{gzip_filename})."""

    def __init__(self, file, feed_options):
        self.file = file
        self.feed_options = feed_options
        self.gzipfile = GzipFile(fileobj=file, mode="wb",
                                 compresslevel=feed_options.get("gzip_compresslevel", 9),
                                 mtime=feed_options.get("gzip_mtime"),
                                 filename=feed_options.get("gzip_filename"))

    def write(self, data):
        return self.gzipfile.write(data)

    def close(self):
        self.gzipfile.close()
        self.file.close()


class Bz2Plugin:
    """Compress with bzip2 (C{bz2_compresslevel}, 9 by default)."""

    def __init__(self, file, feed_options):
        self.file = file
        self.feed_options = feed_options
        self.bz2file = BZ2File(file, mode="wb",
                               compresslevel=feed_options.get("bz2_compresslevel", 9))

    def write(self, data):
        return self.bz2file.write(data)

    def close(self):
        self.bz2file.close()
        self.file.close()


class LZMAPlugin:
    """Compress with xz/LZMA (C{lzma_format}, C{lzma_check}, C{lzma_preset},
    C{lzma_filters}, as C{lzma.LZMAFile} takes them)."""

    def __init__(self, file, feed_options):
        self.file = file
        self.feed_options = feed_options
        self.lzmafile = LZMAFile(file, mode="wb", format=feed_options.get("lzma_format"),
                                 check=feed_options.get("lzma_check", -1),
                                 preset=feed_options.get("lzma_preset"),
                                 filters=feed_options.get("lzma_filters"))

    def write(self, data):
        return self.lzmafile.write(data)

    def close(self):
        self.lzmafile.close()
        self.file.close()


class PostProcessingManager(io.IOBase):
    """
    The file an exporter writes to when its feed is post-processed: each write goes
    through the plugins, the first listed first, and the last writes to C{file}.

    @ivar plugins: the plugin classes, in order.
    @ivar file: the feed's own file, which the last plugin writes to.
    @ivar head_plugin: the first plugin, which takes the exporter's bytes.
    """

    def __init__(self, plugins, file, feed_options):
        """@raise UsageError: a plugin's dotted path does not import."""
        self.plugins = [load_object(plugin) for plugin in plugins]
        self.file = file
        self.feed_options = feed_options
        self.head_plugin = self._get_head_plugin()

    def _get_head_plugin(self):
        """Build the plugins from the last (which writes to the file) to the first."""
        following = _KeptOpen(self.file)
        for plugin in reversed(self.plugins):
            following = plugin(following, self.feed_options)
        return following

    def write(self, data):
        """@return: what the first plugin returns (the number of bytes it took)."""
        return self.head_plugin.write(data)

    def tell(self):
        return self.file.tell()

    def close(self):
        """Close the plugins (each closes the next); the feed's file stays open."""
        self.head_plugin.close()

    def writable(self):
        return True


class _KeptOpen:
    """The feed's file as the last plugin sees it (its C{write}, C{tell}, C{name}, ...):
    closing it does nothing."""

    def __init__(self, file):
        self.file = file

    def __getattr__(self, name):
        return getattr(self.file, name)

    def close(self):
        """The feed's storage closes the file."""
