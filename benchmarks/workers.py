"""
`--workers N` beside one process, the raw Twisted ceiling and the other peers, on the shared
yardstick's site, with each process's CPU a page and the model it gives (printed, never
asserted):

    python benchmarks/workers.py [-n 5000] [-c 16] [-r 3] [--workers 1,2,3,4] [--redis]
        [--peers raw,go,scrapy] [-p 8931] [--timeout 240]

The site is the yardstick's generated shop (../shared/bench/make_site.py, cached as
/tmp/bench-site-nN-pPORT, as run.sh does) on its private nginx (serve.sh): an nginx that
already serves the port is used and left running; one started here is stopped at the end.
One interleaved run: each rep runs every variant once, in order -- tinyscrapy in one process
(benchmarks/run.py's CRAWL_CMD), the same with `--workers N` for each N (`--workers 1` is
one process too: tinyscrapy starts no worker for it), with `--redis` the same with
`--workers 2 --scheduler redis://` on a private redis-server (FLUSHALL before every run),
then the peers with the yardstick's own commands (run.sh). Before each crawl the same
command crawls /probe/empty.html, a page without links: its start-up.

Measured per run: the wall (from the start to the exit, read on a pidfd); the CPU of the
whole process tree (getrusage(RUSAGE_CHILDREN) before and after); for `--workers`, the
workers' CPU (the parent's cutime + cstime in /proc/PID/stat, read once it has exited and
before it is reaped: its last values) and the parent's own (the tree less the workers); the
pages reached (../shared/bench/count.py against the manifest); nginx's worker's CPU and
redis-server's (utime + stime in /proc before and after). While a crawl runs, /proc of the
parent and of its children is read every 20 ms: each worker's last reading, summed, is
printed as a check on the split. Output goes to a tempfile.mkdtemp() directory, removed at
the end; only 127.0.0.1 is contacted; every run has a wall cap, after which its process
group (and only it) is killed.
"""

import argparse
import json
import os
import resource
import select
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # importing the other benchmarks writes nothing beside them

from run import CRAWL_CMD, SHARED_BENCH, compile_package  # noqa: E402
from shared_crawl import redis_server  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TICK = 1.0 / os.sysconf("SC_CLK_TCK")  # /proc/PID/stat counts CPU in these
POLL_INTERVAL = 0.02
PROBE_CAP = 60.0
KILL_GRACE = 5.0
# the yardstick's commands (run.sh), by peer: the binary that must exist, the command
PEERS = {
    "raw": ("/tmp/venv-raw/bin/python",
            "/tmp/venv-raw/bin/python {bench}/peers/raw_twisted.py {url} -o {out} -c {c}"),
    "go": ("/tmp/gocrawl", "/tmp/gocrawl -url {url} -o {out} -c {c}"),
    "scrapy": ("/tmp/venv-scrapy/bin/scrapy",
               "/tmp/venv-scrapy/bin/scrapy runspider {bench}/peers/scrapy_spider.py "
               "-a start={url} -O {out} -s CONCURRENT_REQUESTS={c} "
               "-s CONCURRENT_REQUESTS_PER_DOMAIN={c}"),
}
ONE = "tinyscrapy, one process"


class Variant:
    """One command of the interleaved run: its name, its command template ({url} {out}
    {c}), how many workers it runs (0: not tinyscrapy's --workers) and whether it needs the
    private redis-server."""

    def __init__(self, name, template, env, workers=0, redis=False, ours=True):
        self.name = name
        self.ours = ours  # tinyscrapy: its parent's CPU is shown (the whole tree in one process)
        self.template = template
        self.env = env
        self.workers = workers
        self.split = workers > 1  # --workers 1 runs the crawl in one process: no workers
        self.redis = redis
        self.runs = []     # one dict per rep: the crawl
        self.probes = []   # one dict per rep: the start-up probe

    def argv(self, url, out, concurrency, redis_url=None):
        words = shlex.split(self.template.format(url=url, out=out, c=concurrency,
                                                 bench=SHARED_BENCH))
        if self.workers:
            words += ["--workers", str(self.workers)]
        if self.redis:
            words += ["--scheduler", redis_url]
        return words


