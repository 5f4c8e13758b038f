"""
Scrapy's C{scrapy.utils.template}: L{render_templatefile} (a C{string.Template} file
filled in place) and L{string_camelcase}, with which C{startproject} and C{genspider} fill
the templates of C{TEMPLATES_DIR} (by default the package's, C{tinyscrapy/templates/}:
L{templates_dir}); a plugin's own templates too.
"""

import re
import string
from pathlib import Path


def render_templatefile(path, **kwargs):
    """
    Fill the C{string.Template} file C{path} with C{kwargs}, in place; a C{NAME.tmpl}
    becomes C{NAME}.

    @raise KeyError: the template names a value C{kwargs} lacks.
    """
    path = Path(path)
    content = string.Template(path.read_text("utf8")).substitute(**kwargs)
    if path.suffix == ".tmpl":
        path = path.rename(path.with_suffix(""))
    path.write_text(content, "utf8")


CAMELCASE_INVALID_CHARS = re.compile(r"[^a-zA-Z\d]")


def string_camelcase(text):
    """C{"lost-pound"} as C{"LostPound"}: each word capitalised, the rest dropped."""
    return CAMELCASE_INVALID_CHARS.sub("", text.title())


def templates_dir(settings, kind):
    """The folder of the C{kind} templates (C{project} or C{spiders}): under
    C{TEMPLATES_DIR}, else under the package's C{templates/}."""
    root = settings["TEMPLATES_DIR"] or Path(__file__).resolve().parent.parent / "templates"
    return Path(root, kind)
