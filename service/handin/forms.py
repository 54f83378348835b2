"""The handin pages' forms (the site's forms and their rules: service/core/forms.py)."""

from __future__ import annotations

from django import forms

from service.core.forms import Form, choices


class SubmissionsQuery(Form):
    """``GET /api/v1/submissions?assignment=``: the student's submissions, of one assignment or all."""

    assignment = forms.CharField(required=False, strip=False)


class HandIn(Form):
    """A notebook handed in on the assignment's page (its size and content: service/handin/uploads.py)."""

    notebook = forms.FileField(allow_empty_file=True)


class ApiHandIn(Form):
    """``POST /api/v1/submissions``: the assignment's name and the notebook, as the field ``file``."""

    assignment = forms.CharField(required=False, strip=False)
    file = forms.FileField(allow_empty_file=True)


class OpenOrClose(Form):
    """The instructor's button on the assignment's page."""

    submissions = forms.ChoiceField(choices=choices(["open", "close"]))


class Practice(Form):
    """A run of the practice checks, on the assignment's page or ``POST /api/v1/assignments/<name>/practice``:
    on the notebook sent (the page's field ``notebook``, the API's ``file``), else on the latest
    hand-in; of one question's practice checks, or all."""

    notebook = forms.FileField(required=False, allow_empty_file=True)
    file = forms.FileField(required=False, allow_empty_file=True)
    question = forms.CharField(required=False, max_length=200)

    def upload(self, read) -> tuple[str, bytes] | None:
        """(the name, the bytes read by ``read``) of the notebook sent, or None."""
        sent = self.cleaned_data.get("notebook") or self.cleaned_data.get("file")
        return None if sent is None else (sent.name or "", read(sent))
