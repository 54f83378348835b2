"""A similar pair's matched fragments (gradebook.similarity.fragments), as Dolos defines them, and the staff's page
that shows them as MOSS does: each fragment's two regions in one colour, each a link to the other."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime

import pytest
from django.contrib.auth.models import User
from django.test import Client

from gradebook.models import SimilarityRun
from gradebook.similarity.fragments import FRAGMENT_COLOURS, blocks, of_code, sides
from gradebook.similarity.report import SimilarityReport, SimilarPair
from service.accounts.models import Member

from .conftest import ASSIGNMENTS, ROOT

SEQUENCES = "sequences-and-attention"
KNOWN = (ASSIGNMENTS / SEQUENCES / "known" / "correct_loops.py").read_text()


def function(name: str) -> str:
    """One function of a shipped correct submission, as written there."""
    (found,) = [block for block in KNOWN.split("\n\ndef ") if block.startswith(f"{name}(")]
    return "def " + found.rstrip("\n") + "\n"


SATURATION, ENCODING = function("saturation"), function("positional_encoding")
# The original: saturation on lines 6-16, positional_encoding on lines 19-27. The copy swaps them,
# renames variables, and puts a line of its own between: positional_encoding on lines 4-12,
# print on 15, saturation on 18-28.
ORIGINAL = "import math\n\nimport numpy as np\n\n\n" + SATURATION + "\n\n" + ENCODING
COPY = (
    "import numpy as np\nimport math\n\n"
    + ENCODING.replace("pe", "table").replace("angle", "theta")
    + "\n\nprint('my own work')\n\n\n"
    + SATURATION.replace("maxima", "tops")
)


def text(code: str, start: int, end: int) -> str:
    return code[start:end]


def test_two_swapped_functions_make_two_fragments_each_paired_with_its_own_function():
    found = of_code(ORIGINAL, COPY)
    assert len(found) == 2
    first, second = found  # in the original's order
    assert text(ORIGINAL, first.first.start, first.first.end).startswith("def saturation(")
    assert text(COPY, first.second.start, first.second.end).startswith("def saturation(")
    assert text(ORIGINAL, second.first.start, second.first.end).startswith("def positional_encoding(")
    assert text(COPY, second.second.start, second.second.end).startswith("def positional_encoding(")
    assert (first.first.first_line, first.first.last_line, first.second.first_line, first.second.last_line) == (
        6,
        16,
        18,
        28,
    )
    assert (second.first.first_line, second.first.last_line) == (19, 27)
    assert (second.second.first_line, second.second.last_line) == (4, 12)
    # Each region ends with its function's last token, whole (a renamed name is not cut short).
    assert text(ORIGINAL, first.first.start, first.first.end).endswith("return float(np.mean(maxima))")
    assert text(COPY, second.second.start, second.second.end).endswith("return table")
    assert of_code(ORIGINAL, COPY) == found  # the same each time


def test_a_block_repeated_in_one_file_is_paired_once_and_no_fragment_jumps():
    # The copy holds saturation twice: the original's one saturation is paired with one of them,
    # whole; the other is no fragment (nothing of the original's is left for it).
    copy = SATURATION + "\nprint('between')\n" + ENCODING + "\n" + SATURATION
    found = of_code(ORIGINAL, copy)
    assert len(found) == 2
    for fragment in found:
        one = text(ORIGINAL, fragment.first.start, fragment.first.end)
        other = text(copy, fragment.second.start, fragment.second.end)
        assert one == other  # the same code, not the start of one copy and the end of another
    assert found[0].second.first_line == 1 and found[0].second.last_line == 11  # the first copy, by position
    assert found[1].second.first_line == 14
    # Regions never overlap on either side.
    for side in ("first", "second"):
        spans = sorted((getattr(f, side).start, getattr(f, side).end) for f in found)
        assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:], strict=False))


@pytest.mark.timeout(20)
def test_a_line_pasted_thousands_of_times_asks_for_no_quadratic_pairing():
    # Each of its k-grams is in both files thousands of times: millions of matches, were each
    # occurrence paired with each. Past MOST_MATCHES a k-gram makes none; the real code still pairs.
    pasted = "total = total + 1\n" * 2000  # 36,000 characters: within MAX_CODE
    found = of_code(pasted + ORIGINAL, COPY + pasted)
    assert len(found) == 2
    assert all("total = total + 1" not in text(COPY + pasted, f.second.start, f.second.end) for f in found)


def test_code_far_from_every_fragment_is_folded_with_its_lines_and_the_regions_kept_whole():
    padded = "\n".join(f"unrelated_{n} = {n} * {n + 1}" for n in range(40)) + "\n" + ORIGINAL
    found = of_code(padded, COPY)
    shown, _ = sides(padded, COPY, found)
    folded = [block for block in shown if block.folded]
    assert len(folded) == 1 and (folded[0].first_line, folded[0].last_line) == (1, 42)
    assert "".join(piece.text for block in shown for piece in block.pieces) == padded  # nothing lost
    regions = [piece for block in shown for piece in block.pieces if piece.fragment]
    assert [piece.fragment for piece in regions] == [1, 2] and regions[0].text.startswith("def saturation(")
    (alone,) = blocks("a = 1\nb = 2\n", [])  # a side with no fragment: all of it folded
    assert alone.folded and (alone.first_line, alone.last_line) == (1, 2)


def _page(first_code: str, second_code: str) -> str:
    """The staff's similarity page showing one pair of these codes (none: a report made before
    fragments were kept), through the Django test client."""
    user = User.objects.create_user(f"u{uuid.uuid4().hex[:10]}")
    Member.objects.create(user=user, role=Member.INSTRUCTOR)
    client = Client()
    client.force_login(user)
    pair = SimilarPair(
        first="ada",
        second="alan",
        first_share=0.9,
        second_share=0.8,
        first_code=first_code,
        second_code=second_code,
        fragments=of_code(first_code, second_code) if first_code else [],
    )
    report = SimilarityReport(assignment=SEQUENCES, compared=2, candidates=1, all_pairs=1, pairs=[pair])
    now = datetime.now(UTC)
    SimilarityRun.objects.filter(assignment=SEQUENCES).delete()
    SimilarityRun.objects.create(
        assignment=SEQUENCES,
        threshold=0.5,
        state=SimilarityRun.DONE,
        requested_at=now,
        finished_at=now,
        report=report.model_dump(mode="json"),
    )
    try:
        page = client.get(f"/staff/similarity/{SEQUENCES}/")
        assert page.status_code == 200
        return page.content.decode()
    finally:
        SimilarityRun.objects.filter(assignment=SEQUENCES).delete()


def test_the_page_links_each_region_to_its_partner_in_its_colour_and_escapes_the_code():
    planted = COPY + "\n# </pre><script>alert('copied')</script>\n"
    page = _page(ORIGINAL, planted)
    regions = re.findall(r'<a class="frag frag-(\d)" id="(p1-([lr])-(\d+))" href="#(p1-([lr])-(\d+))"', page)
    assert len(regions) == 4  # two fragments, a region on each side
    ids = {found[1]: found for found in regions}
    for colour, _, side, number, target, target_side, target_number in regions:
        partner = ids[target]  # the link leads to an id on the page ...
        assert target_side != side and target_number == number  # ... the same fragment's, on the other side
        assert partner[0] == colour == str((int(number) - 1) % len(FRAGMENT_COLOURS))  # in the same colour
    # The list of fragments: lines of each side, each linking to its region.
    assert 'href="#p1-l-1">lines 6–16</a> of ada ↔ <a href="#p1-r-1">lines 18–28</a> of alan' in page
    assert 'href="#p1-l-2">lines 19–27</a> of ada ↔ <a href="#p1-r-2">lines 4–12</a> of alan' in page
    # The student's text is text: the planted markup escaped, and shown as written.
    assert "<script>alert" not in page and "&lt;/pre&gt;&lt;script&gt;alert(&#x27;copied&#x27;)" in page
    assert "service/similarity.js" in page and "<style" not in page and "style=" not in page
    # A report kept before fragments were: its pair listed, and the way to see its code said.
    older = _page("", "")
    assert "ada (90%) and alan (80%)" in older and "compare again to see the pair's code" in older


def test_the_fragment_colours_are_the_stylesheets():
    css = (ROOT / "service" / "static" / "service" / "site.css").read_text()
    for number, colour in enumerate(FRAGMENT_COLOURS):
        assert f".frag-{number} {{ background: {colour}; }}" in css
