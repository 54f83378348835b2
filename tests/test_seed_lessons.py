"""The four shipped lessons load into the model with their real content."""

from __future__ import annotations

import pytest

from course.catalog import load_folder
from course.loaders import detect_format, load_lesson, read_source
from course.models import CodeBlock, ListBlock, MathBlock, Paragraph

from .conftest import JSON_LESSON, LESSON_DATA, MODULE_PAGE, NUMBERED_TEXT_LESSON, SHARED, TEXT_LESSON

SEQUENCE_LESSON_HEADINGS = [
    "The problem with a sequence",
    "Recurrent networks, and their ceiling",
    "Attention",
    "What this changed",
    "The cost",
    "Multi-head attention",
    "Where this leaves you",
]
MODULE_HEADINGS = [
    "Why this is here",
    "Recurrence and its ceiling",
    "Attention: query, key, value",
    "Click a word",
    "Why divide by \\(\\sqrt{d}\\)",
    "Self-attention and heads",
    "Attention does not know order",
    "The transformer block",
    "Attention is not an explanation",
    "Practice",
    "Assignment",
    "Self-check",
    "Next",
]
TRANSFORMER_LESSON_HEADINGS = [
    "The problem with order",
    "Recurrent networks: reading one step at a time",
    "Attention: look at everything at once",
    "How attention is computed",
    "The two properties that won",
    "The cost of attention",
    "Where transformers ended up",
    "In three sentences",
]


@pytest.mark.parametrize(
    "path, fmt, title, headings",
    [
        (JSON_LESSON, "json", "Sequences: from recurrence to attention", SEQUENCE_LESSON_HEADINGS),
        (MODULE_PAGE, "markdown", "Sequences and attention", MODULE_HEADINGS),
        (TEXT_LESSON, "text", "Sequences: from recurrence to attention", SEQUENCE_LESSON_HEADINGS),
        (NUMBERED_TEXT_LESSON, "text", "Sequences and transformers", TRANSFORMER_LESSON_HEADINGS),
    ],
    ids=["json", "markdown", "text", "numbered-text"],
)
def test_seed_loads_with_title_and_every_heading_in_order(path, fmt, title, headings):
    loaded = load_lesson(path)
    assert loaded.lesson.format == fmt
    assert loaded.lesson.title == title
    assert loaded.lesson.headings == headings
    assert loaded.warnings == []


def test_json_lesson_metadata_and_attribution():
    lesson = load_lesson(JSON_LESSON).lesson
    assert (lesson.slug, lesson.position, lesson.minutes) == ("from-sequences-to-attention", 81, 9)
    assert lesson.key_idea.startswith("Attention lets every position read every other in one step")
    assert lesson.course.title == "Machine Learning, Foundations"
    assert lesson.attribution.licence.name == "CC BY-NC-SA 4.0"
    assert lesson.attribution.citation.startswith("Addaly (2026)")
    assert lesson.next.slug == "transfer-learning" and lesson.previous.slug == "convolutions"


def test_json_lesson_check_has_four_options_one_correct_three_tempting_in_display_order():
    [check] = load_lesson(JSON_LESSON).lesson.checks
    assert check.stem.plain().startswith("A team replaces an LSTM with a transformer")
    assert len(check.options) == 4
    assert [option.correct for option in check.options] == [False, False, True, False]
    assert sum(option.tempting is not None for option in check.options) == 3
    assert check.options[check.correct_index].tempting is None
    assert check.order == [3, 1, 2, 0]
    assert check.displayed()[0].text.plain().startswith("Transformers cannot process sequences incrementally")
    assert "640,000-entry matrix" in check.options[check.correct_index].text.plain()


def test_json_lesson_keeps_inline_styles_from_the_reader_blocks():
    lesson = load_lesson(JSON_LESSON).lesson
    recurrent = lesson.sections[1]
    code = [block for block in recurrent.blocks if isinstance(block, CodeBlock)]
    assert code[0].text == "h_t = f(W_h * h_{t-1} + W_x * x_t)"
    runs = [run for block in recurrent.blocks if isinstance(block, Paragraph) for run in block.runs]
    assert any(run.bold and run.text == "Long-range dependencies." for run in runs)
    assert any(run.code and run.text == "W_h" for run in runs)


