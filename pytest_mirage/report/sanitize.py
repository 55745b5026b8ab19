"""Neutralise control, escape and invisible characters in text that came from outside the plugin.

Model answers, error bodies from servers, suite files and judge replies may contain anything: an
ANSI escape sequence that recolours or clears the terminal, a carriage return that overwrites the
line a reader trusts, a right-to-left override that makes ``x >= 0.9`` display as something else,
zero-width characters that make two different case ids look equal, lone surrogates that cannot be
encoded at all. Every output (terminal lines, Markdown, HTML, GitHub annotations) passes its text
through :func:`sanitize` (prose) or :func:`sanitize_name` (identifiers), which replace such
characters with a visible escape (``\\x1b``, ``\\u202e``), so the text stays readable, shows
what was there and cannot act on the viewer.

Prose keeps what real multilingual text needs: line breaks and tabs, the zero-width (non-)joiners
that Persian and the Indic scripts use inside words, and the left-to-right / right-to-left *marks*
of Arabic and Persian text (marks cannot reorder text; overrides, embeddings and isolates can, and
are neutralised). Identifiers (model names, case ids, suite names, paths) have no use for any of
these, so :func:`sanitize_name` neutralises them too.
"""

from __future__ import annotations

import re

# C0 controls except \t and \n, DEL, C1 controls; lone surrogates (unencodable); line/paragraph
# separators (line breaks to some viewers, not others); bidi embeddings/overrides (U+202A-U+202E)
# and isolates (U+2066-U+2069); invisible characters that carry no meaning in text: zero width
# space, word joiner and invisible operators, BOM, Mongolian vowel separator, interlinear
# annotation marks and the tag characters (used to hide instructions in "ASCII smuggling").
_PROSE = (
    "\x00-\x08\x0b-\x1f\x7f-\x9f"
    "\ud800-\udfff"
    "\u2028\u2029"
    "\u202a-\u202e\u2066-\u2069"
    "\u200b\u2060-\u2064\ufeff\u180e\ufff9-\ufffb"
    "\U000e0000-\U000e007f"
)
# identifiers also: \t, \n, the zero-width (non-)joiners, the bidi marks (LRM, RLM, ALM), soft
# hyphen, combining grapheme joiner, Hangul fillers
_NAME_EXTRA = "\t\n\u200c\u200d\u200e\u200f\u061c\u00ad\u034f\u115f\u1160\u3164\uffa0"

_PROSE_RE = re.compile(f"[{_PROSE}]")
_NAME_RE = re.compile(f"[{_PROSE}{_NAME_EXTRA}]")


def _escape(m: re.Match[str]) -> str:
    code = ord(m.group())
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def sanitize(text: str) -> str:
    """``text`` with every control, escape and deceptive invisible character shown as an escape.

    ``\\r\\n`` becomes ``\\n`` (a Windows line end is a line end); a lone ``\\r`` (which would
    overwrite the line in a terminal) becomes the visible ``\\x0d``. Idempotent: the escapes are
    plain ASCII.
    """
    if "\r\n" in text:
        text = text.replace("\r\n", "\n")
    return _PROSE_RE.sub(_escape, text)


def sanitize_name(text: str) -> str:
    """An identifier (model name, case id, suite name, path) with every control, format and
    invisible character shown as an escape, line breaks and tabs included: a name shows every
    character that makes it differ from another."""
    return _NAME_RE.sub(_escape, text)


def one_line(text: str, limit: int | None = None) -> str:
    """Prose on one line (line breaks as spaces), sanitized, cut to ``limit`` characters with "…"."""
    flat = " ".join(sanitize(text).split())
    if limit is not None and len(flat) > limit:
        return flat[: max(0, limit - 1)].rstrip() + "…"
    return flat


# Workflow commands to the GitHub Actions runner (annotations, masks, stop-commands, env files):
# text from a model, a server, a suite or a judge must never issue one. The runner reads two forms
# from every line of a step's output:
# * ``::cmd ...::`` at the start of the line after the runner trims leading white space
#   (``string.TrimStart()``: any Unicode white space, not only blanks and tabs);
# * the legacy ``##[cmd ...]`` *anywhere* in the line.
# Both are broken with a visible escape: ``\x3a:`` for the first colon, ``#\x23[`` for the second
# hash. Neither escape can form a command again, so the functions are idempotent.
_COMMAND_RE = re.compile(r"^([^\S\n]*):(?=:)", re.MULTILINE)
_LEGACY_RE = re.compile(r"##\[")


def neutralise_commands(text: str) -> str:
    """``text`` with both forms of GitHub Actions workflow command made inert (see above)."""
    return _LEGACY_RE.sub(r"#\\x23[", _COMMAND_RE.sub(r"\1\\x3a", text))


def is_workflow_command(line: str) -> bool:
    """Whether the GitHub Actions runner would read ``line`` as a workflow command (either form)."""
    return line.lstrip().startswith("::") or "##[" in line


def terminal_safe(text: str) -> str:
    """Prose for a terminal or CI log: :func:`sanitize`, and neither form of GitHub Actions workflow
    command (a line starting with ``::``, ``##[`` anywhere) can act on the runner."""
    return neutralise_commands(sanitize(text))


def terminal_name(text: str) -> str:
    """An identifier for a terminal or CI log: :func:`sanitize_name` and :func:`neutralise_commands`."""
    return neutralise_commands(sanitize_name(text))
