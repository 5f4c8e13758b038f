"""
Scrapy's C{scrapy.downloadermiddlewares} package, at the same path, for code that imports a
built-in downloader middleware (or its helpers) from it:
C{from tinyscrapy.downloadermiddlewares.retry import RetryMiddleware, get_retry_request}.

Each of Scrapy's submodules is tinyscrapy's module under a second name (an entry in
C{sys.modules}, as C{tinyscrapy.spiders.crawl} is): C{redirect}, C{retry}, C{cookies} and
C{httpauth}, C{httpcache} are L{tinyscrapy.middleware}'s modules of the same job;
C{defaultheaders} and C{useragent} are L{tinyscrapy.middleware.defaults}; C{httpproxy} is
L{tinyscrapy.middleware.proxy}; C{robotstxt} is L{tinyscrapy.scope.robots}. Scrapy's other
built-ins are done inside tinyscrapy (L{tinyscrapy.middleware.scrapypaths}).

This module only re-exports.
"""

import sys

from tinyscrapy.middleware import cookies, httpauth, httpcache, redirect, retry
from tinyscrapy.middleware import defaults as defaultheaders
from tinyscrapy.middleware import proxy as httpproxy
from tinyscrapy.scope import robots as robotstxt

useragent = defaultheaders

sys.modules[__name__ + ".cookies"] = cookies
sys.modules[__name__ + ".defaultheaders"] = defaultheaders
sys.modules[__name__ + ".httpauth"] = httpauth
sys.modules[__name__ + ".httpcache"] = httpcache
sys.modules[__name__ + ".httpproxy"] = httpproxy
sys.modules[__name__ + ".redirect"] = redirect
sys.modules[__name__ + ".retry"] = retry
sys.modules[__name__ + ".robotstxt"] = robotstxt
sys.modules[__name__ + ".useragent"] = useragent

__all__ = ["cookies", "defaultheaders", "httpauth", "httpcache", "httpproxy", "redirect",
           "retry", "robotstxt", "useragent"]
