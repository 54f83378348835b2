"""A course platform for the tests, on the loopback, built from the messages of the LTI 1.3 Core,
Deep Linking 2.0, Assignment and Grade Services 2.0 and Names and Role Provisioning Services 2.0
specifications. It signs launches with a key of its own and publishes it (JWKS), gives access tokens
only to a tool that proves itself with a JWT signed by the tool's key (checked against the tool's
published JWKS), keeps line items and the scores posted to them (each user's result is the score of
the latest timestamp, as AGS has it), and lists its course's members.

It misbehaves on demand, as platforms do: ``hang()`` takes the tool's requests and answers none
until ``answer()``; ``go_down()`` closes its port (connections refused) until ``come_back()`` opens
it again; ``delete_line_item`` drops a column (its scores' URL answers 404); ``slow(seconds)``
stores each score it is posted at once and answers only that many seconds later, as a busy
platform does. It keeps every score posted (``scores``), as platforms that keep each one do, and
answers its results service (each user's result on a column).

The browser's part (following the tool's redirect to the platform, posting the signed launch back)
is played by the tests with Django's test client."""

from __future__ import annotations

import itertools
import json
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import jwt
from jwcrypto.jwk import JWK

LTI = "https://purl.imsglobal.org/spec/lti/claim"
MEMBERSHIP = "http://purl.imsglobal.org/vocab/lis/v2/membership"
LEARNER, INSTRUCTOR = f"{MEMBERSHIP}#Learner", f"{MEMBERSHIP}#Instructor"
TEACHING_ASSISTANT = f"{MEMBERSHIP}/Instructor#TeachingAssistant"
AGS_SCOPES = [
    "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem",
    "https://purl.imsglobal.org/spec/lti-ags/scope/score",
    "https://purl.imsglobal.org/spec/lti-ags/scope/result.readonly",
]
NRPS_SCOPE = "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly"


