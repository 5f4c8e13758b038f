"""C{crawl URL [URL ...]}: follow same-site links from URLs, one item per page, no code
(the spider is L{tinyscrapy.spiders.sitespider.SiteCrawler}). Inside a project,
C{crawl NAME} runs the project's spider of that name, as Scrapy's C{crawl} does."""

HELP = "follow same-host links from URLs, no code (in a project: crawl NAME runs a spider)"
DESCRIPTION = """\
Crawl a site without writing a spider: from each URL, follow every link that stays on
the same origin (scheme, host and port), follow redirects, and record one item per page
(url, status, title, depth, redirect_urls), 404s and 500s included. robots.txt is obeyed
and the depth limit is 20 (override with -s). It takes http or https URLs; a URL that
cannot be fetched is a usage error (exit 2). Exit 1 when no start URL could be fetched at
all. Inside a project (tinyscrapy.cfg), crawl NAME runs the project's spider NAME, as
Scrapy's crawl does."""


def add_arguments(parser):
    parser.add_argument("urls", nargs="+", metavar="URL",
                        help="an http:// or https:// URL to start from; in a project, "
                             "a spider's name")
    parser.add_common_options()


def run(command):
    from tinyscrapy.project.config import inside_project
    from tinyscrapy.spiders.sitespider import SiteCrawler, check_start_url
    urls = list(command.args.urls)
    if inside_project() and not any("://" in url for url in urls):
        from tinyscrapy.spiders.spiderloader import SpiderLoader, resolve_spider
        loader = SpiderLoader.from_settings(command.settings)
        return command.crawl([resolve_spider(name, loader) for name in urls])
    for url in urls:
        check_start_url(url)
    command.settings.update(SiteCrawler.command_settings, "project")
    return command.crawl([SiteCrawler], extra_args={"start_urls": urls})
