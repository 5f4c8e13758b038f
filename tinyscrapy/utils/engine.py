"""
Scrapy's C{scrapy.utils.engine}: a report of the engine's state, for a debugger or a log
(L{get_engine_status}, L{format_engine_status}, L{print_engine_status}). The lines are
tinyscrapy's engine's own (its requests in flight, its frontier, its spider), where
Scrapy's name its engine's internals.
"""


def _checks(engine):
    scheduler = engine.scheduler
    return [
        ("engine.spider.name", lambda: engine.spider.name),
        ("len(engine.in_flight)", lambda: len(engine.in_flight)),
        ("engine.max", lambda: engine.max),
        ("engine.scheduler.size()", lambda: scheduler.size()),
        ("engine.closing_reason", lambda: engine.closing_reason),
    ]


def get_engine_status(engine):
    """C{[(what, value)]} of the engine's state; a value that cannot be read is the name
    of the exception it raised."""
    status = []
    for name, read in _checks(engine):
        try:
            status.append((name, read()))
        except Exception as e:
            status.append((name, f"{type(e).__name__} (exception)"))
    return status


def format_engine_status(engine):
    """L{get_engine_status} as text, a line each."""
    lines = ["Execution engine status", ""]
    lines += [f"{name:<47} : {value}" for name, value in get_engine_status(engine)]
    return "\n".join(lines) + "\n\n"


def print_engine_status(engine):
    """Print L{format_engine_status}."""
    print(format_engine_status(engine))
