"""Math delimiters Jupyter renders: ``$...$`` and ``$$...$$``.

In a Markdown cell, ``\\(x\\)`` and ``\\[x\\]`` lose their backslash to Markdown's escapes before MathJax
sees them, so JupyterLab shows ``(x)`` and ``[x]`` as text. ``jupyter_math`` rewrites them to the
dollar forms (``assign`` and ``release`` do); ``unrendered_math`` finds them (``course validate`` warns).
"""

from __future__ import annotations

import re

# \( ... \) and \[ ... \], not inside code spans or fences (a backtick-quoted \( stays as written).
_INLINE = re.compile(r"\\\((.+?)\\\)", re.DOTALL)
_DISPLAY = re.compile(r"\\\[(.+?)\\\]", re.DOTALL)
_CODE = re.compile(r"(```.*?```|`[^`\n]*`)", re.DOTALL)


def jupyter_math(markdown: str) -> str:
    """``markdown`` with ``\\( \\)`` as ``$ $`` and ``\\[ \\]`` as ``$$ $$``, code left as it is."""
    parts = _CODE.split(markdown)
    for index in range(0, len(parts), 2):  # even parts are outside code
        text = _DISPLAY.sub(lambda m: f"$${m.group(1).strip()}$$", parts[index])
        parts[index] = _INLINE.sub(lambda m: f"${m.group(1).strip()}$", text)
    return "".join(parts)


def unrendered_math(markdown: str) -> list[str]:
    """The formulas written with delimiters Jupyter does not render, as written."""
    found = []
    for index, part in enumerate(_CODE.split(markdown)):
        if index % 2 == 0:
            found += [m.group(0) for m in _DISPLAY.finditer(part)] + [m.group(0) for m in _INLINE.finditer(part)]
    return found
