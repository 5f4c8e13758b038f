"""
Credentials stay where they belong: masked wherever settings are logged, never sent to an
origin they were not meant for after a redirect (whoever set them), never stored with a
request (job directory, Redis), and never in any file a run leaves.
"""

import base64
import json
import os
import sys

from twisted.internet import defer, reactor
from twisted.trial import unittest

from tinyscrapy.http import Request
from tinyscrapy.spiders import Spider
from tinyscrapy.utils.log import masked, redact_url

from .helpers import crawl, needs_processes, run_python, serve, subprocess_env
from .logs import capture_logs
from .proxies import ForwardProxy
from .redisserver import NO_REDIS, RedisServer
from .servers import Delay, Echo, Redirect, Status

OWN = "Bearer SPIDER-SECRET-1"
COOKIE = "c=COOKIE-SECRET-2"
DEFAULT = "Bearer DEFAULT-SECRET-3"
MIDDLEWARE = "Bearer MW-SECRET-4"
HTTPAUTH = "HTTPAUTH-SECRET-5"
PROXY = "PROXY-SECRET-6"
REDIS = "REDIS-SECRET-7"


def basic(user, password):
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


# every form a secret could take in a file or a key: as given, and base64 in a header
SECRET_FORMS = [OWN, COOKIE, DEFAULT, MIDDLEWARE, HTTPAUTH, PROXY, REDIS,
                basic("user", HTTPAUTH).split()[1], basic("user", PROXY).split()[1],
                "SPIDER-SECRET-1", "COOKIE-SECRET-2"]


def secrets_in(data):
    """The secret forms found in C{data} (bytes)."""
    return [form for form in SECRET_FORMS if form.encode() in data]


def files_under(root):
    for folder, _, names in os.walk(root):
        for name in names:
            yield os.path.join(folder, name)


class MaskTests(unittest.TestCase):
    """How settings are shown in logs and printouts."""

    def test_names(self):
        """A part PASS, PASSWD, PASSWORD, SECRET or TOKEN, or a name ending in KEY, is
        masked (SCHEDULER_REDIS_KEY is a key prefix, shown); an empty value shows as it
        is."""
        for name in ("HTTPAUTH_PASS", "DB_PASSWORD", "FTP_PASSWD", "AWS_SECRET_ACCESS_KEY",
                     "GITHUB_TOKEN", "APIKEY", "MY_API_KEY", "token", "Secret_Sauce"):
            self.assertEqual(masked(name, "s3cr3t"), "***", name)
        for name in ("SCHEDULER_REDIS_KEY", "PASSPORT_DIR", "KEYBOARD", "TOKENS_MAX",
                     "USER_AGENT"):
            self.assertEqual(masked(name, "visible"), "visible", name)
        self.assertEqual(masked("HTTPAUTH_PASS", ""), "")
        self.assertIsNone(masked("HTTPAUTH_PASS", None))

    def test_values(self):
        """Credential URLs anywhere in a value (dict keys and values, lists, nested), the
        values of entries named like credentials, and credential headers, are masked."""
        value = {"ftp://feeds:pw1@127.0.0.1/items.json": {"format": "json"},
                 "nested": ["http://user:pw2@127.0.0.1/", {"api_token": "pw3"}],
                 "redis": "redis://pw4@127.0.0.1:6379/0",
                 "Authorization": "Bearer pw5", "cookie": "s=pw6",
                 "Accept": "text/html"}
        shown = repr(masked("FEEDS", value))
        for secret in ("pw1", "pw2", "pw3", "pw4", "pw5", "pw6"):
            self.assertNotIn(secret, shown)
        self.assertIn("ftp://feeds:***@127.0.0.1/items.json", shown)
        self.assertIn("redis://***@127.0.0.1:6379/0", shown)
        self.assertIn("text/html", shown)
        self.assertEqual(redact_url("no url here"), "no url here")
        self.assertEqual(redact_url("http://u:p@h/ and redis://:q@h/0"),
                         "http://u:***@h/ and redis://:***@h/0")
        # a password holding an unescaped @: the host starts after the last one (as the
        # connection reads it), so none of the password is shown
        self.assertEqual(redact_url("redis://:Bad@Pw@127.0.0.1:6379/0 http://u:Pr@xy@h/"),
                         "redis://:***@127.0.0.1:6379/0 http://u:***@h/")
        self.assertEqual(redact_url("http://h/path@x?q=a@b"), "http://h/path@x?q=a@b")

    @defer.inlineCallbacks
    def test_start_line_shows_no_secret(self):
        """The INFO line of the settings at start: every credential masked, the rest
        shown."""
        server = serve(self)
        logs = capture_logs(self, "tinyscrapy", 20)
        settings = {
            "LOG_LEVEL": "INFO", "HTTPAUTH_USER": "user", "HTTPAUTH_PASS": HTTPAUTH,
            "HTTPAUTH_DOMAIN": "127.0.0.1", "MY_API_KEY": MIDDLEWARE,
            "DEFAULT_REQUEST_HEADERS": {"Authorization": DEFAULT},
            "SCHEDULER_REDIS_KEY": "visible:prefix:",
            "EXTRA_URLS": [f"http://user:{PROXY}@127.0.0.1/"]}
        from .recording import Recorder
        yield crawl(Recorder, settings, start_urls=[server.add_page("/")])
        line, = [m for m in logs.messages() if ": settings: " in m]
        self.assertEqual(secrets_in(line.encode()), [])
        self.assertIn("HTTPAUTH_PASS='***'", line)
        self.assertIn("visible:prefix:", line)
        self.assertEqual([m for m in logs.messages() if secrets_in(m.encode())], [])