def proc_cpu(pid):
    """@return: (own CPU s, reaped children's CPU s) of C{pid} from /proc/PID/stat (a zombie
    not yet reaped still answers, with its last values), or None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    # fields[0] is field 3 (state): utime 14, stime 15, cutime 16, cstime 17
    own = (int(fields[11]) + int(fields[12])) * TICK
    return own, (int(fields[13]) + int(fields[14])) * TICK


def own_cpu(pid):
    """@return: C{pid}'s own CPU s (its threads' too), None if unknown or gone."""
    reading = proc_cpu(pid) if pid else None
    return reading[0] if reading else None


def children(pid):
    """@return: the pids of C{pid}'s children (every thread's), [] if it is gone."""
    found = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                found += [int(word) for word in f.read().split()]
    except OSError:
        pass
    return found


def measure(argv, env, cwd, cap, stderr_path):
    """Run C{argv} in a process group of its own until it exits or C{cap} seconds pass (then
    its group is sent SIGTERM, and SIGKILL C{KILL_GRACE} s later).

    @return: a dict: wall (s), exit (its status, or "timeout"), tree (CPU s of the process
        and every descendant it reaped), children (its cutime + cstime once exited, None if
        unread), polled (the sum of each child's last 20 ms reading), poller (this
        process's own CPU s meanwhile)."""
    self_before = resource.getrusage(resource.RUSAGE_SELF)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(stderr_path, "wb") as stderr:
        started = time.perf_counter()
        process = subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                                   stdout=subprocess.DEVNULL, stderr=stderr,
                                   start_new_session=True)
    pidfd = os.pidfd_open(process.pid)
    exited = select.poll()
    exited.register(pidfd, select.POLLIN)
    last_seen, status = {}, None
    try:
        for _ in range(int(cap / POLL_INTERVAL) + 2):  # bounded in count and in time
            if exited.poll(POLL_INTERVAL * 1000):
                break
            for child in children(process.pid):
                reading = proc_cpu(child)
                if reading is not None:
                    last_seen[child] = sum(reading)
            if time.perf_counter() - started > cap:
                break
        if not exited.poll(0):
            status = "timeout"
            _stop_group(process.pid, exited)
        wall = time.perf_counter() - started
        final = proc_cpu(process.pid)  # exited, not reaped: its last values
        code = process.wait(timeout=KILL_GRACE * 2)
    finally:
        if process.returncode is None:  # interrupted: leave nothing of it running
            _stop_group(process.pid, exited)
            process.wait(timeout=KILL_GRACE * 2)
        os.close(pidfd)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    self_after = resource.getrusage(resource.RUSAGE_SELF)
    return {"wall": wall, "exit": status or code,
            "tree": _cpu(after) - _cpu(before),
            "children": final[1] if final is not None else None,
            "polled": sum(last_seen.values()),
            "poller": _cpu(self_after) - _cpu(self_before)}


def _cpu(usage):
    return usage.ru_utime + usage.ru_stime


def _stop_group(pid, exited):
    """SIGTERM to the process group C{pid} started (its own: start_new_session), SIGKILL
    if its leader has not exited C{KILL_GRACE} s later."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pid, sig)
        except ProcessLookupError:
            return
        if exited.poll(KILL_GRACE * 1000):
            return


class Nginx:
    """The yardstick's private nginx on PORT: the running one if there is one (left
    running), else one started here with serve.sh (stopped by L{stop})."""

    def __init__(self, site, port):
        self.port = port
        self.started_here = False
        pid_file = f"/tmp/bench-nginx-{port}/nginx.pid"
        self.master = _read_pid(pid_file)
        if self.master is not None and proc_cpu(self.master) is not None:
            with open(f"/tmp/bench-nginx-{port}/nginx.conf") as f:
                conf = f.read()
            if f"root {os.path.realpath(site)};" not in conf:
                sys.exit(f"workers.py: the nginx on port {port} (pid {self.master}) serves "
                         f"another site than {site}; use another -p")
        else:
            if _port_answers(port):
                sys.exit(f"workers.py: 127.0.0.1:{port} is taken by something other than the "
                         "yardstick's nginx; use another -p")
            output = subprocess.run(["bash", os.path.join(SHARED_BENCH, "serve.sh"), "start",
                                     site, str(port)], capture_output=True, text=True,
                                    timeout=60)
            if output.returncode:
                sys.exit(f"workers.py: serve.sh start failed: {output.stderr.strip()}")
            self.master = int(output.stdout.split()[-1])
            self.started_here = True
        workers = children(self.master)
        self.worker = workers[0] if len(workers) == 1 else None

    def cpu(self):
        """@return: its worker's CPU s so far, or None when not one worker process."""
        return own_cpu(self.worker)

    def stop(self):
        if self.started_here:
            subprocess.run(["bash", os.path.join(SHARED_BENCH, "serve.sh"), "stop",
                            str(self.port)], timeout=60)


