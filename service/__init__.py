"""The grading service: a Django 5.2 site where students hand in notebooks and read their feedback,
on top of the gradebook (its database) and the engine (run only by the workers, never by the site).
Laid out as Django's own apps are, a package per concern (CONTRIBUTING.md maps it):

- the frame: ``settings.py`` builds the site's settings for a course folder; ``apps.py`` the app;
  ``urls.py`` includes each package's addresses; ``admin.py`` Django's admin with the service's
  site; ``models.py`` every package's models, for Django; ``server.py`` is ``autograder serve``;
  ``setup.py`` and ``demo.py`` prepare a course and the demo; ``errors.py`` the package's errors;
- ``accounts/`` who uses the site (members, tokens, sign-in links, the throttle, JupyterHub sign-in,
  the roster); ``handin/`` a hand-in from upload to grade (pages, the JSON API, the queue, the
  worker, live feedback); ``grades/`` the staff's pages on grades; ``marking/`` hand grading,
  reviews and extensions; ``exams/`` exams taken online; ``lti/`` LTI 1.3; ``operations/`` health,
  probes, metrics, checks and the console;
- ``core/`` the helpers every package uses (who may see what, the boundary's answers, outages,
  live settings, logs, the forms' base), with ``templatetags/``, ``templates/`` (a folder per
  package) and ``static/``.
"""
