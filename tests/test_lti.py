"""LTI 1.3, end to end and offline, against the test platform of tests/lti_platform.py on the
loopback: login initiation, launches as a student, an instructor and a teaching assistant, deep
linking, the score posted to the right line item for the right user when a hand-in is graded, the
roster from the platform's members, and every kind of bad launch refused with a clear page."""

from __future__ import annotations

import re
import subprocess
import sys
import uuid
from html import unescape
from urllib.parse import parse_qs, urlsplit

import jwt
import pytest
from django.test import Client
from jwcrypto.jwk import JWK

from gradebook.grades import latest_submissions, report_of
from gradebook.models import Student
from service.access import assignments, book
from service.lti.platforms import add_platform, platform_settings
from service.models import Member

from .conftest import ASSIGNMENTS, ROOT, needs_sandbox
from .lti_platform import INSTRUCTOR, LEARNER, TEACHING_ASSISTANT, Platform
from .test_service import grade_queue, hand_in

ASSIGNMENT = "sequences-and-attention"
PARTIAL = ASSIGNMENTS / ASSIGNMENT / "known" / "missing_sqrt.py"
LAUNCH_URL = "http://testserver/lti/launch/"


@pytest.fixture(scope="module")
def platform():
    made = Platform(tool_jwks=lambda: Client().get("/lti/jwks.json").json())
    made.client_id = f"tool-{uuid.uuid4().hex[:8]}"  # a registration of this module's own
    registration = add_platform(platform_settings(
        name="Test LMS", issuer=made.issuer, client_id=made.client_id, deployment_ids=[made.deployment_id],
        **made.endpoints,
    ))  # fmt: skip
    made.registration = registration
    yield made
    made.close()


def start_login(client: Client, platform: Platform, sub: str) -> dict[str, str]:
    """The platform starts the login; the tool sends the browser to the platform's authorization
    endpoint with a state and a nonce. Returns the parameters the platform receives."""
    started = client.get(
        "/lti/login/",
        {"iss": platform.issuer, "login_hint": sub, "target_link_uri": LAUNCH_URL, "lti_message_hint": "m1",
         "client_id": platform.client_id, "lti1p3_new_window": "1"},
    )  # fmt: skip
    assert started.status_code == 302, started.content
    where = urlsplit(started["Location"])
    assert f"http://{where.netloc}{where.path}" == platform.endpoints["auth_url"]
    params = {key: values[0] for key, values in parse_qs(where.query).items()}
    assert params["redirect_uri"] == LAUNCH_URL and params["client_id"] == platform.client_id
    assert params["response_mode"] == "form_post" and params["login_hint"] == sub
    return params


def launch(client: Client, platform: Platform, sub: str, roles: list[str], **token):
    params = start_login(client, platform, sub)
    id_token = platform.id_token(params["nonce"], sub, roles, **token)
    return client.post("/lti/launch/", {"id_token": id_token, "state": params["state"]})


def refusal(response) -> str:
    assert response.status_code == 403, response.content[:300]
    text = response.content.decode()
    assert "Traceback" not in text
    return unescape(re.search(r'<p class="error" role="alert">(.*?)</p>', text, re.S).group(1))


def test_an_instructor_places_an_assignment_by_deep_linking(platform):
    client = Client()
    chooser = launch(client, platform, "teacher-1", [INSTRUCTOR], message_type="LtiDeepLinkingRequest")
    assert chooser.status_code == 200
    page = chooser.content.decode()
    assert f'value="{ASSIGNMENT}"' in page
    launch_id = re.search(r'name="launch_id" value="([^"]+)"', page).group(1)
    answer = Client().post("/lti/deep-link/", {"launch_id": launch_id, "assignment": ASSIGNMENT})  # no cookies
    assert answer.status_code == 200
    form = answer.content.decode()
    assert platform.base + "/deep-link-return" in form
    response_jwt = re.search(r'name="JWT" value="([^"]+)"', form).group(1)
    keys = {key["kid"]: key for key in Client().get("/lti/jwks.json").json()["keys"]}
    header = jwt.get_unverified_header(response_jwt)
    claims = jwt.decode(response_jwt, JWK(**keys[header["kid"]]).export_to_pem(), algorithms=["RS256"],
                        audience=platform.issuer)  # fmt: skip
    assert claims["iss"] == platform.client_id
    assert claims["https://purl.imsglobal.org/spec/lti/claim/message_type"] == "LtiDeepLinkingResponse"
    assert claims["https://purl.imsglobal.org/spec/lti-dl/claim/data"] == "platform-data-7"
    (item,) = claims["https://purl.imsglobal.org/spec/lti-dl/claim/content_items"]
    assert item["type"] == "ltiResourceLink" and item["url"] == LAUNCH_URL
    assert item["custom"] == {"assignment": ASSIGNMENT}
    assert item["lineItem"]["scoreMaximum"] == 10 and item["lineItem"]["resourceId"] == ASSIGNMENT
    # The choice is good once.
    again = Client().post("/lti/deep-link/", {"launch_id": launch_id, "assignment": ASSIGNMENT})
    assert "made already" in refusal(again)


