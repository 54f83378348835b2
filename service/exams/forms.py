"""The exams pages' forms (the site's forms and their rules: service/core/forms.py)."""

from __future__ import annotations

from django import forms

from service.core.forms import Form, Number, choices


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
    them"), or withdrawing them."""

    action = forms.ChoiceField(choices=choices(["publish", "unpublish"]))
