"""
L{HttpProxyMiddleware}: which proxy a request goes through, and with which credentials.

    - C{meta["proxy"]} names a proxy for one request (C{http://user:pass@host:port});
      C{meta["proxy"] = None} sends it direct whatever the environment says.
    - Otherwise the environment's C{http_proxy} / C{https_proxy} (by the URL's scheme) apply,
      except for the hosts C{no_proxy} names, exactly as in urllib, requests and Scrapy
      (loopback hosts too: with a proxy in the environment, add C{127.0.0.1,localhost} to
      C{no_proxy} to crawl local sites directly). The proxies found are logged at start, so
      an environment variable never changes a crawl silently.

Credentials in a proxy URL become a C{Proxy-Authorization} header and leave the URL; the
header is dropped when the request's proxy changes (a redirect to another scheme, a spider
changing C{meta["proxy"]}), and L{tinyscrapy.download.tunnel} sends it only to the proxy: on the
C{CONNECT} for https, never to a site.
"""

import logging
import os
from urllib.parse import urlsplit
from urllib.request import proxy_bypass_environment

from tinyscrapy.download.tunnel import parse_proxy
from tinyscrapy.errors import NotConfigured

logger = logging.getLogger(__name__)

class HttpProxyMiddleware:
    """
    Set C{meta["proxy"]} and C{Proxy-Authorization} on each request.

    @ivar proxies: scheme to C{(proxy URL without credentials, Proxy-Authorization or None)},
        from the environment.
    @ivar no_proxy: the environment's C{no_proxy}.
    """

    def __init__(self, environ=None, auth_encoding="latin-1"):
        environ = os.environ if environ is None else environ
        self.auth_encoding = auth_encoding
        self.proxies = {}
        for scheme in ("http", "https"):
            url = _env(environ, f"{scheme}_proxy")
            if url:
                try:
                    _, _, _, auth, clean = parse_proxy(url)
                except ValueError:
                    logger.warning("ignoring %s_proxy: not an http(s) proxy URL", scheme)
                    continue
                self.proxies[scheme] = (clean, auth)
                logger.info("%s URLs go through the proxy %s (from %s_proxy)",
                            scheme, clean, scheme)
        self.no_proxy = _env(environ, "no_proxy") or ""

    @classmethod
    def from_crawler(cls, crawler):
        settings = crawler.settings
        if not settings.getbool("HTTPPROXY_ENABLED"):
            raise NotConfigured("HTTPPROXY_ENABLED is off")
        return cls(auth_encoding=settings.get("HTTPPROXY_AUTH_ENCODING") or "latin-1")

    def process_request(self, request, spider):
        meta = request.meta
        if "proxy" in meta:
            if meta["proxy"] is not None:
                self._use(request, meta["proxy"], None)
        elif self.proxies:
            scheme, netloc = _scheme_netloc(request.url)
            found = self.proxies.get(scheme)
            if found is not None and not self._bypass(netloc):
                self._use(request, *found)
                meta["_scheme_proxy"] = True
        if meta.get("proxy") is None and "_auth_proxy" in meta:
            # no proxy any more: its credentials must not go anywhere
            meta.pop("_auth_proxy")
            request.headers.pop("Proxy-Authorization", None)

    def _use(self, request, proxy, auth):
        """Send C{request} through C{proxy}; C{auth} (or the URL's credentials) to it."""
        meta = request.meta
        try:
            _, _, _, url_auth, clean = parse_proxy(proxy, self.auth_encoding)
        except ValueError:
            return  # the fetcher reports the bad meta["proxy"] with the URL
        auth = url_auth or auth
        headers = request.headers
        if auth:
            headers["Proxy-Authorization"] = auth
            meta["_auth_proxy"] = clean
        elif meta.get("_auth_proxy") not in (None, clean):
            # credentials for another proxy (the proxy changed): never send them here
            headers.pop("Proxy-Authorization", None)
            meta.pop("_auth_proxy")
        meta["proxy"] = clean

    def _bypass(self, netloc):
        """True when C{no_proxy} names the host (or C{*})."""
        return bool(self.no_proxy) and bool(
            proxy_bypass_environment(netloc, {"no": self.no_proxy}))


def _env(environ, name):
    """C{name} or C{NAME} from the environment (the lower-case one wins, as in urllib)."""
    return environ.get(name) or environ.get(name.upper())


def _scheme_netloc(url):
    parts = urlsplit(url)
    return parts.scheme, parts.netloc.rpartition("@")[2]
