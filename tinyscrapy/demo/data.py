"""
The demo site's content: books and quotes generated from a fixed seed.

Everything here is plain data built by L{make_catalogue}. One seed always gives the same
catalogue (a private C{random.Random}, word lists kept in tuples, never sets), so the pages
rendered from it are the same bytes in every process. Books and attributions are invented.
"""

import random
import re
import unicodedata
from dataclasses import dataclass, field
from itertools import product

SEED = 20240607
BOOK_COUNT = 200
BOOK_CATEGORY_COUNT = 10
BOOKS_PER_PAGE = 20
QUOTE_COUNT = 100
QUOTES_PER_PAGE = 10

RATINGS = ("One", "Two", "Three", "Four", "Five")

# (name, weight): uneven weights so that some categories span several pages.
_CATEGORIES = (
    ("Travel", 3), ("Mystery", 4), ("Historical Fiction", 3), ("Science Fiction", 2),
    ("Poetry", 1), ("Romance", 2), ("Fantasy", 2), ("Philosophy", 1),
    ("Food and Drink", 1), ("Art", 1),
)
_ADJECTIVES = (
    "Silent", "Golden", "Lost", "Hidden", "Crimson", "Last", "Broken", "Quiet", "Wandering",
    "Distant", "Forgotten", "Bright", "Little", "Secret", "Winter", "Naïve",
)
_NOUNS = (
    "Garden", "River", "Café", "Lighthouse", "Map", "Orchard", "Letter", "Kingdom", "Harbour",
    "Bookshop", "Clockmaker", "Mirror", "Voyage", "Résumé", "Bridge", "Island", "Sparrow",
)
_PLACES = (
    "Paris", "Kyoto", "the North", "Lisbon", "the Sea", "Marrakesh", "São Paulo", "Zürich",
    "the Moon", "Reykjavík",
)
_TITLE_PATTERNS = (
    "The {adj} {noun}", "{noun} of {place}", "A {noun} in {place}", "The {noun} and the {noun2}",
    "{adj} {noun}s", "The {adj} {noun} of {place}",
)
_SUBTITLES = ("", "", "", "", ": A Novel", ": Stories", ", Volume II", ": A Memoir of {place}")
_BLURBS = (
    "A patient, funny book about the things we keep and the things we give away.",
    "Set between {place} and nowhere in particular, it follows one long summer.",
    "Readers will not forget the {noun} at its centre.",
    "Part mystery, part love letter, it rewards a second reading.",
    "The prose is spare; the ending is not.",
    "A story told in letters, lists and one unsent postcard from {place}.",
)

_AUTHORS = (
    ("Gabriel García Márquez", "March 06, 1927", "in Aracataca, Colombia",
     "Colombian novelist, short-story writer and journalist, author of One Hundred Years of "
     "Solitude and Love in the Time of Cholera."),
    ("Ada Lindqvist", None, "in Uppsala, Sweden", None),
    ("Tomás Ferreira", None, "in Porto, Portugal", None),
    ("Zoë Castellanos", None, "in Valparaíso, Chile", None),
    ("Björn Åkesson", None, "in Malmö, Sweden", None),
    ("Mei Tanaka", None, "in Sapporo, Japan", None),
    ("Kwame Mensah", None, "in Kumasi, Ghana", None),
    ("Élodie Marchand", None, "in Lyon, France", None),
    ("Noor Haddad", None, "in Beirut, Lebanon", None),
    ("Oliver Twine", None, "in Bristol, England", None),
    ("Priya Raman", None, "in Chennai, India", None),
    ("Jonas Weiß", None, "in Leipzig, Germany", None),
)
_MONTHS = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
)
_QUOTE_SUBJECTS = (
    "A good book", "Every morning", "A quiet mind", "Kindness", "Curiosity", "A small step",
    "Laughter", "Patience", "An honest question", "Memory", "Hope", "The road home",
    "Naïveté", "Friendship", "Time",
)
_QUOTE_PREDICATES = (
    "is a door that opens from the inside.", "grows only when it is shared.",
    "asks for nothing and returns everything.", "is the longest journey you will ever take.",
    "is louder than any argument.", "keeps the lights on when the power fails.",
    "is a map drawn in pencil — keep an eraser.", "is never wasted, only postponed.",
    "teaches what no school can.", "is braver than it looks.",
    "is where every story begins.", "makes ordinary days extraordinary.",
    "is the art of beginning again.", "will find you if you stop running.",
    "is a garden: tend it daily.",
)
TAGS = (
    "love", "life", "books", "humor", "inspirational", "truth", "friendship", "time", "hope",
    "writing", "wisdom", "change",
)


def slugify(text):
    """
    Make a URL-safe slug: ASCII-folded, lower case, words joined by hyphens.

    @param text: any text, e.g. C{"Gabriel García Márquez"}.
    @return: the slug, e.g. C{"gabriel-garcia-marquez"}.
    """
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")


@dataclass
class Category:
    """A book category; C{books} is filled in id order."""

    name: str
    slug: str
    books: list = field(default_factory=list, repr=False)


