"""L{LinkBase}: the fast link resolver agrees with C{urljoin}."""

from urllib.parse import urljoin

from twisted.trial import unittest

from tinyscrapy.urls import LinkBase

BASES = ["http://h.com/a/b.html", "http://h.com/a/b/c/d.html", "http://h.com/a/b/", "http://h.com", "http://h.com/a/?q=1",
         "https://H.com:8080/x/y/", "http://h.com/a/b.html#f", "http://h.com/a/b.html?x=1"]
HREFS = ["c.html", "/d", "http://x.org/p", "https://x.org", "../up", "./same", "?q=2",
         "#frag", "", "//cdn.x/y", "mailto:a@b", "javascript:void(0)", "a b.html", "é.html",
         "c.html#x", "/p?a=1&b=2", "tel:123", "x:y", "data:text/plain,hi", "/a/../b",
         "HTTP://X.ORG/P", "  c.html  ", "page-2.html", "item/book-1.html", "a/./b",
         "%7Euser/", "/x;p?q", "..", ".", "../", "../../x.html", "../../../../y",
         "../a/../b", "../x:y", "../.hidden", "../item/1.html#r"]


class LinkBaseTests(unittest.TestCase):
    """Every href shape resolves as C{urljoin} would, fragment dropped."""

    def test_matches_urljoin(self):
        """Relative, absolute, dotted, schemed and odd hrefs all agree with urljoin."""
        for base in BASES:
            link_base = LinkBase(base)
            for href in HREFS:
                expected = urljoin(base.partition("#")[0], href.strip()).partition("#")[0]
                self.assertEqual(link_base.join(href), expected, (base, href))

    def test_same_origin(self):
        """Same scheme, host and port, whatever the case of the host."""
        base = LinkBase("http://Host.com:81/a/b")
        self.assertTrue(base.same_origin("http://host.com:81/x"))
        self.assertTrue(base.same_origin("http://HOST.com:81"))
        self.assertFalse(base.same_origin("http://host.com:811/x"))
        self.assertFalse(base.same_origin("http://host.com/x"))
        self.assertFalse(base.same_origin("https://host.com:81/x"))
