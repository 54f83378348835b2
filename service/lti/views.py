"""The platform's requests to the tool: OIDC login initiation, launches (a resource link, or deep
linking to place an assignment), and the tool's public keys. Every refused launch (a bad signature,
an expired token, a replayed one, an unknown or inactive deployment, an unknown platform) gets a
page that says why, never a traceback."""

from __future__ import annotations

import logging

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

from ..access import assignments
from ..errors import LtiError
from ..models import Member, UsedLaunch
from .exam_scores import EXAM_CHOICE, EXAM_PARAMETER, exam_resource, remember_exam_line_item
from .identities import account_for, role_of
from .roster import sync_roster
from .scores import LINE_ITEM_TAG, maximum, remember_line_item

logger = logging.getLogger("service.lti")
BACKEND = "django.contrib.auth.backends.ModelBackend"
ASSIGNMENT_PARAMETER = "assignment"  # the custom parameter a placed link carries


def refused(request: HttpRequest, why: object, status: int = 403) -> HttpResponse:
    text = str(why).strip() or type(why).__name__
    return render(request, "service/lti_refused.html", {"why": text[:300]}, status=status)


@method_decorator((csrf_exempt, xframe_options_exempt), name="dispatch")
class Login(OIDCLoginInitView):
    """Step one: the platform names itself; the tool sends the browser back to it with a state and
    a nonce (pylti1p3 keeps them), asking for the signed launch."""

    def get_oidc_response(self, request, registration_uuid, params):
        from pylti1p3.contrib.django import DjangoCacheDataStorage, DjangoOIDCLogin

        target_link_uri = params.get("target_link_uri")
        if not target_link_uri:
            return refused(request, "the platform's login could not start: it named no target_link_uri", status=400)
        login_request = DjangoOIDCLogin(request, _ToolConfig(registration_uuid),
                                        launch_data_storage=DjangoCacheDataStorage())  # fmt: skip
        try:
            return login_request.enable_check_cookies(self.main_msg, self.click_msg, self.loading_msg).redirect(
                self.get_redirect_url(target_link_uri)
            )
        except (LtiException, OIDCException) as exc:
            return refused(request, f"the platform's login could not start: {exc}")


class _ToolConfig(DjangoToolConfig):
    """django-lti's registrations, also found by the address's registration alone when the platform
    sends no client id (django-lti would look for an empty one)."""

    def find_registration_by_params(self, iss, client_id, *args, **kwargs):
        if not client_id and self.registration_uuid is not None:
            return self.find_registration_by_issuer(iss)
        return super().find_registration_by_params(iss, client_id, *args, **kwargs)


@method_decorator(csrf_exempt, name="dispatch")
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
        return refused(request, "this deployment of the tool is not registered here; the instructor adds its "
                       "deployment id with `autograder lti add-platform` or on the Course platforms page")  # fmt: skip

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
            logger.warning("no line item for %s: %s", spec.name, exc)
        return redirect("assignment", spec.name)

    def handle_deep_linking_launch(self, request, lti_launch):
        if role_of(lti_launch.roles_claim or []) == Member.STUDENT:
            return refused(request, "only the course's instructors and teaching assistants place assignments")
        response = render(request, "service/lti_deep_link.html", {
            "assignments": list(assignments().values()), "launch_id": lti_launch.get_launch_id(),
            "exams": _placeable_exams(),
        })  # fmt: skip
        response.xframe_options_exempt = True  # the platform shows this page in its own dialog
        return response


@csrf_exempt
@xframe_options_exempt
@require_POST
def deep_link_choice(request: HttpRequest) -> HttpResponse:
    """The instructor's choice, sent back to the platform as a signed LtiResourceLink with a line
    item. Shown in the platform's frame, where the site's cookies may not be sent: the launch's id
    (unguessable, kept by pylti1p3 for a limited time) stands for the session, and is used once."""
    from lti_tool.utils import get_launch_from_request
    from pylti1p3.deep_link_resource import DeepLinkResource
    from pylti1p3.lineitem import LineItem

    launch_id = request.POST.get("launch_id", "")
    if not launch_id.startswith("lti1p3-launch-"):
        return refused(request, "this choice does not come from a deep linking launch", status=400)
    try:
        lti_launch = get_launch_from_request(request, launch_id)
    except LtiException:
        return refused(request, "this choice came too late, or twice; open the tool again from the course")
    if not lti_launch.is_deep_link_launch or role_of(lti_launch.roles_claim or []) == Member.STUDENT:
        return refused(request, "only the course's instructors and teaching assistants place assignments")
    chosen = request.POST.get(ASSIGNMENT_PARAMETER, "")
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
    assert spec is not None
    title = spec.title or spec.name
    resource = (
        DeepLinkResource().set_url(request.build_absolute_uri(reverse("lti-launch"))).set_title(title)
        .set_custom_params({ASSIGNMENT_PARAMETER: spec.name})
        .set_lineitem(LineItem().set_label(title).set_score_maximum(maximum(spec)).set_resource_id(spec.name)
                      .set_tag(LINE_ITEM_TAG))
    )  # fmt: skip
    return lti_launch.deep_link_response([resource])


def jwks(request: HttpRequest) -> HttpResponse:
    """The tool's public keys, with which platforms check what it signs (its service requests,
    deep linking responses)."""
    return tool_jwks(request)


def _fill_roster(lti_launch) -> None:
    """On a staff member's launch: the platform course's students into the roster (best effort)."""
    try:
        sync_roster(lti_launch.context)
    except (LtiException, RequestException, ValueError) as exc:
        logger.warning("the roster could not be read from the platform: %s", exc)


def _placeable_exams() -> list[tuple[str, str]]:
    """The exams set up to be taken online: (the deep link page's value, the title)."""
    from ..exam_models import OnlineExam
    from ..exam_sessions import folders

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

    from ..exam_models import OnlineExam
    from ..exam_sessions import folders, key_of

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
        logger.warning("no line item for the exam %s: %s", name, exc)
    return redirect("exam-take", name)
