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
