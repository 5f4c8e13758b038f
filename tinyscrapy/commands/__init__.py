"""
Scrapy's C{scrapy.commands}: one module per command of C{python -m tinyscrapy}, each with a
L{ScrapyCommand} subclass named C{Command}, as in Scrapy (a project's C{COMMANDS_MODULE}
and the C{tinyscrapy.commands} entry points add their own the same way).

A command's life, driven by L{tinyscrapy.cmdline.Command} (one invocation):

 1. its C{default_settings} go into the settings at the C{command} priority, and the
    settings are given to it (C{command.settings});
 2. C{add_options(parser)} adds its options to an argparse parser (the global ones first:
    L{ScrapyCommand.add_options});
 3. the parser reads the command line; C{process_options(args, opts)} turns the options
    into settings (C{-s}, C{-L}, C{-o}, ...);
 4. a L{tinyscrapy.crawler.CrawlerProcess} is made for it in C{crawler_process} when
    C{requires_crawler_process} (its logging set up from the settings);
 5. C{run(args, opts)} does the work; C{exitcode} is the exit status.

A L{UsageError} raised on the way ends the command with one line and status 2; one
without a message asks for the command's help (printed on stdout), as in Scrapy.

L{BaseRunSpiderCommand} is the base of the commands that run spiders (C{run},
C{runspider}, C{crawl}, C{parse}): C{-a}, C{-o}, C{-O}, and tinyscrapy's C{--jobdir},
C{--scheduler}, C{--workers} and C{--trace}. L{ScrapyCommand.crawl} runs spider classes
together in the command's L{CrawlerProcess} and returns the exit status (C{check} crawls
with it too).
"""

import argparse
import builtins
import logging
import os
import re
import warnings
from abc import ABC, abstractmethod

from tinyscrapy.exceptions import ScrapyDeprecationWarning, UsageError

logger = logging.getLogger(__name__)

AS_SCRAPY_HELP = ("serve `import scrapy` from tinyscrapy, so that a Scrapy project and its "
                  "plugins run unchanged (also TINYSCRAPY_AS_SCRAPY=1; on by itself beside a "
                  "scrapy.cfg when Scrapy is not installed)")


