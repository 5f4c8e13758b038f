# The project's spiders: every Spider subclass with a name in this package is found by
# `run NAME`, `crawl NAME`, `check` and `list`.
