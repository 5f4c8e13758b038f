"""
Spider contracts, as Scrapy's C{scrapy.contracts}: a callback's docstring says how to try
it, one C{@name args} line a contract, and C{python -m tinyscrapy check} tries it::

    def parse(self, response):
        \"\"\"
        @url http://127.0.0.1:8800/books/
        @returns items 1 20
        @returns requests 0
        @scrapes title price
        \"\"\"

L{ContractsManager} reads the contracts of every callback of a spider that has some
(L{ContractsManager.tested_methods_from_spidercls}) and makes one sample request per
callback (L{ContractsManager.from_method}): each contract may change the request's
arguments (L{Contract.adjust_request_args}; C{@url} gives the URL, without which the
callback is not tried), check the response before the callback (a C{pre_process} method)
and the callback's output after it (a C{post_process} method). Each check is a
C{unittest} test case reported to a C{TestResult}: an C{AssertionError}
(L{tinyscrapy.exceptions.ContractFail}) is a failure, any other exception an error. The
callback's output goes no further: its items reach no pipeline and its requests are not
crawled. The default contracts are in L{tinyscrapy.contracts.default}; C{SPIDER_CONTRACTS}
adds a project's own.
"""

import re
import sys
import warnings
from functools import wraps
from inspect import getmembers, isasyncgenfunction, iscoroutinefunction
from types import AsyncGeneratorType, CoroutineType
from unittest import TestCase

from tinyscrapy.exceptions import ScrapyDeprecationWarning
from tinyscrapy.http.request import Request
from tinyscrapy.utils.misc import arg_to_iter
from tinyscrapy.utils.python import get_spec

CONTRACT_LINE = re.compile(r"@(\w+)\s*(.*)")
# the fields of an epytext docstring (tinyscrapy's own and Twisted's): @param, @return,
# ... are not contracts, unless a contract takes that name
EPYTEXT_FIELDS = frozenset({
    "param", "parameter", "arg", "argument", "type", "keyword", "kwarg", "kwparam",
    "return", "returns", "rtype", "returntype", "raise", "raises", "except", "exception",
    "ivar", "cvar", "var", "see", "seealso", "note", "attention", "bug", "warning",
    "warn", "since", "version", "deprecated", "todo", "author", "organization",
    "copyright", "license", "contact", "summary", "group", "sort", "change",
    "permission", "requires", "precondition", "postcondition", "invariant", "status",
})


class Contract:
    """
    The base of a contract (Scrapy's): C{name} is its C{@name}; a subclass overrides
    L{adjust_request_args}, defines C{pre_process(response)} or C{post_process(output)}
    (the callback's output as a list), or both, and may name the class of the sample
    request in C{request_cls} (the last contract that names one wins).

    @ivar args: the words after C{@name} on the docstring's line.
    @ivar testcase_pre: the test case its C{pre_process} is reported as.
    @ivar testcase_post: the test case its C{post_process} is reported as.
    """

    request_cls = None
    name = None

    def __init__(self, method, *args):
        """@param method: the (bound) callback; @param args: the line's words."""
        self.testcase_pre = _create_testcase(method, f"@{self.name} pre-hook")
        self.testcase_post = _create_testcase(method, f"@{self.name} post-hook")
        self.args = args

    def add_pre_hook(self, request, results):
        """Make C{request}'s callback run C{pre_process} on the response first (when the
        contract has one), reporting it to C{results}. @return: C{request}."""
        check = getattr(self, "pre_process", None)
        if check is not None:
            request.callback = _hooked(request.callback, check, self.testcase_pre, results,
                                       before=True)
        return request

    def add_post_hook(self, request, results):
        """Make C{request}'s callback run C{post_process} on its output (a list) after it
        (when the contract has one), reporting it to C{results}. @return: C{request}."""
        check = getattr(self, "post_process", None)
        if check is not None:
            request.callback = _hooked(request.callback, check, self.testcase_post, results,
                                       before=False)
        return request

    def adjust_request_args(self, args):
        """
        @param args: the keyword arguments of the sample request (every argument of
            C{request_cls} with its default, C{callback} and C{dont_filter=True}).
        @return: them, changed or not.
        """
        return args


