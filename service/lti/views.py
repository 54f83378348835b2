"""The platform's requests to the tool: OIDC login initiation, launches (a resource link, or deep
linking to place an assignment), and the tool's public keys. Every refused launch (a bad signature,
an expired token, a replayed one, an unknown or inactive deployment, an unknown platform) gets a
page that says why, never a traceback."""

from __future__ import annotations

import logging
import re
from urllib.parse import urlsplit

from csp.decorators import csp_replace, csp_update
from django.contrib.auth import login
from django.db import IntegrityError, transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.decorators import method_decorator
from django.views.decorators.clickjacking import xframe_options_exempt
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST
from lti_tool.utils import DjangoToolConfig
from lti_tool.views import LtiLaunchBaseView, OIDCLoginInitView
from lti_tool.views import jwks as tool_jwks
from pylti1p3.exception import LtiException, OIDCException
from requests import RequestException

from gradebook.exports.canvas import remember_canvas_id
from service.accounts.models import Member, UsedLaunch
from service.core.access import assignments, book
from service.errors import LtiError
from service.exams.scores import EXAM_CHOICE, EXAM_PARAMETER, exam_resource, remember_exam_line_item
from untrusted.text import one_line

from .identities import account_for, role_of
from .roster import sync_roster
from .scores import LINE_ITEM_TAG, maximum, remember_line_item

logger = logging.getLogger("service.lti")
BACKEND = "django.contrib.auth.backends.ModelBackend"
ASSIGNMENT_PARAMETER = "assignment"  # the custom parameter a placed link carries
# Canvas fills $Canvas.assignment.id in at each launch (other platforms send it as it is): the id its
# grade import matches a column by (gradebook/exports/canvas.py).
CANVAS_ASSIGNMENT_PARAMETER = "canvas_assignment_id"
DEEP_LINKING_SETTINGS = "https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings"
# The login's parameters that the page checking for cookies passes on (pylti1p3's list).
LOGIN_PARAMETERS = ("iss", "login_hint", "target_link_uri", "lti_message_hint", "lti_deployment_id", "client_id")
NEW_WINDOW = "lti1p3_new_window"  # pylti1p3's mark of a login that has been through the cookie check
# The pages a course platform shows in its own frame (a launch in Canvas's or Moodle's embedding,
# deep linking's dialog) go without X-Frame-Options, and their Content-Security-Policy lets any
# site frame them, where every other page's forbids it (frame-ancestors 'none', X-Frame-Options
# DENY). Which site frames them cannot be known ahead: Canvas shows tools on each school's own
# domain, not on its issuer's. Nothing on them acts without the platform's signed token.
FRAMED = {"frame-ancestors": ["*"]}
ORIGIN = re.compile(r"https?://[A-Za-z0-9.\-]+(:[0-9]{1,5})?")


def refused(request: HttpRequest, why: object, status: int = 403) -> HttpResponse:
    text = str(why).strip() or type(why).__name__
    return render(request, "service/lti/lti_refused.html", {"why": text[:300]}, status=status)


@method_decorator((csrf_exempt, xframe_options_exempt, csp_replace(FRAMED)), name="dispatch")
class Login(OIDCLoginInitView):
    """Step one: the platform names itself; the tool sends the browser back to it with a state and
    a nonce (pylti1p3 keeps them), asking for the signed launch."""

    def get_oidc_response(self, request, registration_uuid, params):
        from pylti1p3.contrib.django import DjangoCacheDataStorage, DjangoOIDCLogin

        target_link_uri = params.get("target_link_uri")
        if not target_link_uri:
            return refused(request, "the platform's login could not start: it named no target_link_uri", status=400)
        if not params.get(NEW_WINDOW):
            return self.cookie_check(request, params)
        login_request = DjangoOIDCLogin(
            request, _ToolConfig(registration_uuid), launch_data_storage=DjangoCacheDataStorage()
        )
        try:
            return login_request.redirect(self.get_redirect_url(target_link_uri))
        except (LtiException, OIDCException) as exc:
            return refused(request, f"the platform's login could not start: {exc}")

    def cookie_check(self, request: HttpRequest, params) -> HttpResponse:
        """pylti1p3's check that the browser keeps the tool's cookies in the platform's frame (else
        the launch's state is lost), as a page whose script is a static file: pylti1p3's own page
        is inline script, which the site's Content-Security-Policy does not run. The script comes
        back to this address with the same parameters, marked as checked; where cookies are
        blocked, it offers the address in a new window instead."""
        query = request.GET.copy()
        for key in LOGIN_PARAMETERS:
            if key not in query and params.get(key):
                query[key] = params[key]
        query[NEW_WINDOW] = "1"
        return render(
            request,
            "service/lti/lti_cookie_check.html",
            {
                "again": f"{request.path}?{query.urlencode()}",
                "main": self.main_msg,
                "click": self.click_msg,
                "loading": self.loading_msg,
            },
        )