def test_module_page_objectives_self_check_and_assignment():
    lesson = load_lesson(MODULE_PAGE).lesson
    assert lesson.module.number == 10
    objectives = [objective.text.plain() for objective in lesson.objectives]
    assert len(objectives) == 6
    assert objectives[0].startswith("Explain why a recurrent network handles a long-range dependency poorly")
    assert objectives[-1].startswith("Say why an attention map is not an explanation")
    questions = [question.prompt.plain() for question in lesson.open_questions]
    assert len(questions) == 7
    assert questions[0].startswith("Why is a long-range dependency hard for a recurrent network?")
    assert (
        questions[-1]
        == "You are given a pretty attention map. What does it prove about the model's decision, and what does it not?"
    )
    assignment = lesson.assignment
    assert assignment.title == "Assignment"
    assert len(assignment.tasks) == 4
    assert assignment.tasks[2].plain().startswith("Change the input so that the weights do not change")
    assert assignment.brief[0].runs.plain().startswith("Take a short text")


def test_module_page_math_is_inline_runs_and_display_blocks_without_pilcrows():
    lesson = load_lesson(MODULE_PAGE).lesson
    objective = lesson.objectives[2].text
    assert [run.text for run in objective if run.math] == ["\\sqrt{d}"]
    display = [block.latex for s in lesson.sections for block in s.blocks if isinstance(block, MathBlock)]
    assert display[0] == "h_t = f(h_{t-1}, x_t)"
    assert any("\\mathrm{softmax}" in latex for latex in display)
    text = lesson.model_dump_json()
    assert "¶" not in text


def test_module_page_subsections_stay_inside_practice():
    practice = next(s for s in load_lesson(MODULE_PAGE).lesson.sections if s.title == "Practice")
    subheadings = [block.text for block in practice.blocks if block.kind == "heading"]
    assert subheadings == ["Part 1. The notebook", "Part 2. Break it"]
    lists = [block for block in practice.blocks if isinstance(block, ListBlock)]
    assert len(lists[0].items) == 5


def test_text_lessons_find_formulas_lists_and_numbered_title():
    lesson = load_lesson(TEXT_LESSON).lesson
    code = [block.text for s in lesson.sections for block in s.blocks if isinstance(block, CodeBlock)]
    assert code == ["h_t = f(W_h * h_{t-1} + W_x * x_t)", "attention(Q, K, V) = softmax(Q K' / sqrt(d)) V"]
    numbered = load_lesson(NUMBERED_TEXT_LESSON).lesson
    assert numbered.position == 4
    assert numbered.intro[0].runs.plain().startswith("CNNs handle data laid out in space.")
    computed = next(s for s in numbered.sections if s.title == "How attention is computed")
    [roles] = [block for block in computed.blocks if isinstance(block, ListBlock)]
    assert [item.plain() for item in roles.items] == [
        "a query: what am I looking for",
        "a key: what do I offer",
        "a value: what I actually contribute",
    ]


def test_text_and_json_forms_of_the_same_lesson_agree_on_their_outline():
    text = load_lesson(TEXT_LESSON).lesson
    json_form = load_lesson(JSON_LESSON).lesson
    assert text.headings == json_form.headings
    assert [len(s.blocks) for s in text.sections] == [len(s.blocks) for s in json_form.sections]


def test_format_is_chosen_by_content_not_extension(tmp_path):
    disguised = tmp_path / "lesson.txt"
    disguised.write_bytes(JSON_LESSON.read_bytes())
    markdown = tmp_path / "page.txt"
    markdown.write_bytes(MODULE_PAGE.read_bytes())
    plain = tmp_path / "notes.md.bak"
    plain.write_bytes(TEXT_LESSON.read_bytes())
    assert [detect_format(read_source(p)) for p in (disguised, markdown, plain)] == ["json", "markdown", "text"]
    assert load_lesson(disguised).lesson.checks[0].order == [3, 1, 2, 0]


def test_lesson_data_folder_is_one_module_of_four_lessons():
    catalog = load_folder(LESSON_DATA)
    assert catalog.problems == []
    assert sorted(lesson.format for lesson in catalog.lessons) == ["json", "json", "markdown", "text", "text"]
    course = catalog.course()
    assert course.title == "Machine Learning, Foundations"
    module_10 = next(module for module in course.modules if module.number == 10)
    assert len(module_10.objectives) == 6
    assert {lesson.slug for lesson in module_10.lessons} >= {
        "module-10-sequences-and-attention",
        "sequences-and-transformers",
    }


@pytest.mark.skipif(not (SHARED / "seeds").is_dir(), reason="../shared/seeds is not beside this checkout")
def test_lesson_data_files_are_the_seed_documents_unchanged():
    seeds = {path.read_bytes() for path in (SHARED / "seeds").iterdir()}
    written_here = {"NOTICE", "module-10-question-bank.lesson.json", "_module10_generators.py"}
    shipped = {path.read_bytes() for path in LESSON_DATA.iterdir() if path.name not in written_here}
    assert shipped == seeds
