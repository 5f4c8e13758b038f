"""
The benchmarks, run on demand (never part of the tests): figures are printed as ratios
measured in one run, beside Scrapy and a raw Twisted crawler, never asserted.

    python benchmarks/run.py crawl [-n 5000] [-c 16,64] [-r 3]  # pages/s vs raw Twisted, Scrapy
    python benchmarks/run.py crawl -w 2 -P raw,tinyscrapy,tinyscrapy-w  # and --workers 2
    python benchmarks/run.py memory [-n 200000]     # bytes per pending request, per fingerprint
    python benchmarks/run.py startup                # `crawl` of one page with no links
    python benchmarks/run.py all

`crawl` drives the shared yardstick (../shared/bench/run.sh: a generated shop site served by
nginx, the raw Twisted ceiling, Scrapy) with tinyscrapy in its slot; its setup (nginx, the
Scrapy and raw-Twisted virtualenvs) is ../shared/bench/setup.sh. `memory` runs
benchmarks/memory.py and, when a Scrapy virtualenv exists (SCRAPY_PYTHON, default
/tmp/venv-scrapy/bin/python), the yardstick's Scrapy probe, and prints the ratios.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SHARED_BENCH = os.environ.get("SHARED_BENCH", os.path.join(ROOT, "..", "shared", "bench"))
SCRAPY_PYTHON = os.environ.get("SCRAPY_PYTHON", "/tmp/venv-scrapy/bin/python")
CRAWL_CMD = ("{python} -m tinyscrapy crawl {{url}} -o {{out}} -s CONCURRENT_REQUESTS={{c}} "
             "-s CONCURRENT_REQUESTS_PER_DOMAIN={{c}}")


def compile_package():
    """Write tinyscrapy's bytecode first: an editable install under
    PYTHONDONTWRITEBYTECODE=1 would compile every module on every run (some 80 ms of
    start-up), where a regular install has its bytecode written by pip."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", os.path.join(ROOT, "tinyscrapy")],
                   check=True)


def bench_crawl(args):
    run_sh = os.path.join(SHARED_BENCH, "run.sh")
    if not os.path.exists(run_sh):
        sys.exit(f"benchmarks: the yardstick is not at {SHARED_BENCH} (set SHARED_BENCH)")
    compile_package()
    env = dict(os.environ, TINYSCRAPY_PY=sys.executable,
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
               TINYSCRAPY_CMD=CRAWL_CMD.format(python=sys.executable))
    peers = args.peers
    if args.workers:  # the yardstick's peer tinyscrapy-w: the same crawl with --workers N
        env["TINYSCRAPY_W_CMD"] = env["TINYSCRAPY_CMD"] + f" --workers {args.workers}"
        if "tinyscrapy-w" not in peers.split(","):
            peers += ",tinyscrapy-w"
    command = ["bash", run_sh, "-n", str(args.pages), "-c", args.concurrency, "-r",
               str(args.reps), "-P", peers]
    print("+", " ".join(command), flush=True)
    return subprocess.call(command, env=env, cwd=ROOT)


def bench_memory(args):
    ours = _json_line([sys.executable, os.path.join(HERE, "memory.py"), "-n", str(args.n)])
    theirs = None
    probe = os.path.join(SHARED_BENCH, "scrapy_memprobe.py")
    if os.path.exists(SCRAPY_PYTHON) and os.path.exists(probe):
        theirs = _json_line([SCRAPY_PYTHON, probe, "direct", "-n", str(args.n)])
    rows = [("pending request (shaped)", ours["shaped"]["pending_request_B"],
             theirs and theirs["shaped"]["pending_request_B"]),
            ("pending request (bare)", ours["bare"]["pending_request_B"],
             theirs and theirs["bare"]["pending_request_B"]),
            ("seen fingerprint", ours["fingerprint"]["fingerprint_B"],
             theirs and theirs["fingerprint"]["fingerprint_B"])]
    print(f"memory, n={args.n} (bytes, VmRSS deltas)")
    print(f"{'what':28} {'tinyscrapy':>10} {'scrapy':>10} {'ratio':>7}")
    for what, mine, scrapy in rows:
        ratio = f"{mine / scrapy:.2f}" if scrapy else "-"
        print(f"{what:28} {mine:>10} {scrapy or '-':>10} {ratio:>7}")
    return 0