@dataclass
class Book:
    """One book. C{price_pence} avoids float rounding; C{stock} 0 means out of stock."""

    id: int
    title: str
    slug: str
    category: Category
    price_pence: int
    stock: int
    rating: int
    upc: str
    description: str

    @property
    def price_text(self):
        """The price as the site shows it, e.g. C{"£23.40"}."""
        return f"£{self.price_pence // 100}.{self.price_pence % 100:02d}"

    @property
    def stock_text(self):
        """The availability as the book's page shows it, e.g. C{"In stock (7 available)"}."""
        return f"In stock ({self.stock} available)" if self.stock else "Out of stock"

    @property
    def stars(self):
        """The rating as a word for the CSS class and as stars, e.g. C{("Three", "★★★☆☆")}."""
        return RATINGS[self.rating - 1], "★" * self.rating + "☆" * (5 - self.rating)


@dataclass
class Author:
    """A quoted author; C{quotes} is filled in quote order."""

    name: str
    slug: str
    born_date: str
    born_location: str
    description: str
    quotes: list = field(default_factory=list, repr=False)


@dataclass
class Quote:
    """One quote; C{text} includes the curly quotation marks, as on quotes.toscrape.com."""

    id: int
    text: str
    author: Author
    tags: tuple


@dataclass
class Catalogue:
    """Everything the site shows. C{tags} maps each used tag to its quotes, in L{TAGS} order."""

    books: tuple
    categories: tuple
    quotes: tuple
    authors: tuple
    tags: dict


def _book_title(rng, taken):
    """Draw titles until one is new; C{taken} collects the titles drawn so far."""
    while True:
        words = {
            "adj": rng.choice(_ADJECTIVES), "noun": rng.choice(_NOUNS),
            "noun2": rng.choice(_NOUNS), "place": rng.choice(_PLACES),
        }
        title = (rng.choice(_TITLE_PATTERNS) + rng.choice(_SUBTITLES)).format(**words)
        if title not in taken and words["noun"] != words["noun2"]:
            taken.add(title)
            return title, words


def _make_books(rng, book_count=BOOK_COUNT):
    """Return (books, categories); the first ten books seed one category each."""
    categories = tuple(Category(name, slugify(name)) for name, _ in _CATEGORIES)
    weights = [weight for _, weight in _CATEGORIES]
    taken, books = set(), []
    for book_id in range(1, book_count + 1):
        title, words = _book_title(rng, taken)
        if book_id <= len(categories):
            category = categories[book_id - 1]
        else:
            category = rng.choices(categories, weights)[0]
        blurbs = rng.sample(_BLURBS, 2)
        book = Book(
            id=book_id, title=title, slug=slugify(title), category=category,
            price_pence=rng.randint(999, 5999),
            stock=0 if rng.random() < 0.15 else rng.randint(1, 22),
            rating=rng.randint(1, 5), upc=f"{rng.getrandbits(64):016x}",
            description=" ".join(blurb.format(**words) for blurb in blurbs),
        )
        category.books.append(book)
        books.append(book)
    return tuple(books), categories


def _make_authors(rng):
    """Return the authors, inventing birth dates and descriptions where none is given."""
    authors = []
    for name, born_date, born_location, description in _AUTHORS:
        if born_date is None:
            month, day = rng.choice(_MONTHS), rng.randint(1, 28)
            born_date = f"{month} {day:02d}, {rng.randint(1900, 1990)}"
        if description is None:
            description = (f"{name} is an invented author of this demo site, born "
                           f"{born_location}, who writes short, stubborn aphorisms.")
        authors.append(Author(name, slugify(name), born_date, born_location, description))
    return tuple(authors)


def _make_quotes(rng, authors):
    """Return (quotes, tags); every author gets at least one quote."""
    sentences = rng.sample(list(product(_QUOTE_SUBJECTS, _QUOTE_PREDICATES)), QUOTE_COUNT)
    by = list(authors) + rng.choices(authors, k=QUOTE_COUNT - len(authors))
    rng.shuffle(by)
    tags = {tag: [] for tag in TAGS}
    quotes = []
    for quote_id, (subject, predicate) in enumerate(sentences, start=1):
        author = by[quote_id - 1]
        picked = sorted(rng.sample(TAGS, rng.choice((0, 1, 1, 2, 2, 3))), key=TAGS.index)
        quote = Quote(quote_id, f"“{subject} {predicate}”", author, tuple(picked))
        author.quotes.append(quote)
        for tag in picked:
            tags[tag].append(quote)
        quotes.append(quote)
    return tuple(quotes), {tag: found for tag, found in tags.items() if found}


def make_catalogue(seed=SEED, book_count=BOOK_COUNT):
    """
    Generate the whole catalogue.

    @param seed: the seed of the private random generator; the default is the site's.
    @param book_count: how many books (the benchmarks ask for a large catalogue).
    @return: a new L{Catalogue}, equal for equal seeds.
    """
    rng = random.Random(seed)
    books, categories = _make_books(rng, book_count)
    authors = _make_authors(rng)
    quotes, tags = _make_quotes(rng, authors)
    return Catalogue(books, categories, quotes, authors, tags)
