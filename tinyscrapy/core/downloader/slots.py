"""
Per-host download slots, with delays timed from the send, and Colly's limit rules that
say how politely each slot is crawled.

A slot is one host name (or the name in C{request.meta["download_slot"]}). Its
L{LimitRule} -- the first of C{LIMIT_RULES} whose pattern matches the slot's name, else the
default rule made of C{CONCURRENT_REQUESTS_PER_DOMAIN}, C{DOWNLOAD_DELAY} (or the spider's
C{download_delay}) and C{RANDOMIZE_DOWNLOAD_DELAY} -- says how many of its requests may
download at once (C{parallelism}) and how far apart two of them may go out on the wire
(C{delay}; random delay only ever adds to it). A rule has exactly one pattern
(C{domain_glob}, a shell pattern the whole slot name must match, or C{domain_regexp},
searched for in it) and some of C{parallelism}, C{delay}, C{random_delay} and
C{randomize_delay}; a key it leaves out takes its value from the default rule.
L{parse_limit_rules} checks and compiles the rules once, at start (a bad rule stops the
start with one line); L{match_rule} picks a slot's rule, first match wins, once per slot.

The life of one request in its slot, driven by the downloader::

    acquire(request)           handed to the downloader: one place of the slot taken
    gate(request)              about to be transferred: seconds still to wait (0.0: go)
    sent(request)              on the wire: the slot's next send may go at
                               now + delay * U(1, 1.5 if randomized) + U(0, random_delay)
    release(request, result)   over: the place is free; AutoThrottle reads the latency

The scheduler reads L{Slots.can_start} and L{Slots.ready_at} so that it only hands out a
request whose slot can take one now, and hears of every send and release through
L{Slots.listeners}. Nothing here sleeps or owns a timer: whoever has to wait schedules a
C{callLater} for the time L{Slots.ready_at} or L{Slots.gate} gives.
"""

import fnmatch
import random
import re
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from tinyscrapy.exceptions import UsageError

# While a spaced slot's request is on its way to the wire, the slot's next send time is
# unknown (it is timed from that send): ask again after the delay, and no sooner than this.
UNSENT_RECHECK = 0.02

# A slot with nothing in flight is forgotten this many seconds after its last send.
IDLE_SLOT_TTL = 60.0

# A request reaches the server's clock a little after our stamp (the write is flushed on
# the reactor's next turn; either process may be busy or preempted), and when the server
# notes it late, the next gap it measures shrinks. So the next send also waits for the
# "slack": the part of the previous request's answer time beyond the slot's fastest answer
# (the server saw the request before it answered). The slack is at most the larger of
# ARRIVAL_SLACK seconds and ARRIVAL_SLACK_SHARE of the delay, and it is that much until the
# answer is back.
ARRIVAL_SLACK = 0.01
ARRIVAL_SLACK_SHARE = 0.1


