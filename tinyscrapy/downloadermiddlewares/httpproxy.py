"""
L{HttpProxyMiddleware}: which proxy a request goes through, and with which credentials.

    - C{meta["proxy"]} names a proxy for one request (C{http://user:pass@host:port}); it is
      kept as written, less its credentials. C{meta["proxy"] = None} sends it direct
      whatever the environment says (so does an empty one, C{""} or C{"//"}, which is then
      set to None, as in Scrapy).
    - Otherwise the environment's C{http_proxy} / C{https_proxy} (by the URL's scheme) apply,
      except for the hosts C{no_proxy} names (read on each request), as in urllib, requests
      and Scrapy
      (loopback hosts too: with a proxy in the environment, add C{127.0.0.1,localhost} to
      C{no_proxy} to crawl local sites directly). The proxies found are logged at start, so
      an environment variable never changes a crawl silently.

Credentials in a proxy URL become a C{Proxy-Authorization} header and leave the URL; the header is
dropped when the request's proxy changes (a redirect to another scheme, a spider changing
C{meta["proxy"]}), and L{tinyscrapy.core.downloader.handlers.tunnel} sends it only to the proxy: on
the C{CONNECT} for https, never to a site.
"""

import logging
import os
from urllib.parse import urlsplit
from urllib.request import proxy_bypass_environment

from tinyscrapy.core.downloader.handlers.tunnel import parse_proxy
from tinyscrapy.exceptions import NotConfigured
from tinyscrapy.http.headers import drop_header

logger = logging.getLogger(__name__)

class HttpProxyMiddleware:
    """
    Set C{meta["proxy"]} and C{Proxy-Authorization} on each request.

    @ivar proxies: scheme to C{(proxy URL without credentials, Proxy-Authorization or None)},
        from the environment.
    @ivar environ: where C{no_proxy} is read, on each request (so a change is seen at once,
        as with urllib's C{proxy_bypass}).
    """

    def __init__(self, auth_encoding="latin-1", environ=None):
        self.environ = os.environ if environ is None else environ
        self.auth_encoding = auth_encoding
        self.proxies = {}
        for scheme in ("http", "https"):
            url = _env(self.environ, f"{scheme}_proxy")
            if url:
                try:
                    _, _, _, auth, _ = parse_proxy(url, auth_encoding)
                except (ValueError, UnicodeError):
                    logger.warning("ignoring %s_proxy: not an http(s) proxy URL (or its "
                                   "credentials are not %s)", scheme, auth_encoding)
                    continue
                clean = _without_credentials(url if "://" in url else "http://" + url)
                self.proxies[scheme] = (clean, auth)
                logger.info("%s URLs go through the proxy %s (from %s_proxy)",
                            scheme, clean, scheme)

    @classmethod
    def from_crawler(cls, crawler):
        settings = crawler.settings
        if not settings.getbool("HTTPPROXY_ENABLED"):
            raise NotConfigured("HTTPPROXY_ENABLED is off")
        return cls(auth_encoding=settings.get("HTTPPROXY_AUTH_ENCODING") or "latin-1")

    def process_request(self, request, spider=None):
        if not self.proxies and not request._meta and not request._headers:
            return  # nothing to choose, nothing to drop: no dicts made
        meta = request.meta
        proxy, auth = None, None
        if "proxy" in meta:
            if meta["proxy"] is not None:
                proxy, auth = self._from_meta(meta["proxy"])
        elif self.proxies:
            scheme, netloc = _scheme_netloc(request.url)
            found = self.proxies.get(scheme)
            if found is not None and not self._bypass(netloc):
                proxy, auth = found
                meta["_scheme_proxy"] = True
        self._set(request, meta, proxy, auth)

    def _from_meta(self, proxy):
        """C{(meta["proxy"] as written, less any credentials; Proxy-Authorization or None)}.
        An empty one (C{""}, C{"//"}) names no proxy: C{(None, None)}, as in Scrapy."""
        if not proxy.strip("/"):
            return None, None
        try:
            _, _, _, auth, _ = parse_proxy(proxy, self.auth_encoding)
        except (ValueError, UnicodeError):
            return proxy, None  # the fetcher reports the bad meta["proxy"] with the URL
        return (_without_credentials(proxy) if auth else proxy), auth

    def _set(self, request, meta, proxy, auth):
        """Put C{proxy} in meta, and send C{auth} (or the spider's own header) to it only."""
        if proxy is not None:
            meta["proxy"] = proxy
        elif meta.get("proxy") is not None:
            meta["proxy"] = None
        headers = request.headers
        if auth:
            headers["Proxy-Authorization"] = auth
            meta["_auth_proxy"] = proxy
        elif "_auth_proxy" in meta:
            if proxy != meta["_auth_proxy"]:
                # credentials for another proxy (or for none): never send them here
                drop_header(headers, "Proxy-Authorization")
                del meta["_auth_proxy"]
        elif "Proxy-Authorization" in headers:
            if proxy is not None:
                meta["_auth_proxy"] = proxy  # the spider's own header, for this proxy
            else:
                drop_header(headers, "Proxy-Authorization")

    def _bypass(self, netloc):
        """True when the environment's C{no_proxy}, read now, names the host (or C{*})."""
        no_proxy = _env(self.environ, "no_proxy")
        return bool(no_proxy) and bool(proxy_bypass_environment(netloc, {"no": no_proxy}))


def _without_credentials(url):
    """C{url} less its C{user:pass@} part (and any path), as Scrapy keeps C{meta["proxy"]}."""
    if "://" not in url:
        return url.rpartition("@")[2].partition("/")[0]
    scheme, _, rest = url.partition("://")
    return f"{scheme}://{rest.partition('/')[0].rpartition('@')[2]}"


def _env(environ, name):
    """C{name} or C{NAME} from the environment (the lower-case one wins, as in urllib)."""
    return environ.get(name) or environ.get(name.upper())


def _scheme_netloc(url):
    parts = urlsplit(url)
    return parts.scheme, parts.netloc.rpartition("@")[2]