class SettingsCommandTests(unittest.TestCase):
    """C{settings --get NAME} prints what was asked."""

    @defer.inlineCallbacks
    def test_get_prints_the_value(self):
        """--get HTTPAUTH_PASS prints the password itself: it was asked for."""
        needs_processes()
        code, out, err = yield run_python(reactor, ["-m", "tinyscrapy", "settings", "--get",
                                                    "HTTPAUTH_PASS", "-s",
                                                    f"HTTPAUTH_PASS={HTTPAUTH}"])
        self.assertEqual(code, 0, err)
        self.assertEqual(out.strip(), HTTPAUTH)


class AddAuthorization:
    """A downloader middleware that sets an Authorization header on every request."""

    def process_request(self, request, spider=None):
        if "Authorization" not in request.headers:
            request.headers["Authorization"] = MIDDLEWARE


class RedirectSpider(Spider):
    name = "redirects"

    def __init__(self, start="", own=False, **kwargs):
        super().__init__(**kwargs)
        self.start = start
        self.own = own
        self.echoes = []

    def start_requests(self):
        headers = {"Authorization": OWN, "Cookie": COOKIE} if self.own else {}
        yield Request(self.start, headers=headers, dont_filter=True)

    def parse(self, response):
        self.echoes.append(response.json()["headers"])


class RedirectTests(unittest.TestCase):
    """A redirect from one origin to another, credentials set every way."""

    def setUp(self):
        self.first = serve(self)
        self.other = serve(self, "127.0.0.2")
        self.target = self.other.add("/echo", Echo())
        self.start = self.first.add("/go", Redirect(self.target))
        self.first.add("/echo", Echo())

    @defer.inlineCallbacks
    def run_crawl(self, settings=None, own=False, start=None):
        crawler = yield crawl(RedirectSpider, settings, start=start or self.start, own=own)
        return crawler.spider.echoes

    def sent_to(self, server):
        return [request.headers for request in server.requests]

    @defer.inlineCallbacks
    def test_none_reaches_the_other_origin(self):
        """The spider's own Authorization and Cookie, DEFAULT_REQUEST_HEADERS' and a
        middleware's Authorization and Cookie: the first origin gets them, the other none
        (Scrapy sends the default and middleware ones again after its redirect)."""
        settings = {"DEFAULT_REQUEST_HEADERS": {"Authorization": DEFAULT,
                                                "Cookie": "d=DEFAULT-COOKIE"},
                    "DOWNLOADER_MIDDLEWARES": {f"{__name__}.AddAuthorization": 543}}
        for own in (True, False):
            self.first.requests.clear()
            self.other.requests.clear()
            echoes = yield self.run_crawl(settings, own=own)
            self.assertEqual(len(echoes), 1)
            received, = self.sent_to(self.other)
            for name in ("authorization", "cookie", "proxy-authorization"):
                self.assertNotIn(name, received, (own, received))
            first, = self.sent_to(self.first)
            self.assertEqual(first["authorization"], OWN if own else DEFAULT)
            self.assertIn("COOKIE-SECRET-2" if own else "DEFAULT-COOKIE", first["cookie"])

    @defer.inlineCallbacks
    def test_http_auth_goes_where_its_domain_says(self):
        """HTTPAUTH for the other origin's host: the other origin gets it, the first does
        not; for the first origin's host: the other does not."""
        for domain, gets in (("127.0.0.2", self.other), ("127.0.0.1", self.first)):
            self.first.requests.clear()
            self.other.requests.clear()
            yield self.run_crawl({"HTTPAUTH_USER": "user", "HTTPAUTH_PASS": HTTPAUTH,
                                  "HTTPAUTH_DOMAIN": domain})
            for server in (self.first, self.other):
                received, = self.sent_to(server)
                if server is gets:
                    self.assertEqual(received["authorization"], basic("user", HTTPAUTH))
                else:
                    self.assertNotIn("authorization", received)

    @defer.inlineCallbacks
    def test_same_origin_keeps_them(self):
        """A redirect within the origin keeps the spider's credentials, as in Scrapy."""
        start = self.first.add("/here", Redirect(self.first.url("/echo")))
        echoes = yield self.run_crawl(own=True, start=start)
        self.assertEqual(echoes[0]["authorization"], [OWN])


