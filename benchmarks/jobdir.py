"""
The job directory's costs, printed (never asserted):

    python benchmarks/jobdir.py crawl [-n 3000] [-r 3]   # crawl with --jobdir vs without
    python benchmarks/jobdir.py scale [-n 1000000]       # N requests waiting: RSS, stalls
        [--only memory|jobdir] [--mode start|callback]   # (default: all four runs)
    python benchmarks/jobdir.py resume [-n 1000000]      # opening a directory of N requests

C{crawl} generates the shared yardstick's shop site (../shared/bench/make_site.py), serves
it with twisted.web in a child process, and runs `crawl URL -o FILE` with and without
`--jobdir` interleaved, C{-r} times each: the median pages per second of each and their
ratio.

C{scale} runs, in a fresh process each, a spider whose start_requests (or one callback)
yields N requests to a host that never answers and takes one request at a time (a
C{LIMIT_RULES} parallelism of 1), so that they all wait:
in memory, then with C{--jobdir}. It prints the peak RSS, the longest stall of the reactor
(the largest gap between the ticks of a 10 ms C{LoopingCall}), the most CPU time the
process spent between two ticks (the stall its own work makes: on a loaded machine the
clock gap also holds the time other processes had the CPU) and the time until all N are
enqueued. C{resume} then opens the C{--jobdir} that C{scale} left and prints how long
the open takes and the RSS after it.
"""

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SHARED_BENCH = os.environ.get("SHARED_BENCH") or next(
    (path for path in (os.path.join(ROOT, "..", "shared", "bench"),
                       os.path.join(ROOT, "..", "..", "shared", "bench"))  # a worktree
     if os.path.isdir(path)), os.path.join(ROOT, "..", "shared", "bench"))
SCRATCH = os.path.join(tempfile.gettempdir(), "tinyscrapy-jobdir-bench")


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def bench_crawl(args):
    os.makedirs(SCRATCH, exist_ok=True)
    port = _free_port()
    site = os.path.join(SCRATCH, "site")
    shutil.rmtree(site, ignore_errors=True)
    subprocess.run([sys.executable, os.path.join(SHARED_BENCH, "make_site.py"), site,
                    "--pages", str(args.pages), "--base", f"http://127.0.0.1:{port}"],
                   check=True, stdout=subprocess.DEVNULL)
    server = subprocess.Popen(
        [sys.executable, "-c", "import sys;from twisted.internet import reactor;"
         "from twisted.web.static import File;from twisted.web.server import Site;"
         f"reactor.listenTCP({port}, Site(File(sys.argv[1])), interface='127.0.0.1');"
         "print('ready', flush=True);reactor.run()", site],
        stdout=subprocess.PIPE, text=True)
    server.stdout.readline()
    url = f"http://127.0.0.1:{port}/index.html"
    rates = {"without --jobdir": [], "with --jobdir": []}
    try:
        for _ in range(args.reps):  # interleaved: A B A B ...
            for name in rates:
                jobdir = os.path.join(SCRATCH, "job")
                shutil.rmtree(jobdir, ignore_errors=True)
                command = [sys.executable, "-m", "tinyscrapy", "crawl", url,
                           "-O", os.path.join(SCRATCH, "items.jsonl"), "-L", "ERROR",
                           "-s", f"CONCURRENT_REQUESTS={args.c}",
                           "-s", f"CONCURRENT_REQUESTS_PER_DOMAIN={args.c}",
                           "-s", "ROBOTSTXT_OBEY=False"]
                if name == "with --jobdir":
                    command += ["--jobdir", jobdir]
                started = time.perf_counter()
                subprocess.run(command, check=True, cwd=ROOT, timeout=600)
                elapsed = time.perf_counter() - started
                with open(os.path.join(SCRATCH, "items.jsonl")) as f:
                    pages = sum(1 for _ in f)
                rates[name].append(pages / elapsed)
    finally:
        server.terminate()
        server.wait(timeout=10)
    without, with_ = (statistics.median(rates[name]) for name in rates)
    print(f"crawl of {args.pages} pages, c={args.c}, median of {args.reps} interleaved runs "
          "(pages/s, start-up included)")
    for name, values in rates.items():
        print(f"  {name:18} {statistics.median(values):8.1f}   runs: "
              + " ".join(f"{v:.0f}" for v in values))
    print(f"  ratio with/without: {with_ / without:.3f}")
    return 0


