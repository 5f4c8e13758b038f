"""
C{check [-l] [-v] [SPIDER ...]}: try the contracts of the spiders' callbacks
(L{tinyscrapy.contracts}), as Scrapy's C{check}: one sample request per callback that has
an C{@url}, all crawled together, each check reported as a test (C{.}, C{F} or C{E} on
stderr, then the failures and a summary). Exit 1 when a contract failed or errored, or a
crawl could not start.
"""

import inspect
import time
from functools import wraps
from unittest import TextTestResult as _TextTestResult
from unittest import TextTestRunner

from tinyscrapy.commands import ScrapyCommand, setting_pairs, spider_loader
from tinyscrapy.contracts import ContractsManager, _create_testcase
from tinyscrapy.settings import SETTINGS_PRIORITIES

# the output of callbacks is thrown away: no pipeline and no feed is opened, unless the
# command line asks (above a spider's custom_settings, below -s)
DISCARDED = (SETTINGS_PRIORITIES["spider"] + SETTINGS_PRIORITIES["cmdline"]) // 2


class TextTestResult(_TextTestResult):
    """unittest's result, with Scrapy's summary: C{Ran N contracts in T s}, then C{OK} or
    C{FAILED (failures=F, errors=E)}."""

    def printSummary(self, start, stop):
        run = self.testsRun
        self.stream.writeln(self.separator2)
        self.stream.writeln(f"Ran {run} contract{'s' if run != 1 else ''} in "
                            f"{stop - start:.3f}s")
        self.stream.writeln()
        if self.wasSuccessful():
            self.stream.write("OK")
            self.stream.write("\n")
            return
        self.stream.write("FAILED")
        counts = [f"{kind}={len(found)}" for kind, found in
                  (("failures", self.failures), ("errors", self.errors)) if found]
        if counts:
            self.stream.writeln(f" ({', '.join(counts)})")
        else:
            self.stream.write("\n")


class Command(ScrapyCommand):
    """Scrapy's C{check}, which also finds the spiders C{run} finds outside a project."""

    default_settings = {"LOG_ENABLED": False}

    def syntax(self):
        return "[options] <spider>"

    def short_desc(self):
        return "Check spider contracts"

    def long_desc(self):
        return ("Try the contracts in the docstrings of the spiders' callbacks (@url, "
                "@returns, @scrapes, @cb_kwargs, @meta, ... and SPIDER_CONTRACTS' own): one "
                "request per callback that has an @url, the checks reported as tests. "
                "Items go to no pipeline and no feed (unless -s asks). Exit 1 when a "
                "contract failed or errored.")

    def add_options(self, parser):
        super().add_options(parser)
        parser.add_argument("-l", "--list", dest="list", action="store_true",
                            help="only list the spiders' tested callbacks, without trying "
                                 "them")
        parser.add_argument("-v", "--verbose", dest="verbose", action="store_true",
                            help="print each check as it runs (with -l: the spiders "
                                 "without contracts too)")
        parser.add_argument("-a", dest="spargs", action="append", default=[],
                            metavar="NAME=VALUE",
                            help="set a spider argument (repeatable; becomes an attribute)")

    def process_options(self, args, opts):
        """The global options; C{-a} into C{opts.spargs}; no pipeline, no feed.
        @raise UsageError: an C{-a} that is not C{NAME=VALUE}."""
        super().process_options(args, opts)
        opts.spargs = dict(setting_pairs(opts.spargs, "-a"))
        self.settings.set("ITEM_PIPELINES", {}, DISCARDED)
        self.settings.set("FEEDS", {}, DISCARDED)

    def run(self, args, opts):
        from tinyscrapy.utils.conf import build_component_list
        from tinyscrapy.utils.misc import load_object, set_environ
        contracts = build_component_list(
            self.settings.get_component_priority_dict_with_base("SPIDER_CONTRACTS"))
        conman = ContractsManager(load_object(path) for path in contracts)
        runner = TextTestRunner(verbosity=2 if opts.verbose else 1)
        result = TextTestResult(runner.stream, runner.descriptions, runner.verbosity)
        loader = spider_loader(self)
        tested = {}
        with set_environ(SCRAPY_CHECK="true"):
            for name in args or loader.list():
                spidercls = loader.load(name)
                tested[spidercls] = conman.tested_methods_from_spidercls(spidercls)
            if opts.list:
                self._print_list(tested, opts.verbose)
                return
            sent, answered = [], set()
            classes = [_checking_class(spidercls, conman, result, sent, answered)
                       for spidercls, methods in tested.items() if methods]
            started = time.monotonic()
            status = self.crawl(classes, opts.spargs) if classes else 0
            stopped = time.monotonic()
        for method in sent:
            if method not in answered:  # dropped by the crawl's scope (offsite, a bad URL)
                result.addError(_create_testcase(method, "request"), _not_downloaded(method))
        result.printErrors()
        result.printSummary(started, stopped)
        failed = not result.wasSuccessful() or status or self.crawler_process.bootstrap_failed
        self.exitcode = int(bool(failed))

    @staticmethod
    def _print_list(tested, verbose):
        """C{-l}: each spider's name and its tested callbacks, sorted."""
        lines = []
        for spidercls, methods in sorted(tested.items(), key=_by_name):
            if methods or verbose:
                lines.append(spidercls.name)
                lines += [f"  * {method}" for method in sorted(methods)]
        print("\n".join(lines))


def _by_name(pair):
    return pair[0].name


def _checking_class(spidercls, conman, result, sent, answered):
    """
    A subclass of C{spidercls} whose start requests are its callbacks' sample requests.

    @param sent: gets the callback of each sample request sent.
    @param answered: gets the callback of each one whose callback or errback ran (one
        that never runs was dropped before its download: L{_not_downloaded}).
    """
    def sample_requests(spider):
        for request in conman.from_spider(spider, result):
            if request is not None:
                sent.append(inspect.unwrap(request.callback))
                yield _watched(request, answered)

    async def start(spider):
        for request in sample_requests(spider):
            yield request

    def start_requests(spider):
        return list(sample_requests(spider))

    return type(spidercls.__name__, (spidercls,), {
        "start": start, "start_requests": start_requests,
        "__module__": spidercls.__module__, "__qualname__": spidercls.__qualname__})


def _watched(request, answered):
    """C{request}, its callback and errback adding the tested callback to C{answered}
    when they run."""
    callback, errback = request.callback, request.errback
    method = inspect.unwrap(callback)
    if inspect.iscoroutinefunction(callback):
        @wraps(callback)
        async def watched_async(response, **cb_kwargs):
            answered.add(method)
            return await callback(response, **cb_kwargs)
        request.callback = watched_async
    else:
        @wraps(callback)
        def watched(response, **cb_kwargs):
            answered.add(method)
            return callback(response, **cb_kwargs)
        request.callback = watched

    def watched_errback(failure):
        answered.add(method)
        return errback(failure)

    request.errback = watched_errback
    return request


def _not_downloaded(method):
    """The error of a sample request that was neither answered nor failed: the crawl
    dropped it before any download (offsite, a URL it cannot fetch; the log says)."""
    error = RuntimeError(f"the @url request of {method.__name__} was not downloaded: the "
                         f"crawl dropped it before its download (offsite, or a URL it cannot "
                         f"fetch; check -L DEBUG logs why)")
    return type(error), error, None