class StoringSpider(Spider):
    """Requests with credentials every way a spider gives them: its own headers, HTTP
    auth of its attributes and of meta, and a proxy's in meta["proxy"]."""

    name = "storing"
    http_user = "user"
    http_pass = HTTPAUTH
    http_auth_domain = "127.0.0.1"

    def __init__(self, base="", proxy="", pages=20, **kwargs):
        super().__init__(**kwargs)
        self.base = base
        self.proxy = proxy
        self.pages = int(pages)
        self.seen = []

    def start_requests(self):
        yield Request(f"{self.base}/start", callback=self.queue_all)

    def queue_all(self, response):
        """All at once: the frontier holds them (start requests are pulled lazily)."""
        for n in range(self.pages):
            yield Request(f"{self.base}/own/{n}", headers={"Authorization": OWN,
                                                           "Cookie": COOKIE})
            yield Request(f"{self.base}/auth/{n}")
            yield Request(f"{self.base}/meta/{n}", meta={
                "http_user": "user", "http_pass": HTTPAUTH, "http_auth_domain": "127.0.0.1"})
            if self.proxy:
                yield Request(f"{self.base}/proxied/{n}",
                              meta={"proxy": self.proxy.replace("//", f"//user:{PROXY}@")})

    def parse(self, response):
        self.seen.append(response.url)


def _answering(server, pages):
    server.add("/start", Echo())
    for kind in ("own", "auth", "meta", "proxied"):
        for n in range(pages):
            server.add(f"/{kind}/{n}", Echo())


