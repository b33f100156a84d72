"""Display formulas: LaTeX body and equation number from one formula block."""

from __future__ import annotations

import re

from .blocks import EQUATION_NUMBER

_INLINE_NUMBER = re.compile(
    r"(\$\$|\\\]|\\end\{[a-z]+\*?\})[ \t]*[(\[]([\w.\-']{1,12})[)\]][ \t]*$")
_TAG = re.compile(r"\\tag\*?\{([^{}]{1,20})\}")
_ENVIRONMENT = re.compile(r"^\\begin\{[a-z]+\*?\}")


def split_formula(source: str) -> tuple[str, str | None]:
    """``(latex, equation_number)`` of a formula block as the model wrote it.

    The number is one standing after the formula (``(13)``, ``(2.1a)``, ``[4]``,
    on the same line or alone on a later one) or a ``\\tag{..}`` inside it.
    """
    text = source.strip()
    lines = text.split("\n")
    number: str | None = None
    standalone = EQUATION_NUMBER.match(lines[-1])
    inline = _INLINE_NUMBER.search(lines[-1])
    if standalone and len(lines) > 1:
        number = standalone.group(1)
        text = "\n".join(lines[:-1]).strip()
    elif inline:
        number = inline.group(2)
        text = text[: len(text) - len(lines[-1]) + inline.end(1)].strip()
    latex = _body(text)
    tag = _TAG.search(latex)
    if tag is not None:
        number = number or tag.group(1).strip()
    return latex, number


def _body(text: str) -> str:
    """The LaTeX between the delimiters (an environment keeps its ``\\begin``/``\\end``)."""
    if _ENVIRONMENT.match(text):
        return text
    if text.startswith("$$"):
        inner = text[2:-2] if text.endswith("$$") and len(text) >= 4 else text[2:]
    elif text.startswith("\\["):
        inner = text[2:-2] if text.endswith("\\]") else text[2:]
    else:
        inner = text
    return inner.strip()
