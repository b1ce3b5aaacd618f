"""Text that came from outside pairbench, made safe to show: control characters become visible escapes.

A result file, a command line, a process name or a machine reading may hold
terminal control sequences: a window title (``ESC ] 0 ; ... BEL``), a
clipboard write (OSC 52), a hyperlink (OSC 8), cursor movement or line erase
(CSI), as 7-bit ``ESC`` sequences or 8-bit C1 characters. Printed unchanged
they are obeyed by the terminal that shows a report, or by whatever later
prints an exported file. So every renderer shows such text through
:func:`visible`, which writes each control character as an escape
(``\\x1b``, ``\\n``, ``\\u202e``) and leaves all other text alone.

What counts as a control character here (:data:`CONTROL`): C0 (U+0000-U+001F,
newline and tab included: a name cannot start a new line of a report), DEL,
C1 (U+0080-U+009F), the bidirectional controls that reorder what is shown
(U+061C, U+200E-F, U+202A-E, U+2066-9) and the line and paragraph separators
(U+2028-9). A lone surrogate is a byte the operating system handed over that
was not UTF-8 (Python's ``surrogateescape``: byte 0xFF arrives as U+DCFF): it
is shown as that byte, ``\\xff``, so a report can always be written as UTF-8.

:func:`visible` is idempotent (its escapes hold no control character), so
text that passes through it twice is shown the same. The JSON report keeps
strings exact instead, with the same characters written as ``\\u`` escapes
(:func:`json_escaped`). Markdown text goes through :func:`escape` (and
:func:`escape_html` inside raw HTML), which also neutralises Markdown, HTML and
GitHub's mentions (``report.markdown`` says why each).
"""

from __future__ import annotations

import re

CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
                     "\ud800-\udfff]")
# CONTROL but C0, which json.dumps always escapes inside strings (outside them: only its own whitespace)
_JSON_RAW = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_ESCAPED_BYTES = range(0xDC80, 0xDD00)  # surrogateescape: byte b arrives as U+DC00 + b


def visible(text: object) -> str:
    """``text`` with every control character (see the module docstring) written as an escape."""
    return CONTROL.sub(_escape, str(text))


def _escape(match: re.Match) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    if code in _ESCAPED_BYTES:
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def markup(text: object) -> str:
    """``text`` made visible and escaped for rich markup (the terminal renderers' lines)."""
    from rich.markup import escape

    return escape(visible(text))


def json_escaped(text: str) -> str:
    """JSON text with every control character that ``json.dumps(ensure_ascii=False)`` leaves raw (C1,
    bidirectional controls, separators, lone surrogates) written as a ``\\uXXXX`` escape: the same JSON
    value, safe to print and always valid UTF-8."""
    return _JSON_RAW.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


# Markdown (GitHub-flavoured): see report.markdown for why each of these is escaped
_BACKSLASHED = re.compile(r"([\\`*_\[\]{}|~#!])")
_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}
_LINK_TRIGGER = re.compile(r"([@#])(?=\w)")  # a mention or an issue reference starts here
WORD_JOINER = "\u2060"


def escape(text: object) -> str:
    """``text`` safe inside a GFM table cell or paragraph: no markup, no HTML, one line."""
    value = visible(text)
    value = re.sub(r"[&<>\"]", lambda m: _ENTITIES[m.group(0)], value)
    value = _BACKSLASHED.sub(r"\\\1", value)
    value = re.sub(r"[\r\n\t\v\f\u2028\u2029]+", " ", value)
    return _unlinked(value).strip() or " "


def escape_html(text: object) -> str:
    """``text`` safe inside a raw HTML element (``<summary>``), where Markdown is not parsed."""
    value = re.sub(r"[&<>\"]", lambda m: _ENTITIES[m.group(0)], visible(text))
    return _unlinked(re.sub(r"[\r\n\t\v\f\u2028\u2029]+", " ", value)).strip()


def _unlinked(text: str) -> str:
    """``text`` with a word joiner after each ``@`` or ``#`` GitHub would turn into a mention or link."""
    return _LINK_TRIGGER.sub(r"\1" + WORD_JOINER, text)
