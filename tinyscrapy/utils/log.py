"""C{scrapy.utils.log}: L{configure_logging} (L{tinyscrapy.observe.logconfig}).

This module only re-exports."""

from tinyscrapy.observe.logconfig import configure_logging

__all__ = ["configure_logging"]
