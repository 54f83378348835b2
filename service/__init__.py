"""The grading service: a Django 5.2 site where students hand in notebooks and read their feedback,
on top of the gradebook (its database) and the engine (run only by the workers, never by the site).
Laid out as Django lays out an app, one concern a module:

- ``settings.py`` builds the site's settings for a course folder; ``apps.py`` the app (and Django's
  admin with the service's site); ``urls.py`` every address; ``errors.py`` the package's errors;
- ``models/`` the service's own tables, a module per concept (``accounts``, ``queue``, ``reviews``,
  ``lti``, ``exams``), all re-exported by ``service.models``;
- ``access.py`` who may see what: the course, its assignments, the ``staff_required`` and
  ``instructor_required`` view decorators, what a student is shown of a report;
- ``forms.py`` what the pages and the API take in (a Django form per set of fields);
  ``boundary.py`` what the site answers a request it cannot use (error pages and JSON, 405s, ids);
- the pages: ``views.py`` (the students': assignments, hand-in, submissions, sign-in links, and the
  instructor's roster), ``staff.py`` (gradebook, statistics, history, overrides, regrades,
  similarity, exports), ``marking.py`` (hand grading), ``reviews.py`` (review requests),
  ``exam_marking.py`` (exams' open questions), ``online_exams.py`` with ``exam_sessions.py``
  (exams taken online), ``templates/``, ``static/`` and ``templatetags/``;
- ``api.py`` the JSON API (``/api/v1/``, described by ``openapi.json``);
- ``admin.py`` and ``console.py``: Django's admin at ``/admin/``, the instructor's fallback console;
- sign-in: ``throttle.py`` (django-axes), ``hub.py`` (JupyterHub's OAuth and tokens), ``accounts.py``
  (one-time links, ``autograder accounts``), and ``lti/`` (LTI 1.3: launches, scores, rosters);
- hand-ins: ``uploads.py`` checks what a student hands in before anything runs; ``releases.py``
  makes the notebook they download; ``queue.py`` makes, claims and ends the grading jobs;
  ``worker.py`` grades them (``autograder worker``);
- ``server.py`` is ``autograder serve``; ``client.py`` is what ``autograder login`` and
  ``autograder submit`` use.
"""
