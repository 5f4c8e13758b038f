"""
Small, deterministic local replicas of the sites public Scrapy spiders are written for.

- L{quotes_site}: quotes.toscrape.com (three pages of quotes, author pages, tag pages, a
  login form with a CSRF token and a session cookie, C{/api/quotes?page=N}, C{/scroll},
  C{/js/});
- L{books_site}: books.toscrape.com (the index, C{catalogue/page-N.html}, two categories,
  product pages with their information table);
- L{sitemap_site}: a shop with C{robots.txt} naming a sitemap index, which names a plain
  and a gzip-compressed sitemap.

The markup is the real sites' (the classes and the nesting spiders select on); the
content is invented. Each site is a L{TestServer} on its own 127.0.0.1 port, so it counts
hits as the tests' other servers do. C{python -m tests.replicas} serves the three until
killed and prints their ports as one JSON line (to run Scrapy itself against them).
"""

import gzip
import json
import re
import sys
from html import escape

from .servers import TestServer, _Leaf, _respond

QUOTES = [
    # (text, author, tags)
    ("The world as we have created it is a process of our thinking.", "Albert Einstein",
     ["change", "thinking", "world"]),
    ("It is our choices that show what we truly are, far more than our abilities.",
     "J.K. Rowling", ["abilities", "choices"]),
    ("There are only two ways to live your life.", "Albert Einstein",
     ["inspirational", "life", "miracles"]),
    ("The person, be it gentleman or lady, who has not pleasure in a good novel, must be "
     "intolerably stupid.", "Jane Austen", ["books", "humor", "literature"]),
    ("Imperfection is beauty, madness is genius.", "Marilyn Monroe",
     ["be-yourself", "inspirational"]),
    ("Try not to become a man of success. Rather become a man of value.", "Albert Einstein",
     ["adulthood", "success", "value"]),
    ("It is better to be hated for what you are than to be loved for what you are not.",
     "André Gide", ["life", "love"]),
    ("I have not failed. I've just found 10,000 ways that won't work.", "Thomas A. Edison",
     ["edison", "failure", "paraphrased"]),
    ("A woman is like a tea bag; you never know how strong it is until it's in hot water.",
     "Eleanor Roosevelt", []),
    ("A day without sunshine is like, you know, night.", "Steve Martin",
     ["humor", "obvious", "simile"]),
    ("This life is what you make it.", "Marilyn Monroe",
     ["friends", "heartbreak", "life", "love"]),
    ("It takes a great deal of bravery to stand up to our enemies.", "J.K. Rowling",
     ["courage", "friends"]),
]
PER_PAGE = 4

AUTHORS = {
    "Albert Einstein": ("March 14, 1879", "in Ulm, Germany",
                        "In 1879, Albert Einstein was born in Ulm, Germany."),
    "J.K. Rowling": ("July 31, 1965", "in Yate, South Gloucestershire, England",
                     "See also: Robert Galbraith."),
    "Jane Austen": ("December 16, 1775", "in Steventon Rectory, Hampshire, England",
                    "Jane Austen was an English novelist."),
    "Marilyn Monroe": ("June 01, 1926", "in The United States",
                       "Marilyn Monroe was an American actress."),
    "André Gide": ("November 22, 1869", "in Paris, France",
                   "André Paul Guillaume Gide was a French author."),
    "Thomas A. Edison": ("February 11, 1847", "in Milan, Ohio, The United States",
                         "Thomas Alva Edison was an American inventor."),
    "Eleanor Roosevelt": ("October 11, 1884", "in The United States",
                          "Anna Eleanor Roosevelt was an American politician."),
    "Steve Martin": ("August 14, 1945", "in Waco, Texas, The United States",
                     "Stephen Glenn Martin is an American actor."),
}

CSRF_TOKEN = "kLWbfRdzMpHoYjOvNwEqFtxnBSeaGsUKcrlCuAyJgXZhQDiVPITm"


