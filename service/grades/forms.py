"""The grades pages' forms (the site's forms and their rules: service/core/forms.py)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django import forms

from service.core.boundary import MAX_ID
from service.core.forms import Form, KnownOnes, Number, SitePath, choices


class GradebookQuery(Form):
    """The gradebook page's own form: a filter, a threshold, an order and a page."""

    show = forms.ChoiceField(required=False)
    below = Number(required=False)
    sort = forms.ChoiceField(required=False)
    page = forms.CharField(required=False)  # the paginator takes anything: a page past the end is the last

    def __init__(self, data: Any, filters: Iterable[str], sorts: Iterable[str]) -> None:
        super().__init__(data)
        self.fields["show"].choices = choices(filters)
        self.fields["sort"].choices = choices(sorts)


class Override(Form):
    """A question's score set by the staff on a submission's page, with the reason the student reads;
    an empty score removes it."""

    question = forms.ChoiceField()
    score = Number(required=False)
    reason = forms.CharField(required=False)

    def __init__(self, data: Any, questions: Iterable[str]) -> None:
        super().__init__(data)
        self.fields["question"].choices = choices(questions)

    @property
    def removes(self) -> bool:
        """No score given: the override is removed."""
        return not (self.data.get("score") or "").strip()


class Regrade(Form):
    """Grade again: one submission (``job``), one student's latest (``student``), or everyone's
    latest; every question, or one (``question``)."""

    question = forms.ChoiceField(required=False)
    job = forms.IntegerField(required=False, min_value=1, max_value=MAX_ID)
    student = forms.CharField(required=False, strip=False)
    back = SitePath()

    def __init__(self, data: Any, questions: Iterable[str]) -> None:
        super().__init__(data)
        self.fields["question"].choices = choices(["", *questions])


class CountedChoice(Form):
    """The staff's choice of the submission that counts (gradebook.counting.choose): a student's
    ``submission`` (its id in the gradebook), or none to undo the choice; with why."""

    student = forms.CharField(strip=False, max_length=400)
    submission = forms.IntegerField(required=False, min_value=1, max_value=MAX_ID)
    reason = forms.CharField(max_length=2000)
    back = SitePath()


class Publish(Form):
    """The staff publishing an assignment's grades, or one hand-graded question's marks (``question``),
    or undoing it (gradebook.publishing.publish); with why, kept in the history."""

    action = forms.ChoiceField(choices=choices(["publish", "unpublish"]))
    question = forms.ChoiceField(required=False)
    reason = forms.CharField(required=False, max_length=2000)

    def __init__(self, data: Any, questions: Iterable[str]) -> None:
        super().__init__(data)
        self.fields["question"].choices = [("", "every question"), *choices(questions)]


class Threshold(Form):
    """The similarity report's threshold: a share between 0 and 1."""

    threshold = Number(min_value=0.0, max_value=1.0)


class Export(Form):
    """The grade files of the exports page: which assignments, which format, and what a student who
    handed nothing in gets."""

    assignment = KnownOnes()
    format = forms.ChoiceField()
    missing = forms.CharField(required=False)

    def __init__(self, data: Any, assignments: Iterable[str], formats: Iterable[str]) -> None:
        super().__init__(data)
        self.fields["assignment"].choices = choices(assignments)
        self.fields["format"].choices = choices(formats)

    def clean_assignment(self) -> list[str]:
        chosen = self.cleaned_data["assignment"]
        if not chosen:
            raise forms.ValidationError("choose at least one assignment")
        return chosen

    def clean_missing(self) -> str:
        return "zero" if self.cleaned_data["missing"] == "zero" else "empty"
