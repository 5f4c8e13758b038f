"""
Looking at a downloaded page as the spider saw it, as Scrapy's
C{scrapy.utils.response}: L{open_in_browser} and L{get_base_url}.
"""

import os
import re
import tempfile


def get_base_url(response):
    """
    The URL the page's relative links are resolved against: its C{<base href>}, or its
    own URL.

    @return: C{str}.
    """
    from w3lib.html import get_base_url as base_of_html
    return base_of_html(response.text[:4096], response.url, response.encoding)


def open_in_browser(response, _openfunc=None):
    """
    Write the page's body to a temporary file and open it in the local web browser, with
    a C{<base href>} added to an HTML page so its images and stylesheets load from the
    site. For a spider being written (as in Scrapy: the file is not removed).

    @param _openfunc: what opens the file's C{file://} URL (C{webbrowser.open}).
    @return: what C{_openfunc} returns (C{webbrowser.open}: True when a browser opened).
    @raise TypeError: the response is not an HTML or text page.
    """
    if _openfunc is None:
        import webbrowser
        _openfunc = webbrowser.open
    content_type = response.headers.get("Content-Type") or ""
    if isinstance(content_type, bytes):
        content_type = content_type.decode("latin-1")
    body = response.body
    if "html" in content_type or b"<html" in body[:1024].lower():
        extension = ".html"
        if b"<base" not in body[:4096].lower():
            base = f'<base href="{response.url}">'.encode()
            body = re.sub(rb"<head(?:\s[^>]*)?>", _append(base), body, count=1,
                          flags=re.IGNORECASE)
    elif content_type.startswith("text/") or "json" in content_type or "xml" in content_type:
        extension = ".txt"
    else:
        raise TypeError(f"Unsupported response type: {content_type or 'no Content-Type'}")
    fd, path = tempfile.mkstemp(extension)
    with os.fdopen(fd, "wb") as stream:
        stream.write(body)
    return _openfunc(f"file://{path}")


def _append(tag):
    """A C{re.sub} replacement: the match, then C{tag}."""
    def replace(match):
        return match.group(0) + tag
    return replace
