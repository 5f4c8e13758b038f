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

    versions = tls_version_options(settings)
    if not settings.getbool("DOWNLOAD_VERIFY_CERTIFICATES", True):
        return UnverifiedPolicy(versions)
    bundle = settings.get("DOWNLOAD_CA_BUNDLE")
    trust = load_ca_bundle(bundle) if bundle else None
    if versions:
        return VerifiedPolicy(trust, versions)
    return BrowserLikePolicyForHTTPS(trustRoot=trust) if trust else BrowserLikePolicyForHTTPS()


def policy_key(settings):
    """A short label of the policy, part of every connection-pool key."""
    versions = ":".join(str(settings.get(name) or "") for name in _VERSION_SETTINGS)
    versions = f":{versions}" if versions != ":" else ""
    if not settings.getbool("DOWNLOAD_VERIFY_CERTIFICATES", True):
        return "unverified" + versions
    bundle = settings.get("DOWNLOAD_CA_BUNDLE")
    return (f"verified:{bundle}" if bundle else "verified") + versions


_VERSION_SETTINGS = ("DOWNLOAD_TLS_MIN_VERSION", "DOWNLOAD_TLS_MAX_VERSION")


def tls_version_options(settings):
    """
    C{DOWNLOAD_TLS_MIN_VERSION} and C{DOWNLOAD_TLS_MAX_VERSION} (C{"TLSv1.2"}, ...) as the
    keywords of Twisted's C{CertificateOptions}.

    @return: a dict, empty when neither is set.
    @raise UsageError: a version that is not one of L{_TWISTED_VERSION_MAP}'s names, or a
        maximum this Twisted cannot set.
    """
    from tinyscrapy.utils.ssl import _get_cert_options_version_kwargs
    bounds = []
    for name in _VERSION_SETTINGS:
        value = settings.get(name)
        if value is not None and value not in _TWISTED_VERSION_MAP:
            raise UsageError(f"setting {name}={value!r}: expected one of "
                             f"{', '.join(_TWISTED_VERSION_MAP)}")
        bounds.append(_TWISTED_VERSION_MAP[value] if value is not None else None)
    if bounds[0] is not None and bounds[1] is not None and bounds[0] > bounds[1]:
        raise UsageError(f"settings DOWNLOAD_TLS_MIN_VERSION={settings.get(_VERSION_SETTINGS[0])!r}"
                         f" and DOWNLOAD_TLS_MAX_VERSION={settings.get(_VERSION_SETTINGS[1])!r}: "
                         f"the minimum is above the maximum")
    try:
        return _get_cert_options_version_kwargs(*bounds)
    except ValueError as e:
        raise UsageError(f"setting DOWNLOAD_TLS_MAX_VERSION: {e}") from None


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
class VerifiedPolicy:
    """
    Verify the certificate and the host name, as Twisted's C{BrowserLikePolicyForHTTPS},
    between the TLS versions the settings give.

    @param trust_root: an C{IOpenSSLTrustRoot}, or None for the system's.
    @param versions: keywords of C{CertificateOptions} (L{tls_version_options}).
    """

    def __init__(self, trust_root=None, versions=None):
        self._trust_root = trust_root
        self._versions = dict(versions or {})

    def creatorForNetloc(self, hostname, port):
        from twisted.internet import ssl
        trust = self._trust_root if self._trust_root is not None else ssl.platformTrust()
        return ssl.optionsForClientTLS(hostname.decode("ascii"), trustRoot=trust,
                                       extraCertificateOptions=self._versions)


@implementer(IPolicyForHTTPS)
class UnverifiedPolicy:
    """Accept any certificate; still send the host name (SNI) so virtual hosts work.

    @param versions: keywords of C{CertificateOptions} (L{tls_version_options}).
    """

    def __init__(self, versions=None):
        from twisted.internet import ssl
        self._context = ssl.CertificateOptions(verify=False, **(versions or {})).getContext()

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
