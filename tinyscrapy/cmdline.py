"""
Scrapy's C{scrapy.cmdline}: the command line. L{Command} is one invocation of it
(TinyScrapy's entry point, C{python -m tinyscrapy run}); L{execute} is the command line as
a function, for the C{main.py} a Scrapy project keeps to start a crawl from an IDE::

    from tinyscrapy.cmdline import execute      # or scrapy.cmdline, served by tinyscrapy
    execute(["scrapy", "crawl", "books", "-O", "books.jsonl"])

An invocation finds its command, as Scrapy's does, by the first argument that is not an
option: among the modules of L{tinyscrapy.commands}, the C{tinyscrapy.commands} entry
points (and C{scrapy.commands}' while C{import scrapy} is served by tinyscrapy), and the
project's C{COMMANDS_MODULE}, a later one replacing an earlier of the same name; each
module's L{ScrapyCommand} subclass is the command of the module's name. Then it runs the
command's steps (L{tinyscrapy.commands}). Without a command it lists them (exit 0).

C{--as-scrapy} (or C{TINYSCRAPY_AS_SCRAPY=1}) serves C{import scrapy} from tinyscrapy for
the command (L{tinyscrapy.scrapyfinder}), which happens by itself inside a Scrapy project
(a C{scrapy.cfg}) where Scrapy is not installed; it is done before the project's settings
or spiders are imported.

Usage errors (an unknown command or option, a spider that does not import, a bad setting,
a start URL that cannot be fetched) print one line on stderr and exit with status 2,
without a traceback; one a command raises without a message prints the command's help on
stdout too. A crawl that ran to its end exits 0, whatever pages failed on the way (they
are in the stats), unless nothing at all was fetched: when every start request was
refused, timed out or forbidden by robots.txt, it ends with one line saying so and exits 1.
"""

import argparse
import importlib
import inspect
import logging
import os
import pkgutil
import sys

import tinyscrapy
from tinyscrapy.commands import BaseRunSpiderCommand, ScrapyCommand, ScrapyHelpFormatter
from tinyscrapy.exceptions import UsageError

PROG = "tinyscrapy"
BUILTIN = "tinyscrapy.commands"


class ScrapyArgumentParser(argparse.ArgumentParser):
    """argparse that raises L{UsageError} instead of printing usage and exiting, and reads
    C{-:json} as a value (C{-o -:json}: JSON on stdout), not as an option."""

    def _parse_optional(self, arg_string):
        if arg_string.startswith("-:"):
            return None
        return super()._parse_optional(arg_string)

    def error(self, message):
        raise UsageError(message)


def _iter_command_classes(module_name):
    """The L{ScrapyCommand} subclasses defined in C{module_name} and the modules below it
    (each in its own module, not imported ones; not the two base classes)."""
    from tinyscrapy.utils.misc import walk_modules_iter
    for module in walk_modules_iter(module_name):
        for obj in vars(module).values():
            if inspect.isclass(obj) and issubclass(obj, ScrapyCommand) \
                    and obj.__module__ == module.__name__ \
                    and obj not in (ScrapyCommand, BaseRunSpiderCommand):
                yield obj


def _get_commands_from_module(module, inproject):
    """C{{name: command}} for the commands of C{module} (named by their module's last
    part) that may run here (a C{requires_project} one only inside a project)."""
    found = {}
    for cls in _iter_command_classes(module):
        if inproject or not cls.requires_project:
            found[cls.__module__.rsplit(".", 1)[-1]] = cls()
    return found


def _get_commands_from_entry_points(inproject, group="tinyscrapy.commands"):
    """
    C{{name: command}} for the entry points of C{group}.

    @raise ValueError: an entry point is not a class.
    """
    from importlib.metadata import entry_points
    found = {}
    for entry_point in entry_points(group=group):
        obj = entry_point.load()
        if not inspect.isclass(obj):
            raise ValueError(f"Invalid entry point {entry_point.name}")
        found[entry_point.name] = obj()
    return found


def _builtin_names():
    """The names of tinyscrapy's own commands (its command modules), without importing
    them."""
    package = importlib.import_module(BUILTIN)
    return sorted(info.name for info in pkgutil.iter_modules(package.__path__))


