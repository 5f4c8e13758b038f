"""
Shared-crawl benchmark: pages per second of 1, 2 and 4 workers on one Redis, beside the
in-memory frontier (one process), on a site whose pages answer after a latency (so the
workers wait on the network, not on the two cores).

    python benchmarks/shared_crawl.py [--hosts 16] [--pages 40] [--latency 0.05]
        [--polite-pages 40] [--delay 0.1] [--workers 1,2,4]

Run it from the repository root; it needs redis-server on the PATH. A child process serves
every host (one twisted.web site per loopback address, 127.0.0.10, 127.0.0.11, ...; each
page links to the next few pages of its host, and answers after C{--latency} seconds) and
this process runs the crawls as real commands (C{python -m tinyscrapy crawl ...}), each on
a fresh redis-server of its own. Two sites:

    1. many hosts: C{--hosts} hosts of C{--pages} pages, no delay;
    2. one polite host: C{--polite-pages} pages, C{DOWNLOAD_DELAY} = C{--delay}: its
       bound is 1 / delay pages per second however many workers share it.

It prints, never asserts: pages/s, the wall time (start of the first worker to the exit of
the last, process start-up included), and for the polite host the smallest gap between two
arrivals (both processes read C{time.time}).
"""

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from itertools import pairwise

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def serve(hosts, pages, latency):
    """Serve C{hosts} loopback addresses of C{pages} pages; print their ports as JSON;
    on a line of stdin, print the arrival times recorded and reset them."""
    from twisted.internet import reactor, stdio
    from twisted.protocols.basic import LineReceiver
    from twisted.web.resource import Resource
    from twisted.web.server import NOT_DONE_YET, Site

    arrivals = {}

    class Page(Resource):
        isLeaf = True

        def __init__(self, host):
            super().__init__()
            self.host = host

        def render_GET(self, request):
            arrivals.setdefault(self.host, []).append(time.time())
            path = request.path.decode()
            n = int(path.strip("/p") or 0) if path.startswith("/p") else 0
            links = "".join(f'<a href="/p{(n + k) % pages}">l</a>' for k in range(1, 4))
            body = f"<title>{self.host}{path}</title>{links}".encode()
            reactor.callLater(latency, _answer, request, body)
            return NOT_DONE_YET

    def _answer(request, body):
        if not request.finished and not request._disconnected:
            request.setHeader(b"content-type", b"text/html")
            request.write(body)
            request.finish()

    ports = []
    for i in range(hosts):
        host = f"127.0.0.{10 + i}"
        port = reactor.listenTCP(0, Site(Page(host)), interface=host)
        ports.append((host, port.getHost().port))

    class Control(LineReceiver):
        delimiter = b"\n"

        def lineReceived(self, line):
            self.sendLine(json.dumps(arrivals).encode())
            arrivals.clear()

    stdio.StandardIO(Control())
    print(json.dumps(ports), flush=True)
    reactor.run()


class Server:
    def __init__(self, hosts, pages, latency):
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--serve", str(hosts), str(pages), str(latency)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.ports = json.loads(self.process.stdout.readline())

    def urls(self):
        return [f"http://{host}:{port}/" for host, port in self.ports]

    def arrivals(self):
        self.process.stdin.write("\n")
        self.process.stdin.flush()
        return json.loads(self.process.stdout.readline())

    def stop(self):
        self.process.kill()
        self.process.wait()


def redis_server():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen([shutil.which("redis-server"), "--port", str(port), "--bind",
                                "127.0.0.1", "--save", "", "--appendonly", "no"],
                               stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return process, f"redis://127.0.0.1:{port}/0"
        except OSError:
            time.sleep(0.02)
    process.kill()  # ours, by its own handle: never left running
    process.wait(timeout=10)
    raise RuntimeError("redis-server did not start")


def run(urls, workers, settings, folder):
    """Run C{workers} crawl processes (0: one in-memory crawl); @return: (seconds, pages,
    exit statuses)."""
    redis = None
    extra = []
    if workers:
        redis, redis_url = redis_server()
        extra = ["--scheduler", redis_url, "-s", "SCHEDULER_REDIS_POLL_INTERVAL=0.05"]
    feeds = [os.path.join(folder, f"feed{i}.jsonl") for i in range(max(1, workers))]
    env = dict(os.environ, PYTHONPATH=ROOT)
    started = time.monotonic()
    processes = [subprocess.Popen(
        [sys.executable, "-m", "tinyscrapy", "crawl", *urls, "-O", feed, "-L", "ERROR",
         "-s", "ROBOTSTXT_OBEY=False", *extra,
         *(arg for name, value in settings.items() for arg in ("-s", f"{name}={value}"))],
        env=env, cwd=folder) for feed in feeds]
    codes = [process.wait() for process in processes]
    seconds = time.monotonic() - started
    if redis is not None:
        redis.kill()
        redis.wait()
    urls_seen = set()
    for feed in feeds:
        with open(feed) as f:
            urls_seen |= {json.loads(line)["url"] for line in f}
    return seconds, len(urls_seen), codes


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--hosts", type=int, default=16)
    parser.add_argument("--pages", type=int, default=40)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--polite-pages", type=int, default=40)
    parser.add_argument("--delay", type=float, default=0.1)
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--serve", nargs=3)
    args = parser.parse_args()
    if args.serve:
        serve(int(args.serve[0]), int(args.serve[1]), float(args.serve[2]))
        return
    counts = [0] + [int(n) for n in args.workers.split(",")]
    folder = tempfile.mkdtemp()
    try:
        server = Server(args.hosts, args.pages, args.latency)
        try:
            print(f"many hosts: {args.hosts} x {args.pages} pages, latency "
                  f"{args.latency:g} s, CONCURRENT_REQUESTS=16 per process")
            for workers in counts:
                server.arrivals()
                seconds, pages, codes = run(server.urls(), workers,
                                            {"CONCURRENT_REQUESTS": 16}, folder)
                label = "in memory" if not workers else f"{workers} worker(s)"
                print(f"  {label:12} {pages / seconds:7.1f} pages/s  {pages} pages in "
                      f"{seconds:5.2f} s  exit {codes}")
        finally:
            server.stop()
        server = Server(1, args.polite_pages, args.latency)
        try:
            print(f"one polite host: {args.polite_pages} pages, DOWNLOAD_DELAY="
                  f"{args.delay:g} (bound {1 / args.delay:.1f} pages/s)")
            for workers in counts:
                server.arrivals()
                seconds, pages, codes = run(server.urls(), workers,
                                            {"DOWNLOAD_DELAY": args.delay,
                                             "RANDOMIZE_DOWNLOAD_DELAY": False}, folder)
                times = sorted(t for host in server.arrivals().values() for t in host)
                gap = min((b - a for a, b in pairwise(times)), default=float("nan"))
                label = "in memory" if not workers else f"{workers} worker(s)"
                print(f"  {label:12} {pages / seconds:7.1f} pages/s  {pages} pages in "
                      f"{seconds:5.2f} s  smallest gap {gap:.3f} s  exit {codes}")
        finally:
            server.stop()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
