"""C{scrapy.utils.log}: L{configure_logging} and L{LogCounterHandler}
(L{tinyscrapy.observe.logconfig}).

This module only re-exports."""

from tinyscrapy.observe.logconfig import LogCounterHandler, configure_logging

__all__ = ["LogCounterHandler", "configure_logging"]
