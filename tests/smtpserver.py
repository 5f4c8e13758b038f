"""
L{SMTPServer}: a real SMTP server on 127.0.0.1 (Twisted's ESMTP), started by a test, that
keeps every mail it is given; and L{SilentServer}, which accepts connections and never
answers (a mail server that hangs).

    server = SMTPServer().start()
    self.addCleanup(server.stop)
    mailer = MailSender(smtphost="127.0.0.1", smtpport=server.port)
    yield mailer.send(["a@example.com"], "subject", "body")
    message = server.messages[0]          # an email.message.Message
"""

import email
from dataclasses import dataclass

from twisted.internet import defer, protocol
from twisted.mail import smtp
from zope.interface import implementer


@dataclass
class ReceivedMail:
    """One mail the server took: the envelope and the message itself."""

    sender: str
    recipients: list
    message: object  # email.message.Message


@implementer(smtp.IMessage)
class _Message:
    """The lines of one mail for one recipient, handed to the server at its end."""

    def __init__(self, server, envelope):
        self.server = server
        self.envelope = envelope
        self.lines = []

    def lineReceived(self, line):
        self.lines.append(line)

    def eomReceived(self):
        self.server.took(self.envelope, b"\n".join(self.lines))
        return defer.succeed(None)

    def connectionLost(self):
        self.lines = []


@implementer(smtp.IMessageDelivery)
class _Delivery:
    """Takes every sender and recipient."""

    def __init__(self, server):
        self.server = server

    def receivedHeader(self, helo, origin, recipients):
        return None

    def validateFrom(self, helo, origin):
        return origin

    def validateTo(self, user):
        return _MessageFactory(self.server, user)


class _MessageFactory:
    """What C{validateTo} returns: called once per recipient for its message."""

    def __init__(self, server, user):
        self.server = server
        self.user = user

    def __call__(self):
        return _Message(self.server, (str(self.user.orig), str(self.user.dest)))


class _Factory(protocol.ServerFactory):
    def __init__(self, server):
        self.server = server

    def buildProtocol(self, addr):
        esmtp = smtp.ESMTP()
        esmtp.delivery = _Delivery(self.server)
        esmtp.factory = self
        return esmtp


class SMTPServer:
    """
    An ESMTP server on 127.0.0.1, port 0.

    @ivar mails: every L{ReceivedMail}, one per recipient, in arrival order.
    @ivar port: the port it listens on (after L{start}).
    """

    def __init__(self, reactor=None):
        if reactor is None:
            from twisted.internet import reactor
        self.reactor = reactor
        self.mails = []
        self.port = None
        self._listening = None
        self._waiting = []

    def start(self):
        self._listening = self.reactor.listenTCP(0, _Factory(self), interface="127.0.0.1")
        self.port = self._listening.getHost().port
        return self

    def stop(self):
        """@return: a Deferred firing once the port is closed."""
        return self._listening.stopListening()

    @property
    def messages(self):
        """The messages taken, as C{email.message.Message}s."""
        return [mail.message for mail in self.mails]

    def took(self, envelope, data):
        sender, recipient = envelope
        self.mails.append(ReceivedMail(sender, [recipient],
                                       email.message_from_bytes(data)))
        waiting, self._waiting = self._waiting, []
        for d in waiting:
            d.callback(self.mails[-1])

    def next_mail(self):
        """@return: a Deferred firing with the next L{ReceivedMail} the server takes."""
        d = defer.Deferred()
        self._waiting.append(d)
        return d


class _Silent(protocol.Protocol):
    """Says nothing: no greeting, no answer."""

    def connectionMade(self):
        self.factory.server.accepted(self.transport)


class SilentServer:
    """
    Accepts connections on 127.0.0.1 (port 0) and never answers.

    @ivar connections: the transports of the connections accepted.
    """

    def __init__(self, reactor=None):
        if reactor is None:
            from twisted.internet import reactor
        self.reactor = reactor
        self.port = None
        self.connections = []
        self._listening = None
        self._waiting = []

    def start(self):
        factory = protocol.ServerFactory.forProtocol(_Silent)
        factory.server = self
        self._listening = self.reactor.listenTCP(0, factory, interface="127.0.0.1")
        self.port = self._listening.getHost().port
        return self

    def accepted(self, transport):
        self.connections.append(transport)
        waiting, self._waiting = self._waiting, []
        for d in waiting:
            d.callback(transport)

    def next_connection(self):
        """@return: a Deferred firing with the transport of the next connection."""
        d = defer.Deferred()
        self._waiting.append(d)
        return d

    def stop(self):
        for transport in self.connections:
            transport.abortConnection()
        return self._listening.stopListening()
