"""
Politeness benchmark: a broad crawl of many hosts, each with parallelism 1 and a delay.

    python benchmarks/broad_crawl.py [--hosts 20] [--pages 60] [--delay 0.2] [--max 8]
        [--fast-pages 1500] [--slow-delay 1.0] [--reps 3] [--latency 0.005] [--randomize]

Run it from the repository root. A child process serves every host: one twisted.web site
per loopback address (127.0.0.10, 127.0.0.11, ...), each recording the arrival time of
every request and the most requests in flight at once, answering after C{--latency}
seconds. This process crawls them with tinyscrapy and prints, never asserts:

    1. the broad crawl: C{--hosts} hosts of C{--pages} pages each, parallelism 1 and delay d
       per host, C{CONCURRENT_REQUESTS} = C{--max}; pages per second against the bound
       hosts/d (goal: at least 0.95 of it), and the smallest gap between two arrivals at
       one host (goal: at least 0.95 d, and never below d by design);
    2. a slow host (delay C{--slow-delay}) beside a fast one (no delay, parallelism 8): the
       fast host's rate beside it against its rate alone (goal: at least 0.80), the best of
       C{--reps} interleaved runs each way.

Both processes read the same clock (C{time.time}), so server-side gaps are exact.
"""

import argparse
import json
import os
import subprocess
import sys
import time
from itertools import pairwise

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# the server (child process)

def serve(hosts, latency):
    """Serve C{hosts} loopback addresses; print their ports as JSON; obey stdin commands."""
    from twisted.internet import reactor, stdio
    from twisted.protocols.basic import LineReceiver
    from twisted.web.resource import Resource
    from twisted.web.server import NOT_DONE_YET, Site

    records = {}

    class Host(Resource):
        isLeaf = True

        def __init__(self, name):
            super().__init__()
            self.name = name
            self.reset()

        def reset(self):
            self.times, self.in_flight, self.max_in_flight = [], 0, 0

        def render_GET(self, request):
            self.times.append(time.time())
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            call = reactor.callLater(latency, self._answer, request)
            request.notifyFinish().addBoth(self._cb_finished, call)
            return NOT_DONE_YET

        def _answer(self, request):
            path = request.path.decode()
            body = "<html><body>%s</body></html>"
            if path.startswith("/index/"):
                links = "".join(f'<a href="/p{i}">p{i}</a>' for i in range(int(path[7:])))
                body = body % links
            else:
                body = body % path
            request.setHeader("content-type", "text/html; charset=utf-8")
            request.write(body.encode())
            request.finish()

        def _cb_finished(self, _, call):
            self.in_flight -= 1
            if call.active():
                call.cancel()

    ports = {}
    for i in range(hosts):
        name = f"127.0.0.{10 + i}"
        records[name] = Host(name)
        site = Site(records[name])
        site.noisy = False
        ports[name] = reactor.listenTCP(0, site, interface=name).getHost().port

    class Commands(LineReceiver):
        delimiter = b"\n"

        def connectionMade(self):
            self.sendLine(json.dumps(ports).encode())

        def lineReceived(self, line):
            if line.strip() == b"dump":
                dump = {name: {"times": host.times, "max_in_flight": host.max_in_flight}
                        for name, host in records.items() if host.times}
                for host in records.values():
                    host.reset()
                self.sendLine(json.dumps(dump).encode())
            else:
                reactor.stop()

        def connectionLost(self, reason):
            if reactor.running:
                reactor.stop()

    stdio.StandardIO(Commands())
    reactor.run()


class Server:
    """The child process, driven synchronously through its stdin and stdout."""

    def __init__(self, hosts, latency):
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--serve", "--hosts", str(hosts),
             "--latency", str(latency)], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.ports = json.loads(self.process.stdout.readline())

    def url(self, host, path):
        return f"http://{host}:{self.ports[host]}{path}"

    def dump(self):
        """Every host's arrivals since the last dump: C{{host: {times, max_in_flight}}}."""
        self.process.stdin.write(b"dump\n")
        self.process.stdin.flush()
        return json.loads(self.process.stdout.readline())

    def stop(self):
        self.process.stdin.write(b"quit\n")
        self.process.stdin.close()
        self.process.wait(timeout=10)


# the crawls (this process)

def run(args):
    sys.path.insert(0, ROOT)
    from twisted.internet import defer, reactor

    server = Server(args.hosts + 1, args.latency)
    results = {}
    done = []

    @defer.inlineCallbacks
    def scenarios():
        try:
            results["broad"] = yield broad(server, args)
            for _ in range(args.reps):  # interleaved, against the machine's other load
                alone = yield fast_and_slow(server, args, with_slow=False)
                beside = yield fast_and_slow(server, args, with_slow=True)
                results.setdefault("fast_alone", []).append(alone)
                results.setdefault("fast_beside", []).append(beside)
        finally:
            done.append(True)
            reactor.stop()

    reactor.callWhenRunning(scenarios)
    reactor.run()
    server.stop()
    if results:
        report(args, results)


def crawl(settings, start_urls):
    """A real tinyscrapy crawl. @return: a Deferred firing with the crawl's seconds."""
    from tinyscrapy import Spider
    from tinyscrapy.crawler import Crawler
    from tinyscrapy.settings import Settings

    class Links(Spider):
        name = "broad"

        def parse(self, response):
            for href in response.css("a::attr(href)").getall():
                yield response.follow(href)

    base = {"LOG_LEVEL": "WARNING", "FEEDS": {}, "ENGINE_HEARTBEAT": 5.0}
    base.update(settings)
    crawler = Crawler(Links, Settings(base))
    started = time.time()
    d = crawler.crawl(start_urls=start_urls)
    d.addCallback(_elapsed, started)
    return d


