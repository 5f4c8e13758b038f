"""
Scrapy's command line as its users know it: C{ScrapyCommand} and its steps, the global
options, C{cmdline.execute()} from Python, the command list, a project's own commands
(C{COMMANDS_MODULE}) and the entry points', C{edit}, C{genspider}'s and C{startproject}'s
templates, C{version -v}.
"""

import io
import json
import os
import sys
import textwrap
import warnings

from twisted.internet import defer, reactor
from twisted.trial import unittest

from tinyscrapy.cmdline import Command, ScrapyArgumentParser, _pop_command_name, execute
from tinyscrapy.commands import BaseRunSpiderCommand, ScrapyCommand, ScrapyHelpFormatter
from tinyscrapy.exceptions import ScrapyDeprecationWarning, UsageError
from tinyscrapy.settings import Settings

from .helpers import run_command, run_python, serve, subprocess_env


class EmptyCommand(ScrapyCommand):
    def short_desc(self):
        return "does nothing"

    def run(self, args, opts):
        return None


class RunLike(BaseRunSpiderCommand):
    def short_desc(self):
        return "runs nothing"

    def run(self, args, opts):
        return None


def parsed(command, argv):
    """C{command} with fresh settings, its options read from C{argv} and processed.
    @return: C{(opts, args)}."""
    command.settings = Settings()
    parser = ScrapyArgumentParser(formatter_class=ScrapyHelpFormatter,
                                  conflict_handler="resolve")
    command.add_options(parser)
    opts, args = parser.parse_known_args(argv)
    command.process_options(args, opts)
    return opts, args


class ScrapyCommandTests(unittest.TestCase):
    """A command's steps: options into settings, Scrapy's messages, its help."""

    def test_global_options_become_settings(self):
        """-s (JSON read), -L, --logfile and --nolog set settings at the cmdline priority."""
        command = EmptyCommand()
        parsed(command, ["-s", "CONCURRENT_REQUESTS=3", "--set",
                         'FEEDS={"a.json": {"format": "json"}}', "-L", "debug",
                         "--logfile", "x.log", "--nolog"])
        settings = command.settings
        self.assertEqual(settings["CONCURRENT_REQUESTS"], 3)
        self.assertEqual(settings.getdict("FEEDS"), {"a.json": {"format": "json"}})
        self.assertEqual((settings["LOG_LEVEL"], settings["LOG_FILE"]), ("DEBUG", "x.log"))
        self.assertFalse(settings.getbool("LOG_ENABLED"))
        self.assertEqual(settings.priority("CONCURRENT_REQUESTS"), "cmdline")

    def test_invalid_set_and_spider_argument(self):
        """-s FOO and -a FOO: Scrapy's message, as a usage error without the help."""
        error = self.assertRaises(UsageError, parsed, EmptyCommand(), ["-s", "FOO"])
        self.assertIn("Invalid -s value, use -s NAME=VALUE", str(error))
        self.assertFalse(error.print_help)
        error = self.assertRaises(UsageError, parsed, RunLike(), ["-a", "FOO"])
        self.assertIn("Invalid -a value, use -a NAME=VALUE", str(error))

    def test_pidfile(self):
        """--pidfile FILE writes this process's ID there."""
        path = os.path.abspath(self.mktemp())
        parsed(EmptyCommand(), ["--pidfile", path])
        with open(path) as f:
            self.assertEqual(int(f.read()), os.getpid())

    def test_run_options(self):
        """-a becomes a dict; -o and -O become FEEDS: a format after a colon, the overwrite flag."""
        command = RunLike()
        opts, args = parsed(command, ["-a", "x=1", "-a", "y=a=b", "--output", "out.txt:csv",
                                      "-O", "b.json", "spider.py"])
        self.assertEqual(opts.spargs, {"x": "1", "y": "a=b"})
        self.assertEqual(args, ["spider.py"])
        self.assertEqual(command.settings.getdict("FEEDS"), {
            "out.txt": {"format": "csv", "overwrite": False},
            "b.json": {"overwrite": True}})  # the feed exporter reads the extension

    def test_stdout_feed_value(self):
        """-o -:json reads -:json as the value (stdout, JSON), not as an option."""
        command = RunLike()
        parsed(command, ["-o", "-:json"])
        self.assertEqual(command.settings.getdict("FEEDS"),
                         {"-": {"format": "json", "overwrite": False}})

    def test_help_is_deprecated(self):
        """help() warns and gives long_desc(); overriding it warns when the command is
        made; a command that does not override it does not warn."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            self.assertEqual(EmptyCommand().help(), "does nothing")

            class Helped(EmptyCommand):
                def help(self):
                    return "custom"

            Helped()
        messages = [str(w.message) for w in caught
                    if issubclass(w.category, ScrapyDeprecationWarning)]
        self.assertEqual(len(messages), 2, messages)
        self.assertIn("use long_desc() instead", messages[0])
        self.assertIn("Helped class does, has no effect", messages[1])

    def test_help_formatter(self):
        """The help's headings are title cased and underlined, Global Options with -; an
        option's help that wraps after a colon stays as it is."""
        command = RunLike()
        command.settings = Settings()
        parser = ScrapyArgumentParser(prog="tinyscrapy x", usage="tinyscrapy x [options]",
                                      formatter_class=ScrapyHelpFormatter)
        command.add_options(parser)
        parser.add_argument("--long", help="a help text long enough to wrap right after "
                                           "a colon: here it goes on")
        text = parser.format_help()
        self.assertTrue(text.startswith("Usage\n=====\n  tinyscrapy x [options]"), text)
        self.assertIn("\nGlobal Options\n--------------\n", text)
        self.assertIn("\nOptions\n=======\n", text)
        self.assertNotIn("Here It Goes", text)

    def test_pop_command_name(self):
        """The command's name is the first argument that is not an option."""
        argv = ["tinyscrapy", "-h", "crawl", "x"]
        self.assertEqual(_pop_command_name(argv), "crawl")
        self.assertEqual(argv, ["tinyscrapy", "-h", "x"])
        self.assertIsNone(_pop_command_name(["tinyscrapy", "-h"]))