class JobdirTests(unittest.TestCase):
    """A job directory holds no credential; this run still sends them all."""

    def setUp(self):
        self.server = serve(self)
        self.proxy = ForwardProxy()
        self.addCleanup(self.proxy.stop)
        _answering(self.server, 80)
        self.jobdir = os.path.abspath(self.mktemp())

    def received(self, kind):
        return [r for r in self.server.requests if r.path.startswith(f"/{kind}/")]

    @defer.inlineCallbacks
    def test_nothing_stored_everything_sent(self):
        """80 requests of each kind (more than a host keeps in memory: the rest are read
        back from disk), the crawl closed after 100 pages: every file of the job directory
        is free of every credential; every page fetched had its own; copies that left a
        credential in memory are counted and said once. Resumed by a new run, the spider's
        own credentials are gone (said once), HTTP auth is added again."""
        logs = capture_logs(self, "tinyscrapy", 30)
        settings = {"JOBDIR": self.jobdir, "CLOSESPIDER_PAGECOUNT": 100,
                    "CONCURRENT_REQUESTS": 2}
        crawler = yield crawl(StoringSpider, settings, base=self.server.url("").rstrip("/"),
                              proxy=self.proxy.url(), pages=80)
        for path in files_under(self.jobdir):
            with open(path, "rb") as f:
                self.assertEqual(secrets_in(f.read()), [], path)
        for request in self.received("own"):
            self.assertEqual(request.headers["authorization"], OWN)
            self.assertIn("COOKIE-SECRET-2", request.headers["cookie"])
        for kind in ("auth", "meta"):
            for request in self.received(kind):
                self.assertEqual(request.headers["authorization"], basic("user", HTTPAUTH))
        for request in self.proxy.requests:
            self.assertEqual(request.headers["proxy-authorization"], basic("user", PROXY))
        self.assertGreater(len(self.received("own")), 10)
        self.assertGreater(crawler.stats.get_value("frontier/credentials_dropped"), 20)
        said = [m for m in logs.messages() if "that no middleware adds again" in m]
        self.assertEqual(len(said), 1)
        self.assertIn("http_auth_domain", said[0])
        self.assertGreater(crawler.stats.get_value("scheduler/saved"), 150)
        self.server.requests.clear()
        second = yield crawl(StoringSpider, {"JOBDIR": self.jobdir, "CLOSESPIDER_PAGECOUNT": 20},
                    base=self.server.url("").rstrip("/"), pages=0)
        own = self.received("own")
        self.assertTrue(own, second.stats.get_stats())
        for request in own:  # the spider's own are gone; HTTP auth stands in
            self.assertEqual(request.headers["authorization"], basic("user", HTTPAUTH))
            self.assertNotIn("cookie", request.headers)
        for request in self.received("auth"):
            self.assertEqual(request.headers["authorization"], basic("user", HTTPAUTH))
        # meta http_user/http_pass stayed in the first run's memory, both: the spider's
        # HTTP auth stands in, not the user with an empty password
        meta = self.received("meta")
        self.assertTrue(meta)
        for request in meta:
            self.assertEqual(request.headers["authorization"], basic("user", HTTPAUTH))
        self.assertEqual(len([m for m in logs.messages() if "stored by another run" in m]), 1)

    @defer.inlineCallbacks
    def test_retried_request_stored_without_them(self):
        """A request retried after a 503, left in the job directory when the crawl stops
        (its retry waits out a backoff): stored without its HTTP auth, and sent with it
        again by the next run."""
        self.server.add("/flaky", _Once(Status(503, b"busy"), Echo()))
        self.server.add("/fine", Delay(0.2, b"<html></html>"))

        class Flaky(StoringSpider):
            def start_requests(self):
                yield Request(self.base + "/flaky")
                yield Request(self.base + "/fine")

        base = self.server.url("").rstrip("/")
        settings = {"JOBDIR": self.jobdir, "RETRY_BACKOFF_BASE": 2, "RETRY_BACKOFF_MAX": 2}
        crawler = yield crawl(Flaky, {**settings, "CLOSESPIDER_PAGECOUNT": 1}, base=base)
        self.assertEqual(crawler.stats.get_value("retry/count"), 1)
        self.assertEqual(crawler.stats.get_value("scheduler/saved"), 1)
        for path in files_under(self.jobdir):
            with open(path, "rb") as f:
                self.assertEqual(secrets_in(f.read()), [], path)
        yield crawl(Flaky, settings, base=base)
        first, second = [r for r in self.server.requests if r.path == "/flaky"]
        for request in (first, second):
            self.assertEqual(request.headers["authorization"], basic("user", HTTPAUTH))


class _Once:
    """The first request gets C{first}, every later one C{then}."""

    isLeaf = True

    def __init__(self, first, then):
        self.first, self.then, self.count = first, then, 0

    def render(self, request):
        self.count += 1
        return (self.first if self.count == 1 else self.then).render(request)


class RedisTests(unittest.TestCase):
    """The keys of a shared crawl hold no credential."""

    skip = NO_REDIS
    timeout = 60

    def setUp(self):
        self.redis = RedisServer("--requirepass", REDIS).start()
        self.addCleanup(self.redis.stop)
        self.server = serve(self)
        self.proxy = ForwardProxy()
        self.addCleanup(self.proxy.stop)
        _answering(self.server, 30)

    def dump(self):
        """Every key and every value of every key, as bytes."""
        data = b""
        for key in self.redis.call("KEYS", "*"):
            data += key
            kind = self.redis.call("TYPE", key)
            values = {b"string": ("GET", key), b"list": ("LRANGE", key, 0, -1),
                      b"set": ("SMEMBERS", key), b"zset": ("ZRANGE", key, 0, -1),
                      b"hash": ("HGETALL", key)}[kind]
            value = self.redis.call(*values)
            data += b"".join(value) if isinstance(value, list) else (value or b"")
        return data

    @defer.inlineCallbacks
    def test_nothing_stored_everything_sent(self):
        """A shared crawl closed early leaves its queue: no key holds a credential (nor the
        Redis password), no log line either (DEBUG up), and every page fetched had its
        own."""
        url = f"redis://:{REDIS}@127.0.0.1:{self.redis.port}/0"
        logs = capture_logs(self, "tinyscrapy", 10)
        yield crawl(StoringSpider, {"SCHEDULER_URL": url, "CLOSESPIDER_PAGECOUNT": 30,
                                    "CONCURRENT_REQUESTS": 2, "SCHEDULER_PERSIST": True,
                                    "SCHEDULER_REDIS_POLL_INTERVAL": 0.05},
                    base=self.server.url("").rstrip("/"), proxy=self.proxy.url(), pages=30)
        dump = self.dump()
        self.assertIn(b"/own/", dump)  # the queue is there, with the requests left
        self.assertEqual(secrets_in(dump), [])
        self.assertTrue(any("shared frontier" in m for m in logs.messages()))
        self.assertEqual([m for m in logs.messages() if secrets_in(m.encode())], [])
        for request in self.server.requests:
            if request.path.startswith("/own/"):
                self.assertEqual(request.headers["authorization"], OWN)
            elif not request.path.startswith("/proxied/"):
                self.assertEqual(request.headers["authorization"], basic("user", HTTPAUTH))