def _get_commands_dict(settings, inproject, only=None):
    """
    Every command that may run here, by name: tinyscrapy's own, then the entry points'
    (Scrapy's group too while C{import scrapy} is served by tinyscrapy: a Scrapy plugin's
    command must not import Scrapy itself), then the project's C{COMMANDS_MODULE}'s.

    @param only: a command's name: import only that one of tinyscrapy's own modules (the
        others import what their commands need, lxml and the reactor among them).
    @raise UsageError: C{COMMANDS_MODULE} (or a module below it) does not import.
    @raise ValueError: an entry point is not a class.
    """
    from tinyscrapy.scrapyfinder import is_installed
    commands = {}
    for name in _builtin_names() if only is None else [only]:
        if name in _builtin_names():
            commands.update(_get_commands_from_module(f"{BUILTIN}.{name}", inproject))
    groups = ["scrapy.commands", "tinyscrapy.commands"] if is_installed() else \
        ["tinyscrapy.commands"]
    for group in groups:
        commands.update(_get_commands_from_entry_points(inproject, group))
    if settings["COMMANDS_MODULE"]:
        try:
            commands.update(_get_commands_from_module(settings["COMMANDS_MODULE"], inproject))
        except ImportError as e:
            raise UsageError(f"cannot import COMMANDS_MODULE {settings['COMMANDS_MODULE']!r}: "
                             f"{type(e).__name__}: {e}") from None
    return commands


def _get_project_only_cmds(settings):
    """The names of the commands offered only inside a project."""
    return set(_get_commands_dict(settings, inproject=True)) - \
        set(_get_commands_dict(settings, inproject=False))


def _pop_command_name(argv):
    """Take the command's name out of C{argv} (C{[program, arguments...]}): the first
    argument after the program's that is not an option. @return: it, or None."""
    for i in range(1, len(argv)):
        if not argv[i].startswith("-"):
            return argv.pop(i)
    return None


def _header(settings, inproject):
    if inproject:
        return f"tinyscrapy {tinyscrapy.__version__} - active project: {settings['BOT_NAME']}"
    return f"tinyscrapy {tinyscrapy.__version__} - no active project"


def _print_commands(settings, inproject):
    """The list a command line without a command prints."""
    commands = _get_commands_dict(settings, inproject)
    lines = [_header(settings, inproject), "", "Usage:",
             f"  {PROG} <command> [options] [args]      (or python -m tinyscrapy ...)", "",
             "Available commands:"]
    lines += [f"  {name:<13} {command.short_desc()}" for name, command in
              sorted(commands.items())]
    if not inproject and _get_project_only_cmds(settings):
        lines += ["", "  [ more ]      More commands available when run from project directory"]
    lines += ["", f'Use "{PROG} <command> -h" to see more info about a command']
    print("\n".join(lines))


def unknown_command(settings, name, inproject):
    """
    The usage error for a command line whose command C{name} is not one here: Scrapy's
    words, the closest command's name for a typo, or the project-only commands when it
    is one of those outside a project.
    """
    project_only = _get_project_only_cmds(settings)
    if name in project_only and not inproject:
        return UsageError(f"The {name} command is not available from this location: these "
                          f"commands are only available from within a project: "
                          f"{', '.join(sorted(project_only))}.")
    import difflib
    known = _get_commands_dict(settings, inproject)
    guesses = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    hint = f"; did you mean `{guesses[0]}`?" if guesses else ""
    return UsageError(f"Unknown command: {name}{hint} (`{PROG}` alone lists the commands)")


def _as_scrapy_switch(argv):
    """C{--as-scrapy} anywhere on the command line: True, else None (it is read before
    anything else, since it decides what C{import scrapy} finds)."""
    return True if "--as-scrapy" in argv else None


