"""Generators for the generated check questions of ``module-10-question-bank.lesson.json``.

Each is ``function(rng, values) -> dict``: ``rng`` is the ``random.Random`` seeded for the student
and variant, ``values`` the parameters drawn so far; it returns more values for the templates.
Draw only from ``rng`` (``course validate`` refuses a generator that is not deterministic).
Written for this project; see NOTICE.
"""

import math

ORDINALS = ["first", "second", "third", "fourth", "fifth"]


def softmax_entry(rng, values):
    """One entry of the softmax of the drawn scores ``x``, and which one (a drawn index)."""
    scores = values["x"]
    k = rng.randrange(len(scores))
    top = max(scores)
    weights = [math.exp(score - top) for score in scores]
    return {"which": ORDINALS[k], "p": weights[k] / sum(weights), "x_k": scores[k]}
