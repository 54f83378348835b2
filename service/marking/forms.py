"""The marking pages' forms (the site's forms and their rules: service/core/forms.py)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django import forms

from service.core.boundary import MAX_ID
from service.core.forms import Form, KnownOnes, Number, SitePath, choices


class NamesShown(Form):
    """``?names=1``: a marking page shows the student's name (hidden by default: marked anonymously)."""

    names = forms.BooleanField(required=False)


class MarkAnswer(Form):
    """A hand-graded answer's mark: the rubric's items applied and an adjustment, or (a question with
    no rubric) a score; a comment; when the page was read (``seen``: another grader's save since is
    told); and whether to go on to the next answer."""

    rubric = KnownOnes(required=False)
    adjustment = Number(required=False)
    score = Number(required=False)
    comment = forms.CharField(required=False, strip=False)
    seen = forms.CharField(required=False, strip=False)
    then = forms.CharField(required=False)

    def __init__(self, data: Any, items: Iterable[str]) -> None:
        super().__init__(data)
        self.fields["rubric"].choices = choices(items)

    @property
    def goes_on(self) -> bool:
        return self.value("then") == "next"


class EmptyAnswers(Form):
    """The marking list's button: the empty answers it listed (those no longer empty and waiting are
    left out, as if not listed)."""

    answers = KnownOnes(required=False)

    def __init__(self, data: Any, answers: Iterable[str]) -> None:
        super().__init__(data)
        self.fields["answers"].choices = choices(answers)


class GroupQuery(Form):
    """The group marking page's query: the similarity threshold, which group (1: the largest), and
    whether the students' names are shown."""

    threshold = Number(required=False, min_value=0, max_value=1)
    group = forms.IntegerField(required=False, min_value=1, max_value=MAX_ID)
    names = forms.BooleanField(required=False)


class GroupSplit(Form):
    """A group page's other post: one member split out of its group (``split``: its token), or every
    answer split out put back (``rejoin``)."""

    split = forms.CharField(required=False, max_length=40)
    rejoin = forms.BooleanField(required=False)

    @staticmethod
    def asked(data: Any) -> bool:
        """Whether a post is this one rather than a mark."""
        return "split" in data or "rejoin" in data


class SeenMarks(forms.Field):
    """Each member's mark as a group page showed it: "TOKEN TIME" pairs (TIME "" where it had none),
    as {token: time}; a pair that is not one is left out."""

    widget = forms.MultipleHiddenInput

    def to_python(self, value: Any) -> dict[str, str]:
        pairs = (str(item).partition(" ") for item in (value if isinstance(value, list | tuple) else []))
        return {token: when for token, _, when in pairs if token}


class GroupMark(Form):
    """A mark given to an answer group: as ``MarkAnswer`` (or, for an exam, a score), the members it
    is given to (those the grader left ticked; one no longer in the question's answers is left out),
    and when each member's mark was made as the page showed it (``seen``: a save since is told)."""

    rubric = KnownOnes(required=False)
    adjustment = Number(required=False)
    score = Number(required=False)
    comment = forms.CharField(required=False, strip=False)
    members = KnownOnes(required=False)
    seen = SeenMarks(required=False)
    then = forms.CharField(required=False)

    def __init__(self, data: Any, items: Iterable[str], members: Iterable[str]) -> None:
        super().__init__(data)
        self.fields["rubric"].choices = choices(items)
        self.fields["members"].choices = choices(members)

    @property
    def goes_on(self) -> bool:
        return self.value("then") == "next"

    @property
    def left_out(self) -> int:
        """How many members posted are no longer the question's answers (handed in again since the
        page was read): never marked unseen."""
        posted = set(self.data.getlist("members")) if hasattr(self.data, "getlist") else set()
        return len(posted - {""} - set(self.value("members", [])))


class RubricItem(Form):
    """A rubric item changed (``item``) or added (no ``item``) from the marking page."""

    item = forms.CharField(required=False)
    text = forms.CharField(required=False, strip=False)
    points = Number()
    back = SitePath()


class ReviewAsk(Form):
    """A student's request that the staff look again at one question, with why."""

    question = forms.ChoiceField()
    message = forms.CharField()

    def __init__(self, data: Any, questions: Iterable[str], longest: int) -> None:
        super().__init__(data)
        self.fields["question"].choices = choices(questions)
        self.longest = longest

    def clean_message(self) -> str:
        return self.cleaned_data["message"][: self.longest]  # a longer message is cut, not refused


class ReviewAnswer(Form):
    """The staff's answer in a review's thread (an empty one is no answer)."""

    message = forms.CharField(required=False)

    def __init__(self, data: Any, longest: int) -> None:
        super().__init__(data)
        self.longest = longest

    def clean_message(self) -> str:
        return self.cleaned_data["message"][: self.longest]