class Command:
    """
    One invocation of the command line: Scrapy's C{execute()} in steps.

    @ivar name: the command's name, or None (the command list is printed).
    @ivar command: the L{ScrapyCommand} it runs, or None.
    @ivar settings: the L{tinyscrapy.settings.Settings}: the project's (or the ones given),
        then the command's C{default_settings}, then the command line's.
    @ivar parser: the command's argument parser.
    @ivar opts: the parsed options; @ivar args: the other arguments (the command's).
    """

    def __init__(self, argv, settings=None):
        """
        Find the command and read its options.

        @param argv: the arguments, without the program's name.
        @param settings: the settings to start from; None: the project's
            (L{get_project_settings}) and C{EDITOR} from the environment.
        @raise UsageError: an unknown command or option, or a project whose settings do
            not import.
        """
        from tinyscrapy.scrapyfinder import install_for_command
        # before the project's settings module and spiders import (they may import scrapy)
        self.as_scrapy = install_for_command(_as_scrapy_switch(argv))
        from tinyscrapy.utils.project import get_project_settings, inside_project
        if settings is None:
            settings = get_project_settings()
            if os.environ.get("EDITOR"):
                settings.set("EDITOR", os.environ["EDITOR"], "project")
        self.settings = settings
        self.inproject = inside_project()
        argv = [PROG, *argv]
        self.name = _pop_command_name(argv)
        self.command = self.parser = self.opts = None
        self.args = []
        if self.name is None:
            return
        commands = _get_commands_dict(settings, self.inproject, only=self.name)
        if self.name not in commands:
            commands = _get_commands_dict(settings, self.inproject)
        if self.name not in commands:
            raise unknown_command(settings, self.name, self.inproject)
        self.command = command = commands[self.name]
        self.parser = ScrapyArgumentParser(
            prog=f"{PROG} {self.name}", usage=f"{PROG} {self.name} {command.syntax()}",
            formatter_class=ScrapyHelpFormatter, conflict_handler="resolve",
            description=command.long_desc())
        settings.setdict(command.default_settings, "command")
        command.settings = settings
        command.add_options(self.parser)
        self.opts, self.args = self.parser.parse_known_args(argv[1:])
        unknown = [arg for arg in self.args if arg.startswith("-") and arg != "-"]
        if unknown:
            raise UsageError(f"unrecognized arguments: {' '.join(unknown)} ({PROG} "
                             f"{self.name} -h lists its options)")

    def run(self):
        """
        Run the command (or print the command list).

        @return: the exit status.
        @raise UsageError: the command's options or arguments are wrong (its help printed
            first when the error has no message), or the crawl found a bad setting.
        """
        if self.command is None:
            _print_commands(self.settings, self.inproject)
            return 0
        try:
            self.command.process_options(self.args, self.opts)
            if self.command.requires_crawler_process:
                from tinyscrapy.crawler import CrawlerProcess
                self.command.crawler_process = CrawlerProcess(self.settings)
                if self.as_scrapy:
                    logging.getLogger("tinyscrapy.scrapyfinder").debug(
                        "`import scrapy` is served by tinyscrapy (docs/porting.md)")
            if self.opts.profile:
                self._run_profiled()
            else:
                self.command.run(self.args, self.opts)
        except UsageError as e:
            if str(e):
                raise
            if e.print_help:
                self.parser.print_help()
            raise UsageError(f"usage: {self.parser.usage.strip()}") from None
        return self.command.exitcode

    def _run_profiled(self):
        """C{--profile FILE}: the command's C{run} under cProfile, its statistics written
        to FILE."""
        import cProfile
        print(f"{PROG}: writing cProfile stats to {self.opts.profile!r}", file=sys.stderr)
        profile = cProfile.Profile()
        try:
            profile.runcall(self.command.run, self.args, self.opts)
        finally:
            profile.dump_stats(self.opts.profile)


def _status(argv, settings=None):
    """Run the command line C{argv} (without the program's name). @return: the exit
    status (a usage error printed as one line on stderr)."""
    try:
        return Command(argv, settings).run()
    except UsageError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `... | head`: the reader left; no traceback for that
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


def execute(argv=None, settings=None):
    """
    Run a command line and exit with its status, as Scrapy's C{execute}.

    @param argv: the command line, the program's name first (C{["scrapy", "crawl",
        "books"]}); None: C{sys.argv}.
    @param settings: the settings to start from; None: the project's.
    @raise SystemExit: always, with the exit status.
    """
    argv = sys.argv if argv is None else argv
    sys.exit(_status(list(argv[1:]), settings))


def main(argv=None):
    """C{python -m tinyscrapy} and the C{tinyscrapy} console command: run the command
    line (C{sys.argv[1:]} by default) and exit with its status."""
    sys.exit(_status(sys.argv[1:] if argv is None else list(argv)))


if __name__ == "__main__":  # python -m tinyscrapy.cmdline, as python -m scrapy.cmdline
    execute()
