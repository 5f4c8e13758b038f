"""
Per-request CPU cost of the fetch path, against a bare twisted Agent.

    python benchmarks/fetch_overhead.py http://127.0.0.1:8957 [-n 6000] [-c 16]
        [--variants agent,treq,fetcher] [--profile VARIANT]
    python benchmarks/fetch_overhead.py --treq-call [-n 20000]

C{--treq-call} needs no server: it times treq's C{HTTPClient.request} alone, over an agent
that answers at once, called as the fetcher calls it (a pre-encoded URL, a shared cookie
jar that keeps nothing, C{allow_redirects=False}, C{unbuffered=True}) and as a plain
caller does (a text URL, no jar): what treq's front door costs a page.

Fetches the site's pages (the paths of its C{manifest.json}, from /work/shared/bench's
generator) round-robin, keeping C{-c} requests in flight, with each variant in turn in
the same process and reactor, and prints the client's CPU time per request (the server runs
in another process, so its work is not counted). Variants:

    agent    Agent + persistent pool + readBody: the floor
    treq     treq.client.HTTPClient over the same kind of Agent (unbuffered + treq.content)
    treq-crawlagent  treq.client.HTTPClient over tinyscrapy's CrawlAgent
    fetcher  tinyscrapy's HttpFetcher (timeouts, size limits, decoding, on_sent)
"""

import argparse
import cProfile
import json
import pstats
import sys
import time
import urllib.request

from twisted.internet import defer, reactor, task
from twisted.web.client import Agent, HTTPConnectionPool, readBody


def make_agent(concurrency):
    pool = HTTPConnectionPool(reactor, persistent=True)
    pool.maxPersistentPerHost = concurrency
    pool.retryAutomatically = False
    agent = Agent(reactor, pool=pool)

    def fetch(url):
        d = agent.request(b"GET", url.encode("ascii"))
        d.addCallback(readBody)
        return d
    return fetch, pool.closeCachedConnections


def make_treq(concurrency):
    import treq
    from treq.client import HTTPClient
    pool = HTTPConnectionPool(reactor, persistent=True)
    pool.maxPersistentPerHost = concurrency
    pool.retryAutomatically = False
    client = HTTPClient(Agent(reactor, pool=pool))

    def fetch(url):
        d = client.request("GET", url, unbuffered=True, allow_redirects=False)
        d.addCallback(treq.content)
        return d
    return fetch, pool.closeCachedConnections


def make_fetcher(concurrency):
    sys.path.insert(0, ".")
    from tinyscrapy.core.downloader.handlers.http11 import HttpFetcher
    from tinyscrapy.http import Request
    from tinyscrapy.settings import Settings
    fetcher = HttpFetcher(reactor, Settings({"CONCURRENT_REQUESTS_PER_DOMAIN": concurrency}))

    def fetch(url):
        return fetcher.fetch(Request(url, headers={"Accept": "text/html"}))
    return fetch, fetcher.close


def make_treq_crawlagent(concurrency):
    import treq
    from treq.client import HTTPClient
    sys.path.insert(0, ".")
    from tinyscrapy.core.downloader.handlers.http11 import HttpFetcher
    from tinyscrapy.settings import Settings
    fetcher = HttpFetcher(reactor, Settings({"CONCURRENT_REQUESTS_PER_DOMAIN": concurrency}))
    client = HTTPClient(fetcher.agent)

    def fetch(url):
        d = client.request("GET", url, unbuffered=True, allow_redirects=False)
        d.addCallback(treq.content)
        return d
    return fetch, fetcher.close


VARIANTS = {"agent": make_agent, "treq": make_treq, "fetcher": make_fetcher,
            "treq-crawlagent": make_treq_crawlagent}


def run(fetch, urls, concurrency):
    """Fetch every URL, C{concurrency} in flight. @return: Deferred of (cpu, wall, errors)."""
    done = defer.Deferred()
    state = {"next": 0, "in_flight": 0, "errors": 0}
    t_cpu, t_wall = time.process_time(), time.perf_counter()

    def pump(_=None):
        while state["in_flight"] < concurrency and state["next"] < len(urls):
            url = urls[state["next"]]
            state["next"] += 1
            state["in_flight"] += 1
            d = fetch(url)
            d.addErrback(failed)
            d.addBoth(finished)
        if state["in_flight"] == 0 and not done.called:
            done.callback((time.process_time() - t_cpu, time.perf_counter() - t_wall,
                           state["errors"]))

    def failed(failure):
        state["errors"] += 1
        if state["errors"] < 3:
            print("error:", failure.getErrorMessage(), file=sys.stderr)

    def finished(_):
        state["in_flight"] -= 1
        pump()

    pump()
    return done


