"""The lesson page's forms (the site's forms and their rules: service/core/forms.py): which question
an answer is to, and the answer itself, one form per question."""

from __future__ import annotations

from typing import Any

from django import forms

from service.core.forms import Form

from .answers import LONGEST
from .questions import Question


class Which(Form):
    """The question an answer is to, by its key (one of the page's, or a 404)."""

    question = forms.CharField(max_length=300)


class Answer(Form):
    """An answer to one question: a letter of its options, or the answer typed. Its fields' ids are
    the question's own (``<key>-answer``), so that a page of many questions holds no id twice."""

    question = forms.CharField(max_length=300, widget=forms.HiddenInput)

    def __init__(self, shown: Question, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, auto_id=f"{shown.key}-%s", **kwargs)
        self.initial.setdefault("question", shown.key)
        self.shown = shown
        if shown.options:
            self.fields["answer"] = forms.ChoiceField(
                choices=[(letter, letter) for letter, _ in shown.options],
                widget=forms.RadioSelect,
                label=f"Your answer to question {shown.number}",
                error_messages={"required": "choose one of the options", "invalid_choice": "choose one of the options"},
            )
        else:
            self.fields["answer"] = forms.CharField(
                max_length=LONGEST,
                label="Your answer",
                error_messages={"required": "write your answer first"},
                widget=forms.TextInput(attrs={"class": "form-control", "autocomplete": "off", "spellcheck": "false"}),
            )
