"""Math that a student wrote ($...$ in an answer), shown as MathML that is only math.

latex2mathml copies some of its input into the markup as it is (``\\text{<script>...}`` becomes a
``<script>`` element, ``\\href{javascript:...}`` an ``href`` attribute), so its output is parsed as
XML and rebuilt from an allowlist: presentation MathML elements, a few layout attributes with plain
values, text escaped on the way out. Anything else is dropped (its text kept as text); input the
converter or the parser cannot handle is shown as the TeX itself, escaped."""

from __future__ import annotations

import html
import re

MATHML_NS = "http://www.w3.org/1998/Math/MathML"
ELEMENTS = frozenset(
    "math mrow mi mn mo ms mtext mspace msup msub msubsup mfrac msqrt mroot mstyle mtable mtr mtd mover "
    "munder munderover mpadded mphantom menclose mfenced semantics annotation merror mlabeledtr".split()
)
ATTRIBUTES = frozenset(
    "display mathvariant displaystyle scriptlevel stretchy fence separator lspace rspace linethickness "
    "columnalign rowalign columnspacing rowspacing columnlines rowlines accent accentunder form largeop "
    "movablelimits symmetric minsize maxsize notation width height depth open close separators "
    "encoding".split()
)
PLAIN_VALUE = re.compile(r"[\w .%#+-]{0,40}")  # words, lengths, numbers: never a URL or a script
MAX_TEX = 2000


def tex_to_mathml(tex: str, display: bool = False) -> str:
    """Safe MathML for ``tex``, or the TeX escaped in a ``<code>`` when it cannot be converted."""
    from latex2mathml.converter import convert
    from lxml import etree

    fallback = f'<code class="tex">{html.escape(tex)}</code>'
    if len(tex) > MAX_TEX:
        return fallback
    try:
        converted = convert(tex, display="block" if display else "inline")
        parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)
        tree = etree.fromstring(converted.encode(), parser)
    except Exception:  # whatever the converter or the parser make of hostile TeX, it is shown as TeX
        return fallback
    return _rebuilt(tree)


def _rebuilt(element) -> str:
    """``element`` written anew from what the allowlist keeps."""
    tag = element.tag.split("}")[-1] if isinstance(element.tag, str) else ""
    inner = html.escape(element.text or "") + "".join(
        _rebuilt(child) + html.escape(child.tail or "") for child in element
    )
    if tag not in ELEMENTS:
        return inner  # an element of the student's making: its text only
    attributes = "".join(
        f' {name}="{html.escape(value)}"'
        for name, value in sorted(element.attrib.items())
        if name in ATTRIBUTES and PLAIN_VALUE.fullmatch(value)
    )
    namespace = f' xmlns="{MATHML_NS}"' if tag == "math" else ""
    return f"<{tag}{namespace}{attributes}>{inner}</{tag}>"


def answer_markdown():
    """The renderer of a student's written answer: CommonMark with their HTML shown as text, never
    run; ``$...$`` and ``$$...$$`` as safe MathML; code blocks highlighted by pygments (which escapes
    what it highlights)."""
    from markdown_it import MarkdownIt
    from mdit_py_plugins.dollarmath import dollarmath_plugin

    renderer = MarkdownIt("commonmark", {"html": False, "highlight": _highlighted})
    return renderer.use(
        dollarmath_plugin,
        double_inline=True,
        renderer=lambda tex, options: tex_to_mathml(tex, display=options.get("display_mode", False)),
    )


def feedback_markdown():
    """The renderer of an exam's feedback, whose questions are written as the exam's pages write them:
    ``\\( ... \\)`` and ``\\[ ... \\]`` as well as ``$...$``, all as safe MathML (as the taking page
    shows them), never as TeX with its delimiters lost to Markdown's escapes."""
    from mdit_py_plugins.texmath import texmath_plugin

    renderer = answer_markdown().use(texmath_plugin, delimiters="brackets")
    for rule, display in (
        ("math_inline", False),
        ("math_inline_double", True),
        ("math_block", True),
        ("math_block_eqno", True),
    ):
        renderer.add_render_rule(rule, _math_rule(display))
    return renderer


def _math_rule(display: bool):
    def render(_self, tokens, index, _options, _env) -> str:
        return tex_to_mathml(tokens[index].content.strip(), display=display)

    return render


def _highlighted(code: str, language: str, _attributes: str) -> str:
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import TextLexer, get_lexer_by_name
    from pygments.util import ClassNotFound

    try:
        lexer = get_lexer_by_name(language or "python")
    except ClassNotFound:
        lexer = TextLexer()
    return highlight(code, lexer, HtmlFormatter(nowrap=True))


# Math as feedback writes it in plain text: "$...$" where an author marked it, and the two forms the
# checks' and mistakes' sentences use unmarked: sqrt(d_k) and QK^T (a name of one to three letters
# raised to one letter or digit), with a one-letter name's one-character subscript (d_k). Code is
# left alone: a dotted name and its call or index (np.sqrt(d_k), Q.shape[-1]), multi_head_attention.
_PLAIN_MATH = re.compile(
    r"(?P<code>\b\w+(?:\.\w+)+(?:\([^()\n]*\)|\[[^\]\n]*\])?)"
    r"|\$(?P<marked>[^$\n]{1,200})\$"
    r"|(?<![\w.])sqrt\((?P<root>[A-Za-z](?:_[A-Za-z0-9])?)\)"
    r"|(?<![\w.])(?P<base>[A-Za-z]{1,3})\^(?P<power>[A-Za-z0-9])(?![\w(])"
    r"|(?<![\w.])(?P<name>[A-Za-z])_(?P<index>[A-Za-z0-9])(?![\w(])"
)


def _subscripted(name: str) -> str:
    return re.sub(r"^([A-Za-z])_([A-Za-z0-9])$", r"\1_{\2}", name)


def plain_text_math(text: str) -> str:
    """``text`` as HTML: escaped, its math (as ``_PLAIN_MATH`` finds it) as safe MathML."""
    pieces, at = [], 0
    for found in _PLAIN_MATH.finditer(text):
        pieces.append(html.escape(text[at : found.start()]))
        at = found.end()
        if found["code"] is not None:  # np.sqrt(d_k), Q.shape[-1]: code, as written
            pieces.append(html.escape(found["code"]))
            continue
        if found["marked"] is not None:
            tex = found["marked"]
        elif found["root"] is not None:
            tex = f"\\sqrt{{{_subscripted(found['root'])}}}"
        elif found["base"] is not None:
            tex = f"{found['base']}^{{{found['power']}}}"
        else:
            tex = f"{found['name']}_{{{found['index']}}}"
        pieces.append(tex_to_mathml(tex))
    pieces.append(html.escape(text[at:]))
    return "".join(pieces)
