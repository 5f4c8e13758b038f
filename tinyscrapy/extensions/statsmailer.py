"""
L{StatsMailer}: the crawl's stats, mailed when the spider closes, as Scrapy's extension.

Off unless C{STATSMAILER_RCPTS} names recipients; not in C{EXTENSIONS_BASE}: enable it in
C{EXTENSIONS} (C{"tinyscrapy.extensions.statsmailer.StatsMailer": 0}). The mail goes
through L{tinyscrapy.mail.MailSender} with the C{MAIL_*} settings, subject C{Scrapy stats
for: <spider name>}, one C{name : value} line per stat. The close waits for it (bounded by
the sender's timeouts); a mail that cannot be sent is logged once, by the sender, and the
crawl closes as it would have.
"""

from tinyscrapy import signals
from tinyscrapy.exceptions import NotConfigured
from tinyscrapy.mail import MailSender, failure_logged
from tinyscrapy.utils.misc import build_from_crawler


class StatsMailer:
    """
    Mails the stats at close.

    @ivar recipients: the addresses (C{STATSMAILER_RCPTS}).
    @ivar mail: the L{MailSender}.
    """

    def __init__(self, stats, recipients, mail):
        self.stats = stats
        self.recipients = recipients
        self.mail = mail

    @classmethod
    def from_crawler(cls, crawler):
        """@raise NotConfigured: C{STATSMAILER_RCPTS} is empty."""
        recipients = crawler.settings.getlist("STATSMAILER_RCPTS")
        if not recipients:
            raise NotConfigured
        mail = build_from_crawler(MailSender, crawler)
        extension = cls(crawler.stats, recipients, mail)
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        return extension

    def spider_closed(self, spider):
        """
        @return: None, or a Deferred that fires with None once the mail was sent or could
            not be (never errbacks: the sender logged the failure).
        """
        spider_stats = self.stats.get_stats()
        body = "Global stats\n\n"
        body += "\n".join(f"{key:<50} : {value}" for key, value in spider_stats.items())
        body += f"\n\n{spider.name} stats\n\n"
        body += "\n".join(f"{key:<50} : {value}" for key, value in spider_stats.items())
        d = self.mail.send(self.recipients, f"Scrapy stats for: {spider.name}", body)
        if d is not None and hasattr(d, "addErrback"):
            d.addErrback(failure_logged)
        return d
