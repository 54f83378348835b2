"""Benchmark: marking a class's written answers by groups (gradebook.answer_groups) against one by one.

    python benchmarks/answer_groups.py [--students 300] [--classes 5] [--seed 1]

A generated class for the demo's written question ("meaningful link or artefact, and how to check",
3 points: one for each of three rubric items). Its distinct answers are a few dozen: each says, or
fails to say, each of the three things, in one of several wordings, so two distinct answers often
differ by one sentence and one point (the near-misses a grouping must keep apart). Each student's
answer is one of them, the popular ones more often, as handed in: verbatim, or with its case,
spacing and punctuation changed, a few typos (a letter dropped, doubled or swapped), a word
replaced by a synonym, a filler phrase, or its sentences in another order. Each is labelled with
its true mark (the distinct answer's).

For each threshold: the grading actions to mark every answer (one per answer; by groups, one per
group: the grader marks the representative and the mark goes to every member), how many times
fewer, and the answers whose group's mark (its representative's label) differs from their own
label; over --classes classes (different draws), the worst. Then the time to group one class.
Prints Markdown for docs/explanation/answer-groups.md.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from itertools import product
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gradebook.answer_groups import DEFAULT_THRESHOLD, Answer, group_answers

# What an answer says for each rubric item: wordings that earn the point, and ones that do not.
ITEMS = [
    (
        [
            "The strongest pairs are artefacts of the untrained projections, not findings.",
            "These links are an artefact: softmax forces every row to add up to one, so something always looks strong.",
        ],
        [
            "The strongest pairs show what the model really learned about the sentence.",
            "The pairs are meaningful because the weights are large.",
        ],
    ),
    (
        [
            "To check, change or remove a word and measure how much the output moves.",
            "I would intervene: delete the word and see whether the prediction changes.",
        ],
        ["To check, look at the heatmap again more carefully.", "We can check it by printing the attention matrix."],
    ),
    (
        [
            "Compare with a random baseline of shuffled weights.",
            "A control with random projections shows the same pattern.",
        ],
        ["", "This is hard to check without more data."],
    ),
]
SYNONYMS = {
    "strongest": "largest",
    "untrained": "random",
    "measure": "quantify",
    "remove": "delete",
    "change": "alter",
    "compare": "contrast",
    "really": "truly",
    "word": "token",
    "shows": "displays",
    "check": "test",
}
FILLERS = ["I think ", "In my opinion, ", "Basically, ", "Well, "]


def distinct_answers() -> list[tuple[str, int]]:
    """Every combination of one wording per item: (text, true mark); a few dozen."""
    answers = []
    for choice in product(*[[(w, 1) for w in good] + [(w, 0) for w in bad] for good, bad in ITEMS]):
        picked = [(w, p) for w, p in choice]
        answers.append((" ".join(w for w, _ in picked if w), sum(p for _, p in picked)))
    return answers


def typo(text: str, rng: random.Random) -> str:
    at = rng.randrange(1, len(text) - 1)
    kind = rng.choice(["drop", "double", "swap"])
    if kind == "drop":
        return text[:at] + text[at + 1 :]
    if kind == "double":
        return text[:at] + text[at] + text[at:]
    return text[: at - 1] + text[at] + text[at - 1] + text[at + 1 :]


def handed_in(text: str, rng: random.Random) -> str:
    """The answer as a student would write it."""
    how = rng.random()
    if how < 0.3:
        return text
    if how < 0.5:
        changed = text.lower() if rng.random() < 0.5 else text.upper()
        return "  ".join(changed.replace(".", rng.choice(["", "!", " ."])).split(" "))
    if how < 0.7:
        for _ in range(rng.randint(1, 3)):
            text = typo(text, rng)
        return text
    if how < 0.85:
        words = [w for w in SYNONYMS if w in text.lower()]
        for word in rng.sample(words, min(len(words), rng.randint(1, 2))):
            text = text.replace(word, SYNONYMS[word]).replace(word.capitalize(), SYNONYMS[word].capitalize())
        return text
    if how < 0.93:
        return rng.choice(FILLERS) + text[0].lower() + text[1:]
    sentences = [s for s in text.split(". ") if s]
    rng.shuffle(sentences)
    return ". ".join(sentences)


def a_class(students: int, rng: random.Random) -> list[tuple[Answer, int]]:
    base = distinct_answers()
    popularity = [1 / (rank + 1) for rank in range(len(base))]  # a few answers are common, most rare
    rng.shuffle(popularity)
    drawn = rng.choices(base, weights=popularity, k=students)
    return [(Answer(key=f"s{n:03d}", text=handed_in(text, rng)), mark) for n, (text, mark) in enumerate(drawn)]


def measure(answers: list[tuple[Answer, int]], threshold: float) -> tuple[int, int]:
    """(grading actions by groups, answers whose group's mark differs from their label)."""
    label = {answer.key: mark for answer, mark in answers}
    groups = group_answers([answer for answer, _ in answers], threshold)
    wrong = sum(label[member] != label[group.representative] for group in groups for member in group.members)
    return len(groups), wrong


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=300)
    parser.add_argument("--classes", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    classes = [a_class(args.students, random.Random(args.seed + n)) for n in range(args.classes)]
    print(f"{len(distinct_answers())} distinct answers; {args.students} students; {args.classes} classes\n")
    print("| threshold | actions one by one | actions by groups (worst) | times fewer (worst) | wrong marks (worst) |")
    print("|---|---|---|---|---|")
    for threshold in (1.0, 0.95, 0.92, 0.9, 0.88, 0.86, 0.84, 0.8, 0.7):
        results = [measure(answers, threshold) for answers in classes]
        groups = max(g for g, _ in results)
        wrong = max(w for _, w in results)
        mark = " (default)" if threshold == DEFAULT_THRESHOLD else ""
        print(f"| {threshold:g}{mark} | {args.students} | {groups} | {args.students / groups:.1f} | {wrong} |")
    started = time.perf_counter()
    group_answers([answer for answer, _ in classes[0]], DEFAULT_THRESHOLD)
    print(f"\nGrouping one class at the default threshold: {time.perf_counter() - started:.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
