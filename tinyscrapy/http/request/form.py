"""
L{FormRequest}: a request carrying form data, and L{FormRequest.from_response}, which
fills in a page's C{<form>} as a browser submits it.

What a submission sends, as Scrapy sends it:

    - every named C{<input>} but the buttons (C{submit}, C{image}, C{reset}); a checkbox or
      radio only when it is C{checked} (a checkbox without C{value} sends C{on});
    - every C{<textarea>}; a C{<select>}'s selected options (a single select with none
      selected sends its first option; a multiple one, none);
    - the first submit button (C{<input type=submit|image>}, C{<button>} without a type or
      of type submit), or the one C{clickdata} picks (by attributes, or C{nr}: its position
      among the form's inputs), unless C{dont_click};
    - C{formdata} last, replacing the fields it names (a C{None} value removes one);
    - to the form's C{action} resolved against the page's C{<base href>} (the page itself
      without one), by its C{method} (GET unless POST): a GET replaces the action's query.
"""

from urllib.parse import urlencode, urljoin, urlsplit, urlunsplit

from tinyscrapy.http.request import Request, safe_url
from tinyscrapy.utils.python import to_bytes

_CLICKABLE = ('descendant::input[re:test(@type, "^(submit|image)$", "i")]'
              '|descendant::button[not(@type) or re:test(@type, "^submit$", "i")]')
_FIELDS = ('descendant::textarea|descendant::select'
           '|descendant::input[not(@type) or @type['
           ' not(re:test(., "^(?:submit|image|reset)$", "i"))'
           ' and (../@checked or not(re:test(., "^(?:checkbox|radio)$", "i")))]]')
_RE = {"re": "http://exslt.org/regular-expressions"}


def _listlike(value):
    return isinstance(value, (list, tuple, set, frozenset)) or (
        hasattr(value, "__iter__") and not isinstance(value, (str, bytes, dict)))


def form_encode(pairs, encoding):
    """C{pairs} (a value may be a list of values) URL-encoded in C{encoding}."""
    encoded = [(to_bytes(key, encoding), to_bytes(value, encoding))
               for key, values in pairs
               for value in (values if _listlike(values) else [values])]
    return urlencode(encoded, doseq=True)


class FormRequest(Request):
    """
    A L{Request} carrying C{formdata} (a dict or C{(name, value)} pairs) form-encoded:
    in the body of a POST (the default when C{formdata} is given), or as the whole query
    string of a GET.
    """

    __slots__ = ()
    valid_form_methods = ["GET", "POST"]

    def __init__(self, *args, formdata=None, **kwargs):
        if formdata and kwargs.get("method") is None:
            kwargs["method"] = "POST"
        super().__init__(*args, **kwargs)
        if not formdata:
            return
        pairs = formdata.items() if hasattr(formdata, "items") else formdata
        query = form_encode(pairs, self.encoding)
        if self.method == "POST":
            self.headers.setdefault(b"Content-Type", b"application/x-www-form-urlencoded")
            self._body = query.encode(self.encoding)
        else:
            url = urlunsplit(urlsplit(self.url)._replace(query=query))
            self._url = safe_url(url, self.encoding)

    @classmethod
    def from_response(cls, response, formname=None, formid=None, formnumber=0,
                      formdata=None, clickdata=None, dont_click=False, formxpath=None,
                      formcss=None, **kwargs):
        """
        The request that submits a form of C{response} (see the module docstring).

        The form is the one named C{formname}, else of id C{formid}, else the first
        containing what C{formxpath} or C{formcss} selects, else number C{formnumber}.
        C{kwargs} go to the request (C{url=} and C{method=} override the form's).

        @raise ValueError: the page has no form, or none matches C{formxpath}/C{formcss},
            or C{clickdata} matches no button or several.
        @raise IndexError: there is no form number C{formnumber}.
        """
        kwargs.setdefault("encoding", response.encoding)
        if formcss is not None:
            from cssselect import HTMLTranslator
            formxpath = HTMLTranslator().css_to_xpath(formcss)
        form = _find_form(response, formname, formid, formnumber, formxpath)
        pairs = _submitted(form, formdata, dont_click, clickdata)
        url = _action(form, response, kwargs.pop("url", None))
        method = kwargs.pop("method", form.method)
        if method is not None:
            method = method.upper()
            if method not in cls.valid_form_methods:
                method = "GET"
        return cls(url=url, method=method, formdata=pairs, **kwargs)


def _action(form, response, url):
    from w3lib.html import strip_html5_whitespace
    base = form.base_url or response.url
    if url is not None:
        return urljoin(base, url)
    action = form.get("action")
    return base if action is None else urljoin(base, strip_html5_whitespace(action))


def _find_form(response, formname, formid, formnumber, formxpath):
    root = _form_tree(response)
    forms = root.xpath("//form")
    if not forms:
        raise ValueError(f"No <form> element found in {response}")
    for attribute, wanted in (("name", formname), ("id", formid)):
        if wanted is not None:
            found = [form for form in forms if form.get(attribute) == wanted]
            if found:
                return found[0]
    if formxpath is not None:
        for node in root.xpath(formxpath)[:1]:
            while node is not None:
                if getattr(node, "tag", None) == "form":
                    return node
                node = node.getparent()
        raise ValueError(f"No <form> element found with {formxpath}")
    try:
        return forms[formnumber]
    except IndexError:
        raise IndexError(f"Form number {formnumber} not found in {response}") from None


def _form_tree(response):
    """The page's tree: its base URL is the page's C{<base href>} (or the page's URL),
    which lxml's forms resolve against."""
    return response.selector.root


def _submitted(form, formdata, dont_click, clickdata):
    """The C{(name, value)} pairs the form sends."""
    try:
        given = dict(formdata or ())
    except (ValueError, TypeError):
        raise ValueError("formdata should be a dict or iterable of tuples") from None
    formdata = formdata or []
    pairs = []
    for field in form.xpath(_FIELDS, namespaces=_RE):
        name, value = _field_value(field)
        if name and name not in given:
            pairs.append((name, "" if value is None else value))
    if not dont_click:
        button = _clicked(form, clickdata)
        if button is not None and button[0] is not None and button[0] not in given:
            pairs.append(button)
    items = formdata.items() if hasattr(formdata, "items") else formdata
    pairs.extend((name, value) for name, value in items if value is not None)
    return pairs


def _field_value(field):
    name, value = field.name, field.value
    if field.tag == "select" and value is None and not field.multiple:
        options = field.value_options
        return (name, options[0]) if options else (None, None)
    return name, value


def _clicked(form, clickdata):
    """The C{(name, value)} of the button the submission clicks, or None."""
    buttons = form.xpath(_CLICKABLE, namespaces=_RE)
    if not buttons:
        return None
    if clickdata is None:
        return buttons[0].get("name"), buttons[0].get("value") or ""
    number = clickdata.get("nr")
    if number is not None:
        try:
            field = list(form.inputs)[number]
        except IndexError:
            pass
        else:
            return field.get("name"), field.get("value") or ""
    xpath = ".//*" + "".join(f'[@{key}="{value}"]' for key, value in clickdata.items())
    found = form.xpath(xpath)
    if len(found) == 1:
        return found[0].get("name"), found[0].get("value") or ""
    if found:
        raise ValueError(f"Multiple elements found ({found!r}) matching the criteria in "
                         f"clickdata: {clickdata!r}")
    raise ValueError(f"No clickable element matching clickdata: {clickdata!r}")
