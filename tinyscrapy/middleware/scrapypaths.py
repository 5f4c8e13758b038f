"""
Scrapy's built-in component paths, and what each is in tinyscrapy.

A Scrapy project names built-ins in its component settings, most often to switch one off
(C{"scrapy.downloadermiddlewares.useragent.UserAgentMiddleware": None}) or to move it. In
L{SCRAPY_PATHS} each of Scrapy's paths maps to one of:

  - a dotted path: tinyscrapy's equivalent component, used in its place;
  - L{BuiltIn}: the job is done inside tinyscrapy, not by a component (offsite, depth,
    ...): there is nothing to move, and the note says how to switch it off;
  - L{Absent}: tinyscrapy has no such part (the telnet console, ...): switching it off is
    nothing to do, asking for it is a usage error.

L{tinyscrapy.components.ordered_paths} reads this table only for paths under C{scrapy.}.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class BuiltIn:
    """Done inside tinyscrapy, always on; C{note} says where and how to switch it off."""

    note: str


@dataclass(frozen=True)
class Absent:
    """tinyscrapy has no such part; C{note} says what to use instead, if anything."""

    note: str


_DMW = "scrapy.downloadermiddlewares."
_SMW = "scrapy.spidermiddlewares."
_EXT = "scrapy.extensions."

SCRAPY_PATHS = {
    # downloader middlewares
    _DMW + "robotstxt.RobotsTxtMiddleware": "tinyscrapy.scope.robots.RobotsTxtMiddleware",
    _DMW + "defaultheaders.DefaultHeadersMiddleware":
        "tinyscrapy.middleware.defaults.DefaultHeadersMiddleware",
    _DMW + "useragent.UserAgentMiddleware": "tinyscrapy.middleware.defaults.UserAgentMiddleware",
    _DMW + "retry.RetryMiddleware": "tinyscrapy.middleware.retry.RetryMiddleware",
    _DMW + "redirect.MetaRefreshMiddleware": "tinyscrapy.middleware.redirect.MetaRefreshMiddleware",
    _DMW + "redirect.RedirectMiddleware": "tinyscrapy.middleware.redirect.RedirectMiddleware",
    _DMW + "cookies.CookiesMiddleware": "tinyscrapy.middleware.cookies.CookiesMiddleware",
    _DMW + "httpproxy.HttpProxyMiddleware": "tinyscrapy.middleware.proxy.HttpProxyMiddleware",
    _DMW + "httpcache.HttpCacheMiddleware": "tinyscrapy.middleware.httpcache.HttpCacheMiddleware",
    _DMW + "offsite.OffsiteMiddleware": BuiltIn(
        "offsite filtering is part of the scope rules: a spider without allowed_domains "
        "crawls any host"),
    _DMW + "downloadtimeout.DownloadTimeoutMiddleware": BuiltIn(
        "the downloader applies DOWNLOAD_TIMEOUT (and meta['download_timeout'])"),
    _DMW + "httpcompression.HttpCompressionMiddleware": BuiltIn(
        "the downloader decodes gzip, deflate, br and zstd; COMPRESSION_ENABLED=False "
        "switches it off"),
    _DMW + "stats.DownloaderStats": BuiltIn("the downloader always keeps its stats"),
    _DMW + "httpauth.HttpAuthMiddleware": "tinyscrapy.middleware.httpauth.HttpAuthMiddleware",
    _DMW + "ajaxcrawl.AjaxCrawlMiddleware": Absent("no AJAX crawlable pages support"),
    # spider middlewares
    _SMW + "referer.RefererMiddleware": "tinyscrapy.middleware.referer.RefererMiddleware",
    _SMW + "start.StartSpiderMiddleware": BuiltIn("start requests are handled by the engine"),
    _SMW + "httperror.HttpErrorMiddleware": BuiltIn(
        "the scraper's status rule: handle_httpstatus_list and meta['handle_httpstatus_all']"),
    _SMW + "offsite.OffsiteMiddleware": BuiltIn(
        "offsite filtering is part of the scope rules: a spider without allowed_domains "
        "crawls any host"),
    _SMW + "urllength.UrlLengthMiddleware": BuiltIn(
        "part of the scope rules: URLLENGTH_LIMIT=0 switches it off"),
    _SMW + "depth.DepthMiddleware": BuiltIn(
        "part of the scope rules: DEPTH_LIMIT (0: no limit) and DEPTH_PRIORITY"),
    _SMW + "metacopy.MetaCopyDetectionMiddleware": Absent("no meta copy detection"),
    # extensions
    _EXT + "closespider.CloseSpider": "tinyscrapy.extensions.closespider.CloseConditions",
    _EXT + "feedexport.FeedExporter": "tinyscrapy.items.feeds.FeedExporter",
    _EXT + "logstats.LogStats": "tinyscrapy.observe.progress.Progress",
    _EXT + "corestats.CoreStats": BuiltIn("the engine always keeps the core stats"),
    _EXT + "throttle.AutoThrottle": BuiltIn(
        "the downloader's slots: AUTOTHROTTLE_ENABLED=True switches it on"),
    _EXT + "telnet.TelnetConsole": Absent("no telnet console (try: python -m tinyscrapy "
                                          "shell URL)"),
    _EXT + "memusage.MemoryUsage": Absent("no memory usage extension"),
    _EXT + "memdebug.MemoryDebugger": Absent("no memory debugger"),
    _EXT + "logcount.LogCount": "tinyscrapy.observe.logconfig.LogCount",
    _EXT + "spiderstate.SpiderState": Absent("no spider state (spider.state)"),
    _EXT + "remote_control.RemoteControl": Absent("no remote control"),
    _EXT + "periodic_log.PeriodicLog": Absent("no periodic log (the progress line and "
                                              "LOGSTATS_INTERVAL instead)"),
    _EXT + "statsmailer.StatsMailer": Absent("no stats mailer"),
    _EXT + "debug.StackTraceDump": Absent("no stack trace dump"),
    _EXT + "debug.Debugger": Absent("no debugger extension"),
    # item pipelines
    "scrapy.pipelines.images.ImagesPipeline": Absent("no media pipelines"),
    "scrapy.pipelines.files.FilesPipeline": Absent("no media pipelines"),
}
