"""C{crawl URL [URL ...]}: follow same-site links from URLs, one item per page, no code
(the spider is L{tinyscrapy.spiders.sitespider.SiteCrawler}). Inside a project,
C{crawl NAME} runs the project's spider of that name, as Scrapy's C{crawl} does."""

HELP = "follow same-host links from URLs, no code (in a project: crawl NAME runs a spider)"


def add_arguments(parser):
    parser.add_argument("urls", nargs="+", metavar="URL",
                        help="a start URL (http or https); in a project, a spider's name")
    parser.add_common_options()


def run(command):
    from tinyscrapy.project.config import inside_project
    from tinyscrapy.spiders.sitespider import SiteCrawler
    urls = list(command.args.urls)
    if inside_project() and not any("://" in url for url in urls):
        from tinyscrapy.spiders.spiderloader import SpiderLoader, resolve_spider
        loader = SpiderLoader.from_settings(command.settings)
        return command.crawl([resolve_spider(name, loader) for name in urls])
    command.settings.update(SiteCrawler.command_settings, "project")
    return command.crawl([SiteCrawler], extra_args={"start_urls": urls})