_SCALE_CHILD = r"""
import json, os, resource, sys, time
from twisted.internet import reactor, task
from twisted.web.resource import Resource
from twisted.web.server import NOT_DONE_YET, Site
from twisted.web.static import Data
from tinyscrapy import Request, Spider
from tinyscrapy.crawler import Crawler
from tinyscrapy.settings import Settings

n, jobdir, mode = int(sys.argv[1]), sys.argv[2] or None, sys.argv[3]
root = Resource()
root.putChild(b"seed", Data(b"<html><title>seed</title></html>", "text/html"))
port = reactor.listenTCP(0, Site(root), interface="127.0.0.1").getHost().port

class Hang(Resource):
    isLeaf = True

    def render_GET(self, request):
        return NOT_DONE_YET  # never answered: its slot (parallelism 1) stays busy

hang = reactor.listenTCP(0, Site(Hang()), interface="127.0.0.2").getHost().port
gaps = [0.0, 0.0]  # the longest gap between ticks: on the clock, and in CPU time
last = [time.perf_counter(), time.process_time()]

def tick():
    now, cpu = time.perf_counter(), time.process_time()
    gaps[0] = max(gaps[0], now - last[0])
    gaps[1] = max(gaps[1], cpu - last[1])
    last[:] = now, cpu

class Many(Spider):
    name = "many"

    def start_requests(self):
        if mode == "start":
            for i in range(n):
                yield Request("http://127.0.0.2:%d/p/%d" % (hang, i), callback=self.parse)
        elif mode == "callback":
            yield Request("http://127.0.0.1:%d/seed" % port, callback=self.many)

    def many(self, response):
        for i in range(n):
            yield Request("http://127.0.0.2:%d/p/%d" % (hang, i), callback=self.parse)

    def parse(self, response):
        pass

settings = {"LOG_LEVEL": "ERROR", "FEEDS": {}, "ROBOTSTXT_OBEY": False,
            "LIMIT_RULES": [{"domain_glob": "127.0.0.2", "parallelism": 1}]}
if jobdir:
    settings["JOBDIR"] = jobdir
crawler = Crawler(Many, Settings(settings))
started = time.perf_counter()
result = {}

def watch():
    engine = crawler.engine
    if engine is None:
        return
    scheduler = engine.scheduler
    if mode == "open":
        result["open_s"] = round(opened - started, 2)
        result["waiting"] = scheduler.size()
        finish(scheduler)
    elif scheduler.statistics().enqueued >= n:
        result["enqueued_s"] = round(time.perf_counter() - started, 2)
        finish(scheduler)

def finish(scheduler):
    result["max_stall_s"] = round(gaps[0], 3)
    result["max_stall_cpu_s"] = round(gaps[1], 3)
    result["peak_rss_MB"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    if hasattr(scheduler, "flush"):
        flushed = time.perf_counter()
        scheduler.flush()
        result["last_flush_s"] = round(time.perf_counter() - flushed, 3)
    print(json.dumps(result), flush=True)
    os._exit(0)  # one request hangs for ever: no graceful close to wait for

crawler.crawl()
opened = time.perf_counter()
loop = task.LoopingCall(tick)
loop.start(0.01)
checker = task.LoopingCall(watch)
checker.start(0.05)
reactor.run()
"""


def _scale_child(n, jobdir, mode):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", _SCALE_CHILD, str(n), jobdir or "", mode],
                         capture_output=True, text=True, env=env, cwd=ROOT, timeout=3600)
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    if not lines:
        sys.exit(f"benchmarks: the scale child failed:\n{out.stderr[-2000:]}")
    return json.loads(lines[-1])


def bench_scale(args):
    jobdir = os.path.join(SCRATCH, "scale-job")
    print(f"{args.n} requests waiting (one host that never answers, parallelism 1)")
    wheres = {"memory": ("in memory",), "jobdir": ("--jobdir",)}.get(
        args.only, ("in memory", "--jobdir"))
    for where in wheres:
        for mode in (args.mode,) if args.mode else ("start", "callback"):
            if where == "--jobdir":
                shutil.rmtree(jobdir, ignore_errors=True)
            result = _scale_child(args.n, jobdir if where == "--jobdir" else None, mode)
            print(f"  {where:10} yielded by {mode:8}: peak RSS {result['peak_rss_MB']:5} MB, "
                  f"longest stall {result['max_stall_s']:.3f} s "
                  f"({result['max_stall_cpu_s']:.3f} s of CPU), all enqueued after "
                  f"{result['enqueued_s']:.1f} s"
                  + (f", last flush {result['last_flush_s']:.3f} s"
                     if "last_flush_s" in result else ""))
    return 0


def bench_resume(args):
    jobdir = os.path.join(SCRATCH, "scale-job")
    if not os.path.isdir(jobdir):
        print("benchmarks: run `scale` first (it leaves the directory)")
        return 1
    result = _scale_child(args.n, jobdir, "open")
    print(f"resume of {result['waiting']} waiting requests: open {result['open_s']:.2f} s, "
          f"peak RSS {result['peak_rss_MB']} MB, longest stall {result['max_stall_s']:.3f} s")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    crawl = sub.add_parser("crawl")
    crawl.add_argument("-n", dest="pages", type=int, default=3000)
    crawl.add_argument("-c", type=int, default=16)
    crawl.add_argument("-r", dest="reps", type=int, default=3)
    for name in ("scale", "resume"):
        sub.add_parser(name).add_argument("-n", type=int, default=1_000_000)
    sub.choices["scale"].add_argument("--only", choices=("memory", "jobdir"))
    sub.choices["scale"].add_argument("--mode", choices=("start", "callback"))
    args = parser.parse_args()
    return {"crawl": bench_crawl, "scale": bench_scale, "resume": bench_resume}[args.what](args)


if __name__ == "__main__":
    sys.exit(main())
