"""Running crawls from a script: which reactor (reactors), and L{CrawlerRunner}."""