def slug(author):
    """The author's path segment, as the real site makes it (C{J-K-Rowling})."""
    return re.sub(r"[^A-Za-z0-9]+", "-", author).strip("-")


def _quotes_layout(body, logged_in):
    login = ('<a href="/logout">Logout</a>' if logged_in else '<a href="/login">Login</a>')
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
    <meta charset="UTF-8">
    <title>Quotes to Scrape</title>
    <link rel="stylesheet" href="/static/main.css">
</head>
<body>
    <div class="container">
        <div class="row header-box">
            <div class="col-md-8">
                <h1><a href="/" style="text-decoration: none">Quotes to Scrape</a></h1>
            </div>
            <div class="col-md-4"><p>{login}</p></div>
        </div>
{body}
    </div>
    <footer class="footer"><div class="container"><p class="text-muted">
        Quotes by: <a href="https://www.goodreads.com/quotes">GoodReads.com</a>
    </p></div></footer>
</body>
</html>
"""


def _quote_html(text, author, tags, logged_in):
    goodreads = (f'\n        <a href="http://goodreads.com/author/show/{slug(author)}">'
                 f'(Goodreads page)</a>' if logged_in else "")
    tag_links = "".join(f'\n            <a class="tag" href="/tag/{tag}/page/1/">{tag}</a>'
                        for tag in tags)
    return f"""    <div class="quote" itemscope itemtype="http://schema.org/CreativeWork">
        <span class="text" itemprop="text">\u201c{escape(text, quote=False)}\u201d</span>
        <span>by <small class="author" itemprop="author">{escape(author)}</small>
        <a href="/author/{slug(author)}">(about)</a>{goodreads}
        </span>
        <div class="tags">
            Tags:
            <meta class="keywords" itemprop="keywords" content="{','.join(tags)}" />{tag_links}
        </div>
    </div>
"""


def _pager(previous, following):
    parts = []
    if previous:
        parts.append(f'<li class="previous"><a href="{previous}">'
                     f'<span aria-hidden="true">&larr;</span> Previous</a></li>')
    if following:
        parts.append(f'<li class="next"><a href="{following}">Next '
                     f'<span aria-hidden="true">&rarr;</span></a></li>')
    return ('        <nav><ul class="pager">\n            ' + "\n            ".join(parts)
            + "\n        </ul></nav>\n")


def _logged_in(request):
    session = request.getCookie(b"session") or b""
    return session.startswith(b"user-")


def _quotes_listing(request, quotes, page, base):
    """One listing page: C{quotes} split in pages of L{PER_PAGE}, page C{page}."""
    pages = max(1, -(-len(quotes) // PER_PAGE))
    if page > pages:
        return _quotes_layout('        <div class="col-md-8">No quotes found!</div>\n',
                              _logged_in(request))
    shown = quotes[(page - 1) * PER_PAGE:page * PER_PAGE]
    body = '        <div class="row">\n        <div class="col-md-8">\n'
    body += "".join(_quote_html(*quote, _logged_in(request)) for quote in shown)
    body += _pager(f"{base}page/{page - 1}/" if page > 1 else None,
                   f"{base}page/{page + 1}/" if page < pages else None)
    body += "        </div>\n        </div>\n"
    return _quotes_layout(body, _logged_in(request))


class QuotesSite(_Leaf):
    """Every page of the quotes replica, routed by path."""

    def render(self, request):
        path = request.path.decode("latin-1")
        if path == "/login":
            return self.login(request)
        if path == "/logout":
            request.addCookie(b"session", b"", path=b"/")
            return self.redirect(request, b"/")
        if path == "/api/quotes":
            return self.api(request)
        if path in ("/scroll", "/js/"):
            return self.scripted(request, path)
        match = re.fullmatch(r"/(?:page/(\d+)/?)?", path)
        if match:
            page = int(match.group(1) or 1)
            return _respond(request, _quotes_listing(request, QUOTES, page, "/"))
        match = re.fullmatch(r"/tag/([^/]+)(?:/|/page/(\d+)/?)?", path)
        if match:
            tag, page = match.group(1), int(match.group(2) or 1)
            tagged = [quote for quote in QUOTES if tag in quote[2]]
            return _respond(request, _quotes_listing(request, tagged, page, f"/tag/{tag}/"))
        match = re.fullmatch(r"/author/([^/]+)/?", path)
        if match:
            return self.author(request, match.group(1))
        return _respond(request, "not found", 404, "text/plain")

    def author(self, request, name):
        found = [author for author in AUTHORS if slug(author) == name]
        if not found:
            return _respond(request, "not found", 404, "text/plain")
        author = found[0]
        born, location, description = AUTHORS[author]
        body = f"""        <div class="author-details">
            <h3 class="author-title">{escape(author)}
    </h3>
            <p><strong>Born:</strong> <span class="author-born-date">{born}</span>
            <span class="author-born-location">{escape(location)}</span></p>
            <p><strong>Description:</strong></p>
            <div class="author-description">
        {escape(description)}
    </div>
        </div>