class ExecuteTests(unittest.TestCase):
    """cmdline.execute() from Python, as a project's main.py calls it."""

    def setUp(self):
        self.out = io.StringIO()
        self.patch(sys, "stdout", self.out)

    def test_version(self):
        """execute(["scrapy", "version"]) prints the version and exits 0."""
        import tinyscrapy
        error = self.assertRaises(SystemExit, execute, ["scrapy", "version"])
        self.assertEqual(error.code, 0)
        self.assertEqual(self.out.getvalue(), f"tinyscrapy {tinyscrapy.__version__}\n")

    def test_settings_given(self):
        """execute(argv, settings) starts from those settings, not the project's."""
        settings = Settings({"BOT_NAME": "given"})
        error = self.assertRaises(SystemExit, execute,
                                  ["scrapy", "settings", "--get", "BOT_NAME"], settings)
        self.assertEqual(error.code, 0)
        self.assertEqual(self.out.getvalue(), "given\n")

    def test_usage_error_is_status_2(self):
        """An unknown option ends execute() with status 2 (one line on stderr)."""
        self.patch(sys, "stderr", io.StringIO())
        error = self.assertRaises(SystemExit, execute, ["scrapy", "version", "--frob"])
        self.assertEqual(error.code, 2)
        self.assertIn("unrecognized arguments: --frob", sys.stderr.getvalue())

    def test_message_less_usage_error_prints_the_help(self):
        """A command's UsageError() prints its help on stdout; the error is its usage."""
        invocation = Command(["startproject"])
        error = self.assertRaises(UsageError, invocation.run)
        self.assertEqual(str(error), "usage: tinyscrapy startproject <project_name> [project_dir]")
        self.assertIn("Usage\n=====\n  tinyscrapy startproject", self.out.getvalue())

    def test_no_command_lists_them(self):
        """Without a command, the list of commands (status 0)."""
        self.assertEqual(Command(["-h"]).run(), 0)
        text = self.out.getvalue()
        self.assertIn("- no active project", text)
        for name in ("check", "crawl", "edit", "parse", "runspider", "startproject"):
            self.assertIn(f"\n  {name} ", text)
        self.assertIn('Use "tinyscrapy <command> -h"', text)

    def test_unknown_command(self):
        """An unknown command: Scrapy's words, and the closest command's name."""
        error = self.assertRaises(UsageError, Command, ["runspidr"])
        self.assertIn("Unknown command: runspidr; did you mean `runspider`?", str(error))


