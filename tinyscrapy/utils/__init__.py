"""
Scrapy's C{scrapy.utils} paths that scripts and spiders import: C{project}
(C{get_project_settings}), C{log} (C{configure_logging}), C{defer} (Deferreds and
asyncio futures), C{reactor} (C{install_reactor}), C{sitemap}. Each module only
re-exports.
"""
