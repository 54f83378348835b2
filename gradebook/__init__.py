"""The gradebook: the one store of grades, for every command and for the service.

Django models and migrations (``models.py``, ``migrations/``), used standalone: an SQLite file by
default, PostgreSQL (or any database Django speaks) by URL (``database.py``). Open one with
``Gradebook.open(path)`` (``book.py``). Around it, one module per concept: grading into it and
recording each graded report (``grading.py``), current grades derived from it (``grades.py``),
marks given by hand, written by ``marks.give_mark`` alone (``marks.py``), rosters (``roster.py``), history (``history.py``), statistics (``stats.py``),
extensions (``extensions.py``), files for course platforms (``exports/``), and the older format's
upgrade (``legacy.py``). Its errors are in ``errors.py``.
"""