"""
        return _respond(request, _quotes_layout(body, _logged_in(request)))

    def login(self, request):
        if request.method == b"POST":
            token = request.args.get(b"csrf_token", [b""])[0].decode()
            user = request.args.get(b"username", [b""])[0]
            if token != CSRF_TOKEN or request.getCookie(b"session") != b"anonymous":
                return _respond(request, "bad csrf token", 400, "text/plain")
            request.addCookie(b"session", b"user-" + (user or b"anyone"), path=b"/")
            return self.redirect(request, b"/")
        request.addCookie(b"session", b"anonymous", path=b"/")
        body = f"""        <form action="/login" method="post" accept-charset="utf-8" >
            <input type="hidden" name="csrf_token" value="{CSRF_TOKEN}"/>
            <div class="form-group">
                <label for="username">Username</label>
                <input type="text" class="form-control" id="username" name="username" />
            </div>
            <div class="form-group">
                <label for="username">Password</label>
                <input type="password" class="form-control" id="password" name="password" />
            </div>
            <input type="submit" value="Login" class="btn btn-primary" />
        </form>
"""
        return _respond(request, _quotes_layout(body, False))

    def redirect(self, request, location):
        request.setResponseCode(302)
        request.setHeader(b"location", location)
        return b""

    def api(self, request):
        try:
            page = int(request.args.get(b"page", [b"1"])[0])
        except ValueError:
            page = 1
        shown = QUOTES[(page - 1) * PER_PAGE:page * PER_PAGE]
        data = {
            "has_next": page * PER_PAGE < len(QUOTES),
            "page": page,
            "quotes": [{"author": {"goodreads_link": f"/author/show/{slug(author)}",
                                   "name": author, "slug": slug(author)},
                        "tags": tags, "text": f"\u201c{text}\u201d"}
                       for text, author, tags in shown],
            "tag": None,
            "top_ten_tags": [],
        }
        return _respond(request, json.dumps(data), content_type="application/json")

    def scripted(self, request, path):
        data = [{"tags": tags, "author": {"name": author, "slug": slug(author),
                                          "goodreads_link": f"/author/show/{slug(author)}"},
                 "text": f"\u201c{text}\u201d"} for text, author, tags in QUOTES[:PER_PAGE]]
        script = ("" if path == "/scroll" else
                  f"    var data = {json.dumps(data, indent=4)};\n"
                  "    for (var i in data) { document.write(data[i].text); }\n")
        body = (f'        <div class="quotes"></div>\n        <script>\n{script}'
                f'        </script>\n')
        return _respond(request, _quotes_layout(body, False))


def quotes_site(reactor=None):
    """@return: a started L{TestServer} replicating quotes.toscrape.com."""
    server = TestServer(reactor=reactor)
    server._routes = QuotesSite()
    server._site.resource = server._routes
    return server.start()


BOOKS = [
    # (title, price, rating, category, stock, upc, description)
    ("A Light in the Attic", "51.77", "Three", "Poetry", 22, "a897fe39b1053632",
     "It's hard to imagine a world without A Light in the Attic."),
    ("Tipping the Velvet", "53.74", "One", "Historical Fiction", 20, "90fa61229261140a",
     "\"Erotic and absorbing...Written with starling power.\""),
    ("Soumission", "50.10", "One", "Fiction", 20, "6957f44c3847a760",
     "Dans une France assez proche de la nôtre, un homme s'engage dans la carrière."),
    ("Sharp Objects", "47.82", "Four", "Mystery", 20, "e00eb4fd7b871a48",
     "WICKED above her hipbone, GIRL across her heart."),
    ("Sapiens: A Brief History of Humankind", "54.23", "Five", "History", 20,
     "4165285e1663650f", "From a renowned historian comes a groundbreaking narrative."),
    ("The Requiem Red", "22.65", "One", "Young Adult", 19, "f77dbf2323deb740",
     "Patient Twenty-nine. A monster roams the halls of Cedar Cove."),
    ("The Dirty Little Secrets of Getting Your Dream Job", "33.34", "Four", "Business", 19,
     "2597b5a345f45e1b", "Drawing on his extensive experience evaluating job seekers."),
    ("Poetry & Prose", "12.00", "Two", "Poetry", 3, "b0b0b0b0b0b0b0b0",
     "Short pieces & long ones, with < and > in them."),
]
BOOKS_PER_PAGE = 3
CATEGORIES = {"Poetry": 23, "Historical Fiction": 4, "Fiction": 10, "Mystery": 3,
              "History": 32, "Young Adult": 21, "Business": 35}


def book_slug(index):
    title = BOOKS[index][0]
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-") + f"_{1000 - index}"


def category_slug(category):
    return re.sub(r"[^a-z0-9]+", "-", category.lower()) + f"_{CATEGORIES[category]}"


def _books_layout(title, body, root, sidebar=True):
    """A books page; C{root} is the relative path from the page to the site root."""
    side = ""
    if sidebar:
        links = "".join(
            f'\n                        <li><a href="{root}catalogue/category/books/'
            f'{category_slug(name)}/index.html">\n                            {escape(name)}'
            f'\n                        </a></li>' for name in sorted(CATEGORIES))
        side = f"""        <aside class="sidebar col-sm-4 col-md-3 col-lg-3">
            <div class="side_categories">
                <ul class="nav nav-list">
                    <li><a href="{root}catalogue/category/books_1/index.html">Books</a>
                    <ul>{links}
                    </ul></li>
                </ul>
            </div>
        </aside>