class Slot:
    """
    One slot's state: plain data, read by the scheduler, changed only by L{Slots}.

    @ivar key: the slot's name (a host name, or C{meta["download_slot"]}).
    @ivar rule: the L{LimitRule} that covers it.
    @ivar floor: the least delay: the rule's, or a robots.txt C{Crawl-delay} if longer.
    @ivar delay: the delay in force: C{floor}, or AutoThrottle's (never below C{floor}).
    @ivar spaced: whether its sends are spaced at all (a delay, a random delay, AutoThrottle).
    @ivar active: requests handed to the downloader and not yet released.
    @ivar unsent: of those, the ones not yet on the wire.
    @ivar on_the_way: of those, the ones past the gate and not yet on the wire.
    @ivar passed: the ones past the gate (transferring) and not yet released.
    @ivar last_sent: when the last request went out on the wire (None: never).
    @ivar next_send: the earliest time the next request may go out.
    @ivar sent_count: how many requests went out.
    @ivar smallest_gap: the shortest time between two sends seen here (None: fewer than two).
    @ivar fastest: the shortest time from a send to the end of its answer (None: no answer).
    """

    __slots__ = ("key", "rule", "floor", "delay", "spaced", "active", "unsent", "on_the_way",
                 "passed", "last_sent", "next_send", "sent_count", "smallest_gap", "_stretch",
                 "_extra", "_slack", "fastest")

    def __init__(self, key, rule, floor, delay, spaced):
        self.key = key
        self.rule = rule
        self.floor = floor
        self.delay = delay
        self.spaced = spaced
        self.active = self.unsent = self.on_the_way = self.passed = self.sent_count = 0
        self.last_sent = self.smallest_gap = None
        self.next_send = 0.0
        self._stretch = 1.0
        self._extra = 0.0
        self._slack = 0.0
        self.fastest = None

    def can_start(self, now):
        """Whether one more request may be handed to the downloader at C{now}."""
        return (self.active < self.rule.parallelism and now >= self.next_send
                and not (self.unsent and self.spaced))

    def ready_at(self, now):
        """
        When to ask L{can_start} again: the next send time, or a lower bound of it while a
        request is still on its way to the wire; None when only a release can help.
        """
        if self.active >= self.rule.parallelism:
            return None
        if self.unsent and self.spaced:
            return max(self.next_send, now + max(self.delay, UNSENT_RECHECK))
        return self.next_send

    def stamp(self, now, rng):
        """A request went out on the wire at C{now}: draw the wait before the next one."""
        if self.last_sent is not None:
            gap = now - self.last_sent
            if self.smallest_gap is None or gap < self.smallest_gap:
                self.smallest_gap = gap
        self.last_sent = now
        self.sent_count += 1
        if self.spaced:
            rule = self.rule
            stretch = rule.stretch
            self._stretch = rng.uniform(1.0, stretch) if stretch > 1.0 else 1.0
            self._extra = rng.uniform(0.0, rule.random_delay) if rule.random_delay else 0.0
            self._slack = self.slack_limit()
            self._reschedule()

    def slack_limit(self):
        """The most the next send waits beyond the delay (see C{ARRIVAL_SLACK})."""
        return max(ARRIVAL_SLACK, ARRIVAL_SLACK_SHARE * self.delay)

    def answered(self, sent_at, now):
        """
        The request sent at C{sent_at} was answered at C{now}. If it was the last one sent,
        the slack becomes the part of its answer time beyond the fastest answer so far.
        """
        latency = now - sent_at
        if sent_at == self.last_sent and self.spaced:
            late = latency - (self.fastest or 0.0)
            self._slack = min(max(late, 0.0), self.slack_limit())
            self._reschedule()
        if self.fastest is None or latency < self.fastest:
            self.fastest = latency

    def set_delay(self, delay):
        """Change the delay in force; the next send moves with it (AutoThrottle)."""
        self.delay = delay
        if self.last_sent is not None:
            self._reschedule()

    def _reschedule(self):
        self.next_send = self.last_sent + self._slack + self.delay * self._stretch + self._extra

    def is_idle(self, now):
        """Nothing in flight and its last send long past: it can be forgotten."""
        return self.active == 0 and (
            self.last_sent is None
            or now > self.next_send and now - self.last_sent > IDLE_SLOT_TTL)

    def __str__(self):
        last = "never" if self.last_sent is None else f"{self.last_sent:.3f}"
        return (f"slot {self.key}: {self.active}/{self.rule.parallelism} active, "
                f"{self.unsent} unsent, delay {self.delay:.3f}s, last sent {last}, "
                f"next send {self.next_send:.3f}")

    __repr__ = __str__


class _Ticket:
    """One request's stay in its slot, from L{Slots.acquire} to L{Slots.release}."""

    __slots__ = ("slot", "passed", "sent_at")

    def __init__(self, slot):
        self.slot = slot
        self.passed = False
        self.sent_at = None


@dataclass(frozen=True)
class SlotsStatistics:
    """The slots' state: how many exist, requests inside them, sends, waits at the gate."""

    slots: int
    active: int
    sent: int
    gate_waits: int


