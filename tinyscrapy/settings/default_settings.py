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
    # --workers N: one crawl in N processes sharing the parent's frontier (docs/workers.md)
    "WORKERS": 1,
    "CLOSE_GRACE_PERIOD": 4.0,
    # the downloader
    "CONCURRENT_REQUESTS_PER_DOMAIN": 8,
    "DOWNLOAD_DELAY": 0.0,
    "RANDOMIZE_DOWNLOAD_DELAY": True,
    "DOWNLOAD_DELAY_JITTER": 0.5,
    "DOWNLOAD_SLOTS": {},
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
    "DOWNLOAD_FAIL_ON_DATALOSS": True,
    "DOWNLOAD_TLS_MIN_VERSION": None,
    "DOWNLOAD_TLS_MAX_VERSION": None,
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
    "DOWNLOADER_STATS": True,  # the DownloaderStats middleware, when a project enables it
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
    "META_COPY_WARN_SKIP_KEYS": [],
    "ITEM_PIPELINES": {},
    "ITEM_PIPELINES_BASE": {},
    "EXTENSIONS": {},
    # Scrapy's, in Scrapy's order (its remote control is absent: docs/differences.md),
    # then tinyscrapy's own
    "EXTENSIONS_BASE": {
        "tinyscrapy.extensions.corestats.CoreStats": 0,
        "tinyscrapy.extensions.logcount.LogCount": 0,
        "tinyscrapy.extensions.telnet.TelnetConsole": 0,
        "tinyscrapy.extensions.memusage.MemoryUsage": 0,
        "tinyscrapy.extensions.memdebug.MemoryDebugger": 0,
        "tinyscrapy.extensions.closespider.CloseSpider": 0,
        "tinyscrapy.extensions.feedexport.FeedExporter": 0,
        "tinyscrapy.extensions.logstats.LogStats": 0,
        "tinyscrapy.extensions.spiderstate.SpiderState": 0,
        "tinyscrapy.extensions.throttle.AutoThrottle": 0,
        # tinyscrapy's own: the live progress line, --trace
        "tinyscrapy.extensions.logstats.Progress": 0,
        "tinyscrapy.trace.Trace": 0,
    },
    # scope
    "DEPTH_LIMIT": 0,
    "URLLENGTH_LIMIT": 2083,
    "DEPTH_PRIORITY": 0,
    "DEPTH_STATS_VERBOSE": False,
    "ROBOTSTXT_OBEY": False,
    "ROBOTSTXT_PARSER": "tinyscrapy.robotstxt.ProtegoRobotParser",
    "ROBOTSTXT_USER_AGENT": None,
    "ROBOTSTXT_TIMEOUT": 20.0,
    "ROBOTSTXT_MAX_CRAWL_DELAY": 10.0,
    # the frontier
    "SCHEDULER": "tinyscrapy.core.scheduler.Scheduler",
    "SCHEDULER_PRIORITY_QUEUE": "tinyscrapy.pqueues.SlotAwarePriorityQueue",
    "SCHEDULER_MEMORY_QUEUE": "tinyscrapy.squeues.FifoMemoryQueue",
    "DUPEFILTER_CLASS": "tinyscrapy.dupefilters.RFPDupeFilter",
    "DUPEFILTER_DEBUG": False,
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
    "STATS_DUMP": True,
    # output
    "FEEDS": {},
    "FEED_EXPORT_FIELDS": None,
    "FEED_EXPORT_ENCODING": None,
    "FEED_EXPORT_INDENT": 0,
    "FEED_EXPORT_BATCH_ITEM_COUNT": 0,
    "FEED_STORE_EMPTY": True,
    "FEED_URI_PARAMS": None,
    "FEED_TEMPDIR": None,
    "FEED_URI": None,  # deprecated by Scrapy for FEEDS, still read
    "FEED_FORMAT": "jsonlines",
    "FEED_EXPORTERS": {},
    "FEED_EXPORTERS_BASE": {
        "json": "tinyscrapy.exporters.JsonItemExporter",
        "jsonlines": "tinyscrapy.exporters.JsonLinesItemExporter",
        "jsonl": "tinyscrapy.exporters.JsonLinesItemExporter",
        "jl": "tinyscrapy.exporters.JsonLinesItemExporter",
        "csv": "tinyscrapy.exporters.CsvItemExporter",
        "xml": "tinyscrapy.exporters.XmlItemExporter",
        "marshal": "tinyscrapy.exporters.MarshalItemExporter",
        "pickle": "tinyscrapy.exporters.PickleItemExporter",
    },
    "FEED_STORAGES": {},
    "FEED_STORAGES_BASE": {
        "": "tinyscrapy.extensions.feedexport.FileFeedStorage",
        "file": "tinyscrapy.extensions.feedexport.FileFeedStorage",
        "stdout": "tinyscrapy.extensions.feedexport.StdoutFeedStorage",
        # Scrapy's remote storages: not in tinyscrapy (naming one stops the start)
        "s3": "tinyscrapy.extensions.feedexport.S3FeedStorage",
        "gs": "tinyscrapy.extensions.feedexport.GCSFeedStorage",
        "ftp": "tinyscrapy.extensions.feedexport.FTPFeedStorage",
        "ftps": "tinyscrapy.extensions.feedexport.FTPFeedStorage",
    },
    # the media pipelines (tinyscrapy.pipelines.files, .images)
    "FILES_STORE": None,
    "IMAGES_STORE": None,
    "STATS_FILE": None,
    "TRACE_FILE": None,
    "TRACE_MAX_EVENTS": 100000,
    "PROGRESS": "auto",
    "LOGSTATS_INTERVAL": 60.0,
    "LOG_LEVEL": "INFO",
    "LOG_FORMATTER": "tinyscrapy.logformatter.LogFormatter",
    "DEFAULT_DROPITEM_LOG_LEVEL": "WARNING",
    "LOG_FORMAT": "%(asctime)s [%(name)s] %(levelname)s: %(message)s",
    "LOG_DATEFORMAT": None,
    "LOG_ENABLED": True,
    "LOG_FILE": None,
    "LOG_FILE_APPEND": True,
    "LOG_ENCODING": "utf-8",
    "LOG_INSTALL_ROOT_HANDLER": True,
    "LOG_VERSIONS": [],  # Scrapy lists lxml, Twisted, ...: log_scrapy_info logs them
    # the reactor (tinyscrapy.utils.reactor)
    "TWISTED_REACTOR": None,
    "ASYNCIO_EVENT_LOOP": None,
    "REACTOR_THREADPOOL_MAXSIZE": 10,
    # closing
    "CLOSESPIDER_PAGECOUNT": 0,
    "CLOSESPIDER_ITEMCOUNT": 0,
    "CLOSESPIDER_TIMEOUT": 0.0,
    "CLOSESPIDER_ERRORCOUNT": 0,
    "CLOSESPIDER_TIMEOUT_NO_ITEM": 0,
    "CLOSESPIDER_PAGECOUNT_NO_ITEM": 0,
    # the other extensions (docs/extending.md)
    "MEMUSAGE_ENABLED": True,
    "MEMUSAGE_LIMIT_MB": 0,
    "MEMUSAGE_WARNING_MB": 0,
    "MEMUSAGE_CHECK_INTERVAL_SECONDS": 60.0,
    "MEMUSAGE_NOTIFY_MAIL": [],
    "MEMDEBUG_ENABLED": False,
    "PERIODIC_LOG_STATS": None,
    "PERIODIC_LOG_DELTA": None,
    "PERIODIC_LOG_TIMING_ENABLED": False,
    "STATSMAILER_RCPTS": [],
    "TELNETCONSOLE_ENABLED": False,
    "TELNETCONSOLE_PORT": [6023, 6073],
    "TELNETCONSOLE_HOST": "127.0.0.1",
    "TELNETCONSOLE_USERNAME": "scrapy",
    "TELNETCONSOLE_PASSWORD": None,
    # mail (tinyscrapy.mail.MailSender: the stats mailer, MEMUSAGE_NOTIFY_MAIL)
    "MAIL_HOST": "localhost",
    "MAIL_PORT": 25,
    "MAIL_FROM": "scrapy@localhost",
    "MAIL_USER": None,
    "MAIL_PASS": None,
    "MAIL_TLS": False,
    "MAIL_SSL": False,
    # add-ons (tinyscrapy.addons): {"dotted.path.Addon": order}
    "ADDONS": {},
    # a project (tinyscrapy.cfg; docs/projects.md)
    "BOT_NAME": "tinyscrapy",
    "SPIDER_MODULES": [],
    "CRAWLSPIDER_FOLLOW_LINKS": True,
    "DEFAULT_ITEM_CLASS": "tinyscrapy.item.Item",  # the shell's item
    "SPIDER_LOADER_CLASS": "tinyscrapy.spiderloader.SpiderLoader",
    "SPIDER_LOADER_WARN_ONLY": False,
    "NEWSPIDER_MODULE": "",
    # the command line (tinyscrapy.cmdline, tinyscrapy.commands; docs/projects.md)
    "COMMANDS_MODULE": "",
    "EDITOR": "vi",
    "TEMPLATES_DIR": None,
    "SPIDER_CONTRACTS": {},
    "SPIDER_CONTRACTS_BASE": {
        "tinyscrapy.contracts.default.UrlContract": 1,
        "tinyscrapy.contracts.default.CallbackKeywordArgumentsContract": 1,
        "tinyscrapy.contracts.default.MetadataContract": 1,
        "tinyscrapy.contracts.default.MethodContract": 1,
        "tinyscrapy.contracts.default.BodyContract": 1,
        "tinyscrapy.contracts.default.HeaderContract": 1,
        "tinyscrapy.contracts.default.CookieContract": 1,
        "tinyscrapy.contracts.default.ReturnsContract": 2,
        "tinyscrapy.contracts.default.ScrapesContract": 3,
    },
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
    "DOWNLOAD_TLS_MIN_VERSION": str,
    "DOWNLOAD_TLS_MAX_VERSION": str,
    "SCHEDULER": PATH,
    "SCHEDULER_PRIORITY_QUEUE": PATH,
    "SCHEDULER_MEMORY_QUEUE": PATH,
    "DUPEFILTER_CLASS": PATH,
    "LOG_FORMATTER": PATH,
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
    "WORKERS": None,  # a whole number or "auto": checked by tinyscrapy.frontier
    "REFERRER_POLICY": None,  # a name, a class or its path: checked by the referer middleware
    "STATS_CLASS": PATH,
    "SPIDER_LOADER_CLASS": PATH,
    "DEFAULT_ITEM_CLASS": PATH,
    "FEED_EXPORT_FIELDS": None,  # a list, or a dict of field to column name
    "FEED_EXPORT_ENCODING": str,
    "FEED_URI_PARAMS": PATH,
    "FEED_TEMPDIR": str,
    "FEED_URI": None,  # a URI, or a pathlib.Path
    "FILES_STORE": None,  # a path (str or os.PathLike)
    "IMAGES_STORE": None,
    "STATS_FILE": str,
    "LOG_LEVEL": None,  # a level name or number (logging.INFO): utils/log.py checks it
    "LOG_FORMAT": str,
    "LOG_DATEFORMAT": str,
    "LOG_FILE": str,
    "TWISTED_REACTOR": str,
    "ASYNCIO_EVENT_LOOP": str,
    "PERIODIC_LOG_STATS": None,  # a dict (include, exclude) or a boolean: PeriodicLog checks
    "PERIODIC_LOG_DELTA": None,  # the same
    "TELNETCONSOLE_PORT": None,  # a port, or a [first, last] range: the console checks it
    "TELNETCONSOLE_PASSWORD": str,
    "MAIL_USER": str,
    "MAIL_PASS": str,
    "TEMPLATES_DIR": str,
}