def test_a_student_cannot_place_assignments(platform):
    refused = launch(Client(), platform, "pupil-9", [LEARNER], message_type="LtiDeepLinkingRequest")
    assert "only the course's instructors" in refusal(refused)


@needs_sandbox
def test_a_student_launches_hands_in_and_the_score_reaches_the_line_item(platform, tmp_path):
    # The platform made the line item from the deep link; the roster knew the student by email.
    line_item = platform.add_line_item({"label": "Attention", "scoreMaximum": 10, "resourceId": ASSIGNMENT})
    Student.objects.create(student_id="s-ada", name="Ada", email="ada-7@example.edu", on_roster=True)
    client = Client()
    landed = launch(client, platform, "ada-7", [LEARNER], custom={"assignment": ASSIGNMENT},
                    lineitem=line_item["id"])  # fmt: skip
    assert landed.status_code == 302 and landed["Location"] == f"/assignments/{ASSIGNMENT}/"
    page = client.get(landed["Location"])
    assert page.status_code == 200  # signed in by the launch, as a student of the course
    member = Member.objects.get(user=page.wsgi_request.user)
    assert member.role == Member.STUDENT and member.student.student_id == "s-ada"
    assert member.student.sis_id == "SIS-ada-7"
    assert hand_in(client, PARTIAL).status_code == 302
    assert grade_queue() == 1
    (item, score), *_ = [entry for entry in platform.scores if entry[1]["userId"] == "ada-7"]
    assert item == line_item["id"]
    assert score["scoreMaximum"] == 10 and 0 < score["scoreGiven"] < 10  # missing_sqrt: partly right
    assert score["gradingProgress"] == "FullyGraded" and score["activityProgress"] == "Completed"
    latest = latest_submissions(book(), ASSIGNMENT)["s-ada"]
    assert score["scoreGiven"] == pytest.approx(report_of(book(), assignments()[ASSIGNMENT], latest).final_score)
    assert platform.refused_assertions == 0
    # Signing in through the platform, the student needs no password of ours, nor a link to set one.
    from service.accounts import sign_in_links

    sign_in_links("http://course.example/", tmp_path / "links.csv")
    assert "s-ada" not in (tmp_path / "links.csv").read_text()


def test_an_instructors_launch_fills_the_roster_and_a_ta_is_a_ta(platform):
    platform.members = [
        {"user_id": "m-1", "status": "Active", "name": "Mia One", "email": "mia@example.edu",
         "lis_person_sourcedid": "SIS-M1", "roles": [LEARNER]},
        {"user_id": "m-2", "status": "Active", "name": "Noor Two", "email": "noor@example.edu", "roles": [LEARNER]},
        {"user_id": "t-1", "status": "Active", "name": "Teacher", "roles": [INSTRUCTOR]},
        {"user_id": "m-3", "status": "Inactive", "name": "Gone", "email": "gone@example.edu", "roles": [LEARNER]},
    ]  # fmt: skip
    client = Client()
    other = "attention-not-explanation"  # no line item for it yet: the tool makes one through AGS
    landed = launch(client, platform, "teacher-2", [INSTRUCTOR], custom={"assignment": other})
    assert landed.status_code == 302 and landed["Location"] == f"/assignments/{other}/"
    (made,) = [item for item in platform.line_items if item.get("resourceId") == other]
    assert made["scoreMaximum"] == sum(question.points for question in assignments()[other].questions)
    assert Member.objects.get(user=client.get("/assignments/").wsgi_request.user).role == Member.INSTRUCTOR
    assert Student.objects.get(sis_id="SIS-M1").name == "Mia One"
    assert Student.objects.get(email="noor@example.edu").on_roster
    assert not Student.objects.filter(email="gone@example.edu").exists()
    assert not Student.objects.filter(name="Teacher").exists()
    assistant = Client()
    launch(assistant, platform, "assistant-1", [INSTRUCTOR, TEACHING_ASSISTANT], custom={"assignment": ASSIGNMENT})
    user = assistant.get("/assignments/").wsgi_request.user
    assert Member.objects.get(user=user).role == Member.TA
    assert assistant.get(f"/staff/gradebook/{ASSIGNMENT}/").status_code == 200
    assert assistant.get("/staff/platforms/").status_code == 404  # course settings are the instructor's


