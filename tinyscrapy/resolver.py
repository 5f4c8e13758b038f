"""
The crawl's DNS cache (Scrapy's C{DNSCACHE_ENABLED}, C{DNSCACHE_SIZE}, C{DNS_TIMEOUT}):
a host name is looked up once per crawl, not once per new connection.

    DnsEndpoint.connect(factory)    the endpoint CrawlAgent (and ProxyRouter) builds per host
      DnsCache.resolve(host)        a Deferred of the host's addresses:
        an IP literal               answered at once, never stored
        stored                      a hit: answered at once (least recently used goes first)
        being looked up             a miss that waits for the lookup already running
        neither                     a miss that starts one lookup through the reactor's
                                    resolver (getaddrinfo in its thread pool), failed after
                                    C{DNS_TIMEOUT} by a C{callLater}
      HostnameEndpoint.connect      twisted connects to those addresses (IPv6 and IPv4,
                                    a new attempt every 0.3 s until one answers)

Why an endpoint rather than C{reactor.installNameResolver(cache)}, as Scrapy does: that
swaps the resolver of the whole process, so every C{HostnameEndpoint} in it (another crawl
with other settings, the user's own twisted code, the next test under trial) would resolve
through this crawl's cache, after the crawl too. And twisted's C{IHostnameResolver} cannot
say why a lookup failed: C{HostnameEndpoint} makes of any empty answer a C{DNSLookupError}
"no results for hostname lookup", so a timeout would look like a name that does not exist.
So tinyscrapy's endpoints ask the cache first (a Deferred that errbacks with
L{DnsLookupTimeout}) and then hand the addresses to twisted's C{HostnameEndpoint} through a
reactor proxy (L{_AnsweringReactor}) whose C{nameResolver} gives that answer at once.
Nothing global changes. L{DnsCache} is an C{IHostnameResolver} too, for a program that
wants Scrapy's way: C{reactor.installNameResolver(cache)} (and put the old one back).

Failures are not cached: the next connection to a host that failed looks it up again (the
retry middleware retries C{DNSLookupError}, C{DnsLookupTimeout} included). Answers do not
expire during a crawl, as in Scrapy.
"""

from collections import OrderedDict
from dataclasses import dataclass

from twisted.internet.abstract import isIPAddress, isIPv6Address
from twisted.internet.address import IPv4Address, IPv6Address
from twisted.internet.defer import CancelledError, Deferred, succeed
from twisted.internet.error import DNSLookupError
from twisted.internet.interfaces import (
    IHostnameResolver,
    IHostResolution,
    IReactorPluggableNameResolver,
    IResolutionReceiver,
    IStreamClientEndpoint,
)
from zope.interface import implementer

from tinyscrapy.exceptions import DnsLookupTimeout, UsageError


