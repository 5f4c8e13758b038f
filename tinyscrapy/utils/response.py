"""
Scrapy's C{scrapy.utils.response}: looking at a downloaded page as the spider saw it.

    - L{get_base_url}: the URL the page's relative links resolve against;
    - L{get_meta_refresh}: its C{<meta http-equiv="refresh">}, as a delay and a URL;
    - L{response_status_message}: C{"404 Not Found"};
    - L{open_in_browser}: the page in the local web browser, its images and styles loading
      from the site.
"""

import mimetypes
import os
import re
import tempfile

from tinyscrapy.utils.python import to_bytes, to_unicode


def get_base_url(response):
    """
    The URL the page's relative links are resolved against: its C{<base href>} (in its
    first 4 KiB) joined to its URL, or its own URL.

    @param response: a text response.
    @return: C{str}.
    """
    from w3lib.html import get_base_url as base_of_html
    return base_of_html(response.text[:4096], response.url, response.encoding)


def get_meta_refresh(response, ignore_tags=("script", "noscript")):
    """
    The page's C{<meta http-equiv="refresh">} (in its first 4 KiB, outside
    C{ignore_tags}).

    @param response: a text response.
    @return: C{(delay in seconds, absolute URL)}, or C{(None, None)} when it has none.
    """
    from w3lib.html import get_meta_refresh as refresh_of_html
    return refresh_of_html(response.text[:4096], get_base_url(response), response.encoding,
                           ignore_tags=ignore_tags)


def response_status_message(status):
    """
    A status code with its reason, as a log line shows it: C{"404 Not Found"},
    C{"599 Unknown Status"}.

    @param status: an C{int}, or a C{str} or C{bytes} of digits.
    """
    from twisted.web.http import RESPONSES
    code = int(status)
    return f"{code} {to_unicode(RESPONSES.get(code, b'Unknown Status'))}"


_DOCTYPE = re.compile(rb"\s*<!doctype[^<>]*>", re.IGNORECASE)


def open_in_browser(response, _openfunc=None):
    """
    Write the page's body to a temporary file and open it in the local web browser, for
    a spider being written (as in Scrapy: the file is not removed). An HTML page gets a
    C{<base href>} of its base URL at its very start (after its C{<!doctype>}), which a
    browser moves into its head: its images and stylesheets load from the site. Text is
    written as C{.txt}; another body with the extension of its C{Content-Type}.

    @param _openfunc: what opens the file's C{file://} URL (C{webbrowser.open}).
    @return: what C{_openfunc} returns (C{webbrowser.open}: True when a browser opened).
    @raise TypeError: a body whose type has no known extension.
    """
    from tinyscrapy.http.response.html import HtmlResponse
    from tinyscrapy.http.response.text import TextResponse
    if _openfunc is None:
        import webbrowser
        _openfunc = webbrowser.open
    body = response.body
    if isinstance(response, HtmlResponse):
        doctype = _DOCTYPE.match(body)
        at = doctype.end() if doctype else 0
        base = to_bytes(f'<base href="{get_base_url(response)}">')
        body = body[:at] + base + body[at:]
        extension = ".html"
    elif isinstance(response, TextResponse):
        extension = ".txt"
    else:
        content_type = to_unicode(response.headers.get(b"Content-Type") or b"", "latin-1")
        media_type = content_type.partition(";")[0].strip().lower()
        extension = mimetypes.guess_extension(media_type) or ""
        if not extension:
            raise TypeError(f"Unsupported response type: {type(response).__name__}")
    fd, path = tempfile.mkstemp(extension)
    with os.fdopen(fd, "wb") as stream:
        stream.write(body)
    return _openfunc(f"file://{path}")
