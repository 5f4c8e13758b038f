"""
L{ImagesPipeline}, Scrapy's (C{scrapy.pipelines.images}): a L{FilesPipeline} for the
images an item lists in C{image_urls} (C{IMAGES_URLS_FIELD}), which the item gets back in
C{images} (C{IMAGES_RESULT_FIELD}). It needs Pillow (C{pip install 'tinyscrapy[images]'});
without it, enabling the pipeline stops the start with one line.

Each image is stored as JPEG, as Scrapy converts it (a transparent PNG or WebP, or a
palette image, on white; another mode converted to RGB; a JPEG kept as it came), at
C{full/<SHA-1 of the URL>.jpg} under C{IMAGES_STORE}, and its thumbnails
(C{IMAGES_THUMBS = {"small": (50, 50)}}, each fitting in that box, proportions kept) at
C{thumbs/<name>/<SHA-1>.jpg}. An image smaller than C{IMAGES_MIN_WIDTH} x
C{IMAGES_MIN_HEIGHT} is refused (a failed file); C{IMAGES_EXPIRES} (90 days) says how long
a stored image is up to date.
"""

import functools
import hashlib
from io import BytesIO

from tinyscrapy.exceptions import ConfigurationError
from tinyscrapy.pipelines.files import FilesPipeline, _md5sum, _requests_for, _with_results
from tinyscrapy.pipelines.media import FileException, _resolved
from tinyscrapy.utils.python import to_bytes


class ImageException(FileException):
    """An image cannot be used (too small, not an image)."""


class ImagesPipeline(FilesPipeline):
    """
    Downloads, converts and stores an item's images, and their thumbnails.

    @ivar thumbs: C{IMAGES_THUMBS}: thumbnail name to C{(width, height)}.
    @ivar min_width: C{IMAGES_MIN_WIDTH}.
    @ivar min_height: C{IMAGES_MIN_HEIGHT}.
    """

    MEDIA_NAME = "image"
    MIN_WIDTH = 0
    MIN_HEIGHT = 0
    EXPIRES = 90
    THUMBS = {}
    DEFAULT_IMAGES_URLS_FIELD = "image_urls"
    DEFAULT_IMAGES_RESULT_FIELD = "images"

    def __init__(self, store_uri, download_func=None, *, crawler):
        """@raise ConfigurationError: Pillow is not installed, or no store is set."""
        try:
            from PIL import Image, ImageOps
        except ImportError:
            raise ConfigurationError("ImagesPipeline requires installing Pillow 8.3.2 or later: "
                                  "pip install 'tinyscrapy[images]'") from None
        self._Image = Image
        self._ImageOps = ImageOps
        super().__init__(store_uri, crawler=crawler)
        settings = crawler.settings
        resolve = functools.partial(self._key_for_pipe, base_class_name="ImagesPipeline",
                                    settings=settings)
        self.expires = settings.getint(resolve("IMAGES_EXPIRES"), self.EXPIRES)
        if not hasattr(self, "IMAGES_RESULT_FIELD"):
            self.IMAGES_RESULT_FIELD = self.DEFAULT_IMAGES_RESULT_FIELD
        if not hasattr(self, "IMAGES_URLS_FIELD"):
            self.IMAGES_URLS_FIELD = self.DEFAULT_IMAGES_URLS_FIELD
        self.images_urls_field = settings.get(resolve("IMAGES_URLS_FIELD"),
                                              self.IMAGES_URLS_FIELD)
        self.images_result_field = settings.get(resolve("IMAGES_RESULT_FIELD"),
                                                self.IMAGES_RESULT_FIELD)
        self.min_width = settings.getint(resolve("IMAGES_MIN_WIDTH"), self.MIN_WIDTH)
        self.min_height = settings.getint(resolve("IMAGES_MIN_HEIGHT"), self.MIN_HEIGHT)
        self.thumbs = settings.get(resolve("IMAGES_THUMBS"), self.THUMBS)

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler.settings["IMAGES_STORE"], crawler=crawler)

    async def file_downloaded(self, response, request, info, *, item=None):
        return await self.image_downloaded(response, request, info, item=item)

    async def image_downloaded(self, response, request, info, *, item=None):
        """Store the image and its thumbnails. @return: the MD5 of the stored image."""
        checksum = None
        for path, image, buf in self.get_images(response, request, info, item=item):
            if checksum is None:
                buf.seek(0)
                checksum = _md5sum(buf)
            width, height = image.size
            await _resolved(self.store.persist_file(
                path, buf, info, meta={"width": width, "height": height},
                headers={"Content-Type": "image/jpeg"}))
        return checksum

    def get_images(self, response, request, info, *, item=None):
        """
        C{(path, image, buffer)} of the image, then of each thumbnail.

        @raise ImageException: the image is smaller than the minimum size.
        """
        path = self.file_path(request, response=response, info=info, item=item)
        original = self._Image.open(BytesIO(response.body))
        transposed = self._ImageOps.exif_transpose(original)
        width, height = transposed.size
        if width < self.min_width or height < self.min_height:
            raise ImageException(f"Image too small ({width}x{height} < "
                                 f"{self.min_width}x{self.min_height})")
        image, buf = self.convert_image(transposed, response_body=BytesIO(response.body))
        yield path, image, buf
        for thumb_id, size in self.thumbs.items():
            thumb_path = self.thumb_path(request, thumb_id, response=response, info=info,
                                         item=item)
            thumb_image, thumb_buf = self.convert_image(image, size, response_body=buf)
            yield thumb_path, thumb_image, thumb_buf

    def convert_image(self, image, size=None, *, response_body):
        """
        C{image} as an RGB JPEG (a thumbnail fitting C{size}, when given).

        @param response_body: the downloaded bytes, kept as they are for a JPEG at full size.
        @return: C{(image, buffer of its JPEG bytes)}.
        """
        Image = self._Image
        if image.format in {"PNG", "WEBP"} and image.mode == "RGBA":
            background = Image.new("RGBA", image.size, (255, 255, 255))
            background.paste(image, image)
            image = background.convert("RGB")
        elif image.mode == "P":
            image = image.convert("RGBA")
            background = Image.new("RGBA", image.size, (255, 255, 255))
            background.paste(image, image)
            image = background.convert("RGB")
        elif image.mode != "RGB":
            image = image.convert("RGB")
        if size:
            image = image.copy()
            resampling = getattr(Image, "Resampling", None)  # Pillow 9.1 and later
            image.thumbnail(size, resampling.LANCZOS if resampling else Image.ANTIALIAS)
        elif image.format == "JPEG":
            return image, response_body
        buf = BytesIO()
        image.save(buf, "JPEG")
        return image, buf

    def get_media_requests(self, item, info):
        """@return: a request for each URL of the item's C{images_urls_field}.
        @raise TypeError: that field is not a list."""
        return _requests_for(item, self.images_urls_field)

    def item_completed(self, results, item, info):
        """Set the item's C{images_result_field} to the images that could be had."""
        return _with_results(item, self.images_result_field, results)

    def file_path(self, request, response=None, info=None, *, item=None):
        """C{full/<SHA-1 of the URL>.jpg}."""
        guid = hashlib.sha1(to_bytes(request.url)).hexdigest()  # noqa: S324
        return f"full/{guid}.jpg"

    def thumb_path(self, request, thumb_id, response=None, info=None, *, item=None):
        """C{thumbs/<thumb_id>/<SHA-1 of the URL>.jpg}."""
        guid = hashlib.sha1(to_bytes(request.url)).hexdigest()  # noqa: S324
        return f"thumbs/{thumb_id}/{guid}.jpg"
