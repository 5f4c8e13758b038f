"""C{genspider NAME DOMAIN [-t basic|crawl|sitemap]}: write a spider from a template: in
the project's C{NEWSPIDER_MODULE} inside a project, else C{./NAME.py}. C{genspider -l}
lists the templates."""

import os
import re

HELP = "write a new spider from a template (basic, crawl, sitemap)"
DESCRIPTION = """\
Write NAME.py, a spider for DOMAIN (or a start URL) made from a template: basic (a
Spider), crawl (a CrawlSpider with a Rule) or sitemap (a SitemapSpider). Inside a project
it goes into NEWSPIDER_MODULE's folder, else into the current directory."""


def add_arguments(parser):
    parser.add_argument("name", nargs="?", metavar="NAME",
                        help="the spider's name (its module: the name with - and . as _)")
    parser.add_argument("domain", nargs="?", metavar="DOMAIN",
                        help="the site's domain (example.com) or start URL")
    parser.add_argument("-l", "--list", dest="list_templates", action="store_true",
                        help="list the templates and exit")
    parser.add_argument("-t", dest="template", default="basic",
                        choices=("basic", "crawl", "sitemap"),
                        help="the template (default: basic)")
    parser.add_argument("--force", action="store_true",
                        help="replace the spider's file if it exists")


def run(command):
    from urllib.parse import urlsplit

    from tinyscrapy.exceptions import UsageError
    from tinyscrapy.utils import template as templates
    args = command.args
    if args.list_templates:
        print("Available templates:")
        for name in templates.SPIDERS:
            print(f"  {name}")
        return 0
    if not (args.name and args.domain):
        raise UsageError("genspider needs NAME and DOMAIN (or -l to list the templates)")
    module = re.sub(r"[-.]", "_", args.name)  # as Scrapy: books-toscrape -> books_toscrape
    if not module.isidentifier():
        raise UsageError(f"spider name {args.name!r} cannot name a module: letters, digits, "
                         "_ and - only, not starting with a digit")
    url = args.domain if "://" in args.domain else f"https://{args.domain}/"
    domain = urlsplit(url).hostname
    if not domain:
        raise UsageError(f"{args.domain!r} is neither a domain nor a URL")
    if not url.endswith("/") and urlsplit(url).path == "":
        url += "/"
    path = os.path.join(_spiders_folder(command.settings), module + ".py")
    if os.path.exists(path) and not args.force:
        raise UsageError(f"{path} already exists (--force replaces it)")
    classname = "".join(p.capitalize() for p in module.split("_")) + "Spider"
    text = templates.SPIDERS[args.template].format(
        name=args.name, classname=classname, domain=domain, url=url)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"Created spider {args.name!r} using template {args.template!r} in {path}")
    return 0


def _spiders_folder(settings):
    """Where a new spider's module goes: the folder of C{NEWSPIDER_MODULE} in a project,
    else the current directory."""
    import importlib

    from tinyscrapy.exceptions import UsageError
    from tinyscrapy.utils.project import inside_project
    module_name = settings.get("NEWSPIDER_MODULE")
    if not (inside_project() and module_name):
        return os.getcwd()
    try:
        module = importlib.import_module(module_name)
    except Exception as e:
        raise UsageError(f"cannot import NEWSPIDER_MODULE {module_name!r}: "
                         f"{type(e).__name__}: {e}") from None
    return os.path.dirname(module.__file__)