class _ToolConfig(DjangoToolConfig):
    """django-lti's registrations, also found by the address's registration alone when the platform
    sends no client id (django-lti would look for an empty one)."""

    def find_registration_by_params(self, iss, client_id, *args, **kwargs):
        if not client_id and self.registration_uuid is not None:
            return self.find_registration_by_issuer(iss)
        return super().find_registration_by_params(iss, client_id, *args, **kwargs)


@method_decorator((csrf_exempt, xframe_options_exempt, csp_replace(FRAMED)), name="dispatch")
class Launch(LtiLaunchBaseView):
    """Step two: the platform's signed id_token, checked by pylti1p3 (signature against the
    platform's keys, expiry, audience, state, nonce, registration, deployment)."""

    def post(self, request, *args, **kwargs):
        try:
            return super().post(request, *args, **kwargs)
        except (LtiException, OIDCException, LtiError) as exc:
            return refused(request, f"this launch could not be accepted: {exc}")

    def launch_setup(self, request, lti_launch) -> None:
        """A token is good for one launch: its nonce is recorded, and a second use refused."""
        claims = lti_launch.get_launch_data()
        try:
            with transaction.atomic():
                UsedLaunch.objects.create(issuer=str(claims["iss"])[:255], nonce=str(claims["nonce"])[:255])
        except IntegrityError:
            raise LtiError("it was used before (a replayed token); open the tool again from the course") from None

    def handle_inactive_deployment(self, request, lti_launch):
        return refused(
            request,
            "this deployment of the tool is not registered here; the instructor adds its "
            "deployment id with `autograder lti add-platform` or on the Course platforms page",
        )

    def handle_resource_launch(self, request, lti_launch):
        user = account_for(lti_launch)
        login(request, user, backend=BACKEND)
        if user.member.is_staff_member:
            _fill_roster(lti_launch)
        exam = str(lti_launch.get_custom_claim(EXAM_PARAMETER) or "")
        if exam:
            return _exam_launch(lti_launch, exam)
        spec = assignments().get(str(lti_launch.get_custom_claim(ASSIGNMENT_PARAMETER) or ""))
        if spec is None:
            return redirect("assignments")
        try:
            remember_line_item(lti_launch, spec)
        except (LtiException, RequestException) as exc:
            logger.warning("no line item for %s: %s", spec.name, one_line(str(exc)))
        canvas_id = str(lti_launch.get_custom_claim(CANVAS_ASSIGNMENT_PARAMETER) or "")
        if canvas_id.isascii() and canvas_id.isdigit() and 0 < int(canvas_id) < 2**63:  # else not Canvas's
            remember_canvas_id(book(), spec, int(canvas_id))
        return redirect("assignment", spec.name)

    def handle_deep_linking_launch(self, request, lti_launch):
        if role_of(lti_launch.roles_claim or []) == Member.STUDENT:
            return refused(request, "only the course's instructors and teaching assistants place assignments")
        # django-lti clears the session on every launch: signed in again, as a resource launch
        # does, so that the instructor's other tabs of the site still answer after placing.
        login(request, account_for(lti_launch), backend=BACKEND)
        # The platform shows this page in its own dialog: the launch may be framed (FRAMED).
        return render(
            request,
            "service/lti/lti_deep_link.html",
            {
                "assignments": list(assignments().values()),
                "launch_id": lti_launch.get_launch_id(),
                "exams": _placeable_exams(),
            },
        )