class Platform:
    issuer = "https://platform.example.edu"
    client_id = "tool-client-1"
    deployment_id = "deployment-1"
    context_id = "course-101"

    def __init__(self, tool_jwks) -> None:
        self.kid = "platform-key-1"
        self.key = JWK.generate(kty="RSA", size=2048, kid=self.kid)
        self.tool_jwks = tool_jwks  # () -> the tool's published JWKS
        self.line_items: list[dict] = []
        self.scores: list[tuple[str, dict]] = []
        self.members: list[dict] = []
        self.results: dict[tuple[str, str], dict] = {}  # (line item, user) -> the score of the latest timestamp
        self.tokens: set[str] = set()
        self.refused_assertions = 0
        self.numbers = itertools.count(1)
        self.answering = threading.Event()
        self.answering.set()
        self.held = 0  # requests taken and not answered (while hanging)
        self.delay = 0.0  # seconds between storing a score and answering (``slow``)
        self.score_refusal: tuple[int, bytes] | None = None  # (status, raw body) answered to every score posted
        self.members_refusal: tuple[int, bytes] | None = None  # (status, raw body) answered to the membership's reads
        self.lock = threading.Lock()
        served = self._serve(0)
        self.server: ThreadingHTTPServer | None = served
        self.port = served.server_port
        self.base = f"http://127.0.0.1:{self.port}"

    def _serve(self, port: int) -> ThreadingHTTPServer:
        server = ThreadingHTTPServer(("127.0.0.1", port), _handler(self))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return server

    def close(self) -> None:
        self.answering.set()
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    # --- misbehaving --------------------------------------------------------------------------------

    def hang(self) -> None:
        """Accept the tool's connections and answer nothing (until ``answer``)."""
        self.answering.clear()

    def answer(self) -> None:
        """Answer again, the requests held meanwhile too."""
        self.answering.set()

    def go_down(self) -> None:
        """Close the port: the tool's connections are refused."""
        self.close()

    def come_back(self) -> None:
        """Open the same port again, with the same line items and scores."""
        deadline = time.monotonic() + 30
        while True:
            try:
                self.server = self._serve(self.port)
                return
            except OSError:  # the old socket not released yet
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def slow(self, seconds: float) -> None:
        """Store each score posted at once, and answer ``seconds`` later (0: at once again)."""
        self.delay = seconds

    def delete_line_item(self, item_id: str) -> None:
        """The instructor deletes the column; its scores go with it."""
        self.line_items = [item for item in self.line_items if item["id"] != item_id]

    @property
    def endpoints(self) -> dict[str, str]:
        return {"auth_url": f"{self.base}/auth", "token_url": f"{self.base}/token", "keyset_url": f"{self.base}/jwks"}

    # --- launches ---------------------------------------------------------------------------------

    def id_token(
        self,
        nonce: str,
        sub: str,
        roles: list[str],
        *,
        message_type: str = "LtiResourceLinkRequest",
        custom: dict | None = None,
        lineitem: str | None = None,
        deployment_id: str | None = None,
        expires_in: int = 300,
        key: JWK | None = None,
        extra: dict | None = None,
        resource_link: str = "link-1",
    ) -> str:
        now = int(time.time())
        claims: dict[str, Any] = {
            "iss": self.issuer,
            "aud": self.client_id,
            "sub": sub,
            "iat": now - 5,
            "exp": now + expires_in,
            "nonce": nonce,
            "name": f"User {sub}",
            "given_name": "User",
            "family_name": sub,
            "email": f"{sub}@example.edu",
            f"{LTI}/message_type": message_type,
            f"{LTI}/version": "1.3.0",
            f"{LTI}/deployment_id": deployment_id or self.deployment_id,
            f"{LTI}/roles": roles,
            f"{LTI}/context": {"id": self.context_id, "label": "ML 101", "title": "Machine learning"},
            f"{LTI}/tool_platform": {"guid": "platform-guid", "product_family_code": "canvas"},
            f"{LTI}/lis": {"person_sourcedid": f"SIS-{sub}"},
            "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint": {
                "scope": AGS_SCOPES,
                "lineitems": f"{self.base}/lineitems",
                **({"lineitem": lineitem} if lineitem else {}),
            },
            "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice": {
                "context_memberships_url": f"{self.base}/memberships",
                "service_versions": ["2.0"],
            },
        }
        if message_type == "LtiResourceLinkRequest":
            claims[f"{LTI}/resource_link"] = {"id": resource_link, "title": "Assignment"}
            claims[f"{LTI}/target_link_uri"] = "http://testserver/lti/launch/"
        else:
            claims["https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings"] = {
                "deep_link_return_url": f"{self.base}/deep-link-return",
                "accept_types": ["ltiResourceLink"],
                "accept_presentation_document_targets": ["window", "iframe"],
                "data": "platform-data-7",
            }
        if custom:
            claims[f"{LTI}/custom"] = custom
        claims.update(extra or {})
        signing = key or self.key
        return jwt.encode(
            claims, signing.export_to_pem(private_key=True, password=None), algorithm="RS256", headers={"kid": self.kid}
        )

    def add_line_item(self, item: dict) -> dict:
        made = {**item, "id": f"{self.base}/lineitems/{next(self.numbers)}"}
        self.line_items.append(made)
        return made

    # --- the tool's requests ------------------------------------------------------------------------

    def check_assertion(self, assertion: str) -> bool:
        """The tool's client assertion: signed by a key in its JWKS, issued by its client id, for us."""
        try:
            kid = jwt.get_unverified_header(assertion).get("kid")
            keys = {key["kid"]: key for key in self.tool_jwks()["keys"]}
            public = JWK(**keys[kid]).export_to_pem()
            claims = jwt.decode(assertion, public, algorithms=["RS256"], audience=self.endpoints["token_url"])
        except (KeyError, jwt.InvalidTokenError):
            return False
        return claims.get("iss") == claims.get("sub") == self.client_id


