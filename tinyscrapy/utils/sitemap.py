"""
Reading sitemaps (sitemaps.org): L{Sitemap} (a parsed C{urlset} or C{sitemapindex}),
L{sitemap_urls_from_robots} (the C{Sitemap:} lines of a robots.txt) and L{gunzip}
(bounded: a gzip bomb stops at the size limit instead of filling memory).

The XML is parsed with lxml, safely: entities are not resolved (no billion laughs, no file
reads through an external entity), nothing is fetched from the network, and lxml's
C{huge_tree} limits stay on. A broken sitemap is read as far as it parses (C{recover}).
"""

from urllib.parse import urljoin


def _local_name(tag):
    """C{{namespace}name} -> C{name}."""
    return tag.rpartition("}")[2] if isinstance(tag, str) else ""


class Sitemap:
    """
    A parsed sitemap: iterate it for its entries.

    Each entry is a dict of the child elements' texts by local name (C{loc}, C{lastmod},
    C{changefreq}, C{priority}, ...), with C{alternate}: the C{href} of every
    C{<xhtml:link>} when there are some. Entries without C{loc} are left out.

    @ivar type: C{"urlset"}, C{"sitemapindex"}, or another root element's name.
    """

    def __init__(self, body):
        """@raise ValueError: C{body} holds no XML element at all."""
        import lxml.etree
        parser = lxml.etree.XMLParser(recover=True, remove_comments=True,
                                      resolve_entities=False, no_network=True,
                                      huge_tree=False)
        self._root = lxml.etree.fromstring(body, parser=parser) if body.strip() else None
        if self._root is None:
            raise ValueError("not an XML document")
        self.type = _local_name(self._root.tag)

    def __iter__(self):
        for element in self._root:
            entry = {}
            for child in element:
                name = _local_name(child.tag)
                if name == "link":
                    href = child.get("href")
                    if href is not None:
                        entry.setdefault("alternate", []).append(href)
                elif name:
                    entry[name] = (child.text or "").strip()
            if "loc" in entry:
                yield entry


def sitemap_urls_from_robots(robots_text, base_url=None):
    """The URLs of a robots.txt's C{Sitemap:} lines (any case), made absolute."""
    for line in robots_text.splitlines():
        field, sep, value = line.strip().partition(":")
        if sep and field.strip().lower() == "sitemap" and value.strip():
            yield urljoin(base_url, value.strip()) if base_url else value.strip()


def locations(entries, alternates=False):
    """The C{loc} of each entry, and its alternates' when C{alternates} is true."""
    for entry in entries:
        yield entry["loc"]
        if alternates:
            yield from entry.get("alternate", ())