@csrf_exempt
@xframe_options_exempt
@csp_replace(FRAMED)
@require_POST
def deep_link_choice(request: HttpRequest) -> HttpResponse:
    """The instructor's choice, sent back to the platform as a signed LtiResourceLink with a line
    item. Shown in the platform's frame, where the site's cookies may not be sent: the launch's id
    (unguessable, kept by pylti1p3 for a limited time) stands for the session, and is used once."""
    from lti_tool.utils import get_launch_from_request
    from pylti1p3.deep_link_resource import DeepLinkResource
    from pylti1p3.lineitem import LineItem

    from .forms import DeepLinkChoice

    form = DeepLinkChoice(request.POST)
    launch_id = form.value("launch_id", "")
    if not launch_id.startswith("lti1p3-launch-"):
        return refused(request, "this choice does not come from a deep linking launch", status=400)
    try:
        lti_launch = get_launch_from_request(request, launch_id)
    except LtiException:
        return refused(request, "this choice came too late, or twice; open the tool again from the course")
    if not lti_launch.is_deep_link_launch or role_of(lti_launch.roles_claim or []) == Member.STUDENT:
        return refused(request, "only the course's instructors and teaching assistants place assignments")
    chosen = form.value(ASSIGNMENT_PARAMETER, "")
    exam = _exam_key(chosen.removeprefix(EXAM_CHOICE)) if chosen.startswith(EXAM_CHOICE) else None
    spec = assignments().get(chosen)
    if spec is None and exam is None:
        return refused(request, "no such assignment", status=400)
    try:
        with transaction.atomic():
            UsedLaunch.objects.create(issuer=str(lti_launch.get_claim("iss"))[:255], nonce=f"choice:{launch_id}"[:255])
    except IntegrityError:
        return refused(request, "this choice was made already; open the tool again from the course to place another")
    if exam is not None:
        launch_url = request.build_absolute_uri(reverse("lti-launch"))
        return lti_launch.deep_link_response([exam_resource(launch_url, chosen.removeprefix(EXAM_CHOICE), exam)])
    if spec is None:  # neither an exam nor an assignment: refused above, before the choice was used
        return refused(request, "no such assignment", status=400)
    title = spec.title or spec.name
    resource = (
        DeepLinkResource()
        .set_url(request.build_absolute_uri(reverse("lti-launch")))
        .set_title(title)
        .set_custom_params({ASSIGNMENT_PARAMETER: spec.name, CANVAS_ASSIGNMENT_PARAMETER: "$Canvas.assignment.id"})
        .set_lineitem(
            LineItem()
            .set_label(title)
            .set_score_maximum(maximum(spec))
            .set_resource_id(spec.name)
            .set_tag(LINE_ITEM_TAG)
        )
    )
    return _back_to_the_platform(request, lti_launch, resource)


def _back_to_the_platform(request: HttpRequest, lti_launch, resource) -> HttpResponse:
    """The signed choice, posted to the platform's return address by a form that a static script
    submits (pylti1p3's own form is submitted by inline script, which the site's policy does not
    run). The policy's form-action lets this one page post to the platform's origin."""
    return_url = str((lti_launch.get_claim(DEEP_LINKING_SETTINGS) or {}).get("deep_link_return_url") or "")
    parts = urlsplit(return_url)
    origin = f"{parts.scheme}://{parts.netloc}"
    if not ORIGIN.fullmatch(origin):
        return refused(
            request, "the platform's deep linking return address is not an http or https address", status=400
        )
    signed = lti_launch.get_message_launch().get_deep_link().get_response_jwt([resource])
    response = render(request, "service/lti/lti_deep_link_return.html", {"return_url": return_url, "jwt": signed})
    return csp_update({"form-action": [origin]})(lambda _request: response)(request)


def jwks(request: HttpRequest) -> HttpResponse:
    """The tool's public keys, with which platforms check what it signs (its service requests,
    deep linking responses)."""
    return tool_jwks(request)


def _fill_roster(lti_launch) -> None:
    """On a staff member's launch: the platform course's students into the roster (best effort)."""
    try:
        sync_roster(lti_launch.context)
    except (LtiException, RequestException, ValueError) as exc:
        logger.warning("the roster could not be read from the platform: %s", one_line(str(exc)))


def _placeable_exams() -> list[tuple[str, str]]:
    """The exams set up to be taken online: (the deep link page's value, the title)."""
    from service.exams.models import OnlineExam
    from service.exams.sessions import folders

    names = set(folders())
    placeable = []
    for exam in OnlineExam.objects.filter(name__in=names).order_by("name"):
        key = _exam_key(exam.name)
        if key is not None:
            placeable.append((f"{EXAM_CHOICE}{exam.name}", key.title))
    return placeable


def _exam_key(name: str):
    """An online exam's key, or None for a name that is none (not listed, not set up, unreadable)."""
    from course.errors import ExamError
    from service.exams.models import OnlineExam
    from service.exams.sessions import folders, key_of

    folder = folders().get(name)
    if folder is None or not OnlineExam.objects.filter(name=name).exists():
        return None
    try:
        return key_of(folder)
    except ExamError:
        return None


def _exam_launch(lti_launch, name: str) -> HttpResponse:
    key = _exam_key(name)
    if key is None:
        return redirect("assignments")
    try:
        remember_exam_line_item(lti_launch, name, key)
    except (LtiException, RequestException) as exc:
        logger.warning("no line item for the exam %s: %s", name, one_line(str(exc)))
    return redirect("exam-take", name)