class Slots:
    """
    Every slot of one crawl, and the rules that make them.

    One request object is in flight at most once at a time (the engine's assumption too).

    @ivar rules: the compiled C{LIMIT_RULES}, first match wins.
    @ivar default: the rule of slots no entry matches.
    @ivar throttle: what moves each slot's delay after a download (the
        L{tinyscrapy.extensions.throttle.AutoThrottle} extension sets itself here), or
        None.
    @ivar random: the C{random.Random} delays are drawn from.
    @ivar listeners: callables called with a slot's key after each send and release.
    @ivar observer: None, or an object told of each request's send (C{sent(request,
        slot)}), of the end of its transfer (C{released(request, slot, result, latency)},
        the latency None for a request never sent) and of each L{raise_delay}
        (C{delay_raised(key, delay)}): a worker of C{--workers} reports them to the
        parent, which keeps the crawl's slots.
    """

    def __init__(self, rules=(), default=None, clock=None, throttle=None, rng=None):
        self.rules = tuple(rules)
        self.default = default if default is not None else LimitRule()
        self.clock = clock if clock is not None else _global_reactor()
        self.throttle = throttle
        self.random = rng if rng is not None else random.Random()
        self.listeners = []
        self.observer = None
        self._slots = {}
        self._floors = {}
        self._tickets = {}
        self._sweep_at = 1024
        self._sent = 0
        self._gate_waits = 0

    @classmethod
    def from_crawler(cls, crawler, clock=None):
        """
        Build the slots from the crawler's settings (and its spider's C{download_delay}).

        @raise UsageError: a bad rule, stopping the start with one line.
        """
        settings = crawler.settings
        default = default_rule(settings, getattr(crawler, "spider", None))
        rules = (parse_download_slots(settings.get("DOWNLOAD_SLOTS"), default)
                 + parse_limit_rules(settings.get("LIMIT_RULES"), default))
        return cls(rules, default, clock if clock is not None else crawler.reactor)

    # what the scheduler asks

    def key_for(self, request):
        """The slot name of C{request}: C{meta["download_slot"]}, else its host name."""
        meta = request._meta
        if meta:
            key = meta.get("download_slot")
            if key is not None:
                return key
        return hostname(request.url)

    def slot(self, key):
        """The L{Slot} called C{key}, made (with its rule) on first use."""
        slot = self._slots.get(key)
        if slot is None:
            slot = self._slots[key] = self._new_slot(key)
        return slot

    def get(self, key, default=None):
        """The L{Slot} called C{key} if it exists, else C{default} (as Scrapy's
        downloader's dict of slots answers)."""
        return self._slots.get(key, default)

    def active_count(self, key):
        """How many requests of slot C{key} are downloading (0 for a slot not made yet)."""
        slot = self._slots.get(key)
        return slot.active if slot is not None else 0

    def can_start(self, key, now):
        """Whether slot C{key} can take one more request at C{now}."""
        return self.slot(key).can_start(now)

    def ready_at(self, key, now):
        """See L{Slot.ready_at}."""
        return self.slot(key).ready_at(now)

    # what the downloader does

    def acquire(self, request):
        """C{request} was handed to the downloader: it takes a place in its slot."""
        slot = self.slot(self.key_for(request))
        slot.active += 1
        slot.unsent += 1
        self._tickets[request] = _Ticket(slot)
        return slot

    def gate(self, request):
        """
        How long C{request} must still wait before it may go out on the wire.

        A request the scheduler handed out found a free place in its slot; one downloaded
        outside the scheduler (robots.txt, a media file) may have come while the slot was
        full, and waits here until fewer than the slot's parallelism are past the gate.

        @return: seconds to wait (then ask again), or 0.0: it may go now, and it counts as
            on its way until L{sent} (or L{release}).
        """
        ticket = self._tickets.get(request)
        slot = ticket.slot if ticket is not None else self.slot(self.key_for(request))
        if ticket is not None and not ticket.passed and slot.passed >= slot.rule.parallelism:
            self._gate_waits += 1
            return max(slot.delay, UNSENT_RECHECK)
        if slot.spaced:
            if slot.on_the_way:  # another send is under way; ours is timed from it
                self._gate_waits += 1
                return max(slot.delay, UNSENT_RECHECK)
            now = self.clock.seconds()
            if now < slot.next_send:
                self._gate_waits += 1
                return slot.next_send - now
        if ticket is not None and not ticket.passed:
            ticket.passed = True
            slot.on_the_way += 1
            slot.passed += 1
        return 0.0

    def sent(self, request):
        """
        C{request} went out on the wire now: its slot's next send is timed from here.

        Also accepts a request that never was acquired (fetched around the engine).
        """
        now = self.clock.seconds()
        ticket = self._tickets.get(request)
        if ticket is None:
            slot = self.slot(self.key_for(request))
        elif ticket.sent_at is not None:
            return
        else:
            slot = ticket.slot
            ticket.sent_at = now
            slot.unsent -= 1
            if ticket.passed:
                slot.on_the_way -= 1
        slot.stamp(now, self.random)
        self._sent += 1
        if self.observer is not None:
            self.observer.sent(request, slot)
        if slot.spaced:  # its next send time is known now
            self._notify(slot)

    def release(self, request, result=None, latency=None):
        """
        C{request}'s download is over: its place is free. Calling it again does nothing.

        @param result: the raw L{HttpResponse} or the failure; AutoThrottle reads it.
        @param latency: the seconds from its send to the end of its transfer as measured
            where it was downloaded (a worker of C{--workers}), for AutoThrottle; None:
            the time since L{sent} here.
        """
        ticket = self._tickets.pop(request, None)
        if ticket is None:
            return
        slot = ticket.slot
        slot.active -= 1
        if ticket.passed:
            slot.passed -= 1
        if ticket.sent_at is None:
            slot.unsent -= 1
            if ticket.passed:
                slot.on_the_way -= 1
        else:
            now = self.clock.seconds()
            slot.answered(ticket.sent_at, now)
            if latency is None:
                latency = now - ticket.sent_at
            if self.throttle is not None:
                self.throttle.adjust(slot, latency, result)
        if self.observer is not None:
            self.observer.released(request, slot, result, latency)
        self._notify(slot)

    def raise_delay(self, key, delay):
        """
        Make slot C{key}'s delay at least C{delay} seconds for the rest of the crawl (a
        robots.txt C{Crawl-delay}, say); it survives the slot being forgotten.
        """
        self._floors[key] = max(delay, self._floors.get(key, 0.0))
        if self.observer is not None:
            self.observer.delay_raised(key, delay)
        slot = self._slots.get(key)
        if slot is not None and slot.floor < delay:
            slot.floor = delay
            slot.spaced = True
            slot.set_delay(max(slot.delay, delay))
            self._notify(slot)

    def _notify(self, slot):
        for listener in self.listeners:
            listener(slot.key)

    # bookkeeping

    def _new_slot(self, key):
        if len(self._slots) >= self._sweep_at:
            self.sweep()
        rule = match_rule(self.rules, key, self.default)
        floor = max(rule.delay, self._floors.get(key, 0.0))
        if self.throttle is not None:
            return Slot(key, rule, floor, self.throttle.start_delay(floor), spaced=True)
        return Slot(key, rule, floor, floor, spaced=floor > 0 or rule.random_delay > 0)

    def sweep(self):
        """
        Forget the idle slots (nothing in flight, the last send older than
        C{IDLE_SLOT_TTL}): on the engine's heartbeat, and when their number doubles (so a
        burst of new hosts costs O(1) per slot made). A delay a host asked for
        (L{raise_delay}) survives.

        @return: how many were forgotten.
        """
        now = self.clock.seconds()
        idle = [key for key, slot in self._slots.items() if slot.is_idle(now)]
        for key in idle:
            del self._slots[key]
        self._sweep_at = max(1024, 2 * len(self._slots))
        return len(idle)

    def __len__(self):
        return len(self._slots)

    def statistics(self):
        return SlotsStatistics(slots=len(self._slots), active=len(self._tickets),
                               sent=self._sent, gate_waits=self._gate_waits)


