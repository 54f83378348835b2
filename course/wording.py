"""How a number or a count reads to a person, the same on every page, file and command.

The rounding rule: a score (a mark, a total, a mean, minutes) is shown with at most
``SCORE_DECIMALS`` decimals, trailing zeros dropped (``7.21``, ``10``, ``1.5``, ``0.33``). Every page
(the ``|score`` template filter), every download (grades.csv, the platforms' gradebook files, the
statistics' questions.csv, feedback.txt) and every command's table writes a score through
``shown_score``; the gradebook and the JSON API keep full precision.

The counting rule: a count beside its noun is written by ``plural`` (``1 pair``, ``2 pairs``; the
``|counted`` filter on pages), never as ``f"{n} pairs"``, ``answer(s)`` or ``'s' if n != 1``;
tests/test_words.py reads the source for those forms."""

from __future__ import annotations

SCORE_DECIMALS = 2


def shown_score(value: float | int | str | None) -> str:
    """A score as a person reads it: ``7.208333`` -> ``7.21``, ``10.0`` -> ``10``, none -> ``""``."""
    if value is None or value == "":
        return ""
    rounded = round(float(value), SCORE_DECIMALS)
    text = f"{rounded:.{SCORE_DECIMALS}f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def plural(count: float, word: str, many: str | None = None) -> str:
    """A count and its noun, agreed: ``1 minute``, ``2 minutes``, ``1.5 minutes``, ``0 answers``;
    ``many`` where adding an s is wrong (``plural(n, "person", "people")``)."""
    shown = shown_score(count)
    return f"{shown} {word if shown == '1' else (many or word + 's')}"
