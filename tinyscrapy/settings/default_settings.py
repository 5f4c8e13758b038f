"""
Every setting's default, with Scrapy's names where Scrapy has one, grouped by the part that
reads it; L{tinyscrapy.settings} layers the project's, the spider's and the command line's
values over these. C{python -m tinyscrapy settings} prints them as a table, and
C{docs/settings.md} says what each one does (a test keeps both complete).
"""


DEFAULTS = {
    # the engine and its parts (each a class named by its dotted path, as in Scrapy)
    "CONCURRENT_REQUESTS": 16,
    "DOWNLOADER": "tinyscrapy.core.downloader.Downloader",
    "ITEM_PROCESSOR": "tinyscrapy.pipelines.ItemPipelineManager",
    "ENGINE_HEARTBEAT": 5.0,
    "START_REQUESTS_BATCH": 100,
    # the downloader
    "CONCURRENT_REQUESTS_PER_DOMAIN": 8,
    "DOWNLOAD_DELAY": 0.0,
    "RANDOMIZE_DOWNLOAD_DELAY": True,
    "LIMIT_RULES": [],
    "AUTOTHROTTLE_ENABLED": False,
    "AUTOTHROTTLE_START_DELAY": 5.0,
    "AUTOTHROTTLE_MAX_DELAY": 60.0,
    "AUTOTHROTTLE_TARGET_CONCURRENCY": 1.0,
    "AUTOTHROTTLE_DEBUG": False,
    "DOWNLOAD_TIMEOUT": 180.0,
    "DOWNLOAD_CONNECT_TIMEOUT": 30.0,
    "DOWNLOAD_IDLE_TIMEOUT": 60.0,
    "DNSCACHE_ENABLED": True,
    "DNSCACHE_SIZE": 10000,
    "DNS_TIMEOUT": 60.0,
    "DOWNLOAD_MAXSIZE": 1024 * 1024 * 1024,
    "DOWNLOAD_WARNSIZE": 32 * 1024 * 1024,
    "DOWNLOAD_MAXRATIO": 100.0,
    "DOWNLOAD_MAXRATIO_GRACE": 1024 * 1024,
    "COMPRESSION_ENABLED": True,
    "DOWNLOAD_VERIFY_CERTIFICATES": True,
    "DOWNLOAD_CA_BUNDLE": None,
    "USER_AGENT": None,
    "DEFAULT_REQUEST_HEADERS": {
        "Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
        "Accept-Language": "en",
    },
    "DOWNLOADER_MIDDLEWARES": {},
    "DOWNLOAD_HANDLERS": {},
    "DOWNLOAD_HANDLERS_BASE": {
        "data": "tinyscrapy.core.downloader.handlers.datauri.DataURIDownloadHandler",
        "file": None,  # tinyscrapy: off unless a project enables FileDownloadHandler
        "http": "tinyscrapy.core.downloader.handlers.http11.HTTP11DownloadHandler",
        "https": "tinyscrapy.core.downloader.handlers.http11.HTTP11DownloadHandler",
    },
    "DOWNLOADER_MIDDLEWARES_BASE": {
        "tinyscrapy.downloadermiddlewares.offsite.OffsiteMiddleware": 50,
        "tinyscrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": 100,
        "tinyscrapy.downloadermiddlewares.httpauth.HttpAuthMiddleware": 300,
        "tinyscrapy.downloadermiddlewares.downloadtimeout.DownloadTimeoutMiddleware": 350,
        "tinyscrapy.downloadermiddlewares.defaultheaders.DefaultHeadersMiddleware": 400,
        "tinyscrapy.downloadermiddlewares.useragent.UserAgentMiddleware": 500,
        "tinyscrapy.downloadermiddlewares.retry.RetryMiddleware": 550,
        "tinyscrapy.downloadermiddlewares.redirect.MetaRefreshMiddleware": 580,
        "tinyscrapy.downloadermiddlewares.httpcompression.HttpCompressionMiddleware": 590,
        "tinyscrapy.downloadermiddlewares.redirect.RedirectMiddleware": 600,
        "tinyscrapy.downloadermiddlewares.cookies.CookiesMiddleware": 700,
        "tinyscrapy.downloadermiddlewares.httpproxy.HttpProxyMiddleware": 750,
        "tinyscrapy.downloadermiddlewares.httpcache.HttpCacheMiddleware": 900,
    },
    # redirects, retries, cookies, referer, proxies, the HTTP cache (docs/middlewares.md)
    "HTTPAUTH_USER": "",
    "HTTPAUTH_PASS": "",
    "HTTPAUTH_DOMAIN": None,
    "REDIRECT_ENABLED": True,
    "REDIRECT_MAX_TIMES": 20,
    "REDIRECT_PRIORITY_ADJUST": 2,
    "METAREFRESH_ENABLED": True,
    "METAREFRESH_MAXDELAY": 100,
    "METAREFRESH_IGNORE_TAGS": ["noscript"],
    # statuses outside 200-299 that still reach callbacks (Scrapy's HttpErrorMiddleware)
    "HTTPERROR_ALLOWED_CODES": [],
    "HTTPERROR_ALLOW_ALL": False,
    "REQUEST_FINGERPRINTER_CLASS": "tinyscrapy.utils.request.RequestFingerprinter",
    "RETRY_ENABLED": True,
    "RETRY_TIMES": 2,
    "RETRY_HTTP_CODES": [500, 502, 503, 504, 522, 524, 408, 429],
    "RETRY_PRIORITY_ADJUST": -1,
    "RETRY_BACKOFF_BASE": 1.0,
    "RETRY_BACKOFF_MAX": 60.0,
    "RETRY_AFTER_MAX": 120.0,
    # Scrapy 2.19 says ERROR; here the failure itself is logged once, at ERROR, where it
    # ends (docs/differences.md)
    "RETRY_GIVE_UP_LOG_LEVEL": "DEBUG",
    # Scrapy 2.19's list, at tinyscrapy's paths, then twisted's originals (code that raises
    # them past the downloader) and tinyscrapy's own
    "RETRY_EXCEPTIONS": [
        "tinyscrapy.exceptions.CannotResolveHostError",
        "tinyscrapy.exceptions.DownloadConnectionRefusedError",
        "tinyscrapy.exceptions.DownloadFailedError",
        "tinyscrapy.exceptions.DownloadTimeoutError",
        "tinyscrapy.exceptions.ResponseDataLossError",
        "twisted.internet.defer.TimeoutError",
        "builtins.TimeoutError",
        "tinyscrapy.exceptions.DownloadTimeout",
        "twisted.internet.error.DNSLookupError",
        "twisted.internet.error.ConnectError",
        "twisted.internet.error.ConnectionLost",
        "twisted.internet.error.ConnectionDone",
        "twisted.web.client.ResponseFailed",
        "twisted.web.client.ResponseNeverReceived",
        "tinyscrapy.exceptions.TunnelError",
        "builtins.OSError",
    ],
    "COOKIES_ENABLED": True,
    "COOKIES_DEBUG": False,
    "COOKIES_MAX_SIZE": 4096,
    "COOKIES_MAX_PER_DOMAIN": 50,
    "COOKIES_MAX_PER_JAR": 3000,
    "REFERER_ENABLED": True,
    "REFERRER_POLICY": "scrapy-default",
    "REFERRER_POLICIES": {},
    "HTTPPROXY_ENABLED": True,
    "HTTPPROXY_AUTH_ENCODING": "latin-1",
    "HTTPCACHE_ENABLED": False,
    "HTTPCACHE_DIR": "httpcache",
    "HTTPCACHE_EXPIRATION_SECS": 0,
    "HTTPCACHE_IGNORE_HTTP_CODES": [],
    "HTTPCACHE_IGNORE_SCHEMES": ["file"],
    "HTTPCACHE_IGNORE_MISSING": False,
    "HTTPCACHE_POLICY": "tinyscrapy.extensions.httpcache.DummyPolicy",
    "HTTPCACHE_STORAGE": "tinyscrapy.extensions.httpcache.FilesystemCacheStorage",
    "HTTPCACHE_DBM_MODULE": "dbm",
    "HTTPCACHE_GZIP": False,
    "HTTPCACHE_ALWAYS_STORE": False,
    "HTTPCACHE_IGNORE_RESPONSE_CACHE_CONTROLS": [],
    # the scraper
    "SPIDER_MIDDLEWARES": {},
    "SPIDER_MIDDLEWARES_BASE": {
        "tinyscrapy.spidermiddlewares.httperror.HttpErrorMiddleware": 50,
        "tinyscrapy.spidermiddlewares.referer.RefererMiddleware": 700,
        "tinyscrapy.spidermiddlewares.urllength.UrlLengthMiddleware": 800,
        "tinyscrapy.spidermiddlewares.depth.DepthMiddleware": 900,
    },
    "ITEM_PIPELINES": {},
    "ITEM_PIPELINES_BASE": {},
    "EXTENSIONS": {},
    "EXTENSIONS_BASE": {
        "tinyscrapy.extensions.corestats.CoreStats": 0,
        "tinyscrapy.extensions.feedexport.FeedExporter": 0,
        "tinyscrapy.extensions.closespider.CloseConditions": 0,
        "tinyscrapy.extensions.logstats.Progress": 0,
        "tinyscrapy.trace.Trace": 0,
        "tinyscrapy.extensions.logcount.LogCount": 0,
        "tinyscrapy.extensions.throttle.AutoThrottle": 0,
    },
    # scope
    "DEPTH_LIMIT": 0,
    "URLLENGTH_LIMIT": 2083,
    "DEPTH_PRIORITY": 0,
    "ROBOTSTXT_OBEY": False,
    "ROBOTSTXT_PARSER": "tinyscrapy.robotstxt.ProtegoRobotParser",
    "ROBOTSTXT_USER_AGENT": None,
    "ROBOTSTXT_TIMEOUT": 20.0,
    "ROBOTSTXT_MAX_CRAWL_DELAY": 10.0,
    # the frontier
    "SCHEDULER": "tinyscrapy.core.scheduler.Scheduler",
    "SCHEDULER_PRIORITY_QUEUE": "tinyscrapy.pqueues.SlotAwarePriorityQueue",
    "DUPEFILTER_CLASS": "tinyscrapy.dupefilters.RFPDupeFilter",
    "JOBDIR": None,
    "SCHEDULER_URL": None,
    "SCHEDULER_REDIS_KEY": None,
    "SCHEDULER_PERSIST": False,
    "SCHEDULER_REDIS_WORKER_TIMEOUT": 30.0,
    "SCHEDULER_REDIS_POLL_INTERVAL": 0.2,
    "SCHEDULER_REDIS_TIMEOUT": 10.0,
    "SCHEDULER_REDIS_RETRIES": 6,  # an outage longer than TIMEOUT x (1 + RETRIES) stops
    "SCHEDULER_REDIS_END_MARKER_TTL": 60.0,
    "SCHEDULER_REDIS_TLS_CA": None,
    "STATS_CLASS": "tinyscrapy.statscollectors.StatsCollector",
    # output
    "FEEDS": {},
    "FEED_EXPORT_FIELDS": None,
    "FEED_EXPORT_ENCODING": None,
    "FEED_EXPORT_INDENT": 0,
    "STATS_FILE": None,
    "TRACE_FILE": None,
    "TRACE_MAX_EVENTS": 100000,
    "PROGRESS": "auto",
    "LOGSTATS_INTERVAL": 60.0,
    "LOG_LEVEL": "INFO",
    "LOG_FORMAT": "%(asctime)s [%(name)s] %(levelname)s: %(message)s",
    "LOG_DATEFORMAT": None,
    "LOG_ENABLED": True,
    "LOG_FILE": None,
    "LOG_FILE_APPEND": True,
    "LOG_ENCODING": "utf-8",
    # the reactor (tinyscrapy.utils.reactor)
    "TWISTED_REACTOR": None,
    "ASYNCIO_EVENT_LOOP": None,
    # closing
    "CLOSESPIDER_PAGECOUNT": 0,
    "CLOSESPIDER_ITEMCOUNT": 0,
    "CLOSESPIDER_TIMEOUT": 0.0,
    "CLOSESPIDER_ERRORCOUNT": 0,
    # a project (tinyscrapy.cfg; docs/projects.md)
    "BOT_NAME": "tinyscrapy",
    "SPIDER_MODULES": [],
    "NEWSPIDER_MODULE": "",
}

