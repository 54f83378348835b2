"""The site's own routes as one list: each package's addresses (service/<package>/urls.py, included by
service/urls.py at the root) flattened, and Django's admin console kept as its one include (named
``admin:index`` in service/urls.py), for the tests that walk every route by name."""

from __future__ import annotations

from django.urls import URLPattern, URLResolver, get_resolver


def site_routes() -> list[URLPattern | URLResolver]:
    found: list[URLPattern | URLResolver] = []
    for pattern in get_resolver().url_patterns:
        if (
            isinstance(pattern, URLResolver)
            and str(pattern.pattern) == ""
            and str(pattern.urlconf_name).startswith("<module 'service.")
        ):
            found.extend(pattern.url_patterns)
        else:
            found.append(pattern)
    return found