class ScrapyCommand(ABC):
    """
    The base of every command, as Scrapy's.

    @cvar requires_project: the command is only offered inside a project.
    @cvar requires_crawler_process: the command gets a L{CrawlerProcess} in
        C{crawler_process} before it runs (which sets up logging).
    @cvar default_settings: settings the command sets at the C{command} priority (above
        the defaults, below the project's).
    @ivar settings: the invocation's L{tinyscrapy.settings.Settings} (set before
        C{add_options}).
    @ivar exitcode: the exit status, once C{run} returned.
    """

    requires_project = False
    requires_crawler_process = True
    crawler_process = None
    default_settings = {}
    exitcode = 0

    def __init__(self):
        self.settings = None
        from tinyscrapy.utils.deprecate import method_is_overridden
        if method_is_overridden(type(self), ScrapyCommand, "help"):
            from tinyscrapy.utils.python import global_object_name
            warnings.warn(f"The ScrapyCommand.help() method is deprecated and overriding "
                          f"it, as the {global_object_name(type(self))} class does, has no "
                          f"effect; override long_desc() instead.", ScrapyDeprecationWarning,
                          stacklevel=2)

    def syntax(self):
        """The command's arguments, for its usage line (without the command's name)."""
        return ""

    @abstractmethod
    def short_desc(self):
        """One line: what the command does (the command list shows it)."""
        return ""

    def long_desc(self):
        """A paragraph for the command's C{-h} (argparse wraps it)."""
        return self.short_desc()

    def help(self):
        """L{long_desc}, under its deprecated name."""
        warnings.warn("ScrapyCommand.help() is deprecated, use long_desc() instead.",
                      ScrapyDeprecationWarning, stacklevel=2)
        return self.long_desc()

    def add_options(self, parser):
        """Add the options of every command (C{Global Options}); a command adds its own
        after calling this."""
        group = parser.add_argument_group(title="Global Options")
        group.add_argument("--logfile", metavar="FILE",
                           help="log to FILE instead of stderr (the LOG_FILE setting)")
        default = self.settings["LOG_LEVEL"] if self.settings is not None else "INFO"
        group.add_argument("-L", "--loglevel", metavar="LEVEL", default=None,
                           help=f"log level: DEBUG, INFO, WARNING, ERROR (default: {default})")
        group.add_argument("--nolog", action="store_true",
                           help="log nothing (the LOG_ENABLED setting)")
        group.add_argument("--profile", metavar="FILE", default=None,
                           help="write Python's cProfile statistics of the command to FILE")
        group.add_argument("--pidfile", metavar="FILE", help="write the process ID to FILE")
        group.add_argument("-s", "--set", action="append", default=[], metavar="NAME=VALUE",
                           help="set a setting (repeatable); lists, dicts, numbers and "
                                "booleans are read as JSON")
        group.add_argument("--pdb", action="store_true",
                           help="start the debugger (ipdb if installed) on an error logged "
                                "with its traceback")
        group.add_argument("--as-scrapy", action="store_true", help=AS_SCRAPY_HELP)

    def process_options(self, args, opts):
        """
        Turn the global options into settings (C{cmdline} priority), write the pid file,
        and set up C{--pdb}.

        @raise UsageError: a C{-s} that is not C{NAME=VALUE}, or a value of the wrong
            kind.
        """
        from tinyscrapy.settings import parse_value
        for name, value in setting_pairs(opts.set, "-s"):
            self.settings.set(name, parse_value(value, name), "cmdline")
        if opts.logfile:
            self.settings.set("LOG_ENABLED", True, "cmdline")
            self.settings.set("LOG_FILE", opts.logfile, "cmdline")
        if opts.loglevel:
            self.settings.set("LOG_ENABLED", True, "cmdline")
            self.settings.set("LOG_LEVEL", opts.loglevel.upper(), "cmdline")
        if opts.nolog:
            self.settings.set("LOG_ENABLED", False, "cmdline")
        if opts.pidfile:
            try:
                with open(opts.pidfile, "w", encoding="utf-8") as f:
                    f.write(f"{os.getpid()}{os.linesep}")
            except OSError as e:
                raise UsageError(f"--pidfile {opts.pidfile}: {e.strerror}") from None
        if opts.pdb:
            logging.getLogger().addHandler(PdbHandler(level=logging.ERROR))

    def crawl(self, spider_classes, spargs=None, extra_args=None):
        """
        Run C{spider_classes} together in the command's L{CrawlerProcess} (tinyscrapy's
        own step, for the commands that crawl), until every crawl has ended.

        @param spargs: the spider arguments (C{-a}), given to each spider.
        @param extra_args: more arguments for each spider (C{crawl URL}'s start URLs).
        @return: the exit status: 0, or 1 when a crawl failed, could not go on (a finish
            reason ending in C{_error}), fetched nothing at all, or was stopped at once.
        @raise UsageError: a bad setting, or a crawl that failed with one while it opened
            (a shared frontier that cannot connect).
        """
        from tinyscrapy.extensions.feedexport import check_shared_feeds
        from tinyscrapy.utils.reactor import install_for
        check_shared_feeds(self.settings, len(spider_classes))
        spargs = dict(spargs or {})
        spargs.update(extra_args or {})
        install_for(self.settings, spider_classes)  # TWISTED_REACTOR, before the demo site
        demo_url = self._serve_demo_if_needed(spider_classes, spargs)
        process = self.crawler_process
        crawlers = []
        for spidercls in spider_classes:
            kwargs = dict(spargs)
            if demo_url and getattr(spidercls, "uses_demo_site", False):
                kwargs["base_url"] = demo_url
            crawlers.append(process.create_crawler(spidercls))
            d = process.crawl(crawlers[-1], **kwargs)
            d.addErrback(_told)  # logged once by the process, which records the status
        process.start()
        if process.usage_error is not None:  # e.g. a shared frontier that cannot connect
            raise process.usage_error
        status = 1 if process.failed or process.forced else 0
        from tinyscrapy.utils.log import nothing_fetched
        from tinyscrapy.utils.reactor import asyncio_needed
        for crawler in crawlers:
            # every start request was refused, timed out, ...; or asyncio code failed
            message = nothing_fetched(crawler) or asyncio_needed(crawler)
            if message is not None:
                logging.getLogger("tinyscrapy.crawler").error("%s", message)
                status = 1
        return status

    def _serve_demo_if_needed(self, spider_classes, spargs):
        """Serve the demo site in this reactor for spiders that use it, unless the user
        gave C{-a base_url=...}. With C{JOBDIR}, on the port it had when the job started
        (kept in C{JOBDIR/demo_port}), so that saved requests point at it on a resume.
        @return: the site's URL, or None. @raise UsageError: that port is taken."""
        if "base_url" in spargs or not any(getattr(cls, "uses_demo_site", False)
                                           for cls in spider_classes):
            return None
        from twisted.internet.error import CannotListenError

        from tinyscrapy.demo import listen
        from tinyscrapy.frontier.jobdir import save_demo_port, saved_demo_port
        jobdir = self.settings.get("JOBDIR")
        port = saved_demo_port(jobdir) if jobdir else 0
        try:
            address = listen(port).getHost()
        except CannotListenError as e:
            raise UsageError(f"--jobdir {jobdir}: the demo site must listen on port {port} "
                             f"again, where the saved requests point, but cannot "
                             f"({e.socketError}; another crawl with this directory?): free "
                             f"the port, or give -a base_url=URL") from None
        if jobdir and not port:
            save_demo_port(jobdir, address.port)
        url = f"http://{address.host}:{address.port}"
        logging.getLogger("tinyscrapy.demo").info("serving the demo site on %s", url)
        return url

    @abstractmethod
    def run(self, args, opts):
        """Do the command's work; set C{exitcode} when it is not 0."""
        raise NotImplementedError