# A setting that names a class: a dotted path, or the class itself.
PATH = "path"
# A setting that names classes: a list (or comma-separated text) of dotted paths or classes.
PATHS = "paths"

# The kind of value a setting holds when its default does not tell (None, or a path).
KINDS = {
    "USER_AGENT": str,
    "HTTPAUTH_USER": str,
    "HTTPAUTH_PASS": str,
    "DOWNLOAD_CA_BUNDLE": str,
    "SCHEDULER": PATH,
    "SCHEDULER_PRIORITY_QUEUE": PATH,
    "DUPEFILTER_CLASS": PATH,
    "ROBOTSTXT_PARSER": PATH,
    "DOWNLOADER": PATH,
    "ITEM_PROCESSOR": PATH,
    "REQUEST_FINGERPRINTER_CLASS": PATH,
    "RETRY_EXCEPTIONS": PATHS,
    "JOBDIR": str,
    "HTTPCACHE_EXPIRATION_SECS": float,
    "HTTPCACHE_POLICY": PATH,
    "HTTPCACHE_STORAGE": PATH,
    "SCHEDULER_URL": str,
    "SCHEDULER_REDIS_KEY": str,
    "SCHEDULER_REDIS_TLS_CA": str,
    "TRACE_FILE": str,
    "PROGRESS": None,  # "auto" or a boolean: checked by tinyscrapy.extensions.logstats
    "REFERRER_POLICY": None,  # a name, a class or its path: checked by the referer middleware
    "STATS_CLASS": PATH,
    "FEED_EXPORT_FIELDS": None,  # a list, or a dict of field to column name
    "FEED_EXPORT_ENCODING": str,
    "STATS_FILE": str,
    "LOG_LEVEL": None,  # a level name or number (logging.INFO): observe/logconfig.py checks it
    "LOG_FORMAT": str,
    "LOG_DATEFORMAT": str,
    "LOG_FILE": str,
    "TWISTED_REACTOR": str,
    "ASYNCIO_EVENT_LOOP": str,
}

# Scrapy's module holds each default as a module-level name
# (C{from scrapy.settings.default_settings import RETRY_EXCEPTIONS}): so does this one.
globals().update(DEFAULTS)