def bench_startup(args):
    """`crawl` of one page with no links, interleaved with the raw Twisted ceiling (and
    Scrapy when its virtualenv exists), against a twisted.web server in a child."""
    compile_package()
    server = subprocess.Popen(
        [sys.executable, "-c", "from twisted.internet import reactor;"
         "from twisted.web.static import Data;from twisted.web.server import Site;"
         "from twisted.web.resource import Resource;r=Resource();"
         "r.putChild(b'empty.html',Data(b'<html><title>t</title></html>','text/html'));"
         "p=reactor.listenTCP(0, Site(r),interface='127.0.0.1');"
         "print(p.getHost().port,flush=True);reactor.run()"],
        stdout=subprocess.PIPE, text=True)
    scratch = "/tmp/tinyscrapy-startup"
    os.makedirs(scratch, exist_ok=True)
    try:
        url = f"http://127.0.0.1:{int(server.stdout.readline())}/empty.html"
        commands = {
            "tinyscrapy": [sys.executable, "-m", "tinyscrapy", "crawl", url,
                           "-O", f"{scratch}/ours.jsonl", "-L", "ERROR"],
            "raw Twisted": [sys.executable, os.path.join(SHARED_BENCH, "peers", "raw_twisted.py"),
                            url, "-o", f"{scratch}/raw.jsonl"],
            "bare python": [sys.executable, "-c", "pass"],
            "import reactor": [sys.executable, "-c", "import twisted.internet.reactor"],
        }
        scrapy_spider = os.path.join(SHARED_BENCH, "peers", "scrapy_spider.py")
        if os.path.exists(SCRAPY_PYTHON) and os.path.exists(scrapy_spider):
            commands["Scrapy"] = [SCRAPY_PYTHON, "-m", "scrapy", "runspider", scrapy_spider,
                                  "-a", f"start={url}", "-O", f"{scratch}/scrapy.jsonl",
                                  "-L", "ERROR"]
        times = {name: [] for name in commands}
        for _ in range(args.reps):  # interleaved: A B C A B C ...
            for name, command in commands.items():
                started = time.perf_counter()
                subprocess.run(command, check=True, cwd=ROOT, timeout=60,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                times[name].append(time.perf_counter() - started)
    finally:
        server.terminate()
        server.wait(timeout=10)
    raw = statistics.median(times["raw Twisted"])
    print(f"start-up: crawl of one page with no links, median of {args.reps} interleaved runs")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"  {name:15} {median:6.3f} s  {median / raw:5.2f}x raw")
    return 0


def _json_line(command):
    output = subprocess.run(command, capture_output=True, text=True, timeout=1800, cwd=ROOT)
    lines = [line for line in output.stdout.splitlines() if line.startswith("{")]
    if not lines:
        sys.exit(f"benchmarks: {' '.join(command)} failed:\n{output.stderr[-1000:]}")
    return json.loads(lines[-1])


def main():
    parser = argparse.ArgumentParser(description="tinyscrapy benchmarks (printed, not asserted)")
    sub = parser.add_subparsers(dest="what", required=True)
    crawl = sub.add_parser("crawl")
    crawl.add_argument("-n", dest="pages", type=int, default=5000)
    crawl.add_argument("-c", dest="concurrency", default="16")
    crawl.add_argument("-r", dest="reps", type=int, default=3)
    crawl.add_argument("-P", dest="peers", default="raw,raw-treq,scrapy,tinyscrapy")
    crawl.add_argument("-w", dest="workers", type=int, default=0,
                       help="also measure tinyscrapy with --workers N (peer tinyscrapy-w)")
    memory = sub.add_parser("memory")
    memory.add_argument("-n", type=int, default=200_000)
    startup = sub.add_parser("startup")
    startup.add_argument("-r", dest="reps", type=int, default=5)
    everything = sub.add_parser("all")
    everything.set_defaults(pages=5000, concurrency="16,64", reps=3, n=200_000,
                            peers="raw,raw-treq,scrapy,tinyscrapy")
    args = parser.parse_args()
    if args.what == "all":
        status = bench_memory(args) or bench_startup(args)
        return status or bench_crawl(args)
    return {"crawl": bench_crawl, "memory": bench_memory, "startup": bench_startup}[args.what](args)


if __name__ == "__main__":
    shutil.which("bash") or sys.exit("benchmarks: bash is needed")
    sys.exit(main())
