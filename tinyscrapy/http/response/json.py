"""L{JsonResponse}: a JSON document, as Scrapy's C{scrapy.http.JsonResponse}."""

from tinyscrapy.http.response.text import TextResponse


class JsonResponse(TextResponse):
    """A JSON document: C{.json()}, and C{.jmespath()} on its selector."""

    selector_type = "json"
