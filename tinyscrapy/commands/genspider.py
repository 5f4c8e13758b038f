"""C{genspider NAME DOMAIN [-t TEMPLATE]}: write a spider from a template of
C{TEMPLATES_DIR} (by default the package's C{templates/spiders/}: basic, crawl, csvfeed,
xmlfeed, sitemap), or from a C{.tmpl} file: in the folder of C{NEWSPIDER_MODULE} when it is
set (a project's), else in the current directory. C{genspider -l} lists the templates,
C{genspider -d TEMPLATE} prints one."""

import shutil
import string
from pathlib import Path
from urllib.parse import urlparse

from tinyscrapy.commands import ScrapyCommand
from tinyscrapy.exceptions import UsageError


def sanitize_module_name(module_name):
    """A spider's name as a module's: C{-} and C{.} as C{_}, and an C{a} first when it
    does not start with a letter (as Scrapy's)."""
    module_name = module_name.replace("-", "_").replace(".", "_")
    if module_name[:1] not in string.ascii_letters:
        module_name = "a" + module_name
    return module_name


def extract_domain(url):
    """The host (and port) of C{url}."""
    return urlparse(url).netloc


def verify_url_scheme(url):
    """C{url} with C{https://} in front when it has no scheme (C{example.com/a})."""
    parsed = urlparse(url)
    if parsed.scheme == "" and parsed.netloc == "":
        parsed = urlparse("//" + url)._replace(scheme="https")
    return parsed.geturl()


class Command(ScrapyCommand):
    """Scrapy's C{genspider}."""

    requires_crawler_process = False
    default_settings = {"LOG_ENABLED": False}

    def syntax(self):
        return "[options] <name> <domain>"

    def short_desc(self):
        return "Write a new spider from a template (basic, crawl, csvfeed, xmlfeed, sitemap)"

    def long_desc(self):
        return ("Write a spider named NAME for DOMAIN (or a start URL) from a template: "
                "basic (a Spider), crawl (a CrawlSpider with a Rule), csvfeed, xmlfeed or "
                "sitemap (their feed spiders), or a .tmpl file of yours. Inside a project it "
                "goes into NEWSPIDER_MODULE's folder, else into the current directory. A "
                "spider or a file that exists is left alone unless --force; an unknown "
                "template is a usage error (exit 2).")

    def add_options(self, parser):
        super().add_options(parser)
        parser.add_argument("-l", "--list", dest="list", action="store_true",
                            help="list the templates and exit")
        parser.add_argument("-e", "--edit", dest="edit", action="store_true",
                            help="open the spider in the editor (EDITOR) once written")
        parser.add_argument("-d", "--dump", dest="dump", metavar="TEMPLATE",
                            help="print a template on stdout and exit")
        parser.add_argument("-t", "--template", dest="template", default="basic",
                            help="the template: a name (default: basic), or a .tmpl file's "
                                 "path")
        parser.add_argument("--force", dest="force", action="store_true",
                            help="replace the spider's file if it exists")

    def run(self, args, opts):
        if opts.list:
            print("Available templates:")
            for path in self._templates():
                print(f"  {path.stem}")
            return
        if opts.dump:
            print(self._find_template(opts.dump).read_text(encoding="utf-8"))
            return
        if len(args) != 2:
            raise UsageError()
        name, url = args[0], verify_url_scheme(args[1])
        module = sanitize_module_name(name)
        if not module.isidentifier():
            raise UsageError(f"spider name {name!r} cannot name a module: letters, digits, "
                             "_ and - only")
        if self.settings.get("BOT_NAME") == module:
            raise UsageError("Cannot create a spider with the same name as your project")
        if not extract_domain(url):
            raise UsageError(f"{args[1]!r} is neither a domain nor a URL")
        template = self._find_template(opts.template)
        folder, package = self._spiders_folder()
        path = folder / f"{module}.py"
        if not opts.force:
            self._refuse_existing(name, path)
        shutil.copyfile(template, path)
        from tinyscrapy.utils.template import render_templatefile
        render_templatefile(path, **self._template_values(module, name, url))
        where = f"in module:\n  {package}.{module}" if package else f"in {path}"
        print(f"Created spider {name!r} using template {opts.template!r} {where}")
        if opts.edit:
            from tinyscrapy.commands.edit import edit_file
            self.exitcode = edit_file(self.settings["EDITOR"], path)

    def _template_values(self, module, name, url):
        from tinyscrapy.utils.template import string_camelcase
        project = self.settings.get("BOT_NAME")
        parts = urlparse(url)
        return {"project_name": project, "ProjectName": string_camelcase(project),
                "module": module, "name": name, "url": url, "domain": extract_domain(url),
                "classname": "".join(s.capitalize() for s in module.split("_")) + "Spider",
                "robots_url": f"{parts.scheme}://{parts.netloc}/robots.txt"}

    @property
    def templates_dir(self):
        """The folder of the spider templates (C{TEMPLATES_DIR}'s C{spiders/})."""
        from tinyscrapy.utils.template import templates_dir
        return templates_dir(self.settings, "spiders")

    def _templates(self):
        return sorted(path for path in self.templates_dir.iterdir() if path.suffix == ".tmpl")

    def _find_template(self, template):
        """
        The template file C{template} names: a C{.tmpl} file's path (with or without the
        suffix), else one of the templates by name.

        @raise UsageError: there is none (Scrapy's words).
        """
        filename = template if template.endswith(".tmpl") else f"{template}.tmpl"
        for path in (Path(filename), self.templates_dir / filename):
            if path.is_file():
                return path
        raise UsageError(f"Unable to find template: {template} (`genspider --list` shows "
                         f"the templates)")

    def _spiders_folder(self):
        """
        Where a new spider's module goes: the folder of C{NEWSPIDER_MODULE} and its name,
        else the current directory and None.

        @raise UsageError: C{NEWSPIDER_MODULE} does not import.
        """
        import importlib
        module_name = self.settings.get("NEWSPIDER_MODULE")
        if not module_name:
            return Path.cwd(), None
        try:
            module = importlib.import_module(module_name)
        except Exception as e:
            raise UsageError(f"cannot import NEWSPIDER_MODULE {module_name!r}: "
                             f"{type(e).__name__}: {e}") from None
        return Path(module.__file__).resolve().parent, module.__name__

    def _refuse_existing(self, name, path):
        """@raise UsageError: a spider of the project has that name, or the file exists
        (C{--force} replaces it)."""
        if self.settings.get("NEWSPIDER_MODULE"):
            from tinyscrapy.spiderloader import get_spider_loader
            try:
                spidercls = get_spider_loader(self.settings).load(name)
            except KeyError:
                pass
            else:
                raise UsageError(f"Spider {name!r} already exists in module: "
                                 f"{spidercls.__module__} (--force replaces it)")
        if path.exists():
            raise UsageError(f"{path.resolve()} already exists (--force replaces it)")