def _read_pid(path):
    try:
        with open(path) as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def _port_answers(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def flushall(redis_url):
    """FLUSHALL on the private redis-server, so that no run shares a frontier, a seen set or
    an end marker with the one before."""
    host, port = redis_url.split("//")[1].split("/")[0].split(":")
    with socket.create_connection((host, int(port)), timeout=5) as conn:
        conn.sendall(b"*1\r\n$8\r\nFLUSHALL\r\n")
        answer = conn.recv(64)
    if not answer.startswith(b"+OK"):
        raise RuntimeError(f"redis FLUSHALL answered {answer!r}")


def make_site(pages, port):
    site = f"/tmp/bench-site-n{pages}-p{port}"
    if not os.path.exists(os.path.join(site, "manifest.json")):
        subprocess.run([sys.executable, os.path.join(SHARED_BENCH, "make_site.py"), site,
                        "--pages", str(pages), "--base", f"http://127.0.0.1:{port}"],
                       check=True, stdout=subprocess.DEVNULL, timeout=600)
    return site


def count(out, manifest):
    """@return: the yardstick's count of C{out} (count.py's JSON) against the manifest."""
    output = subprocess.run([sys.executable, os.path.join(SHARED_BENCH, "count.py"), "jsonl",
                             out, manifest], capture_output=True, text=True, timeout=120)
    return json.loads(output.stdout)


def variants(args):
    ours = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    command = CRAWL_CMD.format(python=shlex.quote(sys.executable))
    chosen = [Variant(ONE, command, ours)]
    chosen += [Variant(f"tinyscrapy --workers {n}", command, ours, workers=n)
               for n in args.workers]
    if args.redis:
        chosen.append(Variant("tinyscrapy --workers 2 redis", command, ours, workers=2,
                              redis=True))
    for peer in args.peers:
        binary, template = PEERS[peer]
        if os.path.exists(binary):
            chosen.append(Variant(peer, template, dict(os.environ), ours=False))
        else:
            print(f"skip {peer}: {binary} is missing (../shared/bench/setup.sh installs it)")
    return chosen


def run_all(args, chosen, nginx, site, scratch, redis_url):
    base = f"http://127.0.0.1:{args.port}"
    manifest = os.path.join(site, "manifest.json")
    for rep in range(1, args.reps + 1):
        for number, variant in enumerate(chosen):
            out = os.path.join(scratch, f"out-{number}.jsonl")
            errors = os.path.join(scratch, f"stderr-{number}.txt")
            if variant.redis:
                flushall(redis_url)
            probe = measure(variant.argv(base + "/probe/empty.html", out, args.concurrency,
                                         redis_url), variant.env, scratch, PROBE_CAP, errors)
            variant.probes.append(probe)
            _remove(out)
            if variant.redis:
                flushall(redis_url)
            nginx_before, redis_before = nginx.cpu(), own_cpu(args.redis_pid)
            crawl = measure(variant.argv(base + "/index.html", out, args.concurrency,
                                         redis_url), variant.env, scratch, args.timeout, errors)
            crawl["nginx"] = _delta(nginx_before, nginx.cpu())
            if variant.redis:
                crawl["redis"] = _delta(redis_before, own_cpu(args.redis_pid))
            crawl.update(count(out, manifest))
            _remove(out)
            variant.runs.append(crawl)
            split = ""
            if variant.split and crawl["children"] is not None:
                split = (f" (parent {crawl['tree'] - crawl['children']:.2f} + workers "
                         f"{crawl['children']:.2f})")
            print(f"rep {rep} {variant.name:30} wall {crawl['wall']:6.2f} s  start-up "
                  f"{probe['wall']:5.2f} s  cpu {crawl['tree']:6.2f} s{split}  nginx "
                  f"{_fmt(crawl['nginx'], '.2f')} s  reached {crawl['reached']}  exit "
                  f"{crawl['exit']}", flush=True)
            if crawl["exit"] != 0:
                _print_tail(errors)


def _delta(before, after):
    return after - before if before is not None and after is not None else None


def _remove(path):
    if os.path.exists(path):
        os.remove(path)


def _print_tail(path, lines=3):
    with open(path, errors="replace") as f:
        for line in f.readlines()[-lines:]:
            print("    " + line.rstrip())


def summarise(variant):
    """@return: the medians over the reps of C{variant}'s figures (per-page CPU in ms; the
    model's costs with the start-up probe's CPU taken off)."""
    runs, probes = variant.runs, variant.probes
    startup = statistics.median(probe["wall"] for probe in probes)
    split = variant.split

    def per_page(key, run, less=0.0):
        value = run.get(key)
        if value is None or not run["reached"]:
            return None
        return (value - less) * 1000 / run["reached"]

    def median(values):
        values = [value for value in values if value is not None]
        return statistics.median(values) if values else None

    def probe_median(key):
        return median(probe.get(key) for probe in probes) or 0.0

    for run in runs + probes:
        run["workers"] = run["children"] if split else None
        if not split:
            run["parent"] = run["tree"] if variant.ours else None
        else:
            known = run["children"] is not None
            run["parent"] = run["tree"] - run["children"] if known else None
    return {
        "runs": len(runs),
        "pps": median(r["reached"] / r["wall"] for r in runs),
        "cps": median(r["reached"] / (r["wall"] - startup) if r["wall"] > startup else None
                      for r in runs),
        "startup": startup,
        "reached": min(r["reached"] for r in runs),
        "exits": ",".join(sorted({str(r["exit"]) for r in runs})),
        **{key: median(per_page(key, r) for r in runs)
           for key in ("tree", "parent", "workers", "nginx", "redis")},
        # the model's: the start-up's CPU (its probe's) taken off
        **{"model_" + key: median(per_page(key, r, probe_median(key)) for r in runs)
           for key in ("tree", "parent", "workers")},
    }


def _fmt(value, spec):
    return "-" if value is None else format(value, spec)


def _ratio(a, b):
    return f"{a / b:.2f}" if a and b else "-"


def print_table(chosen, stats, manifest_pages):
    one, raw = stats.get(ONE, {}), stats.get("raw", {})
    header = ["variant", "runs", "pages/s", "crawl p/s", "vs one (pages/s)",
              "vs one (crawl p/s)", "vs raw", "CPU ms/page tree", "parent", "workers", "nginx",
              "redis", "start-up s", "reached", "exits"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for variant in chosen:
        s = stats[variant.name]
        row = [variant.name, str(s["runs"]), _fmt(s["pps"], ".0f"), _fmt(s["cps"], ".0f"),
               _ratio(s["pps"], one.get("pps")), _ratio(s["cps"], one.get("cps")),
               _ratio(s["pps"], raw.get("pps")), _fmt(s["tree"], ".3f"),
               _fmt(s["parent"], ".3f"), _fmt(s["workers"], ".3f"), _fmt(s["nginx"], ".3f"),
               _fmt(s["redis"], ".3f"), f"{s['startup']:.2f}",
               f"{s['reached']}/{manifest_pages}", s["exits"]]
        print("| " + " | ".join(row) + " |")
    for variant in chosen:
        if variant.workers and ONE in stats:
            ones = next(v for v in chosen if v.name == ONE).runs
            by_run = [r["reached"] / r["wall"] / (o["reached"] / o["wall"])
                      for r, o in zip(variant.runs, ones, strict=True)
                      if r["reached"] and o["reached"]]
            print(f"  {variant.name}: pages/s vs one process, run by run: "
                  + (" ".join(f"{x:.2f}" for x in by_run) or "-"))


def print_notes(chosen, nginx):
    split = [r for v in chosen if v.split for r in v.runs + v.probes]
    unread = sum(1 for r in split if r["children"] is None)  # not expected on Linux
    shortfall = max((r["children"] - r["polled"] for r in split if r["children"] is not None),
                    default=None)
    pages = max((r["reached"] for v in chosen for r in v.runs), default=0) or 1
    poller = statistics.median(r["poller"] for v in chosen for r in v.runs)
    tick = TICK * 1000
    whose = ("started here" if nginx.started_here else
             f"already running, pid {nginx.master}: it counts every client it served\n "
             " meanwhile")
    print("\nHow exact the CPU columns are:")
    print("- tree: getrusage(RUSAGE_CHILDREN) before and after the run, in microseconds: every\n"
          "  process of the tool, once reaped (its workers are reaped before the parent exits)")
    print("- workers: the parent's cutime + cstime in /proc/PID/stat, read once it exited and\n"
          "  before it was reaped: its last values, so the polling adds no error to them;\n"
          f"  /proc counts in ticks of {tick:.0f} ms, truncated: the workers within "
          f"{2 * tick:.0f} ms a run low,\n  the parent (the tree less the workers) as much high: "
          f"{2 * tick / pages:.4f} ms/page at {pages} pages"
          + (f"; unread in {unread} run(s), shown as -" if unread else ""))
    print(f"- check: each worker's own last reading, polled every {POLL_INTERVAL * 1000:.0f} ms, "
          "summed, misses at most\n  one interval of each worker's CPU; its largest shortfall "
          f"against the parent's cutime here:\n  {_fmt(shortfall, '.3f')} s a run (the error "
          "of a split read by polling alone)")
    print(f"- nginx ({whose}) and redis-server: the process's utime + stime in /proc before\n"
          f"  and after the crawl (ticks of {tick:.0f} ms: within {tick:.0f} ms a run)")
    print(f"- the poller (this script) used a median {poller * 1000:.0f} ms of CPU a crawl, in "
          "no column, on the same cores")


def print_model(chosen, stats, cores):
    """The bound each variant's measured per-page CPU puts on its crawl rate, with
    start-up CPU taken off (each variant's probe), and beyond the cores here."""
    one = stats.get(ONE)
    if not one or not one["model_tree"]:
        return
    print(f"\nThe model ({cores} cores; CPU ms a page reached, the start-up probe's CPU taken "
          "off):\n  one process runs on one core: bound = min(1 / own, "
          f"{cores} / (own + server), 1 / server);\n  N workers share the cores with the "
          "parent and the server (nginx, redis): bound =\n"
          f"  min({cores} / (workers + parent + server), 1 / parent (the parent saturates its "
          "core),\n      N / workers (each worker on one core), 1 / server (nginx runs one "
          "worker, redis one thread))\n")
    header = ["variant", "own/workers", "parent", "server", "bound p/s", "bound by",
              "bound vs one", "crawl p/s measured", "measured / bound"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    one_bound = None
    for variant in chosen:
        s = stats[variant.name]
        if variant.name != ONE and not variant.workers:
            continue
        server = (s["nginx"] or 0.0) + (s["redis"] or 0.0)
        if variant.split:
            cost, parent, n = s["model_workers"], s["model_parent"], variant.workers
        else:
            cost, parent, n = s["model_tree"], None, 1
        bound, by = _bound(cost, parent, server, n, cores, single=not variant.split)
        one_bound = bound if variant.name == ONE else one_bound
        print("| " + " | ".join([variant.name, _fmt(cost, ".3f"), _fmt(parent, ".3f"),
                                 f"{server:.3f}", _fmt(bound, ".0f"), by,
                                 _ratio(bound, one_bound), _fmt(s["cps"], ".0f"),
                                 _ratio(s["cps"], bound)]) + " |")
    base = next((v for v in chosen if v.workers == 2 and not v.redis), None) or next(
        (v for v in chosen if v.split and not v.redis), None)
    if base is None:
        return
    s = stats[base.name]
    if s["model_workers"] is None or s["model_parent"] is None:
        return
    server = s["nginx"] or 0.0
    one_cost, one_server = one["model_tree"], one["nginx"] or 0.0
    print(f"\nModelled beyond the cores here: N workers at the CPU a page measured with "
          f"{base.name}\n  (workers {s['model_workers']:.3f}, parent {s['model_parent']:.3f}, "
          f"nginx {server:.3f} ms), taken as the same at every N (though\n  each worker's "
          f"share of the concurrency shrinks); on the {cores} cores here and on N + 2 cores "
          "(one\n  each for the workers, the parent, nginx), each beside one process's bound "
          "on as many cores\n  (--workers 1 is one process: tinyscrapy starts no worker)\n")
    header = ["N", f"bound p/s, {cores} cores", "bound by", "vs one", "bound p/s, N + 2 cores",
              "bound by", "vs one"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for n in range(2, 9):
        row = [str(n)]
        for c in (cores, n + 2):
            bound, by = _bound(s["model_workers"], s["model_parent"], server, n, c)
            single, _ = _bound(one_cost, None, one_server, 1, c, single=True)
            row += [_fmt(bound, ".0f"), by, _ratio(bound, single)]
        print("| " + " | ".join(row) + " |")


def _bound(cost, parent, server, n, cores, single=False):
    """@return: (pages/s, the binding term) of the model."""
    if not cost:
        return None, "-"
    terms = {"cores": cores / (cost + (parent or 0.0) + server)}
    terms["own core" if single else "workers' cores"] = n / cost
    if parent:
        terms["parent"] = 1 / parent
    if server:
        terms["server"] = 1 / server
    by = min(terms, key=terms.get)
    return terms[by] * 1000, by


def parse_args():
    parser = argparse.ArgumentParser(description="--workers N beside one process (printed)")
    parser.add_argument("-n", dest="pages", type=int, default=5000)
    parser.add_argument("-c", dest="concurrency", type=int, default=16)
    parser.add_argument("-r", dest="reps", type=int, default=3)
    parser.add_argument("-p", dest="port", type=int, default=8931)
    parser.add_argument("--workers", default="1,2,3,4", help="comma separated, each >= 1")
    parser.add_argument("--redis", action="store_true",
                        help="also --workers 2 --scheduler redis:// (a private redis-server)")
    parser.add_argument("--peers", default="raw,go,scrapy", help=",".join(PEERS) + " or none")
    parser.add_argument("--timeout", type=float, default=240.0, help="wall cap a run (s)")
    args = parser.parse_args()
    try:
        args.workers = [int(n) for n in args.workers.split(",") if n]
    except ValueError:
        parser.error(f"--workers: whole numbers, comma separated, not {args.workers!r}")
    if any(n < 1 for n in args.workers):
        parser.error("--workers: each at least 1")
    args.peers = [p for p in args.peers.split(",") if p and p != "none"]
    unknown = [p for p in args.peers if p not in PEERS]
    if unknown:
        parser.error(f"--peers: unknown {','.join(unknown)} (known: {','.join(PEERS)})")
    if args.reps < 1 or args.pages < 1 or args.concurrency < 1 or args.timeout <= 0:
        parser.error("-n, -c, -r and --timeout must be positive")
    if args.redis and not shutil.which("redis-server"):
        parser.error("--redis needs redis-server on the PATH")
    return args


def main():
    args = parse_args()
    compile_package()
    site = make_site(args.pages, args.port)
    manifest_pages = json.load(open(os.path.join(site, "manifest.json")))["pages"]
    chosen = variants(args)
    scratch = tempfile.mkdtemp(prefix="tinyscrapy-workers-bench-")
    nginx = redis = redis_url = None
    args.redis_pid = None
    try:
        nginx = Nginx(site, args.port)
        if args.redis:
            redis, redis_url = redis_server()
            args.redis_pid = redis.pid
        print(f"{time.strftime('%Y-%m-%d %H:%M:%S %Z')}, {os.cpu_count()} cores, load "
              f"{open('/proc/loadavg').read().split()[:3]}; site {site} ({manifest_pages} "
              f"pages), nginx pid {nginx.master}"
              f"{' (started here)' if nginx.started_here else ' (already running)'}, worker "
              f"{nginx.worker}; -c {args.concurrency}, {args.reps} interleaved rep(s)")
        run_all(args, chosen, nginx, site, scratch, redis_url)
        print(f"\nload at the end {open('/proc/loadavg').read().split()[:3]}; medians over "
              f"{args.reps} rep(s); CPU in ms a page reached (start-up included)\n")
        stats = {variant.name: summarise(variant) for variant in chosen}
        print_table(chosen, stats, manifest_pages)
        print_notes(chosen, nginx)
        print_model(chosen, stats, os.cpu_count())
    finally:
        if redis is not None:
            redis.terminate()
            try:
                redis.wait(timeout=10)
            except subprocess.TimeoutExpired:
                redis.kill()
                redis.wait(timeout=10)
        if nginx is not None:
            nginx.stop()
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
