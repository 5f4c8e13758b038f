"""
L{MailSender}: send a mail from the crawl, with Twisted's SMTP client, as Scrapy's
C{scrapy.mail}. The stats mailer (L{tinyscrapy.extensions.statsmailer}) and
C{MEMUSAGE_NOTIFY_MAIL} use it; so can your own code::

    mailer = MailSender.from_crawler(crawler)        # MAIL_HOST, MAIL_PORT, MAIL_FROM, ...
    d = mailer.send(to=["ops@example.com"], subject="crawl done", body="...")

C{send} builds the message (C{text/plain} unless C{mimetype} says otherwise; with
attachments, a C{multipart/mixed}), connects to C{MAIL_HOST}:C{MAIL_PORT} (over TLS from
the start with C{MAIL_SSL}; C{MAIL_TLS} requires STARTTLS) and hands it to an
C{ESMTPSenderFactory}. It logs C{Mail sent OK: ...} or C{Unable to send mail: ...} once
(the recipients and the subject, never the credentials), and the reactor waits for it
before it shuts down. Every wait is bounded: the connection and each answer of the
server within L{MailSender.timeout} seconds, at most 5 more connection attempts, and the
whole send, attempts included, within L{MailSender.timeout} seconds too (a server that
accepts and never answers costs one C{timeout}, not six).
"""

import logging
from email import encoders
from email.mime.base import MIMEBase
from email.mime.multipart import MIMEMultipart
from email.mime.nonmultipart import MIMENonMultipart
from email.mime.text import MIMEText
from email.utils import formatdate
from io import BytesIO

from twisted.internet.defer import Deferred
from twisted.protocols.policies import WrappingFactory
from twisted.python.failure import Failure

logger = logging.getLogger(__name__)

COMMASPACE = ", "


def _to_bytes_or_none(text):
    if text is None:
        return None
    return text if isinstance(text, bytes) else text.encode("utf-8")


def _as_list(value):
    """A recipient, or a list of them, as a list (None: empty)."""
    if value is None:
        return []
    if isinstance(value, (str, bytes)):
        return [value]
    return list(value)


class MailSender:
    """
    Sends mails through one SMTP server.

    @ivar smtpuser: the user name to authenticate with (bytes), or None.
    @ivar smtppass: its password (bytes), or None; never logged.
    @cvar timeout: seconds to wait for the connection, for each answer of the server, and
        for the whole send.
    """

    timeout = 60.0

    def __init__(self, smtphost="localhost", mailfrom="scrapy@localhost", smtpuser=None,
                 smtppass=None, smtpport=25, smtptls=False, smtpssl=False, debug=False,
                 *, reactor=None):
        """
        @param debug: log the mail (at DEBUG) instead of sending it.
        @param reactor: the reactor to connect with (the global one unless given).
        """
        self.smtphost = smtphost
        self.smtpport = smtpport
        self.smtpuser = _to_bytes_or_none(smtpuser)
        self.smtppass = _to_bytes_or_none(smtppass)
        self.smtptls = smtptls
        self.smtpssl = smtpssl
        self.mailfrom = mailfrom
        self.debug = debug
        self._reactor = reactor

    @classmethod
    def from_crawler(cls, crawler):
        """A sender for the C{MAIL_*} settings, on the crawler's reactor."""
        settings = crawler.settings
        return cls(smtphost=settings["MAIL_HOST"], mailfrom=settings["MAIL_FROM"],
                   smtpuser=settings["MAIL_USER"], smtppass=settings["MAIL_PASS"],
                   smtpport=settings.getint("MAIL_PORT"), smtptls=settings.getbool("MAIL_TLS"),
                   smtpssl=settings.getbool("MAIL_SSL"), reactor=crawler.reactor)

    @property
    def reactor(self):
        if self._reactor is None:
            from twisted.internet import reactor
            self._reactor = reactor
        return self._reactor

    def send(self, to, subject, body, cc=None, attachs=(), mimetype="text/plain",
             charset=None, _callback=None):
        """
        Send a mail.

        @param to: a recipient or a list of them; C{cc} the same.
        @param attachs: C{(file name, MIME type, file object)} triples.
        @param charset: the body's encoding (the message is encoded with it, or UTF-8).
        @param _callback: called with C{to}, C{subject}, C{body}, C{cc}, C{attach} and
            C{msg} (the message) before it is sent (Scrapy's hook, for tests).
        @return: None with C{debug}; else a Deferred that fires with None once the server
            took the mail, or errbacks with why it did not (already logged). Cancelling it
            gives up on the mail.
        """
        to, cc = _as_list(to), _as_list(cc)
        msg = MIMEMultipart() if attachs else MIMENonMultipart(*mimetype.split("/", 1))
        msg["From"] = self.mailfrom
        msg["To"] = COMMASPACE.join(to)
        msg["Date"] = formatdate(localtime=True)
        msg["Subject"] = subject
        recipients = to[:]
        if cc:
            recipients.extend(cc)
            msg["Cc"] = COMMASPACE.join(cc)
        if attachs:
            if charset:
                msg.set_charset(charset)
            msg.attach(MIMEText(body, "plain", charset or "us-ascii"))
            for name, attach_mimetype, f in attachs:
                part = MIMEBase(*attach_mimetype.split("/"))
                part.set_payload(f.read())
                encoders.encode_base64(part)
                part.add_header("Content-Disposition", "attachment", filename=name)
                msg.attach(part)
        else:
            msg.set_payload(body, charset)
        if _callback is not None:
            _callback(to=to, subject=subject, body=body, cc=cc, attach=attachs, msg=msg)
        if self.debug:
            logger.debug('Debug mail sent OK: To=%(mailto)s Cc=%(mailcc)s '
                         'Subject="%(mailsubject)s" Attachs=%(mailattachs)d',
                         {"mailto": to, "mailcc": cc, "mailsubject": subject,
                          "mailattachs": len(attachs)})
            return None
        d = self._sendmail(recipients, msg.as_string().encode(charset or "utf-8"))
        d.addTimeout(self.timeout, self.reactor)  # the whole send, every attempt included
        d.addCallbacks(self._sent_ok, self._sent_failed,
                       callbackArgs=(to, cc, subject, len(attachs)),
                       errbackArgs=(to, cc, subject, len(attachs)))
        self._wait_before_shutdown(d)
        return d

    def _sent_ok(self, result, to, cc, subject, nattachs):
        logger.info('Mail sent OK: To=%(mailto)s Cc=%(mailcc)s Subject="%(mailsubject)s" '
                    'Attachs=%(mailattachs)d',
                    {"mailto": to, "mailcc": cc, "mailsubject": subject,
                     "mailattachs": nattachs})

    def _sent_failed(self, failure, to, cc, subject, nattachs):
        logger.error('Unable to send mail: To=%(mailto)s Cc=%(mailcc)s '
                     'Subject="%(mailsubject)s" Attachs=%(mailattachs)d- %(mailerr)s',
                     {"mailto": to, "mailcc": cc, "mailsubject": subject,
                      "mailattachs": nattachs, "mailerr": str(failure.value)})
        return failure

    def _wait_before_shutdown(self, d):
        """Have the reactor wait for C{d} before it shuts down, until C{d} has fired."""
        trigger = self.reactor.addSystemEventTrigger("before", "shutdown", _waiting_for, d)
        d.addBoth(self._cb_stop_waiting, trigger)

    def _cb_stop_waiting(self, result, trigger):
        try:
            self.reactor.removeSystemEventTrigger(trigger)
        except (ValueError, KeyError):  # the reactor is already shutting down
            pass
        return result

    def _sendmail(self, to_addrs, msg):
        """
        Connect and hand C{msg} (bytes) to the server for C{to_addrs}.

        @return: a Deferred firing once the server took it and the connection is closed,
            or errbacking with the SMTP error, the connection's failure or a timeout;
            cancelling it drops the connection and makes no new attempt.
        """
        sending = _Sending()
        d = sending.done = Deferred(sending.cancel)
        sent = Deferred()
        sent.addBoth(sending.cb_sent)
        sending.factory = self._create_sender_factory(to_addrs, BytesIO(msg), sent)
        sending.connections = _Connections(sending)
        if self.smtpssl:
            from twisted.internet import ssl
            sending.connector = self.reactor.connectSSL(
                self.smtphost, self.smtpport, sending.connections,
                ssl.optionsForClientTLS(self.smtphost), timeout=self.timeout)
        else:
            sending.connector = self.reactor.connectTCP(
                self.smtphost, self.smtpport, sending.connections, timeout=self.timeout)
        return d

    def _create_sender_factory(self, to_addrs, msg, d):
        """An C{ESMTPSenderFactory} for one mail: authenticating when a user is set,
        STARTTLS required with C{MAIL_TLS}, each answer awaited at most L{timeout}."""
        from twisted.mail.smtp import ESMTPSenderFactory  # imports the global reactor
        factory = ESMTPSenderFactory(self.smtpuser, self.smtppass, self.mailfrom, to_addrs,
                                     msg, d, timeout=self.timeout, heloFallback=True,
                                     requireAuthentication=False,
                                     requireTransportSecurity=self.smtptls,
                                     hostname=self.smtphost)
        factory.noisy = False
        return factory


