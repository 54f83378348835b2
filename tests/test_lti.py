"""LTI 1.3, end to end and offline, against the test platform of tests/lti_platform.py on the
loopback: login initiation, launches as a student, an instructor and a teaching assistant, deep
linking, the score posted to the right line item for the right user when a hand-in is graded (from
the outbox, outside grading: a platform that hangs or is down slows no grading and loses no score;
an assignment placed again gets its scores in its new column), the roster from the platform's
members, and every kind of bad launch refused with a clear page."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import uuid
from datetime import UTC, timedelta
from html import unescape
from urllib.parse import parse_qs, urlsplit

import jwt
import pytest
from django.test import Client
from jwcrypto.jwk import JWK

from gradebook.grades import latest_submissions, report_of
from gradebook.models import Student
from service.accounts.models import Member
from service.core.access import assignments, book
from service.handin.models import Job
from service.lti.models import ScoreToSend
from service.lti.outbox import NO_COLUMN, ScoreSender, send_due
from service.lti.platforms import add_platform, platform_settings
from service.lti.scores import queue_scores, score_changed

from .conftest import ASSIGNMENTS, ROOT, needs_sandbox
from .lti_platform import INSTRUCTOR, LEARNER, TEACHING_ASSISTANT, Platform
from .served import grade_queue, hand_in, launch_chromium, needs_browser

pytestmark = pytest.mark.usefixtures("empty_queue")  # a job another test left is never graded or counted here

ASSIGNMENT = "sequences-and-attention"
KNOWN = ASSIGNMENTS / ASSIGNMENT / "known"
PARTIAL = KNOWN / "missing_sqrt.py"
LAUNCH_URL = "http://testserver/lti/launch/"


def registered_platform(name: str = "Test LMS") -> Platform:
    made = Platform(tool_jwks=lambda: Client().get("/lti/jwks.json").json())
    made.client_id = f"tool-{uuid.uuid4().hex[:8]}"  # a registration of its own
    registration = add_platform(
        platform_settings(
            name=name,
            issuer=made.issuer,
            client_id=made.client_id,
            deployment_ids=[made.deployment_id],
            **made.endpoints,
        )
    )
    made.registration = registration
    return made


@pytest.fixture(scope="module")
def platform():
    made = registered_platform()
    yield made
    made.close()


@pytest.fixture
def own_platform():
    """A platform of the test's own (one that hangs or goes down troubles no other test)."""
    made = registered_platform(f"LMS {uuid.uuid4().hex[:6]}")
    yield made
    made.close()


def start_login(client: Client, platform: Platform, sub: str) -> dict[str, str]:
    """The platform starts the login; the tool sends the browser to the platform's authorization
    endpoint with a state and a nonce. Returns the parameters the platform receives."""
    started = client.get(
        "/lti/login/",
        {
            "iss": platform.issuer,
            "login_hint": sub,
            "target_link_uri": LAUNCH_URL,
            "lti_message_hint": "m1",
            "client_id": platform.client_id,
            "lti1p3_new_window": "1",
        },
    )
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
    claims = jwt.decode(
        response_jwt, JWK(**keys[header["kid"]]).export_to_pem(), algorithms=["RS256"], audience=platform.issuer
    )
    assert claims["iss"] == platform.client_id
    assert claims["https://purl.imsglobal.org/spec/lti/claim/message_type"] == "LtiDeepLinkingResponse"
    assert claims["https://purl.imsglobal.org/spec/lti-dl/claim/data"] == "platform-data-7"
    (item,) = claims["https://purl.imsglobal.org/spec/lti-dl/claim/content_items"]
    assert item["type"] == "ltiResourceLink" and item["url"] == LAUNCH_URL
    # Canvas fills in its assignment's id at each launch of the placed link (the grade file's column id).
    assert item["custom"] == {"assignment": ASSIGNMENT, "canvas_assignment_id": "$Canvas.assignment.id"}
    assert item["lineItem"]["scoreMaximum"] == 10 and item["lineItem"]["resourceId"] == ASSIGNMENT
    # The choice is good once.
    again = Client().post("/lti/deep-link/", {"launch_id": launch_id, "assignment": ASSIGNMENT})
    assert "made already" in refusal(again)