def _elapsed(_, started):
    return time.time() - started


def hosts(args):
    return [f"127.0.0.{10 + i}" for i in range(args.hosts)]


def broad(server, args):
    import logging
    logging.basicConfig(level=logging.WARNING)
    settings = {"CONCURRENT_REQUESTS": args.max, "CONCURRENT_REQUESTS_PER_DOMAIN": 1,
                "DOWNLOAD_DELAY": args.delay, "RANDOMIZE_DOWNLOAD_DELAY": args.randomize}
    starts = [server.url(host, f"/index/{args.pages - 1}") for host in hosts(args)]
    d = crawl(settings, starts)
    d.addCallback(_cb_with_arrivals, server)
    return d


def fast_and_slow(server, args, with_slow):
    fast, slow = f"127.0.0.{10 + args.hosts}", "127.0.0.10"
    settings = {"CONCURRENT_REQUESTS": 8, "CONCURRENT_REQUESTS_PER_DOMAIN": 8,
                "LIMIT_RULES": [{"domain_glob": slow, "parallelism": 1,
                                 "delay": args.slow_delay}]}
    starts = [server.url(fast, f"/index/{args.fast_pages - 1}")]
    if with_slow:
        starts.append(server.url(slow, "/index/4"))
    d = crawl(settings, starts)
    d.addCallback(_cb_with_arrivals, server)
    return d


def _cb_with_arrivals(elapsed, server):
    return {"elapsed": elapsed, "arrivals": server.dump()}


def span(times):
    return times[-1] - times[0]


def rate(times):
    """Requests per second between the first and the last arrival."""
    return (len(times) - 1) / (times[-1] - times[0]) if len(times) > 1 else 0.0


def report(args, results):
    d = args.delay
    broad_run = results["broad"]
    arrivals = broad_run["arrivals"]
    pages = sum(len(a["times"]) for a in arrivals.values())
    first = min(a["times"][0] for a in arrivals.values())
    last = max(a["times"][-1] for a in arrivals.values())
    bound = args.hosts / d
    gaps = [later - earlier for a in arrivals.values() for earlier, later in
            pairwise(a["times"])]
    steady = sum(1 / (span(a["times"]) / (len(a["times"]) - 1)) for a in arrivals.values())
    crawl_rate = pages / broad_run["elapsed"]
    served_rate = (pages - args.hosts) / (last - first)
    print(f"broad crawl: {args.hosts} hosts x {args.pages} pages, parallelism 1, "
          f"delay {d:.3f} s{' (randomized)' if args.randomize else ''}, max {args.max}; "
          f"bound {bound:.1f} pages/s")
    print(f"  steady pages/s (sum over hosts of 1 / mean gap) {steady:6.1f}: "
          f"{steady / bound:.3f} of the bound   (goal >= 0.95)")
    print(f"  pages/s from the first to the last arrival     {served_rate:6.1f}: "
          f"{served_rate / bound:.3f}")
    print(f"  pages/s over the whole crawl (start-up too)    {crawl_rate:6.1f}: "
          f"{crawl_rate / bound:.3f}   ({pages} pages in {broad_run['elapsed']:.2f} s)")
    print(f"  smallest server-side gap {min(gaps):.4f} s = {min(gaps) / d:.3f} d"
          f"   (goal >= 0.95; by design >= 1 unless a server notes a request late)")
    print(f"  most in flight at one host: {max(a['max_in_flight'] for a in arrivals.values())}")
    fast = f"127.0.0.{10 + args.hosts}"
    alone = [rate(run["arrivals"][fast]["times"]) for run in results["fast_alone"]]
    beside = [rate(run["arrivals"][fast]["times"]) for run in results["fast_beside"]]
    slow_times = [run["arrivals"].get("127.0.0.10", {}).get("times", [])
                  for run in results["fast_beside"]]
    slow_gap = min((b - a for times in slow_times for a, b in pairwise(times)),
                   default=float("nan"))
    print(f"slow host (delay {args.slow_delay} s) beside a fast one ({args.fast_pages} pages, "
          f"no delay, parallelism 8, max 8), best of {args.reps}:")
    print(f"  fast alone {max(alone):.0f} pages/s, beside the slow host {max(beside):.0f} "
          f"pages/s: {max(beside) / max(alone):.3f}   (goal >= 0.80)")
    print(f"  every run, alone: {' '.join(f'{r:.0f}' for r in alone)}; "
          f"beside: {' '.join(f'{r:.0f}' for r in beside)}")
    print(f"  slow host: {sum(map(len, slow_times))} requests, smallest gap {slow_gap:.3f} s")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", type=int, default=20)
    parser.add_argument("--pages", type=int, default=60, help="pages per host")
    parser.add_argument("--delay", type=float, default=0.2)
    parser.add_argument("--max", type=int, default=8, help="CONCURRENT_REQUESTS")
    parser.add_argument("--fast-pages", type=int, default=1500)
    parser.add_argument("--slow-delay", type=float, default=1.0)
    parser.add_argument("--reps", type=int, default=3, help="runs of the fast host, each way")
    parser.add_argument("--latency", type=float, default=0.005,
                        help="the servers answer after this many seconds")
    parser.add_argument("--randomize", action="store_true",
                        help="RANDOMIZE_DOWNLOAD_DELAY on (waits 1.0-1.5 d: expect ~0.8)")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        serve(args.hosts, args.latency)
    else:
        run(args)


if __name__ == "__main__":
    main()
