"""
Memory per pending request and per seen fingerprint, measured as Scrapy's own probe
(../shared/bench/scrapy_memprobe.py) measures Scrapy: VmRSS deltas after gc, one fresh
process per measurement, N requests shaped like a crawl's (a callback, a Referer header,
depth 3).

    python benchmarks/memory.py [-n 200000]

Prints one JSON line per kind; the ratios beside Scrapy are printed by benchmarks/run.py.
"""

import argparse
import gc
import json
import subprocess
import sys
import time


def rss_bytes():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def measure():
    gc.collect()
    return rss_bytes()


def probe(n, kind):
    from tinyscrapy import Request, Spider
    from tinyscrapy.crawler import Crawler

    class Probe(Spider):
        name = "probe"

        def parse(self, response):
            pass

    crawler = Crawler(Probe)
    spider = Probe.from_crawler(crawler)
    scheduler_cls = __import__("tinyscrapy.middleware", fromlist=["load_object"]).load_object(
        crawler.settings.get("SCHEDULER"))
    scheduler = scheduler_cls.from_crawler(crawler)
    scheduler.open(spider)
    result = {"kind": kind}
    if kind == "fingerprint":
        base = measure()
        started = time.perf_counter()
        for i in range(n):
            scheduler.enqueue_request(Request("http://127.0.0.1:8931/other/%d.html" % i))
            scheduler.next_request()
        elapsed = time.perf_counter() - started
        result["fingerprint_B"] = round((measure() - base) / n, 1)
        result["seen_check_us"] = round(elapsed / n * 1e6, 2)
        return result

    def make(i):
        url = "http://127.0.0.1:8931/item/%d.html" % (1000 + i)
        if kind == "bare":
            return Request(url)
        return Request(url, callback=spider.parse, depth=3,
                       headers={"Referer": "http://127.0.0.1:8931/page/%d.html" % (i // 20)})

    base = measure()
    started = time.perf_counter()
    requests = [make(i) for i in range(n)]
    create = time.perf_counter() - started
    after_objects = measure()
    started = time.perf_counter()
    for request in requests:
        scheduler.enqueue_request(request)
    enqueue = time.perf_counter() - started
    assert scheduler.size() == n
    del requests, request
    after_enqueue = measure()
    result.update({
        "request_obj_B": round((after_objects - base) / n, 1),
        "pending_request_B": round((after_enqueue - base) / n, 1),
        "create_us": round(create / n * 1e6, 2),
        "enqueue_us": round(enqueue / n * 1e6, 2),
    })
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("-n", type=int, default=200_000)
    parser.add_argument("--kind", choices=["shaped", "bare", "fingerprint"])
    args = parser.parse_args()
    if args.kind:
        print(json.dumps(probe(args.n, args.kind)))
        return
    out = {"n": args.n}
    for kind in ("shaped", "bare", "fingerprint"):
        child = subprocess.run([sys.executable, __file__, "-n", str(args.n), "--kind", kind],
                               capture_output=True, text=True, timeout=600)
        lines = [line for line in child.stdout.splitlines() if line.startswith("{")]
        out[kind] = json.loads(lines[-1]) if lines else {"error": child.stderr[-300:]}
        out[kind].pop("kind", None)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
