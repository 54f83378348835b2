"""The exams pages' forms (the site's forms and their rules: service/core/forms.py)."""

from __future__ import annotations

from typing import Any

from django import forms

from service.core.forms import Form, Number, choices

from .models import OnlineExam


class ExamMark(Form):
    """An exam's open answer marked: a score (its bounds are the gradebook's to check), a comment."""

    score = Number()
    comment = forms.CharField(required=False, strip=False)
    seen = forms.CharField(required=False, strip=False)
    then = forms.CharField(required=False)

    @property
    def goes_on(self) -> bool:
        return self.value("then") == "next"


class ExamPublish(Form):
    """The staff publishing an online exam's results (its results setting "when the staff publish
    them"), or withdrawing them; with ``question``, that question's alone (the view checks it is one
    of the exam's)."""

    action = forms.ChoiceField(choices=choices(["publish", "unpublish"]))
    question = forms.CharField(required=False, max_length=200)


class QuestionResults(Form):
    """Each question's own results setting (issue #51), a menu per question of the exam: the exam's
    (""), or one of the exam's values."""

    PREFIX = "results-"

    def __init__(self, data: Any, questions: list[tuple[str, str]], own: dict[str, str], default: str) -> None:
        super().__init__(data)
        offered = [("", f"the exam's setting ({dict(OnlineExam.RESULTS)[default]})"), *OnlineExam.RESULTS]
        for name, label in questions:
            self.fields[self.PREFIX + name] = forms.ChoiceField(
                choices=offered,
                required=False,
                label=label,
                initial=own.get(name, ""),
                widget=forms.Select(attrs={"class": "form-select"}),
            )

    def chosen(self) -> dict[str, str]:
        return {name.removeprefix(self.PREFIX): value for name, value in self.cleaned_data.items()}


class ReturnTo(Form):
    """Where an answer posted without the page's script goes back to: the exam's page (the form sends
    ``page``), at question ``q`` when the exam shows one question at a time."""

    page = forms.CharField(required=False, max_length=10)
    q = forms.IntegerField(required=False, min_value=1, max_value=10_000)


class StaffAction(Form):
    """Which of the exam's staff page's forms was posted (each names its ``action``)."""

    action = forms.CharField(required=False, max_length=40)
