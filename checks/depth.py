"""Element nesting depth measured on the text, for documents the parser refused as too deep.

libxml2 stops at a fixed depth (256 without ``huge_tree``) and reports *Excessive depth in
document*. The document may well be well-formed; what it breaks is the task's depth limit. This
scan counts the nesting of start and end tags (comments, CDATA, processing instructions and the
DOCTYPE skipped; quoted attribute values may hold ``>``) without building a tree. Pure.
"""

from __future__ import annotations

import re

PARSER_MAX_DEPTH = 256
"""libxml2's nesting limit without ``XML_PARSE_HUGE`` (the hardened parser never sets it)."""

_MARKUP = re.compile(
    r"<!--.*?-->"
    r"|<!\[CDATA\[.*?\]\]>"
    r"|<\?.*?\?>"
    r"|<![^>]*>"
    r"|<(?P<end>/)?[A-Za-z_:][^\s/>]*"
    r"(?:\s+[^\s=/>]+\s*=\s*(?:\"[^\"]*\"|'[^']*'))*\s*(?P<empty>/)?>",
    re.S,
)


def text_depth(text: str) -> tuple[int, int]:
    """The deepest element nesting in ``text`` (root = 1) and the line where it is reached."""
    depth = best = 0
    best_at = 0
    for m in _MARKUP.finditer(text):
        token = m.group(0)
        if token.startswith(("<!", "<?")):
            continue
        if m.group("end"):
            depth = max(0, depth - 1)
            continue
        if depth + 1 > best:  # an empty element is as deep as a start tag, without children
            best, best_at = depth + 1, m.start()
        if not m.group("empty"):
            depth += 1
    return best, text.count("\n", 0, best_at) + 1


def is_depth_error(message: str) -> bool:
    """Whether a libxml2 error message is its nesting-depth limit."""
    return "excessive depth" in message.lower()