"""
    return f"""<!DOCTYPE html>
<html lang="en-us" class="no-js">
<head>
    <title>{escape(title)} | Books to Scrape - Sandbox</title>
    <meta http-equiv="content-type" content="text/html; charset=UTF-8" />
</head>
<body id="default" class="default">
    <header class="header container-fluid"><div class="page_inner"><div class="row">
        <div class="col-sm-8 h1"><a href="{root}index.html">Books to Scrape</a></div>
    </div></div></header>
    <div class="container-fluid page"><div class="page_inner">
{side}{body}
    </div></div>
</body>
</html>
"""


def _pod(index, to_root):
    title, price, rating = BOOKS[index][:3]
    href = f"{to_root}catalogue/{book_slug(index)}/index.html"
    short = title if len(title) < 30 else title[:27] + "..."
    return f"""                <li class="col-xs-6 col-sm-4 col-md-3 col-lg-3">
                <article class="product_pod">
                    <div class="image_container">
                        <a href="{href}"><img src="{to_root}media/cache/{index:02d}.jpg"
                            alt="{escape(title)}" class="thumbnail"></a>
                    </div>
                    <p class="star-rating {rating}">
                        <i class="icon-star"></i><i class="icon-star"></i>
                    </p>
                    <h3><a href="{href}" title="{escape(title)}">{escape(short)}</a></h3>
                    <div class="product_price">
                        <p class="price_color">\u00a3{price}</p>
                        <p class="instock availability">
                            <i class="icon-ok"></i>
                            In stock
                        </p>
                    </div>
                </article>
                </li>
