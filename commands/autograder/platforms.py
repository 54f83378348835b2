"""The course platforms: ``lti`` (the service inside Canvas, Moodle or any LTI 1.3 platform: its
registration and the scores sent to it), ``export gradescope`` and ``gradescope-run`` (grading on
Gradescope with this grader)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from course.wording import plural
from untrusted.text import one_line

from ..common import database_option, open_service


def add_commands(commands: argparse._SubParsersAction) -> None:
    for add in (_add_lti, _add_export, _add_gradescope_run):
        add(commands)


def _add_lti(commands: argparse._SubParsersAction) -> None:
    lti = commands.add_parser(
        "lti",
        help="the service inside Canvas, Moodle or any LTI 1.3 platform",
        description="Register a course platform (LTI 1.3), and send the current scores to its grade columns.",
    )
    lti_commands = lti.add_subparsers(dest="lti_command", required=True, metavar="COMMAND")
    add_platform = lti_commands.add_parser(
        "add-platform",
        help="register a platform and print the addresses to give it",
        description="Register the platform (what its page for the tool shows: issuer, client id, deployment ids, "
        "endpoints), or update the registration of the same issuer and client id, and print the tool's addresses "
        "for the platform's form. The tool's key is made on first need.",
    )
    add_platform.add_argument("--name", required=True, help="a name for it (shown to the instructor)")
    add_platform.add_argument("--issuer", required=True, metavar="URL", help="the platform's issuer (iss)")
    add_platform.add_argument("--client-id", required=True, metavar="ID")
    add_platform.add_argument(
        "--deployment-id", required=True, action="append", metavar="ID", help="a deployment id (repeat for several)"
    )
    add_platform.add_argument("--auth-url", required=True, metavar="URL", help="its OIDC authorization endpoint")
    add_platform.add_argument("--token-url", required=True, metavar="URL", help="its OAuth2 access token endpoint")
    add_platform.add_argument("--keyset-url", required=True, metavar="URL", help="its public keyset (JWKS)")
    add_platform.add_argument(
        "--server", required=True, metavar="URL", help="the service's address, as the platform reaches it"
    )
    database_option(add_platform)
    add_platform.set_defaults(handler=_lti_add_platform)
    send_scores = lti_commands.add_parser(
        "send-scores",
        help="send the scores waiting for the platforms now, and list what could not be sent",
        description="Scores go to the platforms' grade columns from an outbox, which every running `autograder "
        "worker` sends with retries. This sends the outbox now, failed scores too, and prints each score that "
        "could not be sent, one line each (exit 1 if any). With an ASSIGNMENT, every student's current score on it "
        "(after marks and the late policy) is put in the outbox first.",
    )
    send_scores.add_argument("assignment", metavar="ASSIGNMENT", nargs="?")
    database_option(send_scores)
    send_scores.set_defaults(handler=_lti_send_scores)


def _lti_add_platform(args: argparse.Namespace) -> int:
    open_service(args)
    from service.lti.platforms import register_platform

    name, addresses = register_platform(
        args.server,
        name=args.name,
        issuer=args.issuer,
        client_id=args.client_id,
        deployment_ids=args.deployment_id,
        auth_url=args.auth_url,
        token_url=args.token_url,
        keyset_url=args.keyset_url,
    )
    print(f"{one_line(name)}: registered; give the platform these addresses:")
    print(f"  login initiation:  {addresses.login}")
    print(f"  redirect / launch: {addresses.launch}")
    print(f"  deep linking:      {addresses.deep_linking}")
    print(f"  public keyset:     {addresses.jwks}")
    return 0


def _lti_send_scores(args: argparse.Namespace) -> int:
    course = open_service(args)
    from service.lti.outbox import send_course_scores

    outcome = send_course_scores(course, args.assignment)
    for problem in outcome.not_sent:
        print(one_line(problem), file=sys.stderr)
    print(f"{plural(outcome.sent, 'score')} sent, {len(outcome.not_sent)} could not be sent")
    return 1 if outcome.not_sent else 0


def _add_export(commands: argparse._SubParsersAction) -> None:
    export = commands.add_parser(
        "export",
        help="an assignment for another grading platform",
        description="An assignment for another grading platform.",
    )
    export_what = export.add_subparsers(title="platform", metavar="PLATFORM", required=True)
    gradescope = export_what.add_parser(
        "gradescope",
        help="Gradescope's autograder zip",
        description="Write the zip Gradescope's autograder takes (setup.sh, run_autograder, this project, the "
        "assignment's hidden suite, references and the grader's secret): Gradescope then grades with these "
        "suites and gets the same verdicts. Choose Gradescope's Ubuntu 24.04 base image.",
    )
    gradescope.add_argument("assignment", metavar="ASSIGNMENT")
    gradescope.add_argument("--out", type=Path, required=True, metavar="FILE", help="e.g. autograder.zip")
    gradescope.set_defaults(handler=_export_gradescope)


def _export_gradescope(args: argparse.Namespace) -> int:
    from autograder.assignment import find_assignment
    from autograder.gradescope import export_for_course

    assignment = find_assignment(args.assignment, args.course)
    path = export_for_course(assignment, args.out, args.course)
    print(f"{one_line(str(path))}: Gradescope autograder for {assignment.name}")
    return 0


def _add_gradescope_run(commands: argparse._SubParsersAction) -> None:
    run = commands.add_parser(
        "gradescope-run",
        help="grade one submission as Gradescope's run_autograder does",
        description="Grade the submission in ROOT/submission into ROOT/results/results.json, in Gradescope's "
        "format (what the exported bundle's run_autograder calls).",
    )
    run.add_argument("assignment", metavar="ASSIGNMENT")
    run.add_argument("--root", type=Path, default=Path("/autograder"), metavar="ROOT", help="default /autograder")
    run.set_defaults(handler=_gradescope_run)


def _gradescope_run(args: argparse.Namespace) -> int:
    from autograder.assignment import find_assignment
    from autograder.gradescope import run_in_gradescope

    print(one_line(str(run_in_gradescope(find_assignment(args.assignment, args.course), args.root))))
    return 0