# Scrapy's module holds each default as a module-level name
# (C{from scrapy.settings.default_settings import RETRY_EXCEPTIONS}): so does this one.
globals().update(DEFAULTS)

# Scrapy's settings that tinyscrapy does not act on: set one and the crawl warns, naming it
# and the reason (docs/differences.md has the row). Never taken for a typo of another.
_NETWORK_STORES = ("needs a network service the project does not test against (S3, GCS, "
                   "FTP): docs/differences.md, 'modules'")
_HTTP2 = "http and https go over HTTP/1.1 only: docs/differences.md, 'modules'"
_TLS_CLIENT = ("the TLS client is Twisted's with the crawl's policy "
               "(DOWNLOAD_VERIFY_CERTIFICATES, DOWNLOAD_CA_BUNDLE, DOWNLOAD_TLS_MIN_VERSION, "
               "DOWNLOAD_TLS_MAX_VERSION): docs/differences.md, "
               "'downloads'")
UNSUPPORTED = {
    **{name: _NETWORK_STORES for name in (
        "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_ENDPOINT_URL",
        "AWS_MAX_POOL_CONNECTIONS", "AWS_REGION_NAME", "AWS_SESSION_TOKEN", "AWS_USE_SSL",
        "AWS_VERIFY", "FTP_PASSIVE_MODE", "FTP_USER", "FTP_PASSWORD", "GCS_PROJECT_ID",
        "FEED_STORAGE_FTP_ACTIVE", "FEED_STORAGE_GCS_ACL", "FEED_STORAGE_S3_ACL",
        "FILES_STORE_GCS_ACL", "FILES_STORE_S3_ACL", "IMAGES_STORE_GCS_ACL",
        "IMAGES_STORE_S3_ACL")},
    "HTTP2_MAX_FRAME_SIZE": _HTTP2,
    "HTTPX_HTTP2_ENABLED": _HTTP2,
    **{name: _TLS_CLIENT for name in (
        "DOWNLOADER_CLIENTCONTEXTFACTORY", "DOWNLOADER_CLIENT_TLS_CIPHERS",
        "DOWNLOADER_CLIENT_TLS_METHOD", "DOWNLOADER_CLIENT_TLS_VERBOSE_LOGGING")},
    "DNS_RESOLVER": "host names go through the crawl's DNS cache on Twisted's resolver "
                    "(DNSCACHE_ENABLED, DNS_TIMEOUT): docs/differences.md, 'downloads'",
    "TWISTED_DNS_RESOLVER": "host names go through the crawl's DNS cache on Twisted's "
                            "resolver (DNSCACHE_ENABLED, DNS_TIMEOUT): docs/differences.md, "
                            "'downloads'",
    "DOWNLOAD_BIND_ADDRESS": "connections leave from the default address: "
                             "docs/differences.md, 'downloads'",
    "REMOTE_CONTROL_ENABLED": "no remote control: docs/differences.md, 'modules'",
    "REMOTE_CONTROL_JOBS_DIR": "no remote control: docs/differences.md, 'modules'",
    "REMOTE_CONTROL_TIMEOUT_DEFAULT": "no remote control: docs/differences.md, 'modules'",
    "REMOTE_CONTROL_TIMEOUT_MAX": "no remote control: docs/differences.md, 'modules'",
    "REMOTE_CONTROL_OUTPUT_MAX_BYTES": "no remote control: docs/differences.md, 'modules'",
    "REMOTE_CONTROL_TRACEBACK_MAX_BYTES": "no remote control: docs/differences.md, 'modules'",
    "SCRAPER_SLOT_MAX_ACTIVE_SIZE": "the scraper's back-pressure is the engine's max (a page "
                                    "is in flight until its items left the pipelines): "
                                    "docs/differences.md, 'engine'",
    "TWISTED_REACTOR_ENABLED": "the crawl always runs on a Twisted reactor "
                               "(TWISTED_REACTOR names which): docs/differences.md, "
                               "'reactor'",
    "FORCE_CRAWLER_PROCESS": "the commands always run one CrawlerProcess: "
                             "docs/differences.md, 'commands'",
    "LOG_SHORT_NAMES": "log lines name the logger in full: docs/differences.md, 'logging'",
    "LOG_STDOUT": "print() in a spider is not redirected into the log: docs/differences.md, "
                  "'logging'",
    "LOG_COLOR": "log lines are not coloured: docs/differences.md, 'logging'",
    "WARN_ON_GENERATOR_RETURN_VALUE": "a callback's return value after yields is not "
                                      "checked: docs/differences.md, 'spiders'",
    **{name: "start requests are read lazily by the engine, and --jobdir keeps the frontier "
             "in its own store (never a pickle): docs/differences.md, 'engine'"
       for name in ("SCHEDULER_DISK_QUEUE", "SCHEDULER_START_DISK_QUEUE",
                    "SCHEDULER_START_MEMORY_QUEUE")},
    "SCHEDULER_DEBUG": "a request --jobdir cannot store is always logged, with its URL, and "
                       "counted (scheduler/unpersistable): docs/frontier.md",
    "CONCURRENT_ITEMS": "the items of one page go through the pipelines one after "
                        "another; pages in flight (CONCURRENT_REQUESTS) run side by side: "
                        "docs/differences.md, 'engine'",
}

# Settings older Scrapy releases read and Scrapy 2.19 no longer does (a project generated
# by Scrapy 2.7 to 2.11 sets the first): accepted without a word, as Scrapy 2.19 does.
OBSOLETE = frozenset({
    "REQUEST_FINGERPRINTER_IMPLEMENTATION",
})