# scheme://host[:port] followed by the path, query, fragment or the end: most URLs
_PLAIN_HOST = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*://([^/?#@\[\]:]*)(?::[0-9]*)?(?:[/?#]|\Z)")


def hostname(url):
    """The lower-cased host name of C{url}, without port or credentials ("" if none)."""
    match = _PLAIN_HOST.match(url)
    if match is not None:  # a regular expression is 3 times faster than urlsplit
        return match.group(1).lower()
    try:
        return urlsplit(url).hostname or ""
    except ValueError:
        return ""


def _global_reactor():
    from twisted.internet import reactor
    return reactor

RULE_KEYS = ("domain_glob", "domain_regexp", "parallelism", "delay", "random_delay",
             "jitter", "randomize_delay")


@dataclass(frozen=True)
class LimitRule:
    """
    Colly's C{LimitRule}: which slots it covers, and how politely they are crawled.

    @ivar domain_glob: a shell pattern (C{*.example.com}) the whole slot name must match.
    @ivar domain_regexp: a regular expression searched for in the slot name.
    @ivar parallelism: the most requests of one slot downloading at once.
    @ivar delay: the least time, in seconds, between two sends of one slot.
    @ivar random_delay: up to this many seconds more, drawn afresh for every send.
    @ivar jitter: stretch C{delay} by a factor drawn from [1.0, 1.0 + jitter] (Scrapy's
        C{DOWNLOAD_DELAY_JITTER}, which draws from [1 - jitter, 1 + jitter]); None: as
        C{randomize_delay} says.
    @ivar randomize_delay: with no C{jitter}, stretch C{delay} by a factor drawn from
        [1.0, 1.5] (Scrapy's older C{RANDOMIZE_DOWNLOAD_DELAY}).
    @ivar pattern: the compiled glob or regexp; None for the default rule.
    """

    domain_glob: str = None
    domain_regexp: str = None
    parallelism: int = 8
    delay: float = 0.0
    random_delay: float = 0.0
    randomize_delay: bool = False
    jitter: float = None
    pattern: re.Pattern = field(default=None, repr=False, compare=False)

    @property
    def stretch(self):
        """The largest factor a wait is stretched by (1.0: never)."""
        if self.jitter is not None:
            return 1.0 + self.jitter
        return 1.5 if self.randomize_delay else 1.0

    def matches(self, name):
        """Whether this rule covers the slot called C{name} (lower-cased)."""
        return self.pattern is None or self.pattern.search(name) is not None


