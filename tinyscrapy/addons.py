"""
Scrapy's add-ons (C{scrapy.addons}, Scrapy 2.10 and later): a plugin's one-line set-up.

A project lists its add-ons in C{ADDONS}, C{{"dotted.path.Addon": order}} as the other
component settings, and each add-on changes the crawl's settings before anything is built
from them::

    class MyAddon:
        def update_settings(self, settings):
            settings.set("DNSCACHE_ENABLED", True, "addon")
            settings["DOWNLOADER_MIDDLEWARES"]["myplugin.Middleware"] = 600

        @classmethod
        def update_pre_crawler_settings(cls, settings):   # optional
            settings.set("SPIDER_MODULES", [...], "addon")

The C{"addon"} priority (15) is below the project's (20): an add-on gives defaults that
the project's own settings still win over.

When it runs here: L{AddonManager.load_settings} is called by the L{tinyscrapy.crawler.Crawler}
when it is made, after the spider's C{custom_settings} and before the settings are checked
and the reactor chosen (so an add-on may set C{TWISTED_REACTOR}); Scrapy calls it a step
later, after the spider's C{from_crawler} (docs/differences.md).
L{AddonManager.load_pre_crawler_settings} is called on the project's settings (the command
line's C{-s} included) before its spiders are looked up by name: by the
L{tinyscrapy.crawler.CrawlerProcess} when it is made, as Scrapy's, and by the C{list}
command.
"""

import logging
import traceback

from tinyscrapy.exceptions import NotConfigured, UsageError
from tinyscrapy.middleware import ordered_paths
from tinyscrapy.utils.misc import build_from_crawler, load_object

logger = logging.getLogger(__name__)


class AddonManager:
    """
    The add-ons of one crawl.

    @ivar crawler: the L{tinyscrapy.crawler.Crawler}.
    @ivar addons: the add-ons built, in C{ADDONS} order (one that raised
        L{NotConfigured} is left out).
    """

    def __init__(self, crawler):
        self.crawler = crawler
        self.addons = []

    def load_settings(self, settings):
        """
        Build every add-on C{ADDONS} enables (with C{from_crawler} when it has one) and
        call its C{update_settings(settings)}.

        @raise UsageError: C{ADDONS} is not an ordered setting, or names what does not
            import, or an add-on's C{from_crawler} or C{update_settings} raised (other
            than L{NotConfigured}): the crawl does not start, and the message names the
            add-on, the exception and where it was raised.
        """
        for path in ordered_paths(settings, "ADDONS"):
            addon_class = load_object(path)
            try:
                addon = build_from_crawler(addon_class, self.crawler)
                update_settings = getattr(addon, "update_settings", None)
                if update_settings is not None:
                    update_settings(settings)
            except NotConfigured as e:
                if e.args:
                    logger.warning("Disabled %(clspath)s: %(eargs)s",
                                   {"clspath": path, "eargs": e.args[0]},
                                   extra={"crawler": self.crawler})
                continue
            except UsageError:
                raise
            except Exception as e:
                raise UsageError(f"add-on {_label(path)} failed to set up: "
                                 f"{type(e).__name__}: {e}{_where(e)}") from e
            self.addons.append(addon)
        if self.addons:
            logger.info("Enabled addons:\n%(addons)s", {"addons": self.addons},
                        extra={"crawler": self.crawler})

    @classmethod
    def load_pre_crawler_settings(cls, settings):
        """
        Call the C{update_pre_crawler_settings(settings)} class method of every add-on
        C{ADDONS} enables that has one: settings needed before a crawler exists (where
        the spiders are, C{SPIDER_MODULES}).
        """
        for path in ordered_paths(settings, "ADDONS"):
            update = getattr(load_object(path), "update_pre_crawler_settings", None)
            if update is not None:
                update(settings)


def _where(exception):
    """C{" (file.py, line 12)"}: where C{exception} was raised, or nothing."""
    frames = traceback.extract_tb(exception.__traceback__)
    return f" ({frames[-1].filename}, line {frames[-1].lineno})" if frames else ""


def _label(path):
    return path if isinstance(path, str) else getattr(path, "__qualname__", repr(path))
