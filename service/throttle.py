"""Sign-in attempts, throttled: after ``LIMIT`` failures for one username, or from one address,
within ``WINDOW``, every further attempt is refused until the window has passed, even with the right
password (so guessing cannot go on). Pages and the API's token endpoint alike, through Django's own
authentication: a backend in front of the model backend, and the ``user_login_failed`` signal."""

from __future__ import annotations

from datetime import timedelta

from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.signals import user_login_failed
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import Q
from django.dispatch import receiver
from django.utils import timezone

from .models import SignInFailure

LIMIT = 10
WINDOW = timedelta(minutes=15)
REFUSED = "too many failed sign-ins; try again in 15 minutes"


def address_of(request) -> str:
    return (request.META.get("REMOTE_ADDR", "") if request is not None else "")[:100]


def blocked(username: str, address: str) -> bool:
    recent = SignInFailure.objects.filter(at__gte=timezone.now() - WINDOW)
    by_name = recent.filter(username=username[:150]).count()
    by_address = recent.filter(address=address).count() if address else 0
    return by_name >= LIMIT or by_address >= LIMIT


class ThrottledBackend(ModelBackend):
    """Django's model backend, refusing while a username or an address is throttled."""

    def authenticate(self, request, username=None, password=None, **kwargs):
        if username is not None and blocked(username, address_of(request)):
            raise PermissionDenied(REFUSED)  # Django stops here and counts it as one more failure
        return super().authenticate(request, username=username, password=password, **kwargs)


@receiver(user_login_failed)
def _remember_failure(sender, credentials, request=None, **kwargs) -> None:
    SignInFailure.objects.create(username=str(credentials.get("username", ""))[:150], address=address_of(request))
    # Keep the table small: failures older than the window no longer count.
    SignInFailure.objects.filter(Q(at__lt=timezone.now() - WINDOW)).delete()


class ThrottledAuthenticationForm(AuthenticationForm):
    """The sign-in page's form, saying when sign-ins are throttled rather than "wrong password"."""

    def clean(self):
        username = self.cleaned_data.get("username")
        if username and blocked(username, address_of(self.request)):
            user_login_failed.send(sender=__name__, credentials={"username": username}, request=self.request)
            raise ValidationError(REFUSED, code="throttled")
        return super().clean()