def test_the_canvas_id_a_launch_gives_names_the_grade_files_column(platform, tmp_path):
    """A link placed in Canvas by deep linking launches with its assignment's Canvas id; the Canvas
    grade file then writes "Title (id)", which Canvas's importer matches. A platform that does not fill
    the variable in sends it as it is, and nothing is kept; assignment.toml's id wins, said when it differs."""
    from gradebook.exports import export_grades

    spec = assignments()[ASSIGNMENT]
    launch(
        Client(),
        platform,
        "teacher-9",
        [INSTRUCTOR],
        custom={"assignment": ASSIGNMENT, "canvas_assignment_id": "$Canvas.assignment.id"},
    )
    path, table = export_grades(book(), [spec], "canvas", tmp_path / "before.csv")
    assert table.canvas_ids == {} and any("by title only" in warning for warning in table.warnings)
    launch(
        Client(), platform, "teacher-9", [INSTRUCTOR], custom={"assignment": ASSIGNMENT, "canvas_assignment_id": "4321"}
    )
    path, table = export_grades(book(), [spec], "canvas", tmp_path / "after.csv")
    header = path.read_text(encoding="utf-8").splitlines()[0]
    assert header.endswith(f"{spec.title} (4321)") and table.canvas_ids == {ASSIGNMENT: 4321}
    assert not any("by title only" in warning for warning in table.warnings)
    pinned = spec.model_copy(update={"canvas_assignment_id": 99})
    path, table = export_grades(book(), [pinned], "canvas", tmp_path / "pinned.csv")
    assert path.read_text(encoding="utf-8").splitlines()[0].endswith(f"{spec.title} (99)")
    assert any("is not the id Canvas's launches of it give (4321)" in warning for warning in table.warnings)


def test_a_student_cannot_place_assignments(platform):
    refused = launch(Client(), platform, "pupil-9", [LEARNER], message_type="LtiDeepLinkingRequest")
    assert "only the course's instructors" in refusal(refused)


@needs_sandbox
def test_a_student_launches_hands_in_and_the_score_reaches_the_line_item(platform, tmp_path):
    # The platform made the line item from the deep link; the roster knew the student by email.
    line_item = platform.add_line_item({"label": "Attention", "scoreMaximum": 10, "resourceId": ASSIGNMENT})
    Student.objects.create(student_id="s-ada", name="Ada", email="ada-7@example.edu", on_roster=True)
    client = Client()
    landed = launch(client, platform, "ada-7", [LEARNER], custom={"assignment": ASSIGNMENT}, lineitem=line_item["id"])
    assert landed.status_code == 302 and landed["Location"] == f"/assignments/{ASSIGNMENT}/"
    page = client.get(landed["Location"])
    assert page.status_code == 200  # signed in by the launch, as a student of the course
    member = Member.objects.get(user=page.wsgi_request.user)
    assert member.role == Member.STUDENT and member.student.student_id == "s-ada"
    assert member.student.sis_id == "SIS-ada-7"
    assert hand_in(client, PARTIAL).status_code == 302
    assert grade_queue() == 1
    # Graded: the score waits in the outbox, written with the grade; the sender posts it.
    (waiting,) = ScoreToSend.objects.filter(lti_user__sub="ada-7", line_item__url=line_item["id"])
    assert waiting.state == ScoreToSend.PENDING and waiting.student.student_id == "s-ada"
    assert posted(platform, "ada-7") == []
    send_due()
    (item, score), *_ = [entry for entry in platform.scores if entry[1]["userId"] == "ada-7"]
    assert item == line_item["id"]
    assert score["scoreMaximum"] == 10 and 0 < score["scoreGiven"] < 10  # missing_sqrt: partly right
    assert score["gradingProgress"] == "FullyGraded" and score["activityProgress"] == "Completed"
    latest = latest_submissions(book(), ASSIGNMENT)["s-ada"]
    assert score["scoreGiven"] == pytest.approx(report_of(book(), assignments()[ASSIGNMENT], latest).final_score)
    assert platform.refused_assertions == 0
    # Signing in through the platform, the student needs no password of ours, nor a link to set one.
    from service.accounts.members import sign_in_links

    sign_in_links("http://course.example/", tmp_path / "links.csv")
    assert "s-ada" not in (tmp_path / "links.csv").read_text()


