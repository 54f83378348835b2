"""The accounts pages' forms (the site's forms and their rules: service/core/forms.py)."""

from __future__ import annotations

from typing import Any

from django import forms

from service.core.forms import Form

ROSTER_MAX_BYTES = 2 * 1024 * 1024  # a roster CSV larger than this is refused before it is read


class RosterQuery(Form):
    q = forms.CharField(required=False)
    page = forms.CharField(required=False)


class RosterImport(Form):
    """A roster CSV for the roster page (as `autograder roster import`)."""

    roster = forms.FileField(allow_empty_file=True)

    def clean_roster(self) -> Any:
        upload = self.cleaned_data["roster"]
        if upload.size > ROSTER_MAX_BYTES:
            raise forms.ValidationError("a roster of at most 2 MB")
        return upload


class RosterAction(Form):
    """``action=links``: the students' one-time sign-in links, instead of an import."""

    action = forms.CharField(required=False)


class HubLogin(Form):
    """Where to go once signed in with the hub (a page of this site only: checked by the view)."""

    next = forms.CharField(required=False, strip=False)


class HubCallback(Form):
    """The hub's answer to its OAuth authorization: a code and the state, or an error."""

    code = forms.CharField(required=False, strip=False)
    state = forms.CharField(required=False, strip=False)
    error = forms.CharField(required=False)
    error_description = forms.CharField(required=False)
