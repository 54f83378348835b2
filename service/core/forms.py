"""What the pages and the API take in, checked at the boundary: one Django form per set of fields a
request sends (the field names the templates' own forms post, unchanged). A view reads a form's
``cleaned_data``, never ``request.POST`` or ``request.GET`` itself, so a number is finite, an id fits
the database and a choice is one offered before any view logic runs.

Each view answers an invalid form as it always has: a query the page's own form would not send
is left out (``value``), as if it had not been asked for, so an old bookmark still opens; a post
is refused with a message on the page, a 400 naming the field, or a 404 for what does not exist
(an unknown question). Never a 500."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django import forms
from django.utils.http import url_has_allowed_host_and_scheme


class Form(forms.Form):
    """A form of the site: ``value`` reads a field leniently, its default when it was left out or
    is not valid."""

    def value(self, name: str, default: Any = None) -> Any:
        if not hasattr(self, "cleaned_data"):
            self.is_valid()
        if name in self.errors:
            return default
        found = self.cleaned_data.get(name)
        return default if found in (None, "", []) else found

    def first_error(self) -> str:
        """``Field: what is wrong``, for a 400's one line or a message: the field by its label, as the
        page shows it, never its internal name."""
        for name, errors in self.errors.items():
            said = " ".join(str(e) for e in errors)
            if name not in self.fields:  # the form's own error, of no one field
                return said
            return f"{self[name].label}: {said}"
        return ""


def choices(values: Iterable[str]) -> list[tuple[str, str]]:
    return [(value, value) for value in values]


class Number(forms.FloatField):
    """A number, finite (Django's FloatField refuses ``nan`` and ``inf``)."""


class KnownOnes(forms.MultipleChoiceField):
    """Of the values sent, those offered are kept and the others left out, as if not ticked (a page
    opened before the choices changed is still taken)."""

    def clean(self, value: Any) -> list[str]:
        return [item for item in self.to_python(value) if self.valid_value(item)]


class SitePath(forms.CharField):
    """A page of this site to go back to (a path such as ``/staff/gradebook/x/``), or "" for any
    other: never another site's address (``//elsewhere``, ``/\\elsewhere``, a scheme)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(required=False, strip=False, **kwargs)

    def clean(self, value: Any) -> str:
        text = super().clean(value)
        if text.startswith("/") and url_has_allowed_host_and_scheme(text, allowed_hosts=None):
            return text
        return ""
