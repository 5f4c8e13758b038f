"""Example spiders; they crawl the embedded demo site (L{tinyscrapy.demo})."""
