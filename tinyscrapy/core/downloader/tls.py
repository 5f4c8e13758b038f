"""
The TLS policy of a crawl: certificates verified by default (unlike Scrapy and crawler4j),
a CA bundle to trust instead of the system's, or no verification at all.

    DOWNLOAD_VERIFY_CERTIFICATES = True     # False: accept any certificate (SNI still sent)
    DOWNLOAD_CA_BUNDLE = None               # a PEM file: trust these CAs, not the system's

L{https_policy} turns the settings into an C{IPolicyForHTTPS} for the agent, and
L{policy_key} into a label the connection pool keys on, so two crawls (or agents) with
different policies never share a connection. L{tls_error} turns twisted's nested
handshake failures into one clear L{CertificateError} or L{TlsError}.
"""

from twisted.internet.interfaces import IOpenSSLClientConnectionCreator
from twisted.internet.ssl import TLSVersion
from twisted.web.iweb import IPolicyForHTTPS
from zope.interface import implementer

from tinyscrapy.exceptions import CertificateError, TlsError, UsageError

# TLS versions by the names Scrapy's settings give them, as Twisted's constants (Scrapy's
# private name: the test servers of Scrapy's suite build their certificates with it)
_TWISTED_VERSION_MAP = {
    "TLSv1.0": TLSVersion.TLSv1_0,
    "TLSv1.1": TLSVersion.TLSv1_1,
    "TLSv1.2": TLSVersion.TLSv1_2,
    "TLSv1.3": TLSVersion.TLSv1_3,
}


def https_policy(settings):
    """
    @return: the C{IPolicyForHTTPS} the settings ask for.
    @raise UsageError: C{DOWNLOAD_CA_BUNDLE} is not a readable PEM file of certificates.
    """
    from twisted.web.client import BrowserLikePolicyForHTTPS

    if not settings.getbool("DOWNLOAD_VERIFY_CERTIFICATES", True):
        return UnverifiedPolicy()
    bundle = settings.get("DOWNLOAD_CA_BUNDLE")
    if bundle:
        return BrowserLikePolicyForHTTPS(trustRoot=load_ca_bundle(bundle))
    return BrowserLikePolicyForHTTPS()


def policy_key(settings):
    """A short label of the policy, part of every connection-pool key."""
    if not settings.getbool("DOWNLOAD_VERIFY_CERTIFICATES", True):
        return "unverified"
    bundle = settings.get("DOWNLOAD_CA_BUNDLE")
    return f"verified:{bundle}" if bundle else "verified"


def load_ca_bundle(path):
    """
    Read a PEM file of one or more CA certificates.

    @return: an C{IOpenSSLTrustRoot} trusting exactly those certificates.
    @raise UsageError: the file is missing or holds no certificate.
    """
    from twisted.internet import ssl

    marker = b"-----END CERTIFICATE-----"
    try:
        with open(path, "rb") as pem:
            text = pem.read()
    except OSError as e:
        raise UsageError(f"setting DOWNLOAD_CA_BUNDLE={path!r}: {e.strerror}") from None
    certificates = []
    for block in text.split(marker)[:-1]:
        start = block.find(b"-----BEGIN CERTIFICATE-----")
        if start >= 0:
            certificates.append(ssl.Certificate.loadPEM(block[start:] + marker))
    if not certificates:
        raise UsageError(f"setting DOWNLOAD_CA_BUNDLE={path!r}: no PEM certificate in it")
    return ssl.trustRootFromCertificates(certificates)


@implementer(IPolicyForHTTPS)
class UnverifiedPolicy:
    """Accept any certificate; still send the host name (SNI) so virtual hosts work."""

    def __init__(self):
        from twisted.internet import ssl
        self._context = ssl.CertificateOptions(verify=False).getContext()

    def creatorForNetloc(self, hostname, port):
        return _UnverifiedCreator(hostname, self._context)


@implementer(IOpenSSLClientConnectionCreator)
class _UnverifiedCreator:
    """One TLS connection with no certificate check (twisted's C{ClientTLSOptions} always
    checks the host name, so it cannot be used here)."""

    def __init__(self, hostname, context):
        from twisted.internet.abstract import isIPAddress, isIPv6Address
        name = hostname.decode("ascii") if isinstance(hostname, bytes) else hostname
        self._sni = None if isIPAddress(name) or isIPv6Address(name) else name.encode("ascii")
        self._context = context

    def clientConnectionForTLS(self, tlsProtocol):
        from OpenSSL import SSL
        connection = SSL.Connection(self._context, None)
        connection.set_app_data(tlsProtocol)
        if self._sni:
            connection.set_tlsext_host_name(self._sni)
        return connection


def tls_error(failure):
    """
    The TLS failure inside C{failure} (twisted nests it in C{ResponseNeverReceived} and
    friends), as one clear exception.

    @return: a L{CertificateError} or L{TlsError}, or None if C{failure} is not about TLS.
    """
    from OpenSSL import SSL

    for value in _nested(failure):
        if isinstance(value, SSL.Error):
            reasons = ", ".join(r[-1] for r in _ssl_reasons(value)) or str(value)
            if "certificate" in reasons:
                return CertificateError(f"TLS handshake failed: {reasons} (self-signed, "
                                        f"expired, or from a CA not trusted here){_HINT}")
            return TlsError(f"TLS handshake failed: {reasons}")
        if type(value).__name__ in ("VerificationError", "CertificateError") \
                and type(value).__module__.startswith("service_identity"):
            return CertificateError(f"the certificate is for another host: {value}{_HINT}")
    return None


_HINT = ("; DOWNLOAD_CA_BUNDLE trusts more CAs, DOWNLOAD_VERIFY_CERTIFICATES=False "
         "stops checking")


def _ssl_reasons(error):
    args = error.args[0] if error.args else []
    return [reason for reason in args if isinstance(reason, tuple) and reason]


def _nested(failure, depth=0):
    """The exception of C{failure} and of every failure nested in its C{reasons}."""
    value = failure.value
    yield value
    if depth < 4:
        for inner in getattr(value, "reasons", None) or ():
            yield from _nested(inner, depth + 1)