class ContractsManager:
    """
    The contracts known by name, and the sample requests made from a spider's
    callbacks.

    @ivar contracts: C{{name: contract class}}.
    """

    def __init__(self, contracts):
        """@param contracts: the contract classes (C{SPIDER_CONTRACTS}' and the base's)."""
        self.contracts = {}
        for contract in contracts:
            if contract.add_pre_hook is not Contract.add_pre_hook or \
                    contract.add_post_hook is not Contract.add_post_hook:
                warnings.warn(
                    f"{contract.__module__}.{contract.__qualname__} overrides "
                    f"Contract.add_pre_hook() or Contract.add_post_hook(), which is "
                    f"deprecated. Define pre_process() or post_process() instead. Contracts "
                    f"that override those methods do not support asynchronous callbacks.",
                    ScrapyDeprecationWarning, stacklevel=2)
            self.contracts[contract.name] = contract

    def tested_methods_from_spidercls(self, spidercls):
        """The names of C{spidercls}' callables whose docstring has a contract line
        (L{contract_lines})."""
        return [name for name, value in getmembers(spidercls)
                if callable(value) and value.__doc__ and any(self.contract_lines(value))]

    def contract_lines(self, method):
        """
        C{(name, args)} of each contract line of C{method}'s docstring: a line that
        starts with C{@word} (not C{@ } alone), C{word} not an epytext field (C{@param},
        C{@return}, ...) unless a contract is named so.
        """
        for line in (method.__doc__ or "").split("\n"):
            line = line.strip()
            match = CONTRACT_LINE.match(line) if line.startswith("@") else None
            if match is not None and (match.group(1) in self.contracts
                                      or match.group(1) not in EPYTEXT_FIELDS):
                yield match.groups()

    def extract_contracts(self, method):
        """
        The contracts of C{method}'s docstring, one per contract line
        (L{contract_lines}).

        @raise ValueError: a line names a contract that is not known.
        """
        found = []
        for name, args in self.contract_lines(method):
            if name not in self.contracts:
                raise ValueError(f"unknown contract @{name} in the docstring of "
                                 f"{getattr(method, '__qualname__', method)} (the known "
                                 f"ones: {', '.join('@' + n for n in sorted(self.contracts))}; "
                                 f"SPIDER_CONTRACTS adds more)")
            found.append(self.contracts[name](method, *re.split(r"\s+", args)))
        return found

    def from_spider(self, spider, results):
        """
        The sample requests of C{spider}'s callbacks (None for a callback that has
        contracts but no URL); a callback whose contracts cannot be read is reported to
        C{results} as an error.
        """
        requests = []
        for name in self.tested_methods_from_spidercls(type(spider)):
            method = getattr(spider, name)
            try:
                requests.append(self.from_method(method, results))
            except Exception:
                results.addError(_create_testcase(method, "contract"), sys.exc_info())
        return requests

    def from_method(self, method, results):
        """
        The sample request of callback C{method}: its contracts' arguments (never
        filtered as a duplicate, so that two callbacks may be tried on one URL), its
        callback wrapped in their checks and made to yield nothing.

        @return: the request, or None when the contracts give no value for one of the
            request's required arguments (no C{@url}) or there are none.
        """
        contracts = self.extract_contracts(method)
        if not contracts:
            return None
        request_cls = Request
        for contract in contracts:
            if contract.request_cls is not None:
                request_cls = contract.request_cls
        required, kwargs = get_spec(request_cls.__init__)
        kwargs = dict(kwargs, dont_filter=True, callback=method)
        for contract in contracts:
            kwargs = contract.adjust_request_args(kwargs)
        if not set(required) - {"self"} <= set(kwargs):
            return None
        request = request_cls(**kwargs)
        for contract in reversed(contracts):  # the first contract's check runs first
            request = contract.add_pre_hook(request, results)
        for contract in contracts:
            request = contract.add_post_hook(request, results)
        self._clean_req(request, method, results)
        return request

    def _clean_req(self, request, method, results):
        """Make the request's callback yield nothing and report what it raises, and its
        errback report the failure, as errors of C{method}."""
        callback = request.callback
        if _is_async(callback):
            @wraps(callback)
            async def cleaned_async(response, **cb_kwargs):
                try:
                    await _collect_async(callback(response, **cb_kwargs))
                except Exception:
                    results.addError(_create_testcase(method, "callback"), sys.exc_info())
            request.callback = cleaned_async
        else:
            @wraps(callback)
            def cleaned(response, **cb_kwargs):
                try:
                    _collect(callback(response, **cb_kwargs))
                except Exception:
                    results.addError(_create_testcase(method, "callback"), sys.exc_info())
            request.callback = cleaned

        def errback(failure):
            results.addError(_create_testcase(method, "errback"),
                             (failure.type, failure.value, failure.getTracebackObject()))
        request.errback = errback


