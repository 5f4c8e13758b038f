"""
Scrapy's C{scrapy.utils.versions}: L{get_versions}, the versions a bug report asks for.
"""

import platform
import sys
from importlib.metadata import PackageNotFoundError, version

# Scrapy's LOG_VERSIONS, after tinyscrapy itself
DEFAULT_SOFTWARE = ["tinyscrapy", "lxml", "libxml2", "cssselect", "parsel", "w3lib",
                    "Twisted", "Python", "pyOpenSSL", "cryptography", "Platform"]


def _version(name):
    lowered = name.lower()
    if lowered == "tinyscrapy":
        import tinyscrapy
        return tinyscrapy.__version__
    if lowered == "libxml2":
        import lxml.etree
        return ".".join(map(str, lxml.etree.LIBXML_VERSION))
    if lowered == "platform":
        return platform.platform()
    if lowered == "pyopenssl":
        from tinyscrapy.utils.ssl import get_openssl_version
        return get_openssl_version()
    if lowered == "python":
        return sys.version.replace("\n", "- ")
    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


def get_versions(software=None):
    """C{[(name, version)]} of each of C{software} (package names, or C{libxml2},
    C{Python}, C{Platform}); by default tinyscrapy and what it runs on."""
    return [(name, _version(name)) for name in software or DEFAULT_SOFTWARE]
