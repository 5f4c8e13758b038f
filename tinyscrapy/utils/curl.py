"""
A L{Request} to and from a C{curl} command line (C{Request.from_curl}, C{Request.to_curl}),
with Scrapy's handling of the arguments:

    - C{-X/--request} the method; C{-d/--data/--data-raw} the body (repeated ones joined
      with C{&}, a leading C{$} of C{$'...'} quoting dropped), which makes the method POST
      unless C{-X} says otherwise;
    - C{-H/--header} headers, a C{Cookie:} header read into C{cookies}; C{-b/--cookie}
      C{name=value} pairs (a cookie file name is ignored); C{-u/--user} as Basic
      C{Authorization};
    - C{--compressed}, C{-s}, C{-v} and C{-#} accepted and ignored; any other option warned
      about and ignored, or refused (C{ValueError}) when asked;
    - a URL without a scheme gets C{http://}, as curl does.
"""

import argparse
import shlex
import warnings
from http.cookies import SimpleCookie
from urllib.parse import urlparse


class _CurlArguments(argparse.ArgumentParser):
    def error(self, message):
        raise ValueError(f"There was an error parsing the curl command: {message}")


class _JoinedData(argparse.Action):
    """C{-d a -d b} sends C{a&b}, as curl does."""

    def __call__(self, parser, namespace, values, option_string=None):
        value = str(values).removeprefix("$")
        before = getattr(namespace, self.dest, None)
        setattr(namespace, self.dest, value if before is None else before + "&" + value)


def _parser():
    parser = _CurlArguments(add_help=False, prog="curl")
    parser.add_argument("url")
    parser.add_argument("-H", "--header", dest="headers", action="append")
    parser.add_argument("-X", "--request", dest="method")
    parser.add_argument("-b", "--cookie", dest="cookies", action="append")
    parser.add_argument("-d", "--data", "--data-raw", dest="data", action=_JoinedData)
    parser.add_argument("-u", "--user", dest="auth")
    for ignored in (["--compressed"], ["-s", "--silent"], ["-v", "--verbose"],
                    ["-#", "--progress-bar"]):
        parser.add_argument(*ignored, action="store_true")
    return parser


def _cookie_pairs(text, into):
    for name, morsel in SimpleCookie(text).items():
        into[name] = morsel.value


def curl_to_request_kwargs(command, ignore_unknown_options=True):
    """
    The keyword arguments of the L{Request} that C{command} (a C{curl ...} line) sends.

    @raise ValueError: not a curl command, a malformed one, or (when
        C{ignore_unknown_options} is False) an option this does not know.
    """
    words = shlex.split(command)
    if not words or words[0] != "curl":
        raise ValueError('A curl command must start with "curl"')
    parsed, unknown = _parser().parse_known_args(words[1:])
    if unknown:
        message = f"Unrecognized options: {', '.join(unknown)}"
        if not ignore_unknown_options:
            raise ValueError(message)
        warnings.warn(message, stacklevel=3)
    url = parsed.url
    if not urlparse(url).scheme:
        url = "http://" + url
    kwargs = {"method": (parsed.method or "GET").upper(), "url": url}
    headers, cookies = [], {}
    for header in parsed.headers or ():
        name, _, value = header.partition(":")
        name, value = name.strip(), value.strip()
        if name.title() == "Cookie":
            _cookie_pairs(value, cookies)
        else:
            headers.append((name, value))
    for pairs in parsed.cookies or ():
        if "=" in pairs:  # curl also takes a file name here: not supported
            _cookie_pairs(pairs, cookies)
    if parsed.auth:
        from w3lib.http import basic_auth_header
        user, _, password = parsed.auth.partition(":")
        headers.append(("Authorization", basic_auth_header(user, password)))
    if headers:
        kwargs["headers"] = headers
    if cookies:
        kwargs["cookies"] = cookies
    if parsed.data:
        kwargs["body"] = parsed.data
        if not parsed.method:
            kwargs["method"] = "POST"
    return kwargs


def request_to_curl(request):
    """The C{curl} command line for C{request}: method, URL, body, headers (the first
    value of each) and cookies."""
    parts = ["curl", "-X", request.method, request.url]
    if request.body:
        parts.append(f"--data-raw '{request.body.decode('utf-8')}'")
    for name, values in request.headers.items():
        parts.append(f"-H '{name.decode()}: {values[0].decode()}'")
    cookies = request.cookies
    if isinstance(cookies, dict):
        pairs = [f"{_text(name)}={_text(value)}" for name, value in cookies.items()]
    else:
        pairs = [f"{_text(cookie['name'])}={_text(cookie['value'])}" for cookie in cookies
                 if "name" in cookie and "value" in cookie]
    if pairs:
        parts.append(f"--cookie '{'; '.join(pairs)}'")
    return " ".join(" ".join(parts).split())


def _text(value):
    """A cookie name or value as text: bytes read as UTF-8 (else latin-1), as the cookies
    middleware reads them."""
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return value.decode("latin-1")
    return str(value)