"""


def _books_listing(title, indexes, page, to_root, page_href):
    """A listing: C{indexes} split in pages; C{page_href(n)} links page n from this one."""
    pages = max(1, -(-len(indexes) // BOOKS_PER_PAGE))
    shown = indexes[(page - 1) * BOOKS_PER_PAGE:page * BOOKS_PER_PAGE]
    pods = "".join(_pod(index, to_root) for index in shown)
    pager = [f'<li class="current">Page {page} of {pages}</li>']
    if page > 1:
        pager.insert(0, f'<li class="previous"><a href="{page_href(page - 1)}">previous</a></li>')
    if page < pages:
        pager.append(f'<li class="next"><a href="{page_href(page + 1)}">next</a></li>')
    body = f"""        <div class="col-sm-8 col-md-9">
            <div class="page-header action"><h1>{escape(title)}</h1></div>
            <form method="get" class="form-horizontal">
                <strong>{len(indexes)}</strong> results - showing <strong>{len(shown)}</strong>.
            </form>
            <section><div>
                <ol class="row">
{pods}                </ol>
                <div><ul class="pager">{''.join(pager)}</ul></div>
            </div></section>
        </div>
"""
    return body


def _product(index):
    title, price, rating, category, stock, upc, description = BOOKS[index]
    crumb = f'<a href="../category/books/{category_slug(category)}/index.html">'
    body = f"""        <ul class="breadcrumb">
            <li><a href="../../index.html">Home</a></li>
            <li><a href="../category/books_1/index.html">Books</a></li>
            <li>{crumb}{escape(category)}</a></li>
            <li class="active">{escape(title)}</li>
        </ul>
        <article class="product_page">
            <div class="row">
                <div class="col-sm-6"><div id="product_gallery" class="carousel">
                    <div class="thumbnail"><div class="carousel-inner"><div class="item active">
                        <img src="../../media/cache/{index:02d}.jpg" alt="{escape(title)}" />
                    </div></div></div>
                </div></div>
                <div class="col-sm-6 product_main">
                    <h1>{escape(title)}</h1>
                    <p class="price_color">\u00a3{price}</p>
                    <p class="instock availability">
                        <i class="icon-ok"></i>
                        In stock ({stock} available)
                    </p>
                    <p class="star-rating {rating}">
                        <i class="icon-star"></i>
                    </p>
                </div>
            </div>
            <div id="product_description" class="sub-header"><h2>Product Description</h2></div>
            <p>{escape(description)} ...more</p>
            <div class="sub-header"><h2>Product Information</h2></div>
            <table class="table table-striped">
                <tr><th>UPC</th><td>{upc}</td></tr>
                <tr><th>Product Type</th><td>Books</td></tr>
                <tr><th>Price (excl. tax)</th><td>\u00a3{price}</td></tr>
                <tr><th>Price (incl. tax)</th><td>\u00a3{price}</td></tr>
                <tr><th>Tax</th><td>\u00a30.00</td></tr>
                <tr><th>Availability</th><td>In stock ({stock} available)</td></tr>
                <tr><th>Number of reviews</th><td>0</td></tr>
            </table>
        </article>
