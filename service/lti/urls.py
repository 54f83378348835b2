"""The addresses of the course platforms (LTI 1.3):
included by service/urls.py, which registers the ``id`` converter they use before it includes them."""

from django.urls import path
from django.views.decorators.http import require_safe

from . import pages as lti_pages
from . import views as lti

urlpatterns = [
    path("staff/platforms/", lti_pages.platforms_page, name="platforms"),
    path("lti/login/", lti.Login.as_view(), name="lti-login"),
    # For a platform that leaves the client id out of its login request: one address per registration.
    path("lti/login/<uuid:registration_uuid>/", lti.Login.as_view(), name="lti-login-for"),
    path("lti/launch/", lti.Launch.as_view(), name="lti-launch"),
    path("lti/deep-link/", lti.deep_link_choice, name="lti-deep-link"),
    path("lti/jwks.json", require_safe(lti.jwks), name="lti-jwks"),
]
