"""
A project, as Scrapy users organise their spiders: a C{tinyscrapy.cfg} at its root naming
the settings module (L{tinyscrapy.project.config}), a spiders package the C{run}, C{crawl},
C{list} and C{parse} commands find spiders in by name, and the files C{startproject} and
C{genspider} write (L{tinyscrapy.project.templates}).
"""