def failure_logged(_failure):
    """An errback for what L{MailSender.send} returns, for a caller that does not need to
    know: the failure was logged by the sender; consume it."""
    return None


_PENDING = object()


class _Sending:
    """
    One mail on its way: the sender factory's own Deferred fires when the server took the
    mail (or refused it); L{done}, the caller's, once the connection is closed too.

    @ivar factory: the C{ESMTPSenderFactory}.
    @ivar connections: the L{_Connections} around it.
    @ivar connector: the connector of the connection attempt.
    @ivar done: the Deferred L{MailSender.send} returns.
    """

    factory = connections = connector = done = None

    def __init__(self):
        self.result = _PENDING

    def cb_sent(self, result):
        """The factory's Deferred fired: pass it on once no connection is open."""
        self.result = result
        if not self.connections.protocols:
            self._fire()
        return None

    def closed(self):
        """The last open connection is gone."""
        if self.result is not _PENDING:
            self._fire()

    def _fire(self):
        result, self.result = self.result, None
        if self.done is not None and not self.done.called:
            if isinstance(result, Failure):
                self.done.errback(result)
            else:
                self.done.callback(None)

    def cancel(self, _d):
        """No new attempt; the connection dropped, or the attempt stopped."""
        self.factory.sendFinished = True
        for wrapper in list(self.connections.protocols):
            wrapper.transport.abortConnection()
        if self.connector is not None and self.connector.state == "connecting":
            self.connector.stopConnecting()


class _Connections(WrappingFactory):
    """The sender factory, wrapped to tell its L{_Sending} when its connection closes."""

    noisy = False

    def __init__(self, sending):
        super().__init__(sending.factory)
        self.sending = sending

    def unregisterProtocol(self, p):
        super().unregisterProtocol(p)
        if not self.protocols:
            self.sending.closed()


def _waiting_for(d):
    """A C{before shutdown} trigger: the reactor waits for the mail's Deferred (whose
    failure is handled where it was sent)."""
    waiting = Deferred()
    d.addBoth(_cb_fire, waiting)
    return waiting


def _cb_fire(result, waiting):
    waiting.callback(None)
    return result
