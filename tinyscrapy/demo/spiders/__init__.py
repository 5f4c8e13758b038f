"""
The demo site's two spiders, shipped with the package: C{run} with no spider named, outside
a project and with no C{./spiders/} folder, runs them against the embedded demo site.
"""
