"""LTI 1.3 Advantage: the service as a tool inside Canvas, Moodle or any LTI 1.3 platform.

django-lti (on pylti1p3) verifies every message the platform signs and keeps its registrations,
deployments, users, contexts and line items; this package decides what a verified launch means
here and talks to the platform's services:

- ``platforms``: registering a platform (the CLI and the instructor's page), the tool's key and
  the addresses a platform asks for;
- ``identities``: who a launch is in the course: an account, a role from the roles claim, a row in
  the gradebook;
- ``views``: login initiation, launches (resource links and deep linking), the tool's JWKS, and a
  clear page for every refused launch;
- ``scores``: Assignment and Grade Services: a line item per assignment, each student's current
  score posted when it changes;
- ``roster``: Names and Role Provisioning Services: the platform's members into the roster.
"""
