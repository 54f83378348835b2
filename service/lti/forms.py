"""The lti pages' forms (the site's forms and their rules: service/core/forms.py)."""

from __future__ import annotations

from django import forms

from service.core.forms import Form

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