COMMANDS = {
    "mycmd.py": '''
        from tinyscrapy.commands import ScrapyCommand


        class Command(ScrapyCommand):
            requires_crawler_process = False

            def short_desc(self):
                return "My custom command"

            def run(self, args, opts):
                print("My custom command ran", args, self.settings["BOT_NAME"])
        ''',
    "helpcmd.py": '''
        from tinyscrapy.commands import ScrapyCommand
        from tinyscrapy.exceptions import UsageError


        class Command(ScrapyCommand):
            requires_crawler_process = False

            def short_desc(self):
                return "asks for its help"

            def run(self, args, opts):
                raise UsageError()
        ''',
    "version.py": '''
        from tinyscrapy.commands import ScrapyCommand


        class Command(ScrapyCommand):
            requires_crawler_process = False
            requires_project = True

            def short_desc(self):
                return "the project's own version"

            def run(self, args, opts):
                print("project version 7")
        ''',
}


class ProjectCommandsTests(unittest.TestCase):
    """A project's COMMANDS_MODULE, the entry points' commands, execute() from a script."""

    def setUp(self):
        self.tmp = os.path.abspath(self.mktemp())
        self.project = os.path.join(self.tmp, "proj")
        os.makedirs(os.path.join(self.project, "proj", "commands"))
        self.write("tinyscrapy.cfg", "[settings]\ndefault = proj.settings\n")
        self.write("proj/__init__.py", "")
        self.write("proj/commands/__init__.py", "")
        self.write("proj/settings.py", 'BOT_NAME = "proj"\nCOMMANDS_MODULE = "proj.commands"\n'
                                       'SPIDER_MODULES = ["proj.spiders"]\n')
        for name, text in COMMANDS.items():
            self.write(f"proj/commands/{name}", textwrap.dedent(text))

    def write(self, relative, text, folder=None):
        path = os.path.join(folder or self.project, relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        return path

    @defer.inlineCallbacks
    def test_project_commands(self):
        """COMMANDS_MODULE's commands are listed and run, one replaces a built-in; a
        message-less UsageError prints the command's help on stdout, one line on stderr,
        exit 2."""
        code, out, err = yield run_command(reactor, [], cwd=self.project)
        self.assertEqual(code, 0, err)
        self.assertIn("- active project: proj", out)
        self.assertIn("My custom command", out)
        code, out, err = yield run_command(reactor, ["mycmd", "a", "b"], cwd=self.project)
        self.assertEqual((code, out), (0, "My custom command ran ['a', 'b'] proj\n"), err)
        code, out, err = yield run_command(reactor, ["version"], cwd=self.project)
        self.assertEqual((code, out), (0, "project version 7\n"), err)
        code, out, err = yield run_command(reactor, ["helpcmd"], cwd=self.project)
        self.assertEqual(code, 2)
        self.assertIn("Usage\n=====\n  tinyscrapy helpcmd", out)
        self.assertEqual(err, "tinyscrapy: error: usage: tinyscrapy helpcmd\n")

    @defer.inlineCallbacks
    def test_entry_point_command(self):
        """A command of the tinyscrapy.commands entry point group is listed and runs."""
        folder = os.path.join(self.tmp, "dist")
        self.write("mycmds/__init__.py", "", folder)
        self.write("mycmds/hello.py", textwrap.dedent(COMMANDS["mycmd.py"]), folder)
        self.write("mycmds-1.0.dist-info/METADATA",
                   "Metadata-Version: 2.1\nName: mycmds\nVersion: 1.0\n", folder)
        self.write("mycmds-1.0.dist-info/entry_points.txt",
                   "[tinyscrapy.commands]\nhello = mycmds.hello:Command\n", folder)
        env = {"PYTHONPATH": folder + os.pathsep + subprocess_env()["PYTHONPATH"]}
        code, out, err = yield run_command(reactor, [], cwd=folder, env=env)
        self.assertEqual(code, 0, err)
        self.assertIn("My custom command", out)
        code, out, err = yield run_command(reactor, ["hello"], cwd=folder, env=env)
        self.assertEqual((code, out), (0, "My custom command ran [] tinyscrapy\n"), err)

    @defer.inlineCallbacks
    def test_execute_from_main_py(self):
        """A project's main.py that calls execute() crawls and exits as the command line
        does: 0 with the items written, 2 for a usage error."""
        server = serve(self)
        start = server.add_page("/", title="home")
        self.write("proj/spiders/__init__.py", "")
        self.write("proj/spiders/pages.py", textwrap.dedent(f'''
            import tinyscrapy


            class PagesSpider(tinyscrapy.Spider):
                name = "pages"
                start_urls = [{start!r}]

                def parse(self, response):
                    yield {{"title": response.css("title::text").get()}}
            '''))
        main = self.write("main.py", textwrap.dedent('''
            import sys

            from tinyscrapy.cmdline import execute

            execute(["scrapy", "crawl", "pages", "-O", "items.jsonl", *sys.argv[1:]])
            '''))
        code, _, err = yield run_python(reactor, [main], cwd=self.project)
        self.assertEqual(code, 0, err)
        with open(os.path.join(self.project, "items.jsonl")) as f:
            self.assertEqual(json.loads(f.read()), {"title": "home"})
        code, _, err = yield run_python(reactor, [main, "-s", "NOPE"], cwd=self.project)
        self.assertEqual(code, 2, err)
        self.assertEqual(err.strip().splitlines(),
                         ["tinyscrapy: error: Invalid -s value, use -s NAME=VALUE (got 'NOPE')"])

    @defer.inlineCallbacks
    def test_edit(self):
        """edit NAME opens the spider's module in EDITOR (its arguments split as a shell
        would); an unknown spider is a usage error; the editor's status is the exit
        status."""
        self.write("proj/spiders/__init__.py", "")
        spider = self.write("proj/spiders/books.py", "import tinyscrapy\n\n\nclass Books("
                            "tinyscrapy.Spider):\n    name = 'books'\n")
        record = os.path.join(self.tmp, "edited.txt")
        editor = self.write("editor.sh", '#!/bin/sh\nprintf "%s" "$2" > "$1"\nexit 3\n',
                            self.tmp)
        os.chmod(editor, 0o755)
        code, _, err = yield run_command(reactor, ["edit", "books"], cwd=self.project,
                                         env={"EDITOR": f"{editor} {record}"})
        self.assertEqual(code, 3, err)
        with open(record) as f:
            self.assertEqual(os.path.realpath(f.read()), os.path.realpath(spider))
        code, out, err = yield run_command(reactor, ["edit", "nobody"], cwd=self.project,
                                           env={"EDITOR": editor})
        self.assertEqual(code, 2)
        self.assertIn("Spider not found: nobody (spiders found: books)", err)
        code, out, err = yield run_command(reactor, ["edit"], cwd=self.project)
        self.assertEqual(code, 2)
        self.assertIn("tinyscrapy edit <spider>", out)


class TemplateTests(unittest.TestCase):
    """startproject and genspider copy and fill TEMPLATES_DIR's templates."""

    def setUp(self):
        self.tmp = os.path.abspath(self.mktemp())
        os.makedirs(self.tmp)

    @defer.inlineCallbacks
    def test_genspider_templates(self):
        """Each template makes a spider that imports; -d prints one; a .tmpl file of
        one's own is a template; an unknown one is a usage error; a name that is not a
        module's gets a letter first."""
        for template, base in (("basic", "Spider"), ("crawl", "CrawlSpider"),
                               ("csvfeed", "CSVFeedSpider"), ("xmlfeed", "XMLFeedSpider"),
                               ("sitemap", "SitemapSpider")):
            code, out, err = yield run_command(
                reactor, ["genspider", "-t", template, f"s_{template}", "shop.example/feed"],
                cwd=self.tmp)
            self.assertEqual(code, 0, err)
            self.assertIn(f"Created spider 's_{template}' using template '{template}' in",
                          out)
            with open(os.path.join(self.tmp, f"s_{template}.py")) as f:
                text = f.read()
            self.assertIn(f"(tinyscrapy.{base})" if base == "Spider" else f"({base})", text)
            self.assertIn('allowed_domains = ["shop.example"]', text)
            compile(text, template, "exec")
        code, out, _ = yield run_command(reactor, ["genspider", "-d", "csvfeed"], cwd=self.tmp)
        self.assertEqual(code, 0)
        self.assertIn("class $classname(CSVFeedSpider):", out)
        mine = os.path.join(self.tmp, "mine.tmpl")
        with open(mine, "w") as f:
            f.write('class $classname:\n    name = "$name"  # $url\n')
        code, _, err = yield run_command(
            reactor, ["genspider", "-t", mine[:-len(".tmpl")], "1st", "x.example"], cwd=self.tmp)
        self.assertEqual(code, 0, err)
        with open(os.path.join(self.tmp, "a1st.py")) as f:
            self.assertEqual(f.read(), 'class A1stSpider:\n    name = "1st"  # https://x.example\n')
        code, _, err = yield run_command(reactor, ["genspider", "-t", "nope", "x", "x.example"],
                                         cwd=self.tmp)
        self.assertEqual(code, 2)
        self.assertIn("Unable to find template: nope", err)
        code, _, err = yield run_command(reactor, ["genspider", "s_basic", "x.example"],
                                         cwd=self.tmp)
        self.assertEqual(code, 2)
        self.assertIn("s_basic.py already exists (--force replaces it)", err)

    @defer.inlineCallbacks
    def test_startproject_templates_dir(self):
        """TEMPLATES_DIR's project templates are copied and filled; a file of their own
        comes along; a name that is not an identifier, or a project already there, is a
        usage error."""
        templates = os.path.join(self.tmp, "templates", "project")
        os.makedirs(os.path.join(templates, "module"))
        with open(os.path.join(templates, "tinyscrapy.cfg"), "w") as f:
            f.write("[settings]\ndefault = ${project_name}.settings\n")
        with open(os.path.join(templates, "module", "settings.py.tmpl"), "w") as f:
            f.write('BOT_NAME = "${project_name}"  # ${ProjectName}\n')
        with open(os.path.join(templates, "README"), "w") as f:
            f.write("mine\n")
        args = ["startproject", "my_shop", "--set",
                f"TEMPLATES_DIR={os.path.dirname(templates)}"]
        code, out, err = yield run_command(reactor, args, cwd=self.tmp)
        self.assertEqual(code, 0, err)
        self.assertIn(f"using template directory '{templates}'", out)
        project = os.path.join(self.tmp, "my_shop")
        with open(os.path.join(project, "my_shop", "settings.py")) as f:
            self.assertEqual(f.read(), 'BOT_NAME = "my_shop"  # MyShop\n')
        with open(os.path.join(project, "tinyscrapy.cfg")) as f:
            self.assertIn("default = my_shop.settings", f.read())
        self.assertTrue(os.path.isfile(os.path.join(project, "README")))
        code, _, err = yield run_command(reactor, args, cwd=self.tmp)
        self.assertEqual(code, 2)
        self.assertIn("tinyscrapy.cfg already exists in", err)
        code, _, err = yield run_command(reactor, ["startproject", "my-shop"], cwd=self.tmp)
        self.assertEqual(code, 2)
        self.assertIn("Project names must begin with a letter", err)

    @defer.inlineCallbacks
    def test_startproject_then_crawl_a_generated_spider(self):
        """The package's templates make a project whose generated spider list finds."""
        code, _, err = yield run_command(reactor, ["startproject", "books"], cwd=self.tmp)
        self.assertEqual(code, 0, err)
        project = os.path.join(self.tmp, "books")
        for name in ("tinyscrapy.cfg", "books/settings.py", "books/items.py",
                     "books/pipelines.py", "books/middlewares.py", "books/spiders/__init__.py"):
            self.assertTrue(os.path.isfile(os.path.join(project, name)), name)
        code, out, err = yield run_command(reactor, ["genspider", "shelf", "books.example"],
                                           cwd=project)
        self.assertEqual(code, 0, err)
        self.assertIn("using template 'basic' in module:\n  books.spiders.shelf", out)
        code, out, err = yield run_command(reactor, ["list"], cwd=project)
        self.assertEqual((code, out), (0, "shelf\n"), err)
        code, _, err = yield run_command(reactor, ["genspider", "books", "x.example"],
                                         cwd=project)
        self.assertEqual(code, 2)
        self.assertIn("Cannot create a spider with the same name as your project", err)


class VersionTests(unittest.TestCase):
    """version -v lists what tinyscrapy runs on."""

    @defer.inlineCallbacks
    def test_verbose(self):
        """One NAME : VERSION line each, tinyscrapy first, the platform last."""
        code, out, err = yield run_command(reactor, ["version", "-v"])
        self.assertEqual(code, 0, err)
        names = [line.partition(":")[0].strip() for line in out.splitlines()]
        self.assertEqual(names[0], "tinyscrapy")
        self.assertEqual(names[-1], "Platform")
        self.assertIn("Twisted", names)


SCRAPY_SPIDER = '''
import scrapy


class PagesSpider(scrapy.Spider):
    name = "pages"
    start_urls = [{url!r}]

    def parse(self, response):
        """
        @url {url}
        @returns items 1 1
        @scrapes title
        """
        yield {{"title": response.css("title::text").get()}}
'''


class ScrapyProjectTests(unittest.TestCase):
    """A Scrapy project, unchanged: its main.py and its contracts."""

    @defer.inlineCallbacks
    def test_main_py_and_check(self):
        """A main.py calling scrapy.cmdline.execute runs unchanged; check runs its contracts."""
        server = serve(self)
        url = server.add_page("/", title="home")
        project = os.path.abspath(self.mktemp())
        files = {
            "scrapy.cfg": "[settings]\ndefault = pages.settings\n",
            "pages/__init__.py": "",
            "pages/settings.py": 'BOT_NAME = "pages"\nSPIDER_MODULES = ["pages.spiders"]\n',
            "pages/spiders/__init__.py": "",
            "pages/spiders/pages.py": SCRAPY_SPIDER.format(url=url),
            "main.py": "from scrapy.cmdline import execute\n\n"
                       "execute(['scrapy', 'crawl', 'pages', '-O', 'items.jsonl'])\n",
        }
        for name, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(project, name)), exist_ok=True)
            with open(os.path.join(project, name), "w") as f:
                f.write(textwrap.dedent(text))
        env = {"TINYSCRAPY_AS_SCRAPY": None}
        code, _, err = yield run_python(reactor, ["-m", "tinyscrapy.scrapyfinder", "main.py"],
                                        cwd=project, env=env)
        self.assertEqual(code, 0, err)
        with open(os.path.join(project, "items.jsonl")) as f:
            self.assertEqual(json.loads(f.read()), {"title": "home"})
        code, out, err = yield run_command(reactor, ["check"], cwd=project, env=env)
        self.assertEqual(code, 0, err)
        self.assertIn("Ran 2 contracts", err)
        code, _, err = yield run_python(reactor, ["-m", "tinyscrapy.scrapyfinder", "nope.py"],
                                        cwd=project, env=env)
        self.assertEqual((code, err), (2, "tinyscrapy: error: no such script: nope.py\n"))


