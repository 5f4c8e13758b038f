"""The faithful kernel: the engine, the scheduler, the scraper and the downloader."""
