"""
Run each spider of C{tests/ports/} under Scrapy and under tinyscrapy, against the
replicas of L{tests.replicas}, and compare their items.

Not part of the test suite (Scrapy is not a dependency): a tool to produce the expected
items that C{tests/test_ports.py} checks, and to see where a port differs::

    python -m tests.portcheck [--scrapy /opt/scrapyref/bin/python] [--write] [NAME ...]

C{--write} stores Scrapy's items in C{tests/ports/expected/NAME.json}. The tinyscrapy side
gets the spider ported by the import rule alone (L{tests.replicas.port_imports}); both
sides get the same URLs pointed at the replicas (L{tests.replicas.localize}).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

from .helpers import ROOT, subprocess_env
from .replicas import localize, port_imports

PORTS = os.path.join(ROOT, "tests", "ports")
EXPECTED = os.path.join(PORTS, "expected")
PROJECT = "bookshop"
PROJECT_SPIDER = "catalogue"
SCRIPTS = ["script_process"]


def spider_names():
    """The ported spiders: each C{.py} file of C{tests/ports/}, and the project."""
    names = sorted(name[:-3] for name in os.listdir(PORTS) if name.endswith(".py"))
    return names + [PROJECT]


def canonical(items, ports=None):
    """
    Items as a sorted list of canonical JSON strings, the replicas' URLs written back as
    the real sites' (C{http://DOMAIN}), so they do not depend on the ports.
    """
    lines = [json.dumps(item, sort_keys=True, ensure_ascii=False) for item in items]
    for domain, port in (ports or {}).items():
        lines = [line.replace(f"http://127.0.0.1:{port}", f"http://{domain}")
                 for line in lines]
    return sorted(lines)


def read_items(path):
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as stream:
        return [json.loads(line) for line in stream if line.strip()]


def prepare(name, workdir, ports, transform):
    """
    Copy spider C{name} into C{workdir}, localized and transformed.

    @return: C{(argv tail, cwd)}: how to run it there (C{runspider FILE}, a script, or
        C{crawl NAME} in the project).
    """
    if name == PROJECT:
        target = os.path.join(workdir, PROJECT)
        shutil.copytree(os.path.join(PORTS, PROJECT), target)
        for folder, _, files in os.walk(target):
            for filename in files:
                if filename.endswith(".py"):
                    path = os.path.join(folder, filename)
                    with open(path, encoding="utf-8") as stream:
                        source = stream.read()
                    with open(path, "w", encoding="utf-8") as stream:
                        stream.write(transform(localize(source, ports)))
        return ["crawl", PROJECT_SPIDER, "-O", "out.jsonl"], target
    with open(os.path.join(PORTS, name + ".py"), encoding="utf-8") as stream:
        source = transform(localize(stream.read(), ports))
    path = os.path.join(workdir, name + ".py")
    with open(path, "w", encoding="utf-8") as stream:
        stream.write(source)
    if name in SCRIPTS:
        return None, workdir
    return ["runspider", path, "-O", "out.jsonl"], workdir


def run_side(name, ports, python, module, transform, env):
    """
    Run one spider one way.

    @return: C{(items or None, exit status, stderr)}.
    """
    workdir = tempfile.mkdtemp(prefix=f"port-{name}-")
    try:
        args, cwd = prepare(name, workdir, ports, transform)
        if args is None:  # a script: it writes items.jsonl itself
            command = [python, os.path.join(workdir, name + ".py")]
            out = os.path.join(cwd, "items.jsonl")
        else:
            command = [python, "-m", module, *args]
            out = os.path.join(cwd, "out.jsonl")
        done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=120)
        return read_items(out), done.returncode, done.stderr
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _same(source):
    return source


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--scrapy", default="/opt/scrapyref/bin/python")
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--verbose", "-v", action="store_true")
    parser.add_argument("names", nargs="*")
    options = parser.parse_args(argv)
    names = options.names or spider_names()
    server = subprocess.Popen([sys.executable, "-m", "tests.replicas"], cwd=ROOT,
                              env=subprocess_env(), stdout=subprocess.PIPE, text=True)
    try:
        ports = json.loads(server.stdout.readline())
        scrapy_env = dict(os.environ)
        scrapy_env.pop("PYTHONPATH", None)
        matched = 0
        for name in names:
            theirs, their_rc, their_err = run_side(name, ports, options.scrapy, "scrapy",
                                                   _same, scrapy_env)
            ours, our_rc, our_err = run_side(name, ports, sys.executable, "tinyscrapy",
                                             port_imports, subprocess_env())
            same = theirs is not None and ours is not None and \
                canonical(theirs, ports) == canonical(ours, ports)
            matched += same
            print(f"{name:20} scrapy: {len(theirs or [])} items (exit {their_rc})  "
                  f"tinyscrapy: {len(ours or [])} items (exit {our_rc})  "
                  f"{'MATCH' if same else 'DIFFER'}")
            if not same or options.verbose:
                if their_rc or not theirs:
                    print("  scrapy stderr:", their_err[-3000:])
                print("  tinyscrapy stderr:", our_err[-3000:])
                if theirs is not None and ours is not None:
                    theirs_c = canonical(theirs, ports)
                    for line in sorted(set(theirs_c) ^ set(canonical(ours, ports)))[:6]:
                        side = "scrapy" if line in theirs_c else "tinyscrapy"
                        print(f"  only {side}: {line[:300]}")
            if options.write and theirs is not None:
                os.makedirs(EXPECTED, exist_ok=True)
                with open(os.path.join(EXPECTED, name + ".json"), "w",
                          encoding="utf-8") as stream:
                    json.dump(canonical_items(theirs, ports), stream, indent=1, ensure_ascii=False)
                    stream.write("\n")
        print(f"{matched} of {len(names)} match")
    finally:
        server.kill()
        server.wait()


def canonical_items(items, ports=None):
    """Items in the canonical order, as data (what C{--write} stores)."""
    return [json.loads(line) for line in canonical(items, ports)]


if __name__ == "__main__":
    main()