"""
    return _books_layout(title, body, "../../", sidebar=False)


class BooksSite(_Leaf):
    """Every page of the books replica, routed by path."""

    def render(self, request):
        path = request.path.decode("latin-1")
        every = list(range(len(BOOKS)))
        if path in ("/", "/index.html"):
            body = _books_listing("All products", every, 1, "", _index_page_href)
            return self.page(request, _books_layout("All products", body, ""))
        match = re.fullmatch(r"/catalogue/page-(\d+)\.html", path)
        if match and 1 <= int(match.group(1)) <= -(-len(BOOKS) // BOOKS_PER_PAGE):
            body = _books_listing("All products", every, int(match.group(1)), "../",
                                  _catalogue_page_href)
            return self.page(request, _books_layout("All products", body, "../"))
        match = re.fullmatch(r"/catalogue/category/books_1/index\.html", path)
        if match:
            body = _books_listing("Books", every, 1, "../../../", _catalogue_page_href)
            return self.page(request, _books_layout("Books", body, "../../../"))
        match = re.fullmatch(r"/catalogue/category/books/([^/]+)/(index|page-\d+)\.html", path)
        if match:
            names = [name for name in CATEGORIES if category_slug(name) == match.group(1)]
            if names:
                page = 1 if match.group(2) == "index" else int(match.group(2)[5:])
                indexes = [i for i, book in enumerate(BOOKS) if book[3] == names[0]]
                body = _books_listing(names[0], indexes, page, "../../../../",
                                      _catalogue_page_href)
                return self.page(request, _books_layout(names[0], body, "../../../../"))
        match = re.fullmatch(r"/catalogue/([^/]+)/index\.html", path)
        if match:
            found = [i for i in range(len(BOOKS)) if book_slug(i) == match.group(1)]
            if found:
                return self.page(request, _product(found[0]))
        return _respond(request, "not found", 404, "text/plain")

    def page(self, request, html):
        # as the real site: no charset in the header, the meta tag says UTF-8
        return _respond(request, html, content_type="text/html")


def _index_page_href(page):
    return f"catalogue/page-{page}.html"


def _catalogue_page_href(page):
    return f"page-{page}.html"


def books_site(reactor=None):
    """@return: a started L{TestServer} replicating books.toscrape.com."""
    server = TestServer(reactor=reactor)
    server._routes = BooksSite()
    server._site.resource = server._routes
    return server.start()


SHOP_PRODUCTS = ["red-kettle", "blue-teapot", "green-mug", "white-jug"]
SHOP_PAGES = ["about", "contact", "blog/first-post"]


class SitemapSite(_Leaf):
    """A shop found through its sitemaps: robots.txt, an index, two sitemaps."""

    def render(self, request):
        path = request.path.decode("latin-1")
        host = request.getRequestHostname().decode()
        base = f"http://{host}:{request.getHost().port}"
        if path == "/robots.txt":
            return _respond(request, f"User-agent: *\nDisallow: /private/\n\n"
                                     f"Sitemap: {base}/sitemap_index.xml\n",
                            content_type="text/plain")
        if path == "/sitemap_index.xml":
            entries = "".join(f"  <sitemap><loc>{base}/{name}</loc>"
                              f"<lastmod>2024-0{i + 1}-01</lastmod></sitemap>\n"
                              for i, name in enumerate(["sitemap-products.xml.gz",
                                                        "sitemap-pages.xml"]))
            return _respond(request, '<?xml version="1.0" encoding="UTF-8"?>\n'
                            '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
                            f"{entries}</sitemapindex>\n", content_type="application/xml")
        if path == "/sitemap-products.xml.gz":
            xml = _urlset(f"{base}/product/{name}.html" for name in SHOP_PRODUCTS)
            return _respond(request, gzip.compress(xml.encode(), mtime=0),
                            content_type="application/x-gzip")
        if path == "/sitemap-pages.xml":
            return _respond(request, _urlset(f"{base}/{name}.html" for name in SHOP_PAGES),
                            content_type="application/xml")
        if path == "/feed.rss":
            return _respond(request, _rss(base), content_type="application/rss+xml")
        if path == "/products.csv":
            rows = "".join(f'{name},"{_title(name)}",{10 + i * 2.5:.2f}\n'
                           for i, name in enumerate(SHOP_PRODUCTS))
            return _respond(request, "slug,name,price\n" + rows + "broken,row\n",
                            content_type="text/csv")
        match = re.fullmatch(r"/product/([a-z-]+)\.html", path)
        if match and match.group(1) in SHOP_PRODUCTS:
            name = match.group(1)
            price = 10 + SHOP_PRODUCTS.index(name) * 2.5
            return _respond(request, f"""<!DOCTYPE html>
