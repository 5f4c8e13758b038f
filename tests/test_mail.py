"""
L{MailSender} and the stats mailer against a real SMTP server on 127.0.0.1, started by the
test: what arrives, what is logged, and that a server that fails or hangs can neither
hang a crawl nor cut its close short.
"""

import io
import logging

from twisted.internet import defer, reactor
from twisted.trial import unittest

from tinyscrapy import Spider
from tinyscrapy.extensions.statsmailer import StatsMailer
from tinyscrapy.mail import MailSender
from tinyscrapy.utils.test import get_crawler

from .helpers import crawl, serve
from .logs import capture_logs
from .smtpserver import SilentServer, SMTPServer


def free_port():
    """A port on 127.0.0.1 that nothing listens on (listened on, then closed)."""
    port = reactor.listenTCP(0, _NoFactory(), interface="127.0.0.1")
    number = port.getHost().port
    port.stopListening()
    return number


class _NoFactory:
    def doStart(self):
        pass

    def doStop(self):
        pass


class MailSenderTests(unittest.TestCase):
    """Mails through a real SMTP server."""

    def setUp(self):
        self.server = SMTPServer().start()
        self.addCleanup(self.server.stop)
        self.logs = capture_logs(self)
        self.sender = MailSender(smtphost="127.0.0.1", smtpport=self.server.port,
                                 mailfrom="crawler@example.com")

    @defer.inlineCallbacks
    def test_plain_mail_arrives(self):
        """A text mail reaches each recipient, cc included, with its headers and body;
        the send is logged once."""
        yield self.sender.send(to=["a@example.com"], subject="done", body="42 pages",
                               cc="b@example.com")
        self.assertEqual(sorted(mail.recipients[0] for mail in self.server.mails),
                         ["a@example.com", "b@example.com"])
        message = self.server.messages[0]
        self.assertEqual(message["Subject"], "done")
        self.assertEqual(message["From"], "crawler@example.com")
        self.assertEqual(message["To"], "a@example.com")
        self.assertEqual(message["Cc"], "b@example.com")
        self.assertEqual(message.get_payload().strip(), "42 pages")
        self.assertEqual(self.server.mails[0].sender, "crawler@example.com")
        sent = [m for m in self.logs.messages(logging.INFO) if m.startswith("Mail sent OK")]
        self.assertEqual(sent, ["Mail sent OK: To=['a@example.com'] Cc=['b@example.com'] "
                                'Subject="done" Attachs=0'])

    @defer.inlineCallbacks
    def test_attachments_and_utf8(self):
        """Attachments make a multipart mail; a UTF-8 body and subject arrive intact."""
        attachment = io.BytesIO("résumé".encode())
        yield self.sender.send(to="a@example.com", subject="sübjèçt", body="bödÿ",
                               attachs=[("notes.txt", "text/plain", attachment)],
                               charset="utf-8")
        message = self.server.messages[0]
        self.assertTrue(message.is_multipart())
        text, attached = message.get_payload()
        self.assertEqual(text.get_payload(decode=True).decode("utf-8"), "bödÿ")
        self.assertEqual(attached.get_filename(), "notes.txt")
        self.assertEqual(attached.get_payload(decode=True).decode("utf-8"), "résumé")

    def test_debug_sends_nothing(self):
        """debug=True: the mail is built and logged at DEBUG, nothing is sent."""
        built = []

        def catch(**kwargs):
            built.append(kwargs)

        sender = MailSender(smtphost="127.0.0.1", smtpport=self.server.port, debug=True)
        self.assertIsNone(sender.send(["a@example.com"], "s", "<p>b</p>", mimetype="text/html",
                                      _callback=catch))
        self.assertEqual(built[0]["msg"]["Content-Type"], "text/html")
        self.assertEqual(self.server.mails, [])
        self.assertTrue(any(m.startswith("Debug mail sent OK") for m in self.logs.messages()))

    @defer.inlineCallbacks
    def test_refused_connection_fails_once(self):
        """No server: the Deferred errbacks, and one ERROR line says so (no password in
        it)."""
        sender = MailSender(smtphost="127.0.0.1", smtpport=free_port(), smtpuser="bot",
                            smtppass="s3cret")
        failure = yield self.assertFailure(sender.send(["a@example.com"], "s", "b"),
                                           Exception)
        self.assertIsNotNone(failure)
        errors = self.logs.messages(logging.ERROR)
        self.assertEqual(len(errors), 1, errors)
        self.assertTrue(errors[0].startswith("Unable to send mail: To=['a@example.com']"))
        self.assertNotIn("s3cret", self.logs.text())

    @defer.inlineCallbacks
    def test_silent_server_times_out(self):
        """A server that never answers: the whole send gives up after the timeout, with
        no new attempt (the factory's retries would take six timeouts)."""
        silent = SilentServer().start()
        self.addCleanup(silent.stop)
        sender = MailSender(smtphost="127.0.0.1", smtpport=silent.port)
        sender.timeout = 0.2
        yield self.assertFailure(sender.send(["a@example.com"], "s", "b"),
                                 defer.TimeoutError)
        self.assertEqual(len(self.logs.messages(logging.ERROR)), 1)
        self.assertEqual(len(silent.connections), 1)

    @defer.inlineCallbacks
    def test_cancel_gives_up(self):
        """Cancelling the Deferred drops the connection to a server that hangs."""
        silent = SilentServer().start()
        self.addCleanup(silent.stop)
        sender = MailSender(smtphost="127.0.0.1", smtpport=silent.port)
        accepted = silent.next_connection()
        d = sender.send(["a@example.com"], "s", "b")
        yield accepted
        d.cancel()
        yield self.assertFailure(d, defer.CancelledError)
        self.assertEqual(len(silent.connections), 1)  # given up: no second attempt

    def test_from_crawler_reads_the_mail_settings(self):
        """MAIL_* settings make the sender."""
        crawler = get_crawler(settings_dict={"MAIL_HOST": "127.0.0.1", "MAIL_PORT": 2525,
                                             "MAIL_FROM": "me@example.com", "MAIL_USER": "u",
                                             "MAIL_PASS": "p", "MAIL_TLS": True})
        sender = MailSender.from_crawler(crawler)
        self.assertEqual((sender.smtphost, sender.smtpport, sender.mailfrom, sender.smtpuser,
                          sender.smtppass, sender.smtptls, sender.smtpssl),
                         ("127.0.0.1", 2525, "me@example.com", b"u", b"p", True, False))