@implementer(IHostnameResolver)
class DnsCache:
    """
    Host names to addresses, for one crawl.

    @ivar resolver: the C{IHostnameResolver} that really looks names up: the reactor's
        C{nameResolver} when the cache was made (taken then, so a cache installed on the
        reactor does not end up asking itself).
    @ivar size: how many host names are kept; 0 keeps none and shares no lookup, so every
        connection looks its host up (C{DNSCACHE_ENABLED = False}).
    @ivar timeout: seconds a lookup may take (0: no limit).
    """

    def __init__(self, reactor, size=10000, timeout=60.0, stats=None, resolver=None):
        self.reactor = reactor
        self.resolver = resolver if resolver is not None else reactor.nameResolver
        self.size = size
        self.timeout = timeout
        self.stats = stats
        self._addresses = OrderedDict()  # host -> addresses at port 0, most recent last
        self._lookups = {}  # host -> its _Lookup while it runs, for sharing
        self._running = set()  # every _Lookup running (shared or not)
        self._hits = self._misses = self._started = 0

    @classmethod
    def from_settings(cls, reactor, settings, stats=None, resolver=None):
        """A cache as C{DNSCACHE_ENABLED}, C{DNSCACHE_SIZE} and C{DNS_TIMEOUT} say."""
        enabled = settings.getbool("DNSCACHE_ENABLED", True)
        size = max(0, settings.getint("DNSCACHE_SIZE", 10000)) if enabled else 0
        timeout = settings.getfloat("DNS_TIMEOUT", 60.0)
        if timeout < 0:
            raise UsageError(f"setting DNS_TIMEOUT={timeout}: expected seconds, 0 or more "
                             "(0: no limit)")
        return cls(reactor, size, timeout, stats, resolver)

    def resolve(self, host):
        """
        The addresses of C{host}.

        @param host: a host name (ASCII, IDNA-encoded) or an IP literal.
        @return: a Deferred firing with a tuple of C{IPv4Address} / C{IPv6Address} (port
            0), never empty. It errbacks with L{DnsLookupTimeout} after C{timeout} seconds,
            or with C{DNSLookupError} when the name has no address. Cancelling it errbacks
            it with C{CancelledError}; the lookup goes on for the others waiting, and its
            answer is still kept.
        """
        literal = _literal(host)
        if literal is not None:
            return succeed(literal)
        addresses = self._addresses.get(host)
        if addresses is not None:
            self._addresses.move_to_end(host)
            self._count("hit")
            return succeed(addresses)
        self._count("miss")
        lookup = self._lookups.get(host)
        if lookup is not None:
            return lookup.wait()
        lookup = _Lookup(self, host)
        d = lookup.wait()  # first: a resolver may answer synchronously
        self._start(lookup)
        return d

    def _start(self, lookup):
        """Start C{lookup} through the real resolver, timed."""
        host = lookup.host
        self._count("lookup")
        self._running.add(lookup)
        if self.size:
            self._lookups[host] = lookup
        try:  # one try: whatever raises here ends the lookup, and fails its waiters
            if self.timeout:
                lookup.timer = self.reactor.callLater(self.timeout, lookup.time_out)
            self.resolver.resolveHostName(lookup, host, 0)
        except Exception as e:  # a resolver that raises instead of answering
            lookup.finish(DNSLookupError(f"{host!r}: {e}"))

    def _ended(self, lookup, addresses):
        """C{lookup} is over: forget it; keep its C{addresses} (None for a failure)."""
        self._running.discard(lookup)
        if self._lookups.get(lookup.host) is lookup:
            del self._lookups[lookup.host]
        if addresses and self.size:
            self._addresses[lookup.host] = addresses
            self._addresses.move_to_end(lookup.host)
            while len(self._addresses) > self.size:
                self._addresses.popitem(last=False)

    def close(self):
        """Give up the lookups still running (their C{DNS_TIMEOUT} timers stop; anyone
        still waiting errbacks with C{CancelledError}); the cache stays usable."""
        for lookup in list(self._running):
            lookup.finish(CancelledError())

    def _count(self, what):
        if what == "hit":
            self._hits += 1
        elif what == "miss":
            self._misses += 1
        else:
            self._started += 1
        if self.stats is not None:
            self.stats.inc_value(f"dnscache/{what}")

    def resolveHostName(self, resolutionReceiver, hostName, portNumber=0,
                        addressTypes=None, transportSemantics="TCP"):
        """
        C{IHostnameResolver}: L{resolve}, told to C{resolutionReceiver} with
        C{portNumber}. A failure, a timeout included, is told as no address (the
        interface has no other way).
        """
        d = self.resolve(hostName)
        resolution = _Resolution(hostName, d)
        resolutionReceiver.resolutionBegan(resolution)
        d.addCallback(_report, resolutionReceiver, portNumber, addressTypes,
                      transportSemantics)
        d.addErrback(_eb_report_nothing, resolutionReceiver)
        return resolution

    def statistics(self):
        """@return: a L{DnsStatistics}."""
        return DnsStatistics(len(self._addresses), self._hits, self._misses, self._started,
                             len(self._running))


@dataclass(frozen=True)
class DnsStatistics:
    """
    What the DNS cache did.

    @ivar hosts: host names kept now.
    @ivar hits: answers given from what was kept.
    @ivar misses: answers not kept yet: each waited for a lookup, its own or a shared one.
    @ivar lookups: lookups through the real resolver (misses less the shared ones).
    @ivar running: lookups running now.
    """

    hosts: int
    hits: int
    misses: int
    lookups: int
    running: int


@implementer(IResolutionReceiver)
class _Lookup:
    """
    One lookup of one host through the real resolver (it receives the answer), and the
    Deferreds waiting for it.

    @ivar timer: the C{DNS_TIMEOUT} call, or None.
    """

    def __init__(self, cache, host):
        self.cache = cache
        self.host = host
        self.timer = None
        self.done = False
        self._addresses = []
        self._waiters = []

    def wait(self):
        """@return: a Deferred for the answer (see L{DnsCache.resolve})."""
        d = Deferred(self._cancel_wait)
        self._waiters.append(d)
        return d

    def _cancel_wait(self, d):
        """One waiter gave up (its connection was cancelled); the lookup goes on. (It may
        be one L{finish} has not answered yet, cancelled by another waiter's callback.)"""
        if d in self._waiters:
            self._waiters.remove(d)

    def resolutionBegan(self, resolution):
        pass

    def addressResolved(self, address):
        self._addresses.append(address)

    def resolutionComplete(self):
        if self._addresses:
            self.finish(None)
        else:
            self.finish(DNSLookupError(f"no address for {self.host!r}"))

    def time_out(self):
        """C{DNS_TIMEOUT} is over: fail every waiter (the thread cannot be stopped; its
        late answer is dropped)."""
        self.timer = None
        self.finish(DnsLookupTimeout(f"{self.host!r} took longer than "
                                     f"{self.cache.timeout} seconds (DNS_TIMEOUT)"))

    def finish(self, error):
        """Answer every waiter: the addresses found, or C{error}."""
        if self.done:
            return
        self.done = True
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        addresses = None
        if error is None:
            addresses = tuple(_at_port(address, 0, "TCP") for address in self._addresses)
        self.cache._ended(self, addresses)
        while self._waiters:  # one at a time: a callback may cancel a later waiter
            d = self._waiters.pop(0)
            if error is None:
                d.callback(addresses)
            else:
                d.errback(error)


