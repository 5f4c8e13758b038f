"""
A spider written with selectors, beside the raw Twisted ceiling: the example books spider
(tinyscrapy/demo/spiders/books.py: parsel CSS selectors, response.follow, one item per
book) crawls a large catalogue generated from the demo site, served by nginx; the raw
ceiling crawls the same site. Both report pages per second; the ratio is printed, never asserted.

    python benchmarks/selector_spider.py [--books 5000] [-c 16] [-r 3]

Needs nginx and the yardstick's raw crawler (../shared/bench/setup.sh installs both).
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SHARED_BENCH = os.environ.get("SHARED_BENCH", os.path.join(ROOT, "..", "shared", "bench"))
RAW_PYTHON = os.environ.get("RAW_PYTHON", "/tmp/venv-raw/bin/python")


def write_site(books, folder):
    """Render every page of a demo site with C{books} books into C{folder}."""
    sys.path.insert(0, ROOT)
    from tinyscrapy.demo.site import build_site
    site = build_site(book_count=books)
    for path in site.paths():
        target = path + "index.html" if path.endswith("/") else path
        filename = os.path.join(folder, target.lstrip("/"))
        os.makedirs(os.path.dirname(filename), mode=0o755, exist_ok=True)
        with open(filename, "wb") as f:
            f.write(site.page(path)[1])
    return len(site.paths())


def timed(command, env=None):
    started = time.perf_counter()
    subprocess.run(command, check=True, env=env, cwd=ROOT, timeout=900,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--books", type=int, default=5000)
    parser.add_argument("-c", dest="concurrency", type=int, default=16)
    parser.add_argument("-r", dest="reps", type=int, default=3)
    parser.add_argument("-p", dest="port", type=int, default=8932)
    args = parser.parse_args()
    serve = os.path.join(SHARED_BENCH, "serve.sh")
    raw = os.path.join(SHARED_BENCH, "peers", "raw_twisted.py")
    if not (os.path.exists(serve) and os.path.exists(RAW_PYTHON)):
        sys.exit("benchmarks: needs ../shared/bench (serve.sh) and its raw crawler's venv")
    folder = tempfile.mkdtemp(prefix="tinyscrapy-books-")
    os.chmod(folder, 0o755)  # nginx's worker runs as another user
    scratch = tempfile.mkdtemp(prefix="tinyscrapy-books-out-")
    pages = write_site(args.books, folder)
    subprocess.run(["bash", serve, "start", folder, str(args.port)], check=True,
                   stdout=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{args.port}"
    c = str(args.concurrency)
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    rates = {"raw": [], "books": []}
    try:
        for rep in range(args.reps):
            out = os.path.join(scratch, f"raw{rep}.jsonl")
            wall = timed([RAW_PYTHON, raw, base + "/", "-o", out, "-c", c])
            with open(out) as f:
                rates["raw"].append(sum(1 for _ in f) / wall)
            stats = os.path.join(scratch, f"stats{rep}.json")
            wall = timed([sys.executable, "-m", "tinyscrapy", "run",
                          "tinyscrapy.demo.spiders.books.BooksSpider",
                          "-a", f"base_url={base}", "-O", os.path.join(scratch, "b.jsonl"),
                          "-s", f"CONCURRENT_REQUESTS={c}", "-s",
                          f"CONCURRENT_REQUESTS_PER_DOMAIN={c}", "-s", f"STATS_FILE={stats}",
                          "-L", "WARNING"], env=env)
            with open(stats) as f:
                rates["books"].append(json.load(f)["response_received_count"] / wall)
    finally:
        subprocess.run(["bash", serve, "stop", str(args.port)], stdout=subprocess.DEVNULL)
        shutil.rmtree(folder, ignore_errors=True)
        shutil.rmtree(scratch, ignore_errors=True)
    raw_rate, books_rate = statistics.median(rates["raw"]), statistics.median(rates["books"])
    print(f"selectors: {args.books} books ({pages} pages), concurrency {c}, "
          f"medians of {args.reps}")
    print(f"  raw Twisted ceiling (whole site)  {raw_rate:7.0f} pages/s")
    print(f"  books spider (parsel selectors)   {books_rate:7.0f} pages/s   "
          f"{books_rate / raw_rate:.2f} x ceiling")
    return 0


if __name__ == "__main__":
    sys.exit(main())
