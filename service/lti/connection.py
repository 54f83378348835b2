"""Calls from the tool to a platform's services (AGS, NRPS) through pylti1p3, with a deadline: a
platform that does not answer costs a bounded wait, never a hung worker or page."""

from __future__ import annotations

import requests

PLATFORM_TIMEOUT = 15.0  # seconds per call to a platform's service
Timeout = float | tuple[float, float]  # seconds, or (to connect, to be answered), as requests takes them


class _TimedSession(requests.Session):
    def __init__(self, timeout: Timeout) -> None:
        super().__init__()
        self.timeout = timeout

    def request(self, *args, **kwargs):
        kwargs.setdefault("timeout", self.timeout)
        return super().request(*args, **kwargs)


def connector(registration, timeout: Timeout = PLATFORM_TIMEOUT):
    """A pylti1p3 service connector for a django-lti registration: it gets the platform's access
    tokens with the tool's key (an OAuth2 client assertion), and bounds every call."""
    from pylti1p3.service_connector import ServiceConnector

    return ServiceConnector(registration.to_registration(), requests_session=_TimedSession(timeout))
