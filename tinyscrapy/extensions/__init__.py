"""
Extensions: components that only listen to signals, enabled by C{EXTENSIONS} /
C{EXTENSIONS_BASE} as in Scrapy, one module each at Scrapy's path: corestats, logcount,
telnet, memusage, memdebug, closespider, feedexport, logstats (with tinyscrapy's live
progress line), spiderstate, throttle, periodic_log, statsmailer, debug. docs/extending.md
lists them with their settings.
"""