def _hooked(callback, check, testcase, results, before):
    """
    C{callback} wrapped to run C{check} as a test case: on the response first
    (C{before}), else on the callback's output (a list) after it. The wrapper returns the
    output as a list, and is C{async def} when C{callback} is.
    """
    if _is_async(callback):
        @wraps(callback)
        async def hooked_async(response, **cb_kwargs):
            if before:
                _run_hook(check, response, testcase, results)
            output = await _collect_async(callback(response, **cb_kwargs))
            if not before:
                _run_hook(check, output, testcase, results)
            return output
        return hooked_async

    @wraps(callback)
    def hooked(response, **cb_kwargs):
        if before:
            _run_hook(check, response, testcase, results)
        output = _collect(callback(response, **cb_kwargs))
        if not before:
            _run_hook(check, output, testcase, results)
        return output
    return hooked


def _is_async(callback):
    return iscoroutinefunction(callback) or isasyncgenfunction(callback)


def _collect(result):
    """A synchronous callback's output as a list. @raise TypeError: it is a coroutine or an
    asynchronous generator (the callback is not C{async def}: its checks could not wait
    for it)."""
    if isinstance(result, (AsyncGeneratorType, CoroutineType)):
        if isinstance(result, CoroutineType):
            result.close()  # never awaited: no warning about it
        raise TypeError("Callbacks that return a coroutine or an asynchronous generator "
                        "must be defined with async def to be supported by contracts.")
    return list(arg_to_iter(result))


async def _collect_async(result):
    """An asynchronous callback's output as a list (an awaited coroutine's too)."""
    if isinstance(result, AsyncGeneratorType):
        return [element async for element in result]
    if isinstance(result, CoroutineType):
        return await _collect_async(await result)
    return list(arg_to_iter(result))


def _run_hook(check, value, testcase, results):
    """Run one check as a test case: an C{AssertionError} is its failure, another
    exception its error, else a success."""
    results.startTest(testcase)
    try:
        check(value)
    except AssertionError:
        results.addFailure(testcase, sys.exc_info())
    except Exception:
        results.addError(testcase, sys.exc_info())
    else:
        results.addSuccess(testcase)
    finally:
        results.stopTest(testcase)


def _create_testcase(method, what):
    """A test case that stands for one check of C{method} (its C{str}: C{[spider]
    method (what)})."""
    spider = method.__self__.name
    title = f"[{spider}] {method.__name__} ({what})"

    class ContractTestCase(TestCase):
        def __str__(self):
            return title

    name = f"{spider}_{method.__name__}"
    setattr(ContractTestCase, name, _nothing)
    return ContractTestCase(name)


def _nothing(_self):
    return None
