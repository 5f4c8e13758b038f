"""
L{capture_logs}: the log records of one test, for assertions on what a crawl said.
"""

import logging


class _Collect(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.records = []

    def emit(self, record):
        self.records.append(record)


class CapturedLogs:
    """
    The records logged under a logger name while a test runs.

    @ivar records: every L{logging.LogRecord}, in order.
    """

    def __init__(self, handler):
        self._handler = handler

    @property
    def records(self):
        return self._handler.records

    def messages(self, level=logging.DEBUG):
        """The formatted messages at C{level} or above."""
        return [r.getMessage() for r in self.records if r.levelno >= level]

    def text(self, level=logging.DEBUG):
        return "\n".join(self.messages(level))


def capture_logs(testcase, name="tinyscrapy", level=logging.DEBUG):
    """
    Collect the records of logger C{name} until C{testcase} ends.

    @return: a L{CapturedLogs}.
    """
    logger = logging.getLogger(name)
    handler = _Collect()
    previous = logger.level
    logger.addHandler(handler)
    logger.setLevel(level)
    testcase.addCleanup(logger.setLevel, previous)
    testcase.addCleanup(logger.removeHandler, handler)
    return CapturedLogs(handler)