def parse_limit_rules(value, default):
    """
    Check and compile C{LIMIT_RULES}, once, at start.

    @param value: a list of dicts (or L{LimitRule}s); a string is parsed as JSON.
    @param default: the default L{LimitRule}: a key a rule leaves out takes its value.
    @return: a tuple of L{LimitRule}s with their patterns compiled, in order.
    @raise UsageError: a rule without a pattern, with a pattern that does not compile, with
        an unknown key or with a value out of range.
    """
    if isinstance(value, str):
        from tinyscrapy.settings import parse_value
        value = parse_value(value) if value.strip() else []
    if value is None:
        return ()
    if not isinstance(value, (list, tuple)):
        raise UsageError(f"LIMIT_RULES must be a list of rules, got {type(value).__name__}")
    return tuple(_parse_rule(entry, default, f"LIMIT_RULES[{index}]")
                 for index, entry in enumerate(value))


def _parse_rule(entry, default, where):
    if isinstance(entry, LimitRule):
        entry = {key: getattr(entry, key) for key in RULE_KEYS}
    if not isinstance(entry, dict):
        raise UsageError(f"{where}: a rule is a dict, got {type(entry).__name__}")
    unknown = sorted(set(entry) - set(RULE_KEYS))
    if unknown:
        raise UsageError(f"{where}: unknown key {unknown[0]!r} (known: {', '.join(RULE_KEYS)})")
    glob, regexp = entry.get("domain_glob"), entry.get("domain_regexp")
    if (glob is None) == (regexp is None):
        raise UsageError(f"{where}: needs exactly one of domain_glob and domain_regexp")
    pattern_text = glob if glob is not None else regexp
    if not isinstance(pattern_text, str) or not pattern_text:
        raise UsageError(f"{where}: the pattern must be a non-empty string")
    source = r"\A" + fnmatch.translate(pattern_text.lower()) if glob is not None else regexp
    try:
        pattern = re.compile(source, re.IGNORECASE)
    except re.error as e:
        raise UsageError(f"{where}: domain_regexp {regexp!r} does not compile: {e}") from None
    rule = LimitRule(
        domain_glob=glob, domain_regexp=regexp,
        parallelism=_number(entry, "parallelism", default.parallelism, int, 1, where),
        delay=_number(entry, "delay", default.delay, float, 0, where),
        random_delay=_number(entry, "random_delay", 0.0, float, 0, where),
        randomize_delay=bool(entry.get("randomize_delay", default.randomize_delay)),
        jitter=_jitter(entry, default, where),
        pattern=pattern,
    )
    return rule


def _jitter(entry, default, where):
    """A rule's jitter: its C{jitter}, else None when it says C{randomize_delay} (which
    then decides), else the default rule's."""
    if "jitter" in entry:
        return _number(entry, "jitter", 0.0, float, 0, where)
    return None if "randomize_delay" in entry else default.jitter