def test_an_instructors_launch_fills_the_roster_and_a_ta_is_a_ta(platform):
    platform.members = [
        {
            "user_id": "m-1",
            "status": "Active",
            "name": "Mia One",
            "email": "mia@example.edu",
            "lis_person_sourcedid": "SIS-M1",
            "roles": [LEARNER],
        },
        {"user_id": "m-2", "status": "Active", "name": "Noor Two", "email": "noor@example.edu", "roles": [LEARNER]},
        {"user_id": "t-1", "status": "Active", "name": "Teacher", "roles": [INSTRUCTOR]},
        {"user_id": "m-3", "status": "Inactive", "name": "Gone", "email": "gone@example.edu", "roles": [LEARNER]},
    ]
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
    by_registration = Client().get(
        f"/lti/login/{platform.registration.uuid}/",
        {"iss": platform.issuer, "login_hint": "x", "target_link_uri": LAUNCH_URL, "lti1p3_new_window": "1"},
    )
    assert by_registration.status_code == 302  # no client id sent: the address names the registration
    unknown = Client().get(
        f"/lti/login/{uuid.uuid4()}/",
        {"iss": "https://unknown.example", "login_hint": "x", "target_link_uri": LAUNCH_URL, "lti1p3_new_window": "1"},
    )
    assert "could not start" in refusal(unknown)
    assert (
        not Member.objects.filter(user__username__startswith="lti-")
        .filter(user__last_name__in=["x-1", "x-2", "x-3", "x-5"])
        .exists()
    )  # no account for a refused launch