class Pages(Spider):
    name = "pages"

    def parse(self, response):
        yield {"url": response.url}


class StatsMailerTests(unittest.TestCase):
    """The stats mailed when a real crawl closes."""

    def setUp(self):
        self.site = serve(self)
        self.start = self.site.add_page("/")
        self.server = SMTPServer().start()
        self.addCleanup(self.server.stop)
        self.logs = capture_logs(self)

    def settings(self, port, **more):
        values = {"EXTENSIONS": {"scrapy.extensions.statsmailer.StatsMailer": 0},
                  "STATSMAILER_RCPTS": ["ops@example.com"], "MAIL_HOST": "127.0.0.1",
                  "MAIL_PORT": port, "MAIL_PASS": "s3cret", "LOG_LEVEL": "INFO"}
        values.update(more)
        return values

    @defer.inlineCallbacks
    def test_stats_mailed_before_the_close_ends(self):
        """The mail, subject "Scrapy stats for: pages", holds the stats; it has arrived by
        the time the crawl's Deferred fires."""
        crawler = yield crawl(Pages, self.settings(self.server.port), start_urls=[self.start])
        self.assertEqual(len(self.server.mails), 1)
        message = self.server.messages[0]
        self.assertEqual(message["Subject"], "Scrapy stats for: pages")
        self.assertEqual(message["To"], "ops@example.com")
        body = message.get_payload()
        self.assertIn("item_scraped_count", body)
        self.assertIn("finish_reason", body)
        self.assertEqual(crawler.stats.get_value("finish_reason"), "finished")
        self.assertNotIn("s3cret", self.logs.text())

    @defer.inlineCallbacks
    def test_unreachable_server_does_not_break_the_close(self):
        """No SMTP server: one ERROR line, and the crawl still closes "finished"."""
        crawler = yield crawl(Pages, self.settings(free_port()), start_urls=[self.start])
        self.assertEqual(crawler.stats.get_value("finish_reason"), "finished")
        errors = self.logs.messages(logging.ERROR)
        self.assertEqual(len(errors), 1, errors)
        self.assertTrue(errors[0].startswith("Unable to send mail"))

    def test_off_without_recipients(self):
        """No STATSMAILER_RCPTS: the extension is not built."""
        from tinyscrapy.exceptions import NotConfigured
        self.assertRaises(NotConfigured, StatsMailer.from_crawler, get_crawler())