def _handler(platform: Platform):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:  # quiet
            pass

        def _send(self, status: int, body: Any = None, content_type: str = "application/json") -> None:
            data = b"" if body is None else json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _send_raw(self, status: int, raw: bytes) -> None:
            """A platform's own words, control characters and all."""
            self.send_response(status)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def _wait_while_hanging(self) -> None:
            with platform.lock:
                platform.held += 1
            platform.answering.wait()
            with platform.lock:
                platform.held -= 1

        def _authorized(self) -> bool:
            token = self.headers.get("Authorization", "").removeprefix("Bearer ")
            return token in platform.tokens

        def _body(self) -> bytes:
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))

        def do_GET(self) -> None:
            path = urlsplit(self.path).path
            if path == "/jwks":
                public = json.loads(platform.key.export_public())
                return self._send(200, {"keys": [{**public, "alg": "RS256", "use": "sig"}]})
            self._wait_while_hanging()
            if not self._authorized():
                return self._send(401, {"error": "no valid access token"})
            if path == "/lineitems":
                return self._send(200, platform.line_items, "application/vnd.ims.lis.v2.lineitemcontainer+json")
            if path.startswith("/lineitems/") and path.endswith("/results"):
                item = f"{platform.base}{path.removesuffix('/results')}"
                if item not in {line["id"] for line in platform.line_items}:
                    return self._send(404)
                wanted = parse_qs(urlsplit(self.path).query).get("user_id", [None])[0]
                results = [
                    {
                        "id": f"{item}/results/{user}",
                        "scoreOf": item,
                        "userId": user,
                        "resultScore": score["scoreGiven"],
                        "resultMaximum": score["scoreMaximum"],
                    }
                    for (column, user), score in platform.results.items()
                    if column == item and wanted in (None, user)
                ]
                return self._send(200, results, "application/vnd.ims.lis.v2.resultcontainer+json")
            if path == "/memberships" and platform.members_refusal is not None:
                return self._send_raw(*platform.members_refusal)
            if path == "/memberships":
                body = {
                    "id": f"{platform.base}/memberships",
                    "context": {"id": platform.context_id},
                    "members": platform.members,
                }
                return self._send(200, body, "application/vnd.ims.lti-nrps.v2.membershipcontainer+json")
            return self._send(404)

        def do_POST(self) -> None:
            path = urlsplit(self.path).path
            self._wait_while_hanging()
            if path == "/token":
                form = {key: values[0] for key, values in parse_qs(self._body().decode()).items()}
                if form.get("grant_type") != "client_credentials" or not platform.check_assertion(
                    form.get("client_assertion", "")
                ):
                    platform.refused_assertions += 1
                    return self._send(401, {"error": "invalid_client"})
                token = uuid.uuid4().hex
                platform.tokens.add(token)
                return self._send(
                    200,
                    {"access_token": token, "token_type": "Bearer", "expires_in": 3600, "scope": form.get("scope", "")},
                )
            if not self._authorized():
                return self._send(401, {"error": "no valid access token"})
            if path == "/lineitems":
                made = platform.add_line_item(json.loads(self._body()))
                return self._send(201, made, "application/vnd.ims.lis.v2.lineitem+json")
            if path.startswith("/lineitems/") and path.endswith("/scores"):
                if self.headers.get("Content-Type") != "application/vnd.ims.lis.v1.score+json":
                    return self._send(415)
                if platform.score_refusal is not None:
                    return self._send_raw(*platform.score_refusal)
                item = f"{platform.base}{path.removesuffix('/scores')}"
                if item not in {line["id"] for line in platform.line_items}:
                    return self._send(404)
                score = json.loads(self._body())
                with platform.lock:
                    platform.scores.append((item, score))
                    current = platform.results.get((item, score["userId"]))
                    if current is None or current["timestamp"] <= score["timestamp"]:  # an older one changes nothing
                        platform.results[(item, score["userId"])] = score
                if platform.delay:
                    time.sleep(platform.delay)  # stored already; the answer comes late
                return self._send(200, {})
            return self._send(404)

    return Handler


def course_column(platform: Platform, registration, context_id: str | None = None):
    """A course of ``platform`` with one column ("A", out of 10, resource "a"), as the tool stores them
    after a launch (``registration``: the tool's record of the platform): its stored line item."""
    from lti_tool.models import LtiContext, LtiLineItem

    context = LtiContext.objects.create(
        deployment=registration.deployments.get(),
        id_on_platform=context_id or platform.context_id,
        lineitems_url=f"{platform.base}/lineitems",
        can_publish_scores=True,
        can_manage_lineitems=True,
    )
    column = platform.add_line_item({"label": "A", "scoreMaximum": 10, "resourceId": "a"})
    return LtiLineItem.objects.create(context=context, url=column["id"], label="A", maximum_score=10, resource_id="a")
