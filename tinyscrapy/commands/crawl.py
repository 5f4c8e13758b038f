"""C{crawl URL [URL ...]}: follow same-site links from URLs, one item per page, no code
(the spider is L{tinyscrapy.spiders.sitespider.SiteCrawler})."""

HELP = "follow same-host links from URLs, no code"


def add_arguments(parser):
    parser.add_argument("urls", nargs="+", metavar="URL")
    parser.add_common_options()


def run(command):
    from tinyscrapy.spiders.sitespider import SiteCrawler
    command.settings.update(SiteCrawler.command_settings, "project")
    return command.crawl([SiteCrawler], extra_args={"start_urls": list(command.args.urls)})
