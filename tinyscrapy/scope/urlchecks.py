"""
The URL checks behind L{tinyscrapy.scope.links.LinkExtractor}'s filters, on absolute URL
strings without parsing them: the host (for C{allow_domains}/C{deny_domains}), a valid
host and port (C{http://host:abc/} is no link, as in Scrapy), the extension (for
C{deny_extensions}), and the argument shapes the extractor accepts (one pattern or several).
"""

import re


def as_list(value):
    if value is None:
        return []
    if isinstance(value, (str, bytes, re.Pattern)):
        return [value]
    return list(value)


def compile_all(patterns):
    return tuple(p if isinstance(p, re.Pattern) else re.compile(p) for p in as_list(patterns))


def domain_list(domains):
    return tuple(d.strip().lower().lstrip(".") for d in as_list(domains) if d.strip())


def in_domains(host, domains):
    return any(host == d or host.endswith("." + d) for d in domains)


_HOST = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://(?:[^@/?#]*@)?(\[[^\]]*\]|[^:/?#]*)")


def url_host(url):
    match = _HOST.match(url)
    return match.group(1).lower() if match else ""


def valid_host(url):
    """False for an absolute URL whose host is missing or a broken IPv6 address, or whose
    port is not a number from 0 to 65535."""
    start = url.find("//") + 2
    if start >= len(url) or url[start] in "/?#":
        return False
    if url[start] == "[" and "]" not in url:
        return False
    end = url.find("/", start)
    if end == -1:
        end = len(url)
    if url.find(":", start, end) == -1:  # no port (nor user info): most links
        return True
    netloc = url[start:end]
    if "?" in netloc or "#" in netloc:  # a query or fragment right after the host: rare
        netloc = netloc.partition("?")[0].partition("#")[0]
        if ":" not in netloc:
            return True
    valid = _PORT_CHECKED.get(netloc)  # a page's links share a few authorities
    if valid is None:
        valid = _valid_port(netloc)
        if len(_PORT_CHECKED) < 1024:
            _PORT_CHECKED[netloc] = valid
    return valid


_PORT_CHECKED = {}


def _valid_port(netloc):
    """Is the port of C{netloc} (user info and IPv6 brackets allowed) empty or 0-65535?"""
    hostport = netloc.rpartition("@")[2]
    port = hostport.rpartition("]")[2] if hostport.startswith("[") else hostport
    if ":" not in port:
        return True
    port = port.rpartition(":")[2]
    return port == "" or (port.isdigit() and port.isascii() and int(port) <= 65535)


def url_extension(url):
    """The lower-cased extension of the last path segment of an absolute http(s) URL
    without fragment (without the dot), or ""."""
    path = url.partition("?")[0]
    slash = path.rfind("/")
    if slash < 8:  # the slashes of "http://" or "https://": no path
        return ""
    name, dot, extension = path[slash + 1:].rpartition(".")
    return extension.lower() if dot and name else ""
