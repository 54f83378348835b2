"""The addresses of signing in (a password with its throttle, a one-time link, JupyterHub), the roster and the staff's members:
included by service/urls.py, which registers the ``id`` converter they use before it includes them."""

from django.contrib.auth import views as auth_views
from django.urls import path

from . import hub, staff_members, throttle
from . import views as accounts

urlpatterns = [
    path(
        "accounts/login/",
        throttle.one_try_at_a_time(auth_views.LoginView.as_view(template_name="service/accounts/login.html")),
        name="login",
    ),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("welcome/<str:secret>/", accounts.welcome, name="welcome"),
    path("staff/roster/", accounts.roster_page, name="roster"),
    path("staff/members/", staff_members.staff_members, name="staff-members"),
    # JupyterHub sign-in (service/accounts/hub.py): the hub's OAuth, started here, finished at the callback
    # (JupyterHub's default address for a service's: <prefix>oauth_callback).
    path("hub/login/", hub.hub_login, name="hub-login"),
    path("oauth_callback", hub.oauth_callback, name="hub-oauth-callback"),
]