def test_bad_launches_are_refused_with_a_clear_page(platform):
    other_key = JWK.generate(kty="RSA", size=2048, kid=platform.kid)  # the platform's kid, another key
    assert "Signature verification failed" in refusal(launch(Client(), platform, "x-1", [LEARNER], key=other_key))
    assert "expired" in refusal(launch(Client(), platform, "x-2", [LEARNER], expires_in=-120))
    refused = launch(Client(), platform, "x-3", [LEARNER], deployment_id="deployment-unknown")
    assert "deployment of the tool is not registered" in refusal(refused)
    # A good launch, then the same token and state again: a replay.
    client = Client()
    params = start_login(client, platform, "x-4")
    posted = {"id_token": platform.id_token(params["nonce"], "x-4", [LEARNER]), "state": params["state"]}
    assert client.post("/lti/launch/", posted).status_code == 302
    assert "replayed" in refusal(client.post("/lti/launch/", posted))
    # A token for a nonce the tool never issued; a state it never set; a login from an unknown platform.
    client = Client()
    params = start_login(client, platform, "x-5")
    forged = {"id_token": platform.id_token("nonce-of-my-own", "x-5", [LEARNER]), "state": params["state"]}
    assert "Invalid Nonce" in refusal(client.post("/lti/launch/", forged))
    assert "State not found" in refusal(Client().post("/lti/launch/", {**posted, "state": "state-of-my-own"}))
    by_registration = Client().get(f"/lti/login/{platform.registration.uuid}/", {
        "iss": platform.issuer, "login_hint": "x", "target_link_uri": LAUNCH_URL, "lti1p3_new_window": "1"})  # fmt: skip
    assert by_registration.status_code == 302  # no client id sent: the address names the registration
    unknown = Client().get(f"/lti/login/{uuid.uuid4()}/", {"iss": "https://unknown.example", "login_hint": "x",
                                                         "target_link_uri": LAUNCH_URL, "lti1p3_new_window": "1"})  # fmt: skip
    assert "could not start" in refusal(unknown)
    assert (
        not Member.objects.filter(user__username__startswith="lti-")
        .filter(user__last_name__in=["x-1", "x-2", "x-3", "x-5"])
        .exists()
    )  # no account for a refused launch


def test_the_instructor_registers_a_platform_on_the_page_and_with_the_command(platform, tmp_path):
    from .test_service import student

    _, instructor = student(Member.INSTRUCTOR)
    page = instructor.get("/staff/platforms/")
    assert page.status_code == 200 and f"/lti/login/{platform.registration.uuid}/" in page.content.decode()
    assert "http://testserver/lti/jwks.json" in page.content.decode()
    token = instructor.cookies["csrftoken"].value
    bad = instructor.post("/staff/platforms/", {"csrfmiddlewaretoken": token, "name": "Moodle", "issuer": "https://m",
                          "client_id": "c", "deployment_ids": "1", "auth_url": "http://moodle.example/auth",
                          "token_url": "https://m/t", "keyset_url": "https://m/k"})  # fmt: skip
    assert bad.status_code == 400 and "auth_url: &#x27;http://moodle.example/auth&#x27; is not an https://" in (
        bad.content.decode()
    )
    good = instructor.post("/staff/platforms/", {"csrfmiddlewaretoken": token, "name": "Moodle", "issuer": "https://m",
                           "client_id": "c", "deployment_ids": "1 2", "auth_url": "https://m/auth",
                           "token_url": "https://m/t", "keyset_url": "https://m/k"})  # fmt: skip
    assert good.status_code == 302
    from lti_tool.models import LtiRegistration

    registered = LtiRegistration.objects.get(issuer="https://m", client_id="c")
    assert sorted(registered.deployments.filter(is_active=True).values_list("deployment_id", flat=True)) == ["1", "2"]
    database = tmp_path / "cli.sqlite3"
    command = [sys.executable, "-m", "autograder", "--course", str(ROOT), "lti", "add-platform", "--name", "Canvas",
               "--issuer", "https://canvas.instructure.com", "--client-id", "10000000000001",
               "--deployment-id", "7:abc", "--auth-url", "https://sso.canvaslms.com/api/lti/authorize_redirect",
               "--token-url", "https://sso.canvaslms.com/login/oauth2/token",
               "--keyset-url", "https://sso.canvaslms.com/api/lti/security/jwks",
               "--server", "https://grader.example.edu", "--database-url", f"sqlite:///{database}"]  # fmt: skip
    completed = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert completed.returncode == 0, completed.stderr
    assert "login initiation:  https://grader.example.edu/lti/login/" in completed.stdout
    assert "public keyset:     https://grader.example.edu/lti/jwks.json" in completed.stdout
    wrong = subprocess.run([*command[:-4], "--keyset-url", "ftp://x", *command[-4:]], capture_output=True, text=True,
                           timeout=120, cwd=ROOT)  # fmt: skip
    assert wrong.returncode == 2
    assert wrong.stderr.strip().endswith("keyset_url: 'ftp://x' is not an https:// address (http:// only on this "
                                         "machine, for tests)")  # fmt: skip
    assert "Traceback" not in wrong.stderr
