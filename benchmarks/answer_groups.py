"""Benchmark: marking a class's written answers by groups (gradebook.marking.groups), side by side with
the grouping of an earlier commit, and against marking one by one.

    python benchmarks/answer_groups.py [--students 300] [--classes 5] [--seed 1] [--before REV]

A generated class for the demo's written question (are the heatmap's strongest pairs meaningful, and
how would you check; 3 points, one for each rubric item). Its 34 ideas are 17 pairs of near-twins:
two answers that differ in a word or two that carry the meaning and the mark ("intervene" against "a
map", "the seeds stay the same" against "the seeds changed", "not" dropped, "ten seeds" against "one
seed"). Each student's answer is one idea, the popular ones more often, as handed in: verbatim, with
its case and punctuation changed, one or two typos (a letter dropped, doubled, swapped or struck
next to it), a contraction made or undone ("do not" and "don't"), a filler before it ("I think"), or
its sentences in another order; each is labelled with its idea's mark.

For each class and each grouping (this checkout's, and ``--before``'s, loaded from git), at the
default threshold: the grading actions (one per group: the grader marks the representative and the
mark goes to every member), how many times fewer than one by one, the mixed groups (members of two
marks) and the answers under another answer's mark (their group's representative's). The worst of the
classes is printed as Markdown for docs/explanation/answer-groups.md, then the time to group one class.
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gradebook.marking import groups as answer_groups  # noqa: E402  (after the path)

BEFORE = "e7be473"  # the last commit whose groups were made by the edit similarity alone
QUESTION = (
    "The heatmap's strongest pairs: are they meaningful links or artefacts, and how would you check? "
    "A model whose projections are untrained; random seeds."
)
RUBRIC = [
    "Says the strongest pairs are artefacts of the untrained projections, not findings.",
    "Checks by an intervention: remove or change a word and measure how much the output moves.",
    "Compares with a control: random seeds or shuffled weights give the same pattern.",
]
# 17 pairs of near-twins: the same answer but for a word or two that change the mark.
IDEAS: list[tuple[str, int]] = [
    (
        "The strongest pairs are artefacts of the untrained projections, and to check I would intervene "
        "on the input sentence and measure the output.",
        2,
    ),
    (
        "The strongest pairs are artefacts of the untrained projections, and to check I would draw a map "
        "of the input sentence and the output.",
        1,
    ),
    (
        "Compare with random seeds. If the seeds stay the same the pattern is an artefact of the "
        "projections, not a finding.",
        2,
    ),
    (
        "Compare with random seeds. If the seeds changed the pattern is an artefact of the projections, not a finding.",
        1,
    ),
    ("The links are not meaningful because the projections are untrained, so the pairs are artefacts.", 1),
    ("The links are meaningful because the projections are untrained, so the pairs are findings.", 0),
    ("Removing a word does not change the output much, so the strong pair is not a causal link.", 1),
    ("Removing a word does change the output much, so the strong pair is a causal link.", 0),
    ("I would train ten models with different random seeds and compare their heatmaps with this one.", 1),
    ("I would train one model with a different random seed and look at its heatmap instead of this one.", 0),
    ("Delete the word from the sentence and measure how much the prediction moves; the weights alone say nothing.", 1),
    (
        "Delete the word from the sentence and ignore how much the prediction moves; the weights alone say everything.",
        0,
    ),
    ("Softmax forces every row to add up to one, so some pair always looks strong: an artefact, not a finding.", 1),
    ("Softmax forces every row to add up to one, so the strong pair really is strong: a finding, not an artefact.", 0),
    ("A control with shuffled weights shows the same pattern, so the pattern is an artefact of the projections.", 2),
    ("A control with trained weights shows a different pattern, so the pattern is a finding of the projections.", 0),
    ("Change one word at a time and measure the output: if nothing moves, the attention pair is an artefact.", 2),
    ("Change one word at a time and print the weights: if nothing moves, the attention pair is an artefact.", 1),
    ("The pairs are artefacts. To check, mask the word and measure the change in the loss.", 2),
    ("The pairs are findings. To check, mask the word and measure the change in the loss.", 1),
    ("The model is untrained, so its attention cannot mean anything yet; the pairs are artefacts.", 1),
    ("The model is trained, so its attention can mean something now; the pairs are findings.", 0),
    ("Shuffle the weights as a baseline and intervene on the input: both show the pairs are artefacts.", 3),
    ("Shuffle the weights as a baseline and look at the input: both show the pairs are artefacts.", 2),
    ("Large weights do not prove a link; an intervention on the input is needed to show it.", 1),
    ("Large weights do prove a link; no intervention on the input is needed to show it.", 0),
    ("Heatmaps show correlation, not causation; remove the word and measure the output to find out.", 2),
    ("Heatmaps show causation, not correlation; remove the word and measure the output to find out.", 1),
    ("The pattern is the same for every random seed, so it comes from the softmax, not from the sentence.", 1),
    ("The pattern is different for every random seed, so it comes from the sentence, not from the softmax.", 0),
    ("It is an artefact; with untrained projections there is nothing to find, and a random baseline agrees.", 3),
    ("It is an artefact; with untrained projections there is nothing to find, and a random baseline disagrees.", 2),
    ("The strongest pairs are artefacts, and intervening on the words is the only check that counts.", 2),
    ("The strongest pairs are artefacts, and looking at the words is the only check that counts.", 1),
]
CONTRACTIONS = [
    ("do not", "don't"),
    ("does not", "doesn't"),
    ("cannot", "can't"),
    ("it is", "it's"),
    ("is not", "isn't"),
    ("there is", "there's"),
    ("I would", "I'd"),
]
FILLERS = ["I think ", "Basically, ", "Well, "]
KEYS = "qwertyuiopasdfghjklzxcvbnm"


def typo(text: str, rng: random.Random) -> str:
    """One typo in a word of four letters or more: a letter dropped, doubled, swapped with the next,
    or struck with its neighbour on the keyboard."""
    words = text.split(" ")
    long = [n for n, w in enumerate(words) if sum(c.isalpha() for c in w) >= 4]
    n = rng.choice(long)
    word = words[n]
    at = rng.randrange(1, sum(c.isalpha() for c in word) - 1)
    kind = rng.choice(["drop", "double", "swap", "strike"])
    if kind == "drop":
        word = word[:at] + word[at + 1 :]
    elif kind == "double":
        word = word[:at] + word[at] + word[at:]
    elif kind == "swap":
        word = word[: at - 1] + word[at] + word[at - 1] + word[at + 1 :]
    else:
        key = KEYS.find(word[at].lower())
        near = KEYS[min(max(key + rng.choice([-1, 1]), 0), len(KEYS) - 1)] if key >= 0 else word[at]
        word = word[:at] + near + word[at + 1 :]
    words[n] = word
    return " ".join(words)


def handed_in(text: str, rng: random.Random) -> str:
    """The answer as a student would write it."""
    how = rng.random()
    if how < 0.3:
        return text
    if how < 0.45:
        changed = text.lower() if rng.random() < 0.7 else text.upper()
        return changed.replace(",", rng.choice(["", " ,", ";"])).rstrip(".") + rng.choice(["", "!", " ."])
    if how < 0.7:
        for _ in range(rng.randint(1, 2)):
            text = typo(text, rng)
        return text
    if how < 0.8:
        for long, short in CONTRACTIONS:
            text = text.replace(long, short) if long in text else text.replace(short, long)
        return text
    if how < 0.9:
        return rng.choice(FILLERS) + text[0].lower() + text[1:]
    sentences = [s.strip() for s in text.replace("; ", ". ").split(". ") if s.strip()]
    rng.shuffle(sentences)
    return ". ".join(sentences)


def a_class(students: int, rng: random.Random) -> list[tuple[answer_groups.Answer, int]]:
    popularity = [1 / (rank + 1) ** 0.7 for rank in range(len(IDEAS))]  # a few ideas common, most rare
    rng.shuffle(popularity)
    drawn = rng.choices(IDEAS, weights=popularity, k=students)
    Answer = answer_groups.Answer
    return [(Answer(key=f"s{n:03d}", text=handed_in(text, rng)), mark) for n, (text, mark) in enumerate(drawn)]


def before(rev: str) -> ModuleType:
    """The answer groups' module as it was at ``rev`` (gradebook/marking/groups.py, or before the
    gradebook's packages gradebook/answer_groups.py), loaded beside today's."""
    places = {"gradebook/marking/groups.py": "gradebook.marking", "gradebook/answer_groups.py": "gradebook"}
    found = {
        path: subprocess.run(["git", "show", f"{rev}:{path}"], cwd=ROOT, capture_output=True, text=True)
        for path in places
    }
    there = [path for path, shown in found.items() if shown.returncode == 0]
    if not there:
        raise SystemExit(f"{rev}: no answer groups' module at that revision")
    path, package, source = there[0], places[there[0]], found[there[0]].stdout
    spec = importlib.util.spec_from_loader(f"{package}.answer_groups_before", loader=None)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    module.__package__ = package
    sys.modules[spec.name] = module  # dataclasses look their module up
    exec(compile(source, f"{rev}:{path}", "exec"), module.__dict__)  # noqa: S102
    return module


def measure(groups: list, answers: list[tuple[answer_groups.Answer, int]]) -> tuple[int, int, int]:
    """(grading actions by groups, mixed groups, answers whose group's mark differs from their own)."""
    label = {answer.key: mark for answer, mark in answers}
    mixed = sum(len({label[m] for m in group.members}) > 1 for group in groups)
    wrong = sum(label[member] != label[group.representative] for group in groups for member in group.members)
    return len(groups), mixed, wrong


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=300)
    parser.add_argument("--classes", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--before", default=BEFORE, help="the commit to compare with (default: %(default)s)")
    args = parser.parse_args()
    old = before(args.before)
    classes = [a_class(args.students, random.Random(args.seed + n)) for n in range(args.classes)]
    vocabulary = [QUESTION, *RUBRIC]
    rows = {"before": [], "now": []}
    for answers in classes:
        plain = [answer for answer, _ in answers]
        rows["before"].append(measure(old.group_answers([old.Answer(a.key, a.text) for a in plain]), answers))
        rows["now"].append(measure(answer_groups.group_answers(plain, vocabulary=vocabulary), answers))
    print(
        f"{len(IDEAS)} ideas (17 pairs of near-twins); {args.students} answers a class; {args.classes} classes; "
        f"threshold {answer_groups.DEFAULT_THRESHOLD:g}\n"
    )
    print(
        "| grouping | actions one by one | actions by groups (worst) | times fewer (worst) "
        "| mixed groups (worst) | answers under another's mark (worst) |"
    )
    print("|---|---|---|---|---|---|")
    for name, label in (
        ("before", f"before ({args.before}: edit similarity alone)"),
        ("now", "now (misspellings only)"),
    ):
        actions = max(r[0] for r in rows[name])
        print(
            f"| {label} | {args.students} | {actions} | {args.students / actions:.1f} | "
            f"{max(r[1] for r in rows[name])} | {max(r[2] for r in rows[name])} |"
        )
    started = time.perf_counter()
    answer_groups.group_answers([answer for answer, _ in classes[0]], vocabulary=vocabulary)
    print(f"\nGrouping one class now: {time.perf_counter() - started:.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
