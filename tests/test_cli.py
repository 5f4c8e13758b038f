"""
The command line's own manners: a misspelled command, C{--help} of every command,
C{settings --get}, and arguments out of range, each one line and exit 2.
"""

import argparse
import json
import os

from twisted.internet import defer, reactor
from twisted.trial import unittest

from tinyscrapy.cmdline import ScrapyArgumentParser, _builtin_names, _get_commands_dict
from tinyscrapy.commands import ScrapyHelpFormatter
from tinyscrapy.settings import Settings

from .helpers import run_command, serve


class HelpTests(unittest.TestCase):
    """Every command's --help says what it does and what each option means."""

    def test_every_command_and_option_is_described(self):
        """Each command has a description; each of its options and arguments a help."""
        settings = Settings()
        commands = _get_commands_dict(settings, inproject=False)
        self.assertEqual(sorted(commands), _builtin_names())
        for name, command in commands.items():
            self.assertTrue(len(command.long_desc()) > 20, name)
            parser = ScrapyArgumentParser(formatter_class=ScrapyHelpFormatter,
                                          conflict_handler="resolve")
            command.settings = settings
            command.add_options(parser)
            for action in parser._actions:
                if isinstance(action, argparse._HelpAction):
                    continue
                self.assertTrue(action.help, f"{name} {action.option_strings or action.dest}")

    @defer.inlineCallbacks
    def test_help_of_crawl(self):
        """crawl --help (in a child) tells it takes URLs and what -O does; exit 0."""
        code, out, err = yield run_command(reactor, ["crawl", "--help"])
        self.assertEqual(code, 0, err)
        self.assertIn("follow redirects", out)
        self.assertIn("write items to FILE, replacing it", out)


class CommandLineErrorTests(unittest.TestCase):
    """Bad input on the command line: one line, exit 2, no traceback."""

    def setUp(self):
        self.tmp = os.path.abspath(self.mktemp())
        os.makedirs(self.tmp)

    @defer.inlineCallbacks
    def assertUsageError(self, args, words):
        code, out, err = yield run_command(reactor, args, cwd=self.tmp)
        self.assertEqual(code, 2, err)
        self.assertNotIn("Traceback", err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertIn(words, err)
        return out

    def test_misspelled_command(self):
        """`runspidr` suggests `runspider`."""
        return self.assertUsageError(["runspidr", "x.py"], "did you mean `runspider`?")

    def test_bench_without_pages(self):
        """bench --pages 0 is refused before anything is served."""
        return self.assertUsageError(["bench", "--pages", "0"], "must be at least 1")

    def test_demo_port_out_of_range(self):
        """demo --port 70000: out of range."""
        return self.assertUsageError(["demo", "--port", "70000"], "out of range")

    def test_demo_port_busy(self):
        """demo --port N where N is taken: one line naming the port."""
        busy = serve(self)
        return self.assertUsageError(["demo", "--port", str(busy.port)],
                                     f"cannot listen on 127.0.0.1:{busy.port}")

    def test_settings_get_unknown(self):
        """settings --get with a typo suggests the setting."""
        return self.assertUsageError(["settings", "--get", "DOWNLOAD_DELEY"],
                                     "did you mean DOWNLOAD_DELAY?")


class SettingsGetTests(unittest.TestCase):
    """C{settings --get NAME} prints one value."""

    @defer.inlineCallbacks
    def test_one_value(self):
        """A number, a -s override, a list and a boolean, printed as Python (and Scrapy)
        prints them: the value alone on stdout."""
        code, out, err = yield run_command(reactor, ["settings", "--get", "CONCURRENT_REQUESTS"])
        self.assertEqual((code, out), (0, "16\n"), err)
        code, out, _ = yield run_command(
            reactor, ["settings", "--get", "DOWNLOAD_DELAY", "-s", "DOWNLOAD_DELAY=2.5"])
        self.assertEqual((code, out), (0, "2.5\n"))
        code, out, _ = yield run_command(reactor, ["settings", "--get", "RETRY_HTTP_CODES"])
        self.assertEqual(code, 0)
        self.assertIn("503", out)
        self.assertTrue(out.startswith("["), out)
        code, out, _ = yield run_command(reactor, ["settings", "--get", "ROBOTSTXT_OBEY",
                                                   "--getint", "CONCURRENT_REQUESTS"])
        self.assertEqual((code, out), (0, "False\n16\n"))


ITEM_SPIDER = '''
from tinyscrapy import Spider


class One(Spider):
    name = "one"

    def start_requests(self):
        return []

    async def start(self):
        yield {"a": 1}
'''


class ScrapyOptionTests(unittest.TestCase):
    """Scrapy's output and log options: C{-o PATH:FORMAT}, C{-o -:json}, C{--nolog},
    C{--logfile}."""

    def setUp(self):
        self.tmp = os.path.abspath(self.mktemp())
        os.makedirs(self.tmp)
        self.spider = os.path.join(self.tmp, "one.py")
        with open(self.spider, "w") as f:
            f.write(ITEM_SPIDER)

    @defer.inlineCallbacks
    def test_format_after_a_colon(self):
        """-O items.txt:jsonlines writes JSON lines to items.txt."""
        out = os.path.join(self.tmp, "items.txt")
        code, _, err = yield run_command(reactor, ["runspider", self.spider, "-O",
                                                   out + ":jsonlines"], cwd=self.tmp)
        self.assertEqual(code, 0, err)
        with open(out) as f:
            self.assertEqual(json.loads(f.read()), {"a": 1})

    @defer.inlineCallbacks
    def test_stdout_as_json_without_a_log(self):
        """-o -:json prints a JSON array on stdout; --nolog keeps stderr empty."""
        code, out, err = yield run_command(reactor, ["runspider", self.spider, "-o", "-:json",
                                                     "--nolog"], cwd=self.tmp)
        self.assertEqual(code, 0, err)
        self.assertEqual(json.loads(out), [{"a": 1}])
        self.assertEqual(err, "")

    @defer.inlineCallbacks
    def test_logfile(self):
        """--logfile FILE sends the log there instead of stderr."""
        log = os.path.join(self.tmp, "log.txt")
        code, _, err = yield run_command(reactor, ["runspider", self.spider, "--logfile", log,
                                                   "-O", os.path.join(self.tmp, "o.jsonl")],
                                         cwd=self.tmp)
        self.assertEqual(code, 0, err)
        self.assertNotIn("closed (finished)", err)
        with open(log) as f:
            self.assertIn("closed (finished)", f.read())