@implementer(IStreamClientEndpoint)
class DnsEndpoint:
    """
    twisted's C{HostnameEndpoint}, with its host looked up through a L{DnsCache}.
    """

    def __init__(self, reactor, cache, host, port, timeout=30):
        """
        @param timeout: seconds each TCP connection attempt may take.
        """
        from twisted.internet.endpoints import HostnameEndpoint
        self.cache = cache
        self.host = host
        self._reactor = _AnsweringReactor(reactor)
        self._endpoint = HostnameEndpoint(self._reactor, host, port, timeout=timeout)

    def __repr__(self):
        return f"<DnsEndpoint {self._endpoint!r}>"

    def connect(self, protocolFactory):
        """
        @return: a Deferred firing with the connected protocol; it errbacks with
            L{DnsLookupTimeout}, C{DNSLookupError}, or the connection's error
            (C{ConnectionRefusedError}, twisted's C{TimeoutError}, ...). Cancelling it
            stops waiting for the lookup (which goes on, for the cache) or connecting.
        """
        if getattr(self._endpoint, "_badHostname", False):
            # a name twisted refuses (IDNA): its own failure at once, with no lookup
            return self._endpoint.connect(protocolFactory)
        d = self.cache.resolve(self.host)
        d.addCallback(self._cb_resolved, protocolFactory)
        return d

    def _cb_resolved(self, addresses, protocolFactory):
        # HostnameEndpoint.connect asks the reactor's nameResolver synchronously: the
        # answer is in place only for that call.
        self._reactor.addresses = addresses
        try:
            return self._endpoint.connect(protocolFactory)
        finally:
            self._reactor.addresses = ()


@implementer(IReactorPluggableNameResolver, IHostnameResolver)
class _AnsweringReactor:
    """
    The reactor as the C{HostnameEndpoint} inside a L{DnsEndpoint} sees it: the same
    reactor (for connecting and timing), whose name resolver is this object, answering at
    once with the addresses the endpoint has just looked up.
    """

    def __init__(self, reactor):
        self._reactor = reactor
        self.addresses = ()

    def __getattr__(self, name):
        return getattr(self._reactor, name)

    @property
    def nameResolver(self):
        return self

    def installNameResolver(self, resolver):
        raise NotImplementedError("install a resolver on the real reactor")

    def resolveHostName(self, resolutionReceiver, hostName, portNumber=0,
                        addressTypes=None, transportSemantics="TCP"):
        resolution = _Resolution(hostName)
        resolutionReceiver.resolutionBegan(resolution)
        _report(self.addresses, resolutionReceiver, portNumber, addressTypes,
                transportSemantics)
        return resolution


@implementer(IHostResolution)
class _Resolution:
    """A resolution in progress; cancelling it stops waiting for the cache."""

    def __init__(self, name, deferred=None):
        self.name = name
        self._deferred = deferred

    def cancel(self):
        if self._deferred is not None:
            self._deferred.cancel()


def _report(addresses, receiver, port, address_types, transport):
    """Tell C{receiver} the C{addresses} of the types asked for, at C{port}."""
    for address in addresses:
        if address_types is None or type(address) in address_types:
            receiver.addressResolved(_at_port(address, port, transport))
    receiver.resolutionComplete()


def _eb_report_nothing(failure, receiver):
    """The lookup failed (or was cancelled): C{receiver} hears of no address."""
    receiver.resolutionComplete()


def _at_port(address, port, transport):
    """C{address} (an C{IPv4Address} or C{IPv6Address}) with another port and type."""
    if isinstance(address, IPv6Address):
        return IPv6Address(transport, address.host, port, address.flowInfo, address.scopeID)
    return IPv4Address(transport, address.host, port)


def _literal(host):
    """@return: C{host} as addresses if it is an IP literal, else None."""
    if isIPAddress(host):
        return (IPv4Address("TCP", host, 0),)
    if isIPv6Address(host):
        return (IPv6Address("TCP", host, 0),)
    return None
