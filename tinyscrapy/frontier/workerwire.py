"""
The wire between the parent of C{--workers N} and its worker processes: the AMP commands
(L{twisted.protocols.amp}) they exchange over the workers' pipes, and how what they carry
becomes bytes.

    parent -> worker    L{Start} (what to crawl, once), L{Leases} (requests to fetch),
                        L{Close} (end the crawl with a reason)
    worker -> parent    L{Report} (what happened: new requests, sends, acknowledgements,
                        items, stats), L{Finished} (the last report, with the finish reason)

Every value is one JSON document (the standard library's C{json}, written in C both ways):
many records of one reactor turn travel in one command, so that a page costs the parent
a few dictionary lookups and not a round trip. Requests are the frontier codec's fields
(L{tinyscrapy.frontier.codec.request_to_fields}: data only, callbacks by name) and items
its plain data (L{tinyscrapy.frontier.plaindata}); both are read back with
L{tinyscrapy.frontier.plaindata.untag}, which calls nothing but registered item classes.

AMP carries at most 65,535 bytes a value, and a batch (or one large item) can be bigger:
L{Chunked} splits a value over as many keys of the box as it needs (C{batch},
C{batch.1}, C{batch.2}, ...) and joins them on the other side.

The settings a worker is started with (L{portable_settings}) may also name classes and
functions, by their dotted path (C{{"$ref": "module.Name"}}), which the worker imports:
the worker is the parent's own child, told over its private pipe what the parent itself
runs, so this is no wider than the command line the parent was given. Nothing read from
disk or Redis ever goes through L{settings_from_portable}.
"""

import json

from twisted.protocols import amp

from tinyscrapy.exceptions import UsageError
from tinyscrapy.frontier.plaindata import NotPlain, plain, untag

AMP_IN, AMP_OUT = 3, 4  # a worker's descriptors of its AMP pipes: from and to the parent
# the signals of a worker's crawl that the parent's extensions may hear (sent there when
# one of them listens)
RELAYED = ("response_received", "spider_error", "download_error", "item_dropped",
           "item_error")

_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
_decode = json.JSONDecoder(object_hook=untag).decode
_OWN_TAGS = ("$ref", "$pairs")  # the settings' own, left for _restored to read


def _config_hook(obj):
    if len(obj) == 1 and next(iter(obj)) in _OWN_TAGS:
        return obj
    return untag(obj)


_decode_config = json.JSONDecoder(object_hook=_config_hook).decode


def dumps(value):
    """@return: C{value} (JSON data, as L{plain} makes it) as UTF-8 bytes."""
    return _encode(value).encode("utf-8", "surrogatepass")


def loads(data):
    """
    @return: the JSON document in C{data}, tagged values made again (L{untag}).
    @raise ValueError: not JSON (a L{tinyscrapy.frontier.plaindata.StoredRequestError}
        for a bad tag).
    """
    return _decode(data.decode("utf-8", "surrogatepass"))


def loads_config(data):
    """L{loads} for L{Start}'s configuration, whose settings keep their C{$ref} and
    C{$pairs} for L{settings_from_portable}."""
    return _decode_config(data.decode("utf-8", "surrogatepass"))


class Chunked(amp.Argument):
    """
    A C{bytes} value of any length, split over the keys C{NAME}, C{NAME.1}, C{NAME.2}, ...
    of one box, each at most L{amp.MAX_VALUE_LENGTH} bytes.
    """

    def toBox(self, name, strings, objects, proto):
        data = objects[name.decode("ascii")]
        size = amp.MAX_VALUE_LENGTH
        strings[name] = data[:size]
        for part, start in enumerate(range(size, len(data), size), 1):
            strings[b"%s.%d" % (name, part)] = data[start:start + size]

    def fromBox(self, name, strings, objects, proto):
        parts = [strings[name]]
        part = 1
        while True:
            more = strings.get(b"%s.%d" % (name, part))
            if more is None:
                break
            parts.append(more)
            part += 1
        objects[name.decode("ascii")] = b"".join(parts)


class StartFailed(Exception):
    """The worker could not start its crawl; the message says why."""


class Start(amp.Command):
    """Parent to worker, once: what to crawl (L{dumps} of the worker's configuration).
    Answered once the worker's engine is open; it fails with L{StartFailed}."""

    arguments = [(b"config", Chunked())]
    response = [(b"pid", amp.Integer())]
    errors = {StartFailed: b"START_FAILED"}