# Scrapy's per-slot settings (DOWNLOAD_SLOTS) and the rule keys they stand for
_SLOT_KEYS = {"concurrency": "parallelism", "delay": "delay", "jitter": "jitter",
              "randomize_delay": "randomize_delay"}


def parse_download_slots(value, default):
    """
    Scrapy's C{DOWNLOAD_SLOTS}, C{{"slot name": {"concurrency": 1, "delay": 2.0,
    "jitter": 0.5}}}, as limit rules that match each slot's whole name.

    @return: a tuple of L{LimitRule}s, one per slot, in the order given.
    @raise UsageError: not a dict of dicts, or a value out of range.
    """
    if isinstance(value, str):
        from tinyscrapy.settings import parse_value
        value = parse_value(value) if value.strip() else {}
    if not value:
        return ()
    if not isinstance(value, dict):
        raise UsageError(f"DOWNLOAD_SLOTS must be a dict of slot name to its settings, got "
                         f"{type(value).__name__}")
    rules = []
    for name, slot_settings in value.items():
        where = f"DOWNLOAD_SLOTS[{name!r}]"
        if not isinstance(slot_settings, dict):
            raise UsageError(f"{where}: a slot's settings are a dict, got "
                             f"{type(slot_settings).__name__}")
        unknown = sorted(set(slot_settings) - set(_SLOT_KEYS))
        if unknown:
            raise UsageError(f"{where}: unknown key {unknown[0]!r} (known: "
                             f"{', '.join(_SLOT_KEYS)})")
        for key, kind, least in (("concurrency", int, 1), ("delay", float, 0),
                                 ("jitter", float, 0)):
            if key in slot_settings:  # checked under the user's own names
                _number(slot_settings, key, None, kind, least, where)
        entry = {_SLOT_KEYS[key]: v for key, v in slot_settings.items()}
        entry["domain_regexp"] = r"\A" + re.escape(str(name)) + r"\Z"
        rules.append(_parse_rule(entry, default, where))
    return tuple(rules)


def _number(entry, key, default, kind, least, where):
    value = entry.get(key, default)
    try:
        if isinstance(value, bool):
            raise ValueError
        number = kind(value)
    except (TypeError, ValueError):
        raise UsageError(f"{where}: {key}={value!r}: expected {kind.__name__}") from None
    if number < least:
        raise UsageError(f"{where}: {key}={value!r}: must be at least {least}")
    return number


def default_rule(settings, spider=None):
    """
    The rule of every slot no C{LIMIT_RULES} entry matches.

    A spider's C{download_delay} attribute, as in Scrapy, wins over C{DOWNLOAD_DELAY}.
    @raise UsageError: a parallelism below 1 or a negative delay.
    """
    delay = getattr(spider, "download_delay", None)
    values = {
        "parallelism": settings.getint("CONCURRENT_REQUESTS_PER_DOMAIN"),
        "delay": settings.getfloat("DOWNLOAD_DELAY") if delay is None else delay,
    }
    _number(values, "parallelism", 1, int, 1, "CONCURRENT_REQUESTS_PER_DOMAIN")
    _number(values, "delay", 0.0, float, 0, "DOWNLOAD_DELAY")
    return LimitRule(parallelism=int(values["parallelism"]), delay=float(values["delay"]),
                     randomize_delay=settings.getbool("RANDOMIZE_DOWNLOAD_DELAY"),
                     jitter=_default_jitter(settings))


def _default_jitter(settings):
    """C{DOWNLOAD_DELAY_JITTER}, unless the older C{RANDOMIZE_DOWNLOAD_DELAY} was set at a
    higher priority (a project of an older Scrapy's): then None, and it decides."""
    randomize = settings.getpriority("RANDOMIZE_DOWNLOAD_DELAY") or 0
    if randomize > (settings.getpriority("DOWNLOAD_DELAY_JITTER") or 0):
        return None
    values = {"jitter": settings.get("DOWNLOAD_DELAY_JITTER")}
    return _number(values, "jitter", 0.5, float, 0, "DOWNLOAD_DELAY_JITTER")


def match_rule(rules, name, default):
    """The first of C{rules} that covers the slot called C{name}, else C{default}."""
    return next((rule for rule in rules if rule.matches(name)), default)
