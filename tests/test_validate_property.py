"""Random damage to a JSON lesson never makes `course validate` crash: exit 0 or 2, never a traceback."""

from __future__ import annotations

import copy
import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from commands.course import main

from .conftest import JSON_LESSON

SEED = json.loads(JSON_LESSON.read_text(encoding="utf-8"))

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=10,
)


def _paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, prefix + (key,))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _paths(value, prefix + (index,))


ALL_PATHS = list(_paths(SEED))[1:]

mutation = st.one_of(
    st.tuples(st.just("replace"), st.sampled_from(ALL_PATHS), json_values),
    st.tuples(st.just("delete"), st.sampled_from(ALL_PATHS), st.none()),
    st.tuples(st.just("truncate"), st.integers(0, len(json.dumps(SEED))), st.none()),
    st.tuples(st.just("insert"), st.integers(0, len(json.dumps(SEED))), st.text(min_size=1, max_size=5)),
)


def _apply(document: dict, mutations) -> str:
    document = copy.deepcopy(document)
    text_edits = []
    for kind, where, value in mutations:
        if kind in {"truncate", "insert"}:
            text_edits.append((kind, where, value))
            continue
        parent = document
        try:
            for key in where[:-1]:
                parent = parent[key]
            if kind == "replace":
                parent[where[-1]] = value
            else:
                del parent[where[-1]]
        except (KeyError, IndexError, TypeError):
            continue  # an earlier mutation removed the path
    text = json.dumps(document, ensure_ascii=False)
    for kind, where, value in text_edits:
        text = text[:where] if kind == "truncate" else text[:where] + value + text[where:]
    return text


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mutations=st.lists(mutation, min_size=1, max_size=3))
def test_mutated_json_lesson_never_crashes_validate(capsys, mutations):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "lesson.json"
        path.write_text(_apply(SEED, mutations), encoding="utf-8")
        code = main(["validate", str(path)])
    captured = capsys.readouterr()
    assert code in (0, 2)
    assert "Traceback" not in captured.out + captured.err
    assert "internal error" not in captured.err
    for line in captured.out.splitlines():
        assert line.startswith(f"{path}: "), line
