"""
Colly's limit rules: which slots a rule covers, and how politely they are crawled.

C{LIMIT_RULES} is a list of rules, each with exactly one pattern (C{domain_glob}, a shell
pattern the whole slot name must match, or C{domain_regexp}, searched for in it) and some
of C{parallelism}, C{delay}, C{random_delay} and C{randomize_delay}; a key a rule leaves
out takes its value from the default rule, made of C{CONCURRENT_REQUESTS_PER_DOMAIN},
C{DOWNLOAD_DELAY} (or the spider's C{download_delay}) and C{RANDOMIZE_DOWNLOAD_DELAY}.

L{parse_limit_rules} checks and compiles the rules once, at start (a bad rule stops the
start with one line); L{match_rule} picks a slot's rule, first match wins, once per slot
(L{tinyscrapy.download.slots.Slots} keeps the answer in the slot).
"""

import fnmatch
import re
from dataclasses import dataclass, field

from tinyscrapy.errors import UsageError

RULE_KEYS = ("domain_glob", "domain_regexp", "parallelism", "delay", "random_delay",
             "randomize_delay")


@dataclass(frozen=True)
class LimitRule:
    """
    Colly's C{LimitRule}: which slots it covers, and how politely they are crawled.

    @ivar domain_glob: a shell pattern (C{*.example.com}) the whole slot name must match.
    @ivar domain_regexp: a regular expression searched for in the slot name.
    @ivar parallelism: the most requests of one slot downloading at once.
    @ivar delay: the least time, in seconds, between two sends of one slot.
    @ivar random_delay: up to this many seconds more, drawn afresh for every send.
    @ivar randomize_delay: stretch C{delay} by a factor drawn from [1.0, 1.5].
    @ivar pattern: the compiled glob or regexp; None for the default rule.
    """

    domain_glob: str = None
    domain_regexp: str = None
    parallelism: int = 8
    delay: float = 0.0
    random_delay: float = 0.0
    randomize_delay: bool = False
    pattern: re.Pattern = field(default=None, repr=False, compare=False)

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
    return tuple(_parse_rule(entry, index, default) for index, entry in enumerate(value))


def _parse_rule(entry, index, default):
    where = f"LIMIT_RULES[{index}]"
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
        pattern=pattern,
    )
    return rule


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
                     randomize_delay=settings.getbool("RANDOMIZE_DOWNLOAD_DELAY"))


def match_rule(rules, name, default):
    """The first of C{rules} that covers the slot called C{name}, else C{default}."""
    return next((rule for rule in rules if rule.matches(name)), default)
