"""C{crawl URL [URL ...]}: follow same-site links from URLs, one item per page, no code
(the spider is L{tinyscrapy.spiders.sitespider.SiteCrawler})."""

HELP = "follow same-host links from URLs, no code"
DESCRIPTION = """\
Crawl a site without writing a spider: from each URL, follow every link that stays on
the same origin (scheme, host and port), follow redirects, and record one item per page
(url, status, title, depth, redirect_urls), 404s and 500s included. robots.txt is obeyed
and the depth limit is 20 (override with -s). Unlike Scrapy's crawl, which takes a spider
name, this one takes http or https URLs; a URL that cannot be fetched is a usage error
(exit 2). Exit 1 when no start URL could be fetched at all."""


def add_arguments(parser):
    parser.add_argument("urls", nargs="+", metavar="URL",
                        help="an http:// or https:// URL to start from")
    parser.add_common_options()


def run(command):
    from tinyscrapy.spiders.sitespider import SiteCrawler, check_start_url
    for url in command.args.urls:
        check_start_url(url)
    command.settings.update(SiteCrawler.command_settings, "project")
    return command.crawl([SiteCrawler], extra_args={"start_urls": list(command.args.urls)})