class Leases(amp.Command):
    """Parent to worker: C{{"leases": [[lease id, request fields], ...], "seen":
    [fingerprint, ...]}}, the requests to fetch and the fingerprints that other workers
    added to the frontier since the last one (so this worker makes no request for them).
    A lease C{[lease id, request fields, 1]} is of a slot the parent spaces: the worker
    reports its send and its latency.
    Not answered (one box a turn, not two): what it leases is acknowledged in a L{Report}."""

    arguments = [(b"batch", Chunked())]
    response = []
    requiresAnswer = False


class Close(amp.Command):
    """Parent to worker: close the crawl with C{reason} (the finished in-flight requests
    are reported, the ones never started given back)."""

    arguments = [(b"reason", amp.Unicode())]
    response = []


class Report(amp.Command):
    """Worker to parent: one reactor turn's records (see L{tinyscrapy.frontier.worker}).
    Not answered: the pipe keeps the order, so the parent has handled every report before
    the worker's L{Finished}, which is."""

    arguments = [(b"batch", Chunked())]
    response = []
    requiresAnswer = False


class Finished(amp.Command):
    """Worker to parent: the crawl closed with C{reason}; C{batch} is the last report
    (the final stats, the ledger, the trace)."""

    arguments = [(b"reason", amp.Unicode()), (b"batch", Chunked())]
    response = []


# settings across the pipe


def portable_settings(settings):
    """
    The settings set above the defaults, for a worker process.

    @return: C{[[name, value, priority], ...]}, JSON data.
    @raise UsageError: a value that is neither data nor a class or function importable
        by its dotted path.
    """
    rows = []
    for name in settings:
        priority = settings.getpriority(name) or 0
        if priority <= 0:
            continue
        try:
            rows.append([name, _portable(settings._values[name]), priority])
        except NotPlain as e:
            raise UsageError(f"--workers: setting {name} holds {e}, which cannot be given to "
                             "a worker process (give it as data, or a class or function by "
                             "its dotted path)") from None
    return rows


def settings_from_portable(rows, settings):
    """Set each row of L{portable_settings} in C{settings} (a L{tinyscrapy.settings.Settings})
    at its own priority. @return: C{settings}."""
    for name, value, priority in rows:
        settings.set(name, _restored(value), priority)
    return settings


def _portable(value, depth=0):
    """C{value} as JSON data: L{plain}'s, with classes and functions as C{{"$ref": path}}."""
    kind = type(value)
    if depth > 50:
        raise NotPlain("data nested more than 50 levels deep")
    if kind is dict:
        if all(type(key) is str and not key.startswith("$") for key in value):
            return {key: _portable(each, depth + 1) for key, each in value.items()}
        return {"$pairs": [[_portable(key, depth + 1), _portable(each, depth + 1)]
                           for key, each in value.items()]}
    if kind is list or kind is tuple:
        items = [_portable(each, depth + 1) for each in value]
        return items if kind is list else {"$t": items}
    if isinstance(value, type) or callable(value):
        path = importable_path(value)
        if path is None:
            raise NotPlain(f"{value!r} (not importable by its dotted path)")
        return {"$ref": path}
    return plain(value)


def importable_path(obj):
    """C{module.qualname} of C{obj} when importing it gives C{obj} back, else None."""
    from tinyscrapy.utils.misc import load_object
    module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if not module or not qualname or "<" in qualname or module == "__main__":
        return None
    path = f"{module}.{qualname}"
    try:
        return path if load_object(path) is obj else None
    except Exception:
        return None


def _restored(value):
    """A value of L{_portable}, as the worker reads it (the tags already undone by
    L{loads}, but for C{$ref} and C{$pairs}, which L{untag} does not know)."""
    if type(value) is dict:
        if len(value) == 1 and "$ref" in value:
            from tinyscrapy.utils.misc import load_object
            return load_object(value["$ref"])
        if len(value) == 1 and "$pairs" in value:
            return {_restored(key): _restored(each) for key, each in value["$pairs"]}
        return {key: _restored(each) for key, each in value.items()}
    if type(value) is list:
        return [_restored(each) for each in value]
    if type(value) is tuple:
        return tuple(_restored(each) for each in value)
    return value
