"""C{genspider NAME DOMAIN [-t basic|crawl|sitemap]}: write a spider from a template: in
the project's C{NEWSPIDER_MODULE} inside a project, else C{./NAME.py}."""

import os

HELP = "write a new spider from a template (basic, crawl, sitemap)"
DESCRIPTION = """\
Write NAME.py, a spider for DOMAIN (or a start URL) made from a template: basic (a
Spider), crawl (a CrawlSpider with a Rule) or sitemap (a SitemapSpider). Inside a project
it goes into NEWSPIDER_MODULE's folder, else into the current directory."""


def add_arguments(parser):
    parser.add_argument("name", metavar="NAME", help="the spider's name")
    parser.add_argument("domain", metavar="DOMAIN",
                        help="the site's domain (example.com) or start URL")
    parser.add_argument("-t", dest="template", default="basic",
                        choices=("basic", "crawl", "sitemap"),
                        help="the template (default: basic)")
    parser.add_argument("--force", action="store_true",
                        help="replace the spider's file if it exists")


def run(command):
    from urllib.parse import urlsplit

    from tinyscrapy.errors import UsageError
    from tinyscrapy.project import templates
    args = command.args
    if not args.name.isidentifier():
        raise UsageError(f"spider name {args.name!r} must be a Python identifier (it names "
                         "its module)")
    url = args.domain if "://" in args.domain else f"https://{args.domain}/"
    domain = urlsplit(url).hostname
    if not domain:
        raise UsageError(f"{args.domain!r} is neither a domain nor a URL")
    if not url.endswith("/") and urlsplit(url).path == "":
        url += "/"
    path = os.path.join(_spiders_folder(command.settings), args.name + ".py")
    if os.path.exists(path) and not args.force:
        raise UsageError(f"{path} already exists (--force replaces it)")
    classname = "".join(p.capitalize() for p in args.name.split("_")) + "Spider"
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

    from tinyscrapy.errors import UsageError
    from tinyscrapy.project.config import inside_project
    module_name = settings.get("NEWSPIDER_MODULE")
    if not (inside_project() and module_name):
        return os.getcwd()
    try:
        module = importlib.import_module(module_name)
    except Exception as e:
        raise UsageError(f"cannot import NEWSPIDER_MODULE {module_name!r}: "
                         f"{type(e).__name__}: {e}") from None
    return os.path.dirname(module.__file__)
