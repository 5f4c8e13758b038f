"""
The embedded demo site: a book catalogue and a quotes section served by twisted.web.

URL map (every listing page has a C{li.next a} link while a next page exists)::

    /                                          home, links to both sections
    /robots.txt                                allows everything
    /books/            /books/page-N.html      200 books, 20 a page, N = 1..10
    /books/category/SLUG/  .../page-N.html     one of the 10 categories, 20 a page
    /books/item/SLUG-ID.html                   one book
    /quotes/           /quotes/page/N/         100 quotes, 10 a page, N = 1..10
    /quotes/tag/TAG/   .../page/N/             the quotes with one tag, 10 a page
    /quotes/author/SLUG/                       one author

Book pages link with relative hrefs and quote pages with absolute paths, as the two
toscrape.com sites do. Page 1 of a listing also answers at its C{page-1.html} or
C{page/1/} address, but nothing links there. A path that lacks only its final slash is
redirected (301); any other unknown path gets a small HTML 404 page. A page is rendered on
its first request and then served from a cache of bytes.
"""

from functools import partial
from html import escape

from twisted.web.resource import Resource
from twisted.web.server import Site

from tinyscrapy.demo.data import BOOK_COUNT, BOOKS_PER_PAGE, QUOTES_PER_PAGE, make_catalogue

HTML = b"text/html; charset=utf-8"
TEXT = b"text/plain; charset=utf-8"
ROBOTS_TXT = "User-agent: *\nAllow: /\n"


def _document(title, body):
    """Wrap C{body} (HTML) in the site's HTML5 page layout."""
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{escape(title)} | tinyscrapy demo</title>\n</head>\n<body>\n"
        '<header><a href="/">tinyscrapy demo</a></header>\n'
        f"<main>\n{body}\n</main>\n"
        "<footer>Generated for testing crawlers: books, quotes and attributions are invented."
        "</footer>\n</body>\n</html>\n"
    )


def _chunks(items, size):
    """Split C{items} into pages of C{size}; an empty list still has one (empty) page."""
    return [items[i:i + size] for i in range(0, len(items), size)] or [[]]


def _pager(number, count, href):
    """Previous, current and next links; C{href(n)} is the link to page C{n}."""
    items = [f'<li class="current">Page {number} of {count}</li>']
    if number > 1:
        items.insert(0, f'<li class="previous"><a href="{href(number - 1)}">previous</a></li>')
    if number < count:
        items.append(f'<li class="next"><a href="{href(number + 1)}">next</a></li>')
    return '<ul class="pager">\n' + "\n".join(items) + "\n</ul>"


def _breadcrumb(trail, active):
    """A breadcrumb of C{(href, text)} links ending with the current page's C{active} text."""
    items = [f'<li><a href="{href}">{escape(text)}</a></li>' for href, text in trail]
    items.append(f'<li class="active">{escape(active)}</li>')
    return '<ul class="breadcrumb">\n' + "\n".join(items) + "\n</ul>\n"


def _home(catalogue):
    """The home page, linking to both sections."""
    return _document("Home", (
        "<h1>tinyscrapy demo site</h1>\n<ul>\n"
        f'<li><a href="/books/">Books</a>: {len(catalogue.books)} books in '
        f"{len(catalogue.categories)} categories</li>\n"
        f'<li><a href="/quotes/">Quotes</a>: {len(catalogue.quotes)} quotes by '
        f"{len(catalogue.authors)} authors</li>\n</ul>"
    ))


def _robots():
    """The robots.txt body: every crawler may fetch everything."""
    return ROBOTS_TXT


# -- books: relative links, like books.toscrape.com ----------------------------------------

def _book_href(book, to_books):
    """The link to a book from a page whose relative way up to C{/books/} is C{to_books}."""
    return f"{to_books}item/{book.slug}-{book.id}.html"


def _listing_href(number):
    """The link from a book listing page to page C{number} of the same listing."""
    return "./" if number == 1 else f"page-{number}.html"


def _book_pod(book, to_books):
    """One book in a listing; a long title is shortened, and whole in the C{title} attribute."""
    short = book.title if len(book.title) <= 40 else book.title[:37] + "…"
    rating, stars = book.stars
    return (
        f'<li><article class="product_pod">\n<p class="star-rating {rating}">{stars}</p>\n'
        f'<h3><a href="{_book_href(book, to_books)}" title="{escape(book.title)}">'
        f"{escape(short)}</a></h3>\n"
        f'<div class="product_price">\n<p class="price">{book.price_text}</p>\n'
        f'<p class="availability">{"In stock" if book.stock else "Out of stock"}</p>\n'
        "</div>\n</article></li>"
    )