<html><head><title>{name.replace('-', ' ').title()} - Shop</title></head>
<body><div class="product"><h1 itemprop="name">{name.replace('-', ' ').title()}</h1>
<span class="price" itemprop="price" content="{price:.2f}">${price:.2f}</span>
<a href="/">Home</a></div></body></html>
""")
        match = re.fullmatch(r"/([a-z/-]+)\.html", path)
        if match and match.group(1) in SHOP_PAGES:
            return _respond(request, f"""<!DOCTYPE html>
<html><head><title>{match.group(1)} - Shop</title></head>
<body><h1>{match.group(1)}</h1><p class="lead">A page of the shop.</p></body></html>
""")
        return _respond(request, "not found", 404, "text/plain")


def _title(slug):
    return slug.replace("-", " ").title()


def _rss(base):
    items = "".join(f"""    <item>
      <title>{page.split('/')[-1].replace('-', ' ')}</title>
      <link>{base}/{page}.html</link>
      <dc:creator>Shop team {i}</dc:creator>
      <category>news</category>
    </item>
""" for i, page in enumerate(SHOP_PAGES))
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            '<rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/">\n'
            f"  <channel>\n    <title>Shop news</title>\n    <link>{base}/</link>\n"
            f"{items}  </channel>\n</rss>\n")


def _urlset(locations):
    urls = "".join(f"  <url><loc>{loc}</loc><lastmod>2024-05-0{i + 1}</lastmod></url>\n"
                   for i, loc in enumerate(locations))
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
            f"{urls}</urlset>\n")


def sitemap_site(reactor=None):
    """@return: a started L{TestServer} replicating a shop with sitemaps."""
    server = TestServer(reactor=reactor)
    server._routes = SitemapSite()
    server._site.resource = server._routes
    return server.start()


# what a spider's source names, and which replica answers for it
SITES = {"quotes.toscrape.com": quotes_site, "books.toscrape.com": books_site,
         "sitemap.toscrape.com": sitemap_site}


def start_replicas(reactor=None):
    """@return: C{{domain: started TestServer}} for every domain of L{SITES}."""
    return {domain: make(reactor) for domain, make in SITES.items()}


def localize(source, ports):
    """
    Point a spider's source at the replicas: C{http(s)://DOMAIN} becomes
    C{http://127.0.0.1:PORT}, and C{DOMAIN} left alone (C{allowed_domains}) C{127.0.0.1}.

    @param ports: C{{domain: port}}.
    """
    for domain, port in ports.items():
        source = re.sub(rf"https?://{re.escape(domain)}", f"http://127.0.0.1:{port}", source)
        source = source.replace(domain, "127.0.0.1")
    return source


def port_imports(source):
    """The port rule, on import lines only: C{scrapy} becomes C{tinyscrapy}."""
    lines = []
    for line in source.splitlines(keepends=True):
        stripped = line.lstrip()
        indent = line[:len(line) - len(stripped)]
        if re.match(r"import scrapy\s*(#.*)?$", stripped):
            stripped = stripped.replace("import scrapy", "import tinyscrapy as scrapy", 1)
        elif re.match(r"import scrapy\.", stripped):
            stripped = "import tinyscrapy." + stripped[len("import scrapy."):]
        elif re.match(r"from scrapy[. ]", stripped):
            stripped = "from tinyscrapy" + stripped[len("from scrapy"):]
        lines.append(indent + stripped)
    return "".join(lines)


def main():
    """Serve the replicas until killed; print C{{domain: port}} as one JSON line."""
    from twisted.internet import reactor

    servers = start_replicas(reactor)
    sys.stdout.write(json.dumps({domain: server.port for domain, server in servers.items()})
                     + "\n")
    sys.stdout.flush()
    reactor.run()


if __name__ == "__main__":
    main()