SETTINGS_SPIDER = '''
import tinyscrapy


class {cls}(tinyscrapy.Spider):
    name = "{name}"
    custom_settings = {{"USER_AGENT": "{name}-agent"}}

    def start_requests(self):
        yield tinyscrapy.Request({url!r})

    def parse(self, response):
        yield {{"spider": self.name, "flag": self.settings.getbool("FLAG")}}
'''


class CommandLineSettingsTests(unittest.TestCase):
    """-s before the spiders are looked up, and --spider, in a project's commands."""

    def setUp(self):
        self.server = serve(self)
        self.url = self.server.add_page("/", title="home")
        self.project = os.path.abspath(self.mktemp())
        files = {
            "tinyscrapy.cfg": "[settings]\ndefault = proj.settings\n",
            "proj/__init__.py": "",
            "proj/settings.py": 'SPIDER_MODULES = ["proj.spiders"]\n',
            "proj/spiders/__init__.py": "",
            "proj/spiders/a.py": SETTINGS_SPIDER.format(cls="A", name="a", url=self.url),
            "other/__init__.py": "",
            "other/b.py": SETTINGS_SPIDER.format(cls="B", name="b", url=self.url),
        }
        for name, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(self.project, name)), exist_ok=True)
            with open(os.path.join(self.project, name), "w") as f:
                f.write(text)

    @defer.inlineCallbacks
    def items(self, args):
        """Run a crawling command with C{args}. @return: a Deferred firing with its
        items."""
        out = os.path.join(self.project, "items.jsonl")
        code, _, err = yield run_command(reactor, [*args, "-O", out], cwd=self.project)
        self.assertEqual(code, 0, err)
        with open(out) as f:
            return [json.loads(line) for line in f]

    @defer.inlineCallbacks
    def test_list_set_spider_modules(self):
        """list takes -s: SPIDER_MODULES given there is where it looks."""
        code, out, err = yield run_command(reactor, ["list"], cwd=self.project)
        self.assertEqual((code, out), (0, "a\n"), err)
        code, out, err = yield run_command(reactor, ["list", "-s", "SPIDER_MODULES=other"],
                                           cwd=self.project)
        self.assertEqual((code, out), (0, "b\n"), err)
        code, out, err = yield run_command(
            reactor, ["list", "-s", 'SPIDER_MODULES=["other", "proj.spiders"]'],
            cwd=self.project)
        self.assertEqual((code, out), (0, "a\nb\n"), err)

    @defer.inlineCallbacks
    def test_crawl_and_run_set_spider_modules(self):
        """crawl and run find spiders where -s SPIDER_MODULES says; -s FLAG=True is getbool's."""
        code, _, err = yield run_command(reactor, ["crawl", "b"], cwd=self.project)
        self.assertEqual(code, 2, err)
        items = yield self.items(["crawl", "b", "-s", "SPIDER_MODULES=other", "-s", "FLAG=True"])
        self.assertEqual(items, [{"spider": "b", "flag": True}])
        items = yield self.items(["run", "b", "--set", "SPIDER_MODULES=other",
                                  "-s", "FLAG=False"])
        self.assertEqual(items, [{"spider": "b", "flag": False}])
        items = yield self.items(["crawl", "a", "-s", "FLAG=true"])
        self.assertEqual(items, [{"spider": "a", "flag": True}])

    @defer.inlineCallbacks
    def test_page_commands_spider_option(self):
        """fetch, view and shell --spider NAME download with that spider's USER_AGENT."""
        code, out, err = yield run_command(reactor, ["fetch", "--nolog", self.url],
                                           cwd=self.project)
        self.assertEqual(code, 0, err)
        self.assertNotIn("-agent", self.server.requests[-1].headers["user-agent"])
        code, out, err = yield run_command(reactor, ["fetch", "--nolog", "--spider", "a",
                                                     self.url], cwd=self.project)
        self.assertEqual(code, 0, err)
        self.assertIn("<title>home</title>", out)
        self.assertEqual(self.server.requests[-1].headers["user-agent"], "a-agent")
        code, out, err = yield run_command(
            reactor, ["view", "--nolog", "--spider", "b", "-s", "SPIDER_MODULES=other",
                      self.url], cwd=self.project, env={"BROWSER": "false"})
        self.assertEqual(code, 0, err)
        os.remove(out.strip())
        self.assertEqual(self.server.requests[-1].headers["user-agent"], "b-agent")
        code, out, err = yield run_command(
            reactor, ["shell", "--nolog", "--spider", "a", self.url, "-c",
                      "(spider.name, request.headers[b'User-Agent'])"], cwd=self.project)
        self.assertEqual((code, out), (0, "('a', b'a-agent')\n"), err)
        code, out, err = yield run_command(reactor, ["fetch", "--spider", "nope", self.url],
                                           cwd=self.project)
        self.assertEqual(code, 2)
        self.assertIn("nope", err)
