"""
C{shell [URL]}: an interactive Python prompt to try selectors on a page, as C{scrapy shell}
(the prompt itself is L{tinyscrapy.shell.Shell}).
"""

from tinyscrapy.commands.fetch import add_log_options, check_url, command_settings
from tinyscrapy.shell import Shell

HELP = "an interactive prompt to try selectors on a page"
DESCRIPTION = """\
An interactive Python prompt to try selectors on a page, as Scrapy's shell: response,
request, item, scrapy, fetch(url_or_request), view(response) and shelp(). The reactor
runs in a thread of its own while the prompt waits for input (docs/twisted/threads.md)."""


def add_arguments(parser):
    parser.add_argument("url", nargs="?", metavar="URL",
                        help="a page to download first (http or https)")
    parser.add_argument("--no-redirect", action="store_true",
                        help="do not follow redirects when fetching URL")
    parser.add_argument("-s", dest="settings", action="append", default=[],
                        metavar="NAME=VALUE", help="set a setting (repeatable)")
    parser.add_argument("-L", dest="loglevel", metavar="LEVEL", help="log level")
    parser.add_argument("-c", dest="code", metavar="CODE",
                        help="evaluate CODE with the page fetched, print the result, exit")
    add_log_options(parser)


def run(command):
    if command.args.url:
        check_url(command.args.url)
    settings = command_settings(command)
    shell = Shell(settings)
    shell.start()
    try:
        if command.args.url:
            shell.fetch(command.args.url, redirect=not command.args.no_redirect)
        if command.args.code is not None:
            print(eval(command.args.code, shell.namespace))  # noqa: S307 (the user's own)
        else:
            import code  # the prompt: only when there is no -c
            code.interact(banner=shell.banner(), local=shell.namespace, exitmsg="")
    finally:
        shell.stop()
    return 0
