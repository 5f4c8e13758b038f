"""Scrapy's C{scrapy.utils.job}: L{job_dir}, the crawl's C{JOBDIR}."""

import os


def job_dir(settings):
    """The C{JOBDIR} setting's directory, made if it does not exist; None when it is not
    set."""
    path = settings["JOBDIR"]
    if not path:
        return None
    os.makedirs(path, exist_ok=True)
    return path
