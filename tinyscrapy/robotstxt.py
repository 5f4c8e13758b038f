"""
robots.txt parsers, as Scrapy's C{scrapy.robotstxt}: L{RobotParser} is the interface the
L{tinyscrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware} calls, and
L{ProtegoRobotParser} (on protego, Scrapy's default too) is the one C{ROBOTSTXT_PARSER}
names by default; L{PythonRobotParser} uses the standard library's parser instead.
"""

import logging
from abc import ABCMeta, abstractmethod

from tinyscrapy.utils.python import to_unicode

logger = logging.getLogger(__name__)


def decode_robotstxt(robotstxt_body, spider=None, to_native_str_type=False):
    """A robots.txt body as text: UTF-8, with what does not decode replaced (a robots.txt
    that is not text yields rules from what can be read)."""
    if isinstance(robotstxt_body, str):
        return robotstxt_body
    return robotstxt_body.decode("utf-8", "replace")


class RobotParser(metaclass=ABCMeta):
    """What the robots.txt middleware asks of the rules of one origin."""

    @classmethod
    @abstractmethod
    def from_crawler(cls, crawler, robotstxt_body):
        """Parse C{robotstxt_body} (bytes) for C{crawler}'s crawl."""

    @abstractmethod
    def allowed(self, url, user_agent):
        """@return: True when C{user_agent} may fetch C{url}."""


class ProtegoRobotParser(RobotParser):
    """
    robots.txt rules parsed by protego.

    @raise Exception: whatever protego raises for a body it cannot parse (the middleware
        then allows all, and says so).
    """

    def __init__(self, robotstxt_body, spider=None):
        from protego import Protego  # imported only by crawls that obey robots.txt
        self.spider = spider
        self.rp = Protego.parse(decode_robotstxt(robotstxt_body, spider))

    @classmethod
    def from_crawler(cls, crawler, robotstxt_body):
        return cls(robotstxt_body, getattr(crawler, "spider", None))

    def allowed(self, url, user_agent):
        return self.rp.can_fetch(url, user_agent)

    def crawl_delay(self, user_agent):
        """The C{Crawl-delay} for C{user_agent} in seconds, or None."""
        return self.rp.crawl_delay(user_agent)

    def sitemaps(self):
        """The C{Sitemap:} URLs."""
        return list(self.rp.sitemaps)


class PythonRobotParser(RobotParser):
    """robots.txt rules parsed by Python's own C{urllib.robotparser} (Scrapy's
    alternative parser: C{ROBOTSTXT_PARSER = "scrapy.robotstxt.PythonRobotParser"})."""

    def __init__(self, robotstxt_body, spider=None):
        from urllib.robotparser import RobotFileParser
        self.spider = spider
        self.rp = RobotFileParser()
        self.rp.parse(decode_robotstxt(robotstxt_body, spider).splitlines())

    @classmethod
    def from_crawler(cls, crawler, robotstxt_body):
        return cls(robotstxt_body, getattr(crawler, "spider", None))

    def allowed(self, url, user_agent):
        return self.rp.can_fetch(to_unicode(user_agent, errors="replace"),
                                 to_unicode(url, errors="replace"))

    def crawl_delay(self, user_agent):
        """The C{Crawl-delay} for C{user_agent} in seconds, or None."""
        delay = self.rp.crawl_delay(to_unicode(user_agent, errors="replace"))
        return None if delay is None else float(delay)


class RerpRobotParser(RobotParser):
    """robots.txt rules parsed by C{robotexclusionrulesparser} (Scrapy's alternative parser:
    an optional package, imported when a crawl names this parser)."""

    def __init__(self, robotstxt_body, spider=None):
        from robotexclusionrulesparser import RobotExclusionRulesParser
        self.spider = spider
        self.rp = RobotExclusionRulesParser()
        self.rp.parse(decode_robotstxt(robotstxt_body, spider))

    @classmethod
    def from_crawler(cls, crawler, robotstxt_body):
        return cls(robotstxt_body, getattr(crawler, "spider", None))

    def allowed(self, url, user_agent):
        return self.rp.is_allowed(to_unicode(user_agent, errors="replace"),
                                  to_unicode(url, errors="replace"))

    def crawl_delay(self, user_agent):
        """The C{Crawl-delay} for C{user_agent} in seconds, or None."""
        return self.rp.get_crawl_delay(to_unicode(user_agent, errors="replace"))