def _told(_failure):
    """A crawl's failure, logged by the process already (never "Unhandled error")."""
    return None


class PdbHandler(logging.Handler):
    """C{--pdb}: a post-mortem debugging session (ipdb's when it is installed) on every
    logged record that carries a traceback."""

    def emit(self, record):
        if not (record.exc_info and record.exc_info[2]):
            return
        try:
            import ipdb as debugger
        except ImportError:
            import pdb as debugger
        debugger.post_mortem(record.exc_info[2])


def setting_pairs(items, flag):
    """C{(name, value)} of each C{NAME=VALUE} of option C{flag} (C{-s} or C{-a}).
    @raise UsageError: one is not C{NAME=VALUE} (Scrapy's message, and the value)."""
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise UsageError(f"Invalid {flag} value, use {flag} NAME=VALUE (got {item!r})",
                             print_help=False)
        yield name.strip(), value


class BaseRunSpiderCommand(ScrapyCommand):
    """
    The base of the commands that run spiders: C{-a}, C{-o}, C{-O}, and tinyscrapy's
    crawl options (L{add_crawl_options}).
    """

    def add_options(self, parser):
        super().add_options(parser)
        parser.add_argument("-a", dest="spargs", action="append", default=[],
                            metavar="NAME=VALUE",
                            help="set a spider argument (repeatable; becomes an attribute)")
        parser.add_argument("-o", "--output", metavar="FILE", action="append", default=[],
                            help="append items to FILE (format from the extension: .jsonl "
                                 ".json .csv .xml, or FILE:FORMAT; - for stdout)")
        parser.add_argument("-O", "--overwrite-output", metavar="FILE", action="append",
                            default=[], help="write items to FILE, replacing it (FILE or "
                                             "FILE:FORMAT)")
        self.add_crawl_options(parser)

    def add_crawl_options(self, parser):
        """tinyscrapy's options of a crawl: its frontier and its trace."""
        parser.add_argument("--jobdir", metavar="DIR",
                            help="persistent frontier: pause with Ctrl-C, resume by running "
                                 "again; each spider keeps its own in DIR/<spider name> (the "
                                 "JOBDIR setting)")
        parser.add_argument("--scheduler", metavar="URL",
                            help="shared frontier, e.g. redis://127.0.0.1:6379/0 (the "
                                 "SCHEDULER_URL setting)")
        parser.add_argument("--workers", metavar="N",
                            help="run the crawl in N processes that share one frontier "
                                 "(auto: one per core; the WORKERS setting)")
        parser.add_argument("--trace", metavar="FILE",
                            help="write the engine timeline as HTML (the TRACE_FILE setting); "
                                 "- prints one line per event on stderr instead")

    def process_options(self, args, opts):
        """
        The global options, then C{-a} into C{opts.spargs} (a dict), C{-o} and C{-O} into
        C{FEEDS}, and C{--jobdir}, C{--scheduler}, C{--workers}, C{--trace} into their
        settings. Without
        C{-o}, C{-O} or a C{FEEDS} set anywhere, items are printed on stdout as JSON lines.

        @raise UsageError: an C{-a} that is not C{NAME=VALUE}, or a feed whose format
            cannot be told.
        """
        super().process_options(args, opts)
        opts.spargs = dict(setting_pairs(opts.spargs, "-a"))
        for name, option in (("JOBDIR", "jobdir"), ("SCHEDULER_URL", "scheduler"),
                             ("TRACE_FILE", "trace"), ("WORKERS", "workers")):
            value = getattr(opts, option, None)
            if value is not None:
                self.settings.set(name, value, "cmdline")
        feeds = {}
        for value, overwrite in [(p, False) for p in opts.output] + \
                [(p, True) for p in opts.overwrite_output]:
            path, fmt = feed_path_and_format(value, self.settings)
            feeds[path] = {"overwrite": overwrite} if fmt is None else \
                {"format": fmt, "overwrite": overwrite}
        if feeds:
            self.settings.set("FEEDS", feeds, "cmdline")
        elif "FEEDS" not in self.settings.overridden():
            # items go to stdout unless a feed is configured somewhere (even as {}); set as
            # a default, so a spider's custom_settings FEEDS still wins
            self.settings.set("FEEDS", {"-": {"format": "jsonlines"}}, "default")