def _book_listing(heading, books, number, to_books, trail, categories):
    """
    Page C{number} of a book listing: all books, or one category.

    @param to_books: the relative way up from the listing to C{/books/}: C{""} or C{"../../"}.
    @param trail: the breadcrumb's C{(href, text)} links.
    @param categories: all categories, for the side menu.
    """
    pages = _chunks(books, BOOKS_PER_PAGE)
    first = (number - 1) * BOOKS_PER_PAGE + 1
    menu = "\n".join(f'<li><a href="{to_books}category/{c.slug}/">{escape(c.name)}</a></li>'
                     for c in categories)
    pods = "\n".join(_book_pod(book, to_books) for book in pages[number - 1])
    return _document(f"{heading} (page {number})", (
        f'{_breadcrumb(trail, heading)}<aside><ul class="categories">\n{menu}\n</ul></aside>\n'
        f"<h1>{escape(heading)}</h1>\n<p class=\"results\">{len(books)} results, showing "
        f"{first} to {first + len(pages[number - 1]) - 1}.</p>\n"
        f'<section>\n<ol class="row">\n{pods}\n</ol>\n'
        f"{_pager(number, len(pages), _listing_href)}\n</section>"
    ))


def _book_page(book):
    """The page of one book, at C{/books/item/SLUG-ID.html}."""
    category = book.category
    category_href = f"../category/{category.slug}/"
    rating, stars = book.stars
    rows = (("UPC", book.upc), ("Category", category.name), ("Price", book.price_text),
            ("Availability", book.stock_text))
    table = "\n".join(f"<tr><th>{name}</th><td>{escape(value)}</td></tr>" for name, value in rows)
    trail = (("../../", "Home"), ("../", "Books"), (category_href, category.name))
    return _document(book.title, (
        f'{_breadcrumb(trail, book.title)}<article class="product_page">\n'
        f'<div class="product_main">\n<h1>{escape(book.title)}</h1>\n'
        f'<p class="price">{book.price_text}</p>\n'
        f'<p class="availability">{book.stock_text}</p>\n'
        f'<p class="star-rating {rating}">{stars}</p>\n'
        f'<p class="category">Category: <a href="{category_href}">{escape(category.name)}</a>'
        "</p>\n</div>\n"
        '<div id="product_description">\n<h2>Product Description</h2>\n'
        f"<p>{escape(book.description)}</p>\n</div>\n"
        f'<table class="product_information">\n{table}\n</table>\n</article>'
    ))


# -- quotes: absolute paths, like quotes.toscrape.com --------------------------------------

def _quotes_url(number):
    """The path of page C{number} of all quotes."""
    return "/quotes/" if number == 1 else f"/quotes/page/{number}/"


def _tag_url(tag, number):
    """The path of page C{number} of the quotes with C{tag}."""
    return f"/quotes/tag/{tag}/" if number == 1 else f"/quotes/tag/{tag}/page/{number}/"


def _quote_div(quote):
    """One quote, marked up as on quotes.toscrape.com."""
    tags = "\n".join(f'<a class="tag" href="{_tag_url(tag, 1)}">{tag}</a>' for tag in quote.tags)
    return (
        '<div class="quote" itemscope itemtype="http://schema.org/CreativeWork">\n'
        f'<span class="text" itemprop="text">{escape(quote.text)}</span>\n'
        f'<span>by <small class="author" itemprop="author">{escape(quote.author.name)}</small>\n'
        f'<a href="/quotes/author/{quote.author.slug}/">(about)</a></span>\n<div class="tags">'
        f'Tags:\n<meta class="keywords" itemprop="keywords" content="{",".join(quote.tags)}">\n'
        f"{tags}\n</div>\n</div>"
    )


def _quote_listing(heading, quotes, number, url, tag_counts):
    """
    Page C{number} of a quote listing: all quotes, or one tag.

    @param url: gives the path of page C{n} of this listing.
    @param tag_counts: C{(tag, number of quotes)} pairs for the side box.
    """
    pages = _chunks(quotes, QUOTES_PER_PAGE)
    box = "\n".join(f'<li><a class="tag" href="{_tag_url(tag, 1)}">{tag}</a> ({count})</li>'
                    for tag, count in tag_counts)
    quote_divs = "\n".join(_quote_div(quote) for quote in pages[number - 1])
    return _document(f"{heading} (page {number})", (
        f"<h1>{escape(heading)}</h1>\n{quote_divs}\n{_pager(number, len(pages), url)}\n"
        f'<aside class="tags-box"><h2>Tags</h2>\n<ul>\n{box}\n</ul></aside>'
    ))


def _author_page(author):
    """The page of one author, at C{/quotes/author/SLUG/}."""
    return _document(author.name, (
        f'<div class="author-details">\n<h3 class="author-title">{escape(author.name)}</h3>\n'
        f'<p><strong>Born:</strong> <span class="author-born-date">{author.born_date}</span>\n'
        f'<span class="author-born-location">{escape(author.born_location)}</span></p>\n'
        f'<div class="author-description">\n{escape(author.description)}\n</div>\n'
        f'<p>{len(author.quotes)} quotes on this site. <a href="/quotes/">All quotes</a></p>\n'
        "</div>"
    ))


# -- serving ----------------------------------------------------------------------------------

