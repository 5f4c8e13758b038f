"""
Scrapy's C{scrapy.exceptions}, at the same path: the decisions a spider, a middleware or a
pipeline raises. They are defined, with tinyscrapy's finer kinds of C{IgnoreRequest}, in
L{tinyscrapy.errors}.

This module only re-exports.
"""

from tinyscrapy.errors import (
    CloseSpider,
    DontCloseSpider,
    DropItem,
    IgnoreRequest,
    NotConfigured,
    NotSupported,
    StopDownload,
    UsageError,
)

__all__ = ["CloseSpider", "DontCloseSpider", "DropItem", "IgnoreRequest", "NotConfigured",
           "NotSupported", "StopDownload", "UsageError"]
