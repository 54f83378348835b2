"""The grading service: a Django 5.2 site where students hand in notebooks and read their feedback,
on top of the gradebook (its database) and the engine (run only by the workers, never by the site).

``settings.py`` builds the site's settings for a course folder; ``models.py`` holds accounts'
roles, API tokens and the job queue; ``uploads.py`` checks what a student hands in before anything
runs; ``queue.py`` claims and finishes jobs; ``worker.py`` grades them; ``views/`` are the pages and
the JSON API (``/api/v1/``); ``server.py`` is ``autograder serve``; ``client.py`` is what
``autograder login`` and ``autograder submit`` use.
"""
