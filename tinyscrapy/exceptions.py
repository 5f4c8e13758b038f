"""
Scrapy's C{scrapy.exceptions}, at the same path: the decisions a spider, a middleware or a
pipeline raises, Scrapy 2.19's download failures (L{CannotResolveHostError},
L{DownloadTimeoutError}, L{DownloadConnectionRefusedError}, ...: the downloader raises
them where Scrapy does) and L{ScrapyDeprecationWarning}. They are defined, with
tinyscrapy's finer kinds of C{IgnoreRequest}, in L{tinyscrapy.errors}.

This module only re-exports.
"""

from tinyscrapy.errors import (
    CannotResolveHostError,
    CloseSpider,
    ContractFail,
    DontCloseSpider,
    DownloadCancelledError,
    DownloadConnectionRefusedError,
    DownloadFailedError,
    DownloadTimeoutError,
    DropItem,
    IgnoreRequest,
    NotConfigured,
    NotSupported,
    ResponseDataLossError,
    ScrapyDeprecationWarning,
    StopDownload,
    UnsupportedURLSchemeError,
    UsageError,
)

__all__ = ["CannotResolveHostError", "CloseSpider", "ContractFail", "DontCloseSpider",
           "DownloadCancelledError", "DownloadConnectionRefusedError", "DownloadFailedError",
           "DownloadTimeoutError", "DropItem", "IgnoreRequest", "NotConfigured", "NotSupported",
           "ResponseDataLossError", "ScrapyDeprecationWarning", "StopDownload",
           "UnsupportedURLSchemeError", "UsageError"]
