"""Every answer carries the site's security headers, whichever layer gives it: a page, a file of the
site's own, and a request refused before any view (a NUL character, issue #37)."""

from __future__ import annotations

from django.test import Client

HEADERS = (
    "Content-Security-Policy",
    "X-Frame-Options",
    "X-Content-Type-Options",
    "Referrer-Policy",
    "Cross-Origin-Opener-Policy",
)


def test_a_request_refused_for_a_nul_character_carries_the_sites_security_headers():
    client = Client()
    page = client.get("/accounts/login/")
    refused = client.get("/accounts/login/", {"next": "a\x00b"})
    assert refused.status_code == 400 and page.status_code == 200
    for header in HEADERS:
        assert page.headers.get(header), header
        assert refused.headers.get(header) == page.headers[header], header
    posted = client.post("/accounts/login/", {"username": "x\x00"})
    assert posted.status_code == 400 and all(posted.headers.get(header) for header in HEADERS)
