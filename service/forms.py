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

from .boundary import MAX_ID

ROSTER_MAX_BYTES = 2 * 1024 * 1024  # a roster CSV larger than this is refused before it is read


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


def _choices(values: Iterable[str]) -> list[tuple[str, str]]:
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


# Queries (GET): read leniently.


class GradebookQuery(Form):
    """The gradebook page's own form: a filter, a threshold, an order and a page."""

    show = forms.ChoiceField(required=False)
    below = Number(required=False)
    sort = forms.ChoiceField(required=False)
    page = forms.CharField(required=False)  # the paginator takes anything: a page past the end is the last

    def __init__(self, data: Any, filters: Iterable[str], sorts: Iterable[str]) -> None:
        super().__init__(data)
        self.fields["show"].choices = _choices(filters)
        self.fields["sort"].choices = _choices(sorts)


class NamesShown(Form):
    """``?names=1``: a marking page shows the student's name (hidden by default: marked anonymously)."""

    names = forms.BooleanField(required=False)


class RosterQuery(Form):
    q = forms.CharField(required=False)
    page = forms.CharField(required=False)


class SubmissionsQuery(Form):
    """``GET /api/v1/submissions?assignment=``: the student's submissions, of one assignment or all."""

    assignment = forms.CharField(required=False, strip=False)


# Posts.


class HandIn(Form):
    """A notebook handed in on the assignment's page (its size and content: service/uploads.py)."""

    notebook = forms.FileField(allow_empty_file=True)


class ApiHandIn(Form):
    """``POST /api/v1/submissions``: the assignment's name and the notebook, as the field ``file``."""

    assignment = forms.CharField(required=False, strip=False)
    file = forms.FileField(allow_empty_file=True)


class OpenOrClose(Form):
    """The instructor's button on the assignment's page."""

    submissions = forms.ChoiceField(choices=_choices(["open", "close"]))


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


class Override(Form):
    """A question's score set by the staff on a submission's page, with the reason the student reads;
    an empty score removes it."""

    question = forms.ChoiceField()
    score = Number(required=False)
    reason = forms.CharField(required=False)

    def __init__(self, data: Any, questions: Iterable[str]) -> None:
        super().__init__(data)
        self.fields["question"].choices = _choices(questions)

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
        self.fields["question"].choices = _choices(["", *questions])


class CountedChoice(Form):
    """The staff's choice of the submission that counts (gradebook.counting.choose): a student's
    ``submission`` (its id in the gradebook), or none to undo the choice; with why."""

    student = forms.CharField(strip=False, max_length=400)
    submission = forms.IntegerField(required=False, min_value=1, max_value=MAX_ID)
    reason = forms.CharField(max_length=2000)
    back = SitePath()


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
        self.fields["assignment"].choices = _choices(assignments)
        self.fields["format"].choices = _choices(formats)

    def clean_assignment(self) -> list[str]:
        chosen = self.cleaned_data["assignment"]
        if not chosen:
            raise forms.ValidationError("choose at least one assignment")
        return chosen

    def clean_missing(self) -> str:
        return "zero" if self.cleaned_data["missing"] == "zero" else "empty"


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
        self.fields["rubric"].choices = _choices(items)

    @property
    def goes_on(self) -> bool:
        return self.value("then") == "next"


class EmptyAnswers(Form):
    """The marking list's button: the empty answers it listed (those no longer empty and waiting are
    left out, as if not listed)."""

    answers = KnownOnes(required=False)

    def __init__(self, data: Any, answers: Iterable[str]) -> None:
        super().__init__(data)
        self.fields["answers"].choices = _choices(answers)


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
        self.fields["rubric"].choices = _choices(items)
        self.fields["members"].choices = _choices(members)

    @property
    def goes_on(self) -> bool:
        return self.value("then") == "next"

    @property
    def left_out(self) -> int:
        """How many members posted are no longer the question's answers (handed in again since the
        page was read): never marked unseen."""
        posted = set(self.data.getlist("members")) if hasattr(self.data, "getlist") else set()
        return len(posted - {""} - set(self.value("members", [])))


class ExamMark(Form):
    """An exam's open answer marked: a score (its bounds are the gradebook's to check), a comment."""

    score = Number()
    comment = forms.CharField(required=False, strip=False)
    seen = forms.CharField(required=False, strip=False)
    then = forms.CharField(required=False)

    @property
    def goes_on(self) -> bool:
        return self.value("then") == "next"


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
        self.fields["question"].choices = _choices(questions)
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


_TEXT = forms.TextInput(attrs={"class": "form-control", "size": 50})  # a registration's field: one line


class Platform(Form):
    """A course platform registered on the platforms page (as `autograder lti add-platform`); what
    each field must be is checked by service.lti.platforms (platform_problems), whose words the page
    shows beside each field refused, all at once."""

    name = forms.CharField(required=False, label="Name", widget=_TEXT)
    issuer = forms.CharField(required=False, label="Issuer", widget=_TEXT)
    client_id = forms.CharField(required=False, label="Client id", widget=_TEXT)
    deployment_ids = forms.CharField(required=False, label="Deployment ids (separated by spaces)", widget=_TEXT)
    auth_url = forms.CharField(required=False, label="Authorization (OIDC auth) URL", widget=_TEXT)
    token_url = forms.CharField(required=False, label="Access token URL", widget=_TEXT)
    keyset_url = forms.CharField(required=False, label="Public keyset (JWKS) URL", widget=_TEXT)
    action = forms.CharField(required=False, widget=forms.HiddenInput)

    def clean_deployment_ids(self) -> list[str]:
        return self.cleaned_data["deployment_ids"].replace(",", " ").split()


class DeepLinkChoice(Form):
    """The instructor's choice on the deep linking page: the launch it answers (its id stands for the
    session in the platform's frame) and the assignment (or ``exam:<name>``) to place."""

    launch_id = forms.CharField(required=False, strip=False)
    assignment = forms.CharField(required=False, strip=False)


class HubLogin(Form):
    """Where to go once signed in with the hub (a page of this site only: checked by the view)."""

    next = forms.CharField(required=False, strip=False)


class HubCallback(Form):
    """The hub's answer to its OAuth authorization: a code and the state, or an error."""

    code = forms.CharField(required=False, strip=False)
    state = forms.CharField(required=False, strip=False)
    error = forms.CharField(required=False)
    error_description = forms.CharField(required=False)
