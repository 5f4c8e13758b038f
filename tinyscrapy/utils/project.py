"""
Scrapy's C{scrapy.utils.project}, at the same path: L{get_project_settings}, defined in
L{tinyscrapy.project.config}.

This module only re-exports.
"""

from tinyscrapy.project.config import get_project_settings

__all__ = ["get_project_settings"]
