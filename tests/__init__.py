"""
The test suite. Python logging goes to trial's own log (C{_trial_temp/test.log}), not to
the terminal: the errors a test provokes on purpose (a refused connection, a callback
that raises) are kept there with everything else, and the run's output stays readable.
Tests that assert on what was logged use L{tests.logs.capture_logs}.
"""

import logging


class _TrialLogHandler(logging.Handler):
    """Write each record, formatted, to the Twisted log (trial's C{test.log})."""

    def emit(self, record):
        from twisted.python import log
        try:
            log.msg(self.format(record), system=record.name)
        except Exception:
            self.handleError(record)


def _route_logging_to_trial():
    root = logging.getLogger()
    if not any(isinstance(h, _TrialLogHandler) for h in root.handlers):
        handler = _TrialLogHandler()
        handler.setFormatter(logging.Formatter("%(levelname)s: %(message)s"))
        root.addHandler(handler)


_route_logging_to_trial()
