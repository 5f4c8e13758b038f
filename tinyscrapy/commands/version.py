"""C{version [-v]}: print tinyscrapy's version (with C{-v}, what it runs on too)."""

from tinyscrapy.commands import ScrapyCommand


class Command(ScrapyCommand):
    """Scrapy's C{version}."""

    requires_crawler_process = False
    default_settings = {"LOG_ENABLED": False}

    def syntax(self):
        return "[-v]"

    def short_desc(self):
        return "Print the version"

    def long_desc(self):
        return ("Print tinyscrapy's version; with -v, the versions of what it runs on too "
                "(lxml, libxml2, parsel, Twisted, Python, the platform, ...), one per line, "
                "for a bug report.")

    def add_options(self, parser):
        super().add_options(parser)
        parser.add_argument("--verbose", "-v", dest="verbose", action="store_true",
                            help="also print the versions of what tinyscrapy runs on")

    def run(self, args, opts):
        import tinyscrapy
        if not opts.verbose:
            print(f"tinyscrapy {tinyscrapy.__version__}")
            return
        from tinyscrapy.utils.versions import get_versions
        versions = get_versions()
        width = max(len(name) for name, _ in versions)
        for name, version in versions:
            print(f"{name:<{width}} : {version}")
