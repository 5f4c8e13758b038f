"""
Scrapy's C{scrapy.utils} paths that scripts and spiders import: C{project}
(C{get_project_settings}), C{log} (C{configure_logging}), C{defer} (Deferreds and
asyncio futures), C{reactor} (C{install_reactor}), C{sitemap}. Each module only
re-exports.

C{scrapy.utils.response} (C{open_in_browser}, C{get_base_url}) is
L{tinyscrapy.observe.browser} under a second name (an entry in C{sys.modules}, as
C{tinyscrapy.spiders.crawl} is): a module named C{response.py} here would share its name
with L{tinyscrapy.http.response}. C{scrapy.utils.request} (C{fingerprint},
C{RequestFingerprinter}, C{request_to_curl}) is L{tinyscrapy.utils.requestutils} the same
way, and C{scrapy.utils.spider} (C{DefaultSpider}) L{tinyscrapy.utils.spiderutils}. For a
project's own component tests: C{test} (C{get_crawler}), C{misc} (C{build_from_crawler}),
C{python} (C{to_bytes}, C{to_unicode}), C{httpobj} (C{urlparse_cached}).
"""

import sys

from tinyscrapy.observe import browser
from tinyscrapy.utils import requestutils, spiderutils

sys.modules[__name__ + ".response"] = browser
sys.modules[__name__ + ".request"] = requestutils
sys.modules[__name__ + ".spider"] = spiderutils