def treq_call_cost(n):
    """Microseconds of CPU per C{HTTPClient.request} call, the fetcher's way and a plain
    caller's, over an agent whose Deferred fires at once."""
    sys.path.insert(0, ".")
    from treq.client import HTTPClient
    from twisted.web.http_headers import Headers

    from tinyscrapy.core.downloader.handlers.http11 import _NoCookies, _SentURL

    class Answer:
        code, phrase, version, length = 200, b"OK", (b"HTTP", 1, 1), 10

        def __init__(self):
            self.headers = Headers({b"content-type": [b"text/html"]})

    class Instant:
        def request(self, method, uri, headers=None, bodyProducer=None):
            return defer.succeed(Answer())

    jar = _NoCookies()
    crawl_client, plain_client = HTTPClient(Instant(), cookiejar=jar), HTTPClient(Instant())
    urls = [f"http://127.0.0.1:8931/shop/item/{i}.html?page={i}" for i in range(n)]
    headers = Headers({b"accept": [b"text/html"], b"user-agent": [b"bench"],
                       b"accept-encoding": [b"gzip, deflate"], b"host": [b"127.0.0.1:8931"]})
    results = {}
    for name, call in (
            ("fetcher's way", lambda url: crawl_client.request(
                "GET", _SentURL(url), headers=headers, cookies=jar, allow_redirects=False,
                unbuffered=True, reactor=reactor)),
            ("plain caller", lambda url: plain_client.request(
                "GET", url, headers=headers, allow_redirects=False, unbuffered=True,
                reactor=reactor))):
        best = None
        for _ in range(3):
            start = time.process_time()
            for url in urls:
                call(url)
            took = time.process_time() - start
            best = took if best is None else min(best, took)
        results[name] = best / n * 1e6
    for name, us in results.items():
        print(f"HTTPClient.request, {name}: {us:.1f} us CPU a call")


@defer.inlineCallbacks
def main(args):
    with urllib.request.urlopen(args.base + "/manifest.json") as answer:
        paths = json.load(answer)["paths"]
    urls = [args.base + paths[i % len(paths)] for i in range(args.n)]
    results = {}
    for rep in range(args.reps):
        for name in args.variants.split(","):
            fetch, close = VARIANTS[name](args.c)
            yield run(fetch, urls[:200], args.c)  # warm-up: connections, imports
            profiler = cProfile.Profile() if args.profile == name and rep == 0 else None
            if profiler:
                profiler.enable()
            cpu, wall, errors = yield run(fetch, urls, args.c)
            if profiler:
                profiler.disable()
                pstats.Stats(profiler).sort_stats("tottime").print_stats(35)
            yield close()
            yield task.deferLater(reactor, 0.2, lambda: None)
            results.setdefault(name, []).append((cpu, wall, errors))
    floor = min(cpu for cpu, _, _ in results.get("agent", [(None, 0, 0)])) \
        if "agent" in results else None
    print(f"{'variant':16} {'us cpu/req':>10} {'req/s':>8} {'vs agent':>8} errors")
    for name, runs in results.items():
        cpu = min(r[0] for r in runs)
        wall = min(r[1] for r in runs)
        ratio = f"{cpu / floor:.2f}x" if floor else "-"
        print(f"{name:16} {cpu / args.n * 1e6:10.0f} {args.n / wall:8.0f} {ratio:>8} "
              f"{sum(r[2] for r in runs)}")
    reactor.stop()


if __name__ == "__main__":
    if "--treq-call" in sys.argv:
        count = int(sys.argv[sys.argv.index("-n") + 1]) if "-n" in sys.argv else 20000
        treq_call_cost(count)
        sys.exit(0)
    parser = argparse.ArgumentParser()
    parser.add_argument("base")
    parser.add_argument("-n", type=int, default=6000)
    parser.add_argument("-c", type=int, default=16)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--variants", default="agent,treq,fetcher")
    parser.add_argument("--profile", default=None)
    args = parser.parse_args()
    reactor.callWhenRunning(main, args)
    reactor.run()