def _routes(catalogue):
    """Map every path the site serves to C{(content type, renderer returning str)}."""
    routes = {"/": (HTML, partial(_home, catalogue)), "/robots.txt": (TEXT, _robots)}
    tag_counts = [(tag, len(quotes)) for tag, quotes in catalogue.tags.items()]

    def add_book_listing(directory, heading, books, to_books, trail):
        for number in range(1, len(_chunks(books, BOOKS_PER_PAGE)) + 1):
            render = partial(_book_listing, heading, books, number, to_books, trail,
                             catalogue.categories)
            routes[directory + ("" if number == 1 else f"page-{number}.html")] = (HTML, render)
        routes[directory + "page-1.html"] = routes[directory]

    def add_quote_listing(url, heading, quotes):
        for number in range(1, len(_chunks(quotes, QUOTES_PER_PAGE)) + 1):
            render = partial(_quote_listing, heading, quotes, number, url, tag_counts)
            routes[url(number)] = (HTML, render)
        routes[url(1) + "page/1/"] = routes[url(1)]

    add_book_listing("/books/", "All books", catalogue.books, "", (("../", "Home"),))
    for category in catalogue.categories:
        add_book_listing(f"/books/category/{category.slug}/", category.name, category.books,
                         "../../", (("../../../", "Home"), ("../../", "Books")))
    for book in catalogue.books:
        routes["/books/" + _book_href(book, "")] = (HTML, partial(_book_page, book))
    add_quote_listing(_quotes_url, "Quotes", catalogue.quotes)
    for tag, quotes in catalogue.tags.items():
        add_quote_listing(partial(_tag_url, tag), f"Viewing tag: {tag}", quotes)
    for author in catalogue.authors:
        routes[f"/quotes/author/{author.slug}/"] = (HTML, partial(_author_page, author))
    return routes


class DemoSite(Resource):
    """
    The whole demo site as one leaf resource: a table of paths whose pages are rendered on
    first use and cached as UTF-8 bytes.

    @ivar catalogue: the L{tinyscrapy.demo.data.Catalogue} the pages show.
    """

    isLeaf = True

    def __init__(self, catalogue):
        super().__init__()
        self.catalogue = catalogue
        self._routes = _routes(catalogue)
        self._cache = {}
        self._missing = (HTML, _document("Not found", (
            '<h1>404 Not Found</h1>\n<p>No page lives at this address. '
            'Try the <a href="/">home page</a>.</p>')).encode("utf-8"))

    def paths(self):
        """
        @return: every path answered with 200, page-1 aliases included, in a fixed order.
        """
        return tuple(self._routes)

    def page(self, path):
        """
        Render a page, or take it from the cache.

        @param path: an absolute path such as C{"/books/"}, without a query.
        @return: C{(content type, body)} as bytes, or L{None} for an unknown path.
        """
        found = self._cache.get(path)
        if found is None and path in self._routes:
            content_type, render = self._routes[path]
            found = self._cache[path] = (content_type, render().encode("utf-8"))
        return found

    def render_GET(self, request):
        """
        Answer with the page at C{request.path}, a redirect to it plus C{/}, or a 404 page.

        @return: the body.
        """
        path = request.path.decode("latin-1")
        found = self.page(path)
        if found is None and path + "/" in self._routes:
            request.setResponseCode(301)
            request.setHeader(b"location", (path + "/").encode("latin-1"))
            found = (TEXT, b"Moved Permanently\n")
        elif found is None:
            request.setResponseCode(404)
            found = self._missing
        request.setHeader(b"content-type", found[0])
        return found[1]

    def render_HEAD(self, request):
        """
        Answer as L{render_GET} does, with its C{Content-Length} but no body.

        @return: C{b""}, so that twisted.web has no body to eat and no warning to log.
        """
        body = self.render_GET(request)
        request.setHeader(b"content-length", b"%d" % len(body))
        return b""


class _QuietSite(Site):
    """A L{Site} without the access log, which would cost a log event per request."""

    noisy = False

    def log(self, request):
        """Write no access log line."""


def build_site(book_count=BOOK_COUNT):
    """
    Build the demo site from the fixed seed.

    @param book_count: the catalogue's size (the demo has 200 books; benchmarks use more).
    @return: a new L{DemoSite} (a L{twisted.web.resource.Resource}) with an empty cache.
    """
    return DemoSite(make_catalogue(book_count=book_count))


def listen(port=0, interface="127.0.0.1", reactor=None, access_log=False):
    """
    Serve a freshly built demo site over HTTP.

    @param port: the TCP port; 0 picks a free one, read back as C{listening.getHost().port}.
    @param interface: the address to bind.
    @param reactor: an C{IReactorTCP}; the global reactor when L{None}.
    @param access_log: log one line per request (combined log format) to the Twisted log.
    @return: the C{IListeningPort}. Its C{stopListening()} returns a Deferred that fires
        once the port is closed; connections already open stay open.
    """
    if reactor is None:
        from twisted.internet import reactor
    factory = (Site if access_log else _QuietSite)(build_site(), reactor=reactor)
    return reactor.listenTCP(port, factory, interface=interface)