SPIDER_FILE = '''
from tinyscrapy import Request, Spider


class Files(Spider):
    name = "files"
    custom_settings = {{"HTTPAUTH_USER": "user", "HTTPAUTH_PASS": {httpauth!r},
                       "HTTPAUTH_DOMAIN": "127.0.0.1"}}

    def start_requests(self):
        for n in range(30):
            yield Request("{base}/own/%d" % n, headers={{"Authorization": {own!r},
                                                       "Cookie": {cookie!r}}})
            yield Request("{base}/auth/%d" % n)

    def parse(self, response):
        yield {{"url": response.url}}
'''


class RunFilesTests(unittest.TestCase):
    """Every file a run leaves (job directory, log, stats, trace, feed) and its output,
    searched for every credential."""

    timeout = 90

    @defer.inlineCallbacks
    def test_no_file_holds_a_secret(self):
        """runspider through an http_proxy with credentials, HTTP auth from settings, the
        spider's own headers, with --jobdir, a log file, a stats file, a trace and a feed,
        stopped after 20 pages: no file and no output holds any credential."""
        needs_processes()
        server = serve(self)
        proxy = ForwardProxy()
        self.addCleanup(proxy.stop)
        _answering(server, 30)
        root = os.path.abspath(self.mktemp())
        os.makedirs(root)
        spider = os.path.join(root, "files_spider.py")
        with open(spider, "w") as f:
            f.write(SPIDER_FILE.format(httpauth=HTTPAUTH, own=OWN, cookie=COOKIE,
                                       base=server.url("").rstrip("/")))
        env = subprocess_env()
        env.pop("no_proxy", None)
        env.pop("NO_PROXY", None)
        env["http_proxy"] = proxy.url(f"user:{PROXY}")
        args = [sys.executable, "-m", "tinyscrapy", "runspider", spider, "--jobdir",
                os.path.join(root, "job"), "-o", os.path.join(root, "items.jsonl"),
                "--trace", os.path.join(root, "trace.html"), "-L", "DEBUG",
                "-s", f"LOG_FILE={os.path.join(root, 'crawl.log')}",
                "-s", f"STATS_FILE={os.path.join(root, 'stats.json')}",
                "-s", "CLOSESPIDER_PAGECOUNT=20", "-s", "CONCURRENT_REQUESTS=2"]
        code, out, err = yield _spawn(args, env, root)
        self.assertEqual(code, 0, err)
        self.assertEqual(secrets_in(out + err), [])
        found = {path: secrets_in(open(path, "rb").read()) for path in files_under(root)
                 if path != spider}
        self.assertEqual({path: hits for path, hits in found.items() if hits}, {})
        self.assertTrue(any("job" in path for path in found), found)
        with open(os.path.join(root, "stats.json")) as f:
            self.assertGreater(json.load(f)["frontier/credentials_dropped"], 0)
        self.assertTrue(proxy.requests)
        for request in proxy.requests:
            self.assertEqual(request.headers["proxy-authorization"], basic("user", PROXY))


def _spawn(args, env, cwd):
    """Run C{args} with C{reactor.spawnProcess}. @return: a Deferred of (code, out, err)."""
    from twisted.internet.utils import getProcessOutputAndValue
    d = getProcessOutputAndValue(args[0], args[1:], env=env, path=cwd, reactor=reactor)
    d.addCallback(_reorder)
    return d


def _reorder(result):
    out, err, code = result
    return code, out, err