def test_the_instructor_registers_a_platform_on_the_page_and_with_the_command(platform, tmp_path):
    from .served import student

    _, instructor = student(Member.INSTRUCTOR)
    page = instructor.get("/staff/platforms/")
    assert page.status_code == 200 and f"/lti/login/{platform.registration.uuid}/" in page.content.decode()
    assert "http://testserver/lti/jwks.json" in page.content.decode()
    token = instructor.cookies["csrftoken"].value
    bad = instructor.post(
        "/staff/platforms/",
        {
            "csrfmiddlewaretoken": token,
            "name": "Moodle",
            "issuer": "https://m",
            "client_id": "c",
            "deployment_ids": "1",
            "auth_url": "http://moodle.example/auth",
            "token_url": "https://m/t",
            "keyset_url": "https://m/k",
        },
    )
    assert bad.status_code == 400 and "&#x27;http://moodle.example/auth&#x27; is not an https://" in (
        bad.content.decode()
    )
    assert "auth_url:" not in bad.content.decode()  # the field by its label, never its internal name
    good = instructor.post(
        "/staff/platforms/",
        {
            "csrfmiddlewaretoken": token,
            "name": "Moodle",
            "issuer": "https://m",
            "client_id": "c",
            "deployment_ids": "1 2",
            "auth_url": "https://m/auth",
            "token_url": "https://m/t",
            "keyset_url": "https://m/k",
        },
    )
    assert good.status_code == 302
    from lti_tool.models import LtiRegistration

    registered = LtiRegistration.objects.get(issuer="https://m", client_id="c")
    assert sorted(registered.deployments.filter(is_active=True).values_list("deployment_id", flat=True)) == ["1", "2"]
    database = tmp_path / "cli.sqlite3"
    command = [
        sys.executable,
        "-m",
        "autograder",
        "--course",
        str(ROOT),
        "lti",
        "add-platform",
        "--name",
        "Canvas",
        "--issuer",
        "https://canvas.instructure.com",
        "--client-id",
        "10000000000001",
        "--deployment-id",
        "7:abc",
        "--auth-url",
        "https://sso.canvaslms.com/api/lti/authorize_redirect",
        "--token-url",
        "https://sso.canvaslms.com/login/oauth2/token",
        "--keyset-url",
        "https://sso.canvaslms.com/api/lti/security/jwks",
        "--server",
        "https://grader.example.edu",
        "--database-url",
        f"sqlite:///{database}",
    ]
    completed = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert completed.returncode == 0, completed.stderr
    assert "login initiation:  https://grader.example.edu/lti/login/" in completed.stdout
    assert "public keyset:     https://grader.example.edu/lti/jwks.json" in completed.stdout
    wrong = subprocess.run(
        [*command[:-4], "--keyset-url", "ftp://x", *command[-4:]], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert wrong.returncode == 2
    assert wrong.stderr.strip().endswith(
        "keyset_url: 'ftp://x' is not an https:// address (http:// only on this machine, for tests)"
    )
    assert "Traceback" not in wrong.stderr


# --- the outbox: scores sent outside grading -------------------------------------------------------


def placed(platform: Platform) -> dict:
    """The assignment's column, as deep linking makes it."""
    return platform.add_line_item(
        {"label": "Attention", "scoreMaximum": 10, "resourceId": ASSIGNMENT, "tag": "gradewright"}
    )


def student_launch(
    platform: Platform, sub: str, line_item: dict, client: Client | None = None, link: str = "link-1"
) -> Client:
    client = client or Client()
    landed = launch(
        client,
        platform,
        sub,
        [LEARNER],
        custom={"assignment": ASSIGNMENT},
        lineitem=line_item["id"],
        resource_link=link,
    )
    assert landed.status_code == 302 and landed["Location"] == f"/assignments/{ASSIGNMENT}/", landed.content[:300]
    return client


def posted(platform: Platform, sub: str) -> list[tuple[str, float]]:
    return [(item, score["scoreGiven"]) for item, score in platform.scores if score["userId"] == sub]


def rows_of(platform: Platform):
    return ScoreToSend.objects.filter(line_item__context__deployment__registration=platform.registration)


def _student_of(sub: str) -> Student:
    from lti_tool.models import LtiUser

    return LtiUser.objects.filter(sub=sub).order_by("-id").first().auth_user.member.student


def score_of(sub: str) -> float:
    student = _student_of(sub)
    latest = latest_submissions(book(), ASSIGNMENT)[student.student_id]
    return report_of(book(), assignments()[ASSIGNMENT], latest).final_score


def wait_for(condition, what: str, seconds: float = 120.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"{what} never happened"
        time.sleep(0.05)


@needs_sandbox
def test_an_assignment_placed_again_gets_its_scores_in_the_new_column(own_platform, capsys):
    from lti_tool.models import LtiLineItem

    platform = own_platform
    first = placed(platform)
    client = student_launch(platform, "grace-1", first)
    assert hand_in(client, PARTIAL).status_code == 302 and grade_queue() >= 1
    send_due()
    assert posted(platform, "grace-1") == [(first["id"], pytest.approx(7.375))]
    # The instructor deletes the column and places the assignment again: the next launch's claim
    # names the new column, and the next grade goes there, none to the old one.
    platform.delete_line_item(first["id"])
    second = placed(platform)
    student_launch(platform, "grace-1", second, client)
    assert hand_in(client, KNOWN / "correct_loops.py").status_code == 302 and grade_queue() >= 1
    send_due()
    assert posted(platform, "grace-1") == [(first["id"], pytest.approx(7.375)), (second["id"], 10.0)]
    # Deleted and placed again with no launch since: the old column's 404 sends the tool to the
    # course's line items, where it finds the assignment's new one (by its resource id).
    platform.delete_line_item(second["id"])
    third = placed(platform)
    spec, student = assignments()[ASSIGNMENT], _student_of("grace-1")
    score_changed(spec, student)  # the same score, which the platform has (it says nothing of the column): not sent
    assert send_due().tried == 0
    book().run(lambda: queue_scores(book(), spec, student, again=True))  # as `lti send-scores ASSIGNMENT` does
    outcome = send_due()
    assert posted(platform, "grace-1")[-1] == (third["id"], 10.0)
    assert platform.results[(third["id"], "grace-1")]["scoreGiven"] == 10.0
    (stored,) = LtiLineItem.objects.filter(
        context__deployment__registration=platform.registration, resource_id=ASSIGNMENT
    )
    assert stored.url == third["id"] and outcome.failed == []
    # Deleted for good: the score fails with what to do, and the command lists it (exit 1).
    platform.delete_line_item(third["id"])
    book().run(lambda: queue_scores(book(), spec, student, again=True))
    outcome = send_due()
    (row,) = rows_of(platform)
    assert row.state == ScoreToSend.FAILED and row.last_error == NO_COLUMN
    assert any(NO_COLUMN in line and student.student_id in line for line in outcome.failed)
    from commands.autograder import main

    capsys.readouterr()
    assert main(["--course", str(ROOT), "lti", "send-scores"]) == 1
    out, err = capsys.readouterr()
    (line,) = [line for line in err.splitlines() if student.student_id in line]
    assert line.startswith(f"{student.student_id}: {ASSIGNMENT} (10 / 10) to ")
    assert line.endswith(f" on {platform.registration.name}: {NO_COLUMN}")
    assert "could not be sent" in out
    # Placed again and launched: the claim's column takes the score, and the command sends it.
    fourth = placed(platform)
    student_launch(platform, "grace-1", fourth, client)
    assert main(["--course", str(ROOT), "lti", "send-scores", ASSIGNMENT]) in (0, 1)  # other tests' platforms are gone
    assert platform.results[(fourth["id"], "grace-1")]["scoreGiven"] == 10.0
    assert rows_of(platform).get().state == ScoreToSend.SENT


@needs_sandbox
def test_an_assignment_placed_twice_sends_each_students_score_to_the_column_they_launched(own_platform):
    """Two links to one assignment in one course, each with its column: each student's score goes to
    the column of the link they launched, and follows them when they launch the other."""
    platform = own_platform
    first, second = placed(platform), placed(platform)
    ann = student_launch(platform, "twice-1", first, link="link-a")
    bo = student_launch(platform, "twice-2", second, link="link-b")
    assert hand_in(ann, PARTIAL).status_code == 302 and hand_in(bo, KNOWN / "correct_loops.py").status_code == 302
    assert grade_queue() >= 2
    send_due()
    assert posted(platform, "twice-1") == [(first["id"], pytest.approx(7.375))]
    assert posted(platform, "twice-2") == [(second["id"], 10.0)]
    # Each link keeps its own column: launching one moves neither the other's column nor its students.
    student_launch(platform, "twice-2", second, bo, link="link-b")
    student_launch(platform, "twice-1", first, ann, link="link-a")
    assert sorted(rows_of(platform).values_list("line_item__url", flat=True)) == sorted([first["id"], second["id"]])
    # Ann opens the other link: her next score goes to its column, and to no other.
    student_launch(platform, "twice-1", second, ann, link="link-b")
    assert hand_in(ann, KNOWN / "correct_vectorised.py").status_code == 302 and grade_queue() >= 1
    send_due()
    assert posted(platform, "twice-1") == [(first["id"], pytest.approx(7.375)), (second["id"], 10.0)]
    assert posted(platform, "twice-2") == [(second["id"], 10.0)]


def test_a_slow_platform_stores_each_score_once(own_platform):
    """A platform that stores a score and answers after the sender stopped waiting: the score is
    read back from the platform's results before it is posted again, and not posted twice; a
    score that has not changed since it was sent is not posted again either."""
    platform = own_platform
    column = placed(platform)
    student_launch(platform, "slow-1", column)
    spec, student = assignments()[ASSIGNMENT], _student_of("slow-1")
    score_changed(spec, student)  # nothing handed in yet: 0, not ready
    platform.slow(2.0)
    started = timezone_now()
    outcome = send_due(now=started, timeout=0.5)  # the platform answers after the sender's wait
    assert any("did not answer in time" in line for line in outcome.waiting)
    (row,) = rows_of(platform)
    assert row.state == ScoreToSend.PENDING and row.unconfirmed
    assert len(posted(platform, "slow-1")) == 1  # it has the score all the same
    platform.slow(0)
    send_due(now=started + timedelta(hours=1))  # due again
    (row,) = rows_of(platform)
    assert row.state == ScoreToSend.SENT and not row.unconfirmed
    assert posted(platform, "slow-1") == [(column["id"], 0.0)]  # read back, not posted again
    score_changed(spec, student)  # the same score again (a regrade that changes nothing)
    assert send_due().tried == 0 and len(posted(platform, "slow-1")) == 1


@needs_sandbox
@pytest.mark.timeout(300)
def test_a_platform_that_hangs_slows_no_grading_and_gets_its_scores_when_it_answers(own_platform):
    platform = own_platform
    column = placed(platform)
    students = {sub: student_launch(platform, sub, column) for sub in ("hang-1", "hang-2", "hang-3")}
    platform.hang()
    sender = ScoreSender(timeout=300, poll=0.05).start()  # the worker's sender, with a patient timeout
    try:
        assert hand_in(students["hang-1"], PARTIAL).status_code == 302 and grade_queue() >= 1
        wait_for(lambda: platform.held >= 1, "the sender's request to the hung platform")
        # The sender is stuck on the platform; grading goes on without it.
        assert hand_in(students["hang-2"], KNOWN / "correct_loops.py").status_code == 302
        assert hand_in(students["hang-3"], KNOWN / "wrong_frequencies.py").status_code == 302
        assert hand_in(students["hang-1"], KNOWN / "correct_vectorised.py").status_code == 302
        assert grade_queue() >= 3
        assert platform.held >= 1 and platform.scores == []  # still hanging: nothing answered
        jobs = Job.objects.filter(student__in=[_student_of(sub) for sub in students])
        assert jobs.count() == 4 and set(jobs.values_list("state", flat=True)) == {Job.GRADED}
        assert rows_of(platform).count() == 3
        for row in rows_of(platform):  # waiting, and none tried by the worker on its way (a try leaves its error)
            assert (row.state, row.attempts, row.last_error) == (ScoreToSend.PENDING, 0, "")
        assert platform.held == 1  # the sender's one request; the worker made none
        platform.answer()
        wait_for(
            lambda: set(rows_of(platform).values_list("state", flat=True)) == {ScoreToSend.SENT},
            "every score sent once the platform answers",
        )
    finally:
        platform.answer()
        sender.stop(wait=30)
    for sub in students:
        assert platform.results[(column["id"], sub)]["scoreGiven"] == pytest.approx(score_of(sub))
    assert platform.results[(column["id"], "hang-1")]["scoreGiven"] == 10.0  # the newer of hang-1's two grades


@needs_sandbox
def test_a_platform_down_then_back_gets_every_score_once_with_the_latest(own_platform):
    platform = own_platform
    column = placed(platform)
    ann, bo = student_launch(platform, "down-1", column), student_launch(platform, "down-2", column)
    platform.go_down()
    assert hand_in(ann, PARTIAL).status_code == 302 and hand_in(bo, KNOWN / "correct_loops.py").status_code == 302
    assert grade_queue() >= 2
    started = timezone_now()
    outcome = send_due(now=started)
    assert rows_of(platform).count() == 2
    for row in rows_of(platform):
        assert row.state == ScoreToSend.PENDING and row.attempts == 1
        assert row.last_error == "the platform could not be reached" and row.next_attempt_at > started
    assert sum("could not be reached" in line for line in outcome.waiting) >= 2
    send_due(now=started)  # not due yet: the backoff holds them
    assert set(rows_of(platform).values_list("attempts", flat=True)) == {1}
    later = started + timedelta(hours=1)
    send_due(now=later)  # due, still down: a second attempt, a longer wait
    first_wait = min(row.next_attempt_at for row in rows_of(platform)) - later
    assert set(rows_of(platform).values_list("attempts", flat=True)) == {2} and first_wait > timedelta(seconds=15)
    # A newer score for Ann while the platform is down: it replaces the one waiting.
    assert hand_in(ann, KNOWN / "wrong_frequencies.py").status_code == 302 and grade_queue() >= 1
    assert rows_of(platform).count() == 2
    graded = {row.lti_user.sub: row.graded_at for row in rows_of(platform).select_related("lti_user")}
    platform.come_back()
    send_due(now=later + timedelta(hours=2))
    assert set(rows_of(platform).values_list("state", flat=True)) == {ScoreToSend.SENT}
    assert sorted(score["userId"] for _, score in platform.scores) == ["down-1", "down-2"]  # once each
    assert platform.results[(column["id"], "down-1")]["scoreGiven"] == pytest.approx(score_of("down-1"))
    assert platform.results[(column["id"], "down-2")]["scoreGiven"] == 10.0
    assert score_of("down-1") != pytest.approx(7.375)  # the latest, not the first
    for (
        sub,
        when,
    ) in graded.items():  # stamped with the grade's time, not the send's: a late retry loses to a newer score
        stamp = platform.results[(column["id"], sub)]["timestamp"]
        assert stamp == when.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def timezone_now():
    from django.utils import timezone

    return timezone.now()


@needs_sandbox
def test_three_grades_before_sending_make_one_post_with_the_last_score(own_platform):
    platform = own_platform
    column = placed(platform)
    client = student_launch(platform, "often-1", column)
    for known in ("correct_loops.py", PARTIAL.name, "wrong_frequencies.py"):
        assert hand_in(client, KNOWN / known).status_code == 302 and grade_queue() >= 1
    (row,) = rows_of(platform)
    assert row.state == ScoreToSend.PENDING and row.score_given == pytest.approx(score_of("often-1"))
    send_due()
    assert posted(platform, "often-1") == [(column["id"], pytest.approx(score_of("often-1")))]
    (score,) = [score for _, score in platform.scores]
    assert score["timestamp"].endswith("Z") and score["gradingProgress"] == "FullyGraded"


def test_the_instructors_page_lists_the_scores_not_sent_and_no_one_else_sees_it(own_platform):
    from django.utils import timezone
    from lti_tool.models import LtiContext, LtiLineItem, LtiUser

    from .served import student

    platform = own_platform
    context = LtiContext.objects.create(
        deployment=platform.registration.deployments.get(),
        id_on_platform="c-9",
        lineitems_url=f"{platform.base}/lineitems",
        can_publish_scores=True,
    )
    item = LtiLineItem.objects.create(
        context=context,
        url=f"{platform.base}/lineitems/page-9",
        label="Column Nine",
        maximum_score=10,
        resource_id=ASSIGNMENT,
    )
    now = timezone.now()
    for sub, state, error in (
        ("page-1", ScoreToSend.FAILED, NO_COLUMN),
        ("page-2", ScoreToSend.PENDING, "the platform did not answer in time"),
    ):
        row = Student.objects.create(student_id=f"{sub}-{uuid.uuid4().hex[:6]}")
        ScoreToSend.objects.create(
            student=row,
            lti_user=LtiUser.objects.create(registration=platform.registration, sub=sub),
            line_item=item,
            assignment=ASSIGNMENT,
            score_given=6.5,
            score_maximum=10,
            activity_progress="Completed",
            grading_progress="FullyGraded",
            graded_at=now,
            revision="r",
            state=state,
            attempts=3,
            next_attempt_at=now,
            last_error=error,
        )
    _, instructor = student(Member.INSTRUCTOR)
    page = unescape(instructor.get("/staff/platforms/").content.decode())
    assert "Scores not sent yet" in page and "Column Nine" in page and "6.5 / 10" in page
    assert NO_COLUMN in page and "the platform did not answer in time" in page
    assert page.count('data-state="failed"') >= 1 and page.count('data-state="pending"') >= 1
    retried = instructor.post(
        "/staff/platforms/", {"action": "retry", "csrfmiddlewaretoken": instructor.cookies["csrftoken"].value}
    )
    assert retried.status_code == 302
    assert not ScoreToSend.objects.filter(line_item=item, state=ScoreToSend.FAILED).exists()
    # Course settings and everyone's scores: not for a student, an assistant, or someone signed out.
    _, pupil = student()
    assert pupil.get("/staff/platforms/").status_code == 404
    _, assistant = student(Member.TA)
    assert assistant.get("/staff/platforms/").status_code == 404
    anonymous = Client().get("/staff/platforms/")
    assert anonymous.status_code == 302 and anonymous["Location"].startswith("/accounts/login/")
    assert "Column Nine" not in Client().get("/staff/platforms/", follow=True).content.decode()


SEED_OUTBOX = """
import sys
from pathlib import Path
from service.settings import configure
configure(Path(sys.argv[1]))
from django.utils import timezone
from gradebook.models import Student
from lti_tool.models import LtiContext, LtiLineItem, LtiUser
from service.models import ScoreToSend
from service.lti.platforms import add_platform, platform_settings
gone = "http://127.0.0.1:1"  # nothing listens there: connections are refused
registration = add_platform(platform_settings(name="Gone LMS", issuer="https://gone.example", client_id="c-1",
    deployment_ids=["d-1"], auth_url=gone + "/auth", token_url=gone + "/token", keyset_url=gone + "/jwks"))
context = LtiContext.objects.create(deployment=registration.deployments.get(), id_on_platform="course-1",
    lineitems_url=gone + "/lineitems", can_publish_scores=True, can_manage_lineitems=True)
item = LtiLineItem.objects.create(context=context, url=gone + "/lineitems/1", label="Week 10 column",
    maximum_score=10, resource_id="sequences-and-attention")
now = timezone.now()
for sub, state, error in (("lin-1", "failed", "the platform has no column for this assignment; launch it again "
                           "from the platform"), ("lin-2", "pending", "")):
    ScoreToSend.objects.create(student=Student.objects.create(student_id=sub), line_item=item,
        lti_user=LtiUser.objects.create(registration=registration, sub=sub), assignment="sequences-and-attention",
        score_given=7.5, score_maximum=10, activity_progress="Completed", grading_progress="FullyGraded",
        graded_at=now, revision="r1", state=state, attempts=2 if state == "failed" else 0, next_attempt_at=now,
        last_error=error)
"""


@needs_browser
@pytest.mark.timeout(300)
def test_the_instructor_in_the_browser_sees_the_scores_not_sent_and_sends_the_failed_again(served):
    """Against `autograder serve`: its worker's sender tries the pending score (the platform is
    gone), the page says why, and the failed one is sent again from the page."""
    from playwright.sync_api import expect, sync_playwright

    url, passwords, course_copy, env = served
    seeded = subprocess.run(
        [sys.executable, "-c", SEED_OUTBOX, str(course_copy)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=ROOT,
    )
    assert seeded.returncode == 0, seeded.stderr
    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            staff = browser.new_context().new_page()
            staff.goto(f"{url}/accounts/login/")
            staff.fill("input[name=username]", "instructor")
            staff.fill("input[name=password]", passwords["instructor"])
            staff.get_by_role("button", name="Sign in").click()
            staff.goto(f"{url}/staff/platforms/")
            failed = staff.locator("table.scores-to-send tr", has_text="lin-1")
            expect(failed).to_contain_text("failed")
            expect(failed).to_contain_text("the platform has no column for this assignment; launch it again")
            expect(failed).to_contain_text("7.5 / 10")
            expect(failed).to_contain_text("Week 10 column (Gone LMS)")
            # The worker's sender tried the pending one meanwhile, outside any grading.
            pending = staff.locator("table.scores-to-send tr", has_text="lin-2")
            deadline = time.monotonic() + 120
            while "could not be reached" not in pending.inner_text():
                assert time.monotonic() < deadline, "the worker never tried to send the pending score"
                time.sleep(0.5)
                staff.reload()
            expect(pending).to_contain_text("to be tried again")
            staff.get_by_role("button", name="Send the failed scores again").click()
            expect(staff.locator("text=1 failed score will be sent again")).to_be_visible()
            expect(staff.locator("table.scores-to-send tr[data-state=failed]")).to_have_count(0)
        finally:
            browser.close()


@pytest.mark.timeout(300)
@pytest.mark.parametrize("engine", ["sqlite", "postgres"])
def test_senders_side_by_side_send_each_score_once(engine):
    """Several workers' senders over one outbox (SQLite lets one claim at a time; PostgreSQL skips
    the rows another holds): every score is posted once."""
    from .postgres import _NO_POSTGRES, create_database, drop_database

    if engine == "sqlite":
        url, drop = "sqlite", None  # the service's own file, as `autograder serve` keeps it
    else:
        if _NO_POSTGRES is not None and not os.environ.get("GRADEWRIGHT_REQUIRE_POSTGRES"):
            pytest.skip(_NO_POSTGRES)
        url, drop = create_database("gradewright_senders")
    try:
        env = {key: value for key, value in os.environ.items() if key != "GRADEWRIGHT_DATABASE_URL"}
        completed = subprocess.run(
            [sys.executable, "-m", "tests.lti_senders", url],
            capture_output=True,
            text=True,
            timeout=240,
            cwd=ROOT,
            env=env,
        )
    finally:
        if drop:
            drop_database(drop)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert completed.stdout.strip() == "sent 30 scores to 30 users"
