"""
L{Link}: a link a L{tinyscrapy.linkextractors.lxmlhtml.LinkExtractor} found on a page, as
Scrapy's C{scrapy.link.Link}.
"""


class Link:
    """
    One link found on a page.

    @ivar url: the absolute URL (a C{str}), percent-encoded, with its fragment if it has one.
    @ivar text: the text inside the element (for C{<a>}: what a reader clicks on).
    @ivar fragment: Scrapy's field, C{""} for extracted links (the fragment is in C{url}).
    @ivar nofollow: the element has C{rel="nofollow"}.
    """

    __slots__ = ("url", "_text", "fragment", "nofollow", "_element")

    def __init__(self, url, text="", fragment="", nofollow=False, element=None):
        if not isinstance(url, str):
            raise TypeError(f"Link urls must be str objects, got {type(url).__name__}")
        self.url = url
        self._text = text
        self.fragment = fragment
        self.nofollow = nofollow
        self._element = element  # the text is read from it on first use: most never are

    @property
    def text(self):
        if self._element is not None:
            element, self._element = self._element, None
            self._text = element_text(element)
        return self._text

    def __eq__(self, other):
        return isinstance(other, Link) and (self.url, self.text, self.fragment,
                                            self.nofollow) == (other.url, other.text,
                                                               other.fragment, other.nofollow)

    def __hash__(self):
        return hash((self.url, self.text, self.fragment, self.nofollow))

    def __repr__(self):
        return (f"Link(url={self.url!r}, text={self.text!r}, fragment={self.fragment!r}, "
                f"nofollow={self.nofollow!r})")


def element_text(element):
    """The text inside an element, stripped (C{""} for a node that has none)."""
    return "".join(element.itertext()).strip() if hasattr(element, "itertext") else ""