def feed_path_and_format(value, settings):
    """
    C{-o}'s value as Scrapy reads it: C{URI}, or C{URI:FORMAT} (C{items.txt:jsonlines},
    C{-:json} for stdout) when what follows the last colon is a format of
    C{FEED_EXPORTERS}.

    @return: C{(uri, format)}; the format is None when the feed exporter tells it from
        the extension (with the spider's settings too: its C{FEED_EXPORTERS}).
    """
    formats = {**settings.getdict("FEED_EXPORTERS_BASE"), **settings.getdict("FEED_EXPORTERS")}
    uri, colon, fmt = value.rpartition(":")
    if colon and uri and formats.get(fmt) is not None:
        return uri, fmt
    return value, None


def spider_loader(command):
    """
    The spider loader a command finds spiders by name with: its crawler process's (the
    project's C{SPIDER_MODULES}); outside a project, when that finds none, the one C{run}
    uses (the spiders of C{./spiders/}, else the demo spiders:
    L{tinyscrapy.spiderloader.project_loader}).
    """
    from tinyscrapy.spiderloader import project_loader
    from tinyscrapy.utils.project import inside_project
    process = command.crawler_process
    if process is not None:
        loader = process.spider_loader
        if loader.list() or inside_project():
            return loader
    return project_loader(command.settings)


HEADING = re.compile(r"[A-Za-z][A-Za-z ]*:\n")


class ScrapyHelpFormatter(argparse.HelpFormatter):
    """The help of a command as Scrapy prints it: C{Usage} and each section's heading title
    cased and underlined (C{=}, or C{-} under C{Global Options})."""

    def __init__(self, prog, indent_increment=2, max_help_position=24, width=None):
        super().__init__(prog, indent_increment=indent_increment,
                         max_help_position=max_help_position, width=width)

    def _join_parts(self, part_strings):
        # builtins.list: the package's own `list` is the list command's module
        return super()._join_parts(self.format_part_strings(builtins.list(part_strings)))

    def format_part_strings(self, part_strings):
        """
        C{part_strings} (argparse's pieces of the help) with the usage line under a
        C{Usage} heading, and every heading (a piece of words and spaces only, ending in
        C{":\\n"}; not an option's help that wraps after a colon) title cased and
        underlined.

        @return: the list, changed in place.
        """
        if part_strings and part_strings[0].startswith("usage: "):
            part_strings[0] = "Usage\n=====\n  " + part_strings[0].removeprefix("usage: ")
        headings = [i for i, part in enumerate(part_strings) if HEADING.fullmatch(part)]
        for index in reversed(headings):
            mark = "-" if "Global Options" in part_strings[index] else "="
            title = part_strings[index].removesuffix(":\n").title()
            part_strings[index] = title
            part_strings.insert(index + 1, f"\n{mark * len(title)}\n")
        return part_strings


def port_number(text):
    """An argparse type: a TCP port, 0 to 65535."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is out of range (0 to 65535)")
    return port


def positive_int(text):
    """An argparse type: a whole number of at least 1."""
    try:
        number = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {number}")
    return number

