r"""URL classification and CSS scanning for the static checks (no I/O, nothing fetched).

URLs are normalised the way a browser's URL parser would see them, but more aggressively:
every whitespace and control character is removed anywhere (browsers strip them at the ends and
drop tab/newline inside), then the text is lower-cased. CSS is tokenised with tinycss2, so CSS
escapes (``\75 rl(``) are decoded before function names and URLs are compared; a second pass
over the escape-decoded text catches absolute URLs in places the tokenizer does not model.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import tinycss2

_INVISIBLE = re.compile(
    "[\x00-\x20\x7f-\xa0\u1680\u180e\u2000-\u200f\u2028-\u202f\u205f-\u2064\u3000\ufeff]+"
)
_SCHEME = re.compile(r"([a-z][a-z0-9+.\-]*):")
_SCRIPT_SUBSTRING = re.compile(
    r"(?:java|vb|live|j)script:|mocha:|data:(?:text/html|application/xhtml\+xml|text/javascript|"
    r"application/(?:x-)?(?:java|ecma)script)"
)
_NETWORK_PATH = re.compile(r"(?:^|[\s,;'\"(=])//[a-z0-9\[%@]")
SCRIPT_SCHEMES = frozenset({"javascript", "vbscript", "livescript", "mocha", "jscript"})
SCRIPT_DATA_TYPES = frozenset(
    {
        "text/html",
        "application/xhtml+xml",
        "text/javascript",
        "application/javascript",
        "application/x-javascript",
        "application/ecmascript",
        "text/ecmascript",
    }
)
IMAGE_FUNCTIONS = frozenset(
    {"image-set", "-webkit-image-set", "image", "cross-fade", "-webkit-cross-fade", "element"}
)


class UrlKind(StrEnum):
    """What following a URL would do."""

    EMPTY = "empty"
    LOCAL = "local"
    SCRIPT = "script"
    DATA_IMAGE = "data-image"
    DATA_OTHER = "data-other"
    EXTERNAL = "external"


_ASCII_INVISIBLE = dict.fromkeys([*range(0x21), 0x7F])
"""What :data:`_INVISIBLE` matches in ASCII text, as a deletion table for ``str.translate``."""


def normalise(value: str) -> str:
    """Remove every whitespace/control character and lower-case (for scheme comparison)."""
    if value.isascii():  # the common case, four times faster than the regular expression
        return value.translate(_ASCII_INVISIBLE).lower()
    return _INVISIBLE.sub("", value).lower()


def classify_url(value: str) -> tuple[UrlKind, str]:
    """Kind of a URL plus a detail (its scheme or data: media type)."""
    norm = normalise(value)
    if not norm:
        return UrlKind.EMPTY, ""
    if norm.startswith("#"):
        return UrlKind.LOCAL, "#"
    m = _SCHEME.match(norm)
    if m is None:
        return UrlKind.EXTERNAL, "relative" if not norm.startswith("//") else "network-path"
    scheme = m.group(1)
    if scheme in SCRIPT_SCHEMES:
        return UrlKind.SCRIPT, scheme + ":"
    if scheme == "data":
        media = norm[5:].split(",", 1)[0].split(";", 1)[0] or "text/plain"
        if media in SCRIPT_DATA_TYPES:
            return UrlKind.SCRIPT, "data:" + media
        if media.startswith("image/"):
            return UrlKind.DATA_IMAGE, "data:" + media
        return UrlKind.DATA_OTHER, "data:" + media
    return UrlKind.EXTERNAL, scheme + ":"


def script_substring(norm: str) -> str | None:
    """The script-running scheme found anywhere in normalised text, if any."""
    if "script:" not in norm and "mocha:" not in norm and "data:" not in norm:
        return None  # every alternative of the pattern holds one of these: no search needed
    m = _SCRIPT_SUBSTRING.search(norm)
    return None if m is None else m.group()


def absolute_url(text: str) -> str | None:
    """An absolute URL (``scheme://`` or ``//host``) inside normalised text, if any (linear)."""
    i = text.find("://")
    while i >= 0:
        if i > 0 and (text[i - 1].isalnum() or text[i - 1] in "+.-"):
            return text[max(0, i - 30) : i + 60]
        i = text.find("://", i + 3)
    if "//" not in text:
        return None
    m = _NETWORK_PATH.search(text)
    return None if m is None else text[m.start() : m.end() + 60].lstrip(" ,;'\"(=")


_CSS_ESCAPE = re.compile(r"\\([0-9a-fA-F]{1,6})[ \t\r\n\f]?|\\(.)", re.S)


def css_unescape(text: str) -> str:
    r"""Decode CSS escapes (``\75`` → ``u``); invalid code points become U+FFFD."""

    def repl(m: re.Match[str]) -> str:
        if m.group(1) is not None:
            cp = int(m.group(1), 16)
            return chr(cp) if 0 < cp <= 0x10FFFF and not 0xD800 <= cp <= 0xDFFF else "\ufffd"
        return m.group(2)

    return _CSS_ESCAPE.sub(repl, text)


@dataclass(frozen=True, slots=True)
class CssFinding:
    """One thing found in CSS: the check it concerns, a message, the offending text, a line."""

    check: str
    message: str
    detail: str
    line: int


def _url_finding(raw: str, where: str, line: int) -> CssFinding | None:
    kind, detail = classify_url(raw)
    shown = raw.strip()[:120]
    if kind is UrlKind.SCRIPT:
        return CssFinding("javascript-url", f"{detail} URL in {where}", shown, line)
    if kind is UrlKind.DATA_IMAGE:
        return CssFinding("raster-image", f"embedded {detail} image in {where}", shown, line)
    if kind in (UrlKind.EXTERNAL, UrlKind.DATA_OTHER):
        return CssFinding("external-ref", f"{where} loads {detail} resource", shown, line)
    return None


class _CssWalker:
    def __init__(self) -> None:
        self.found: list[CssFinding] = []

    def add(self, f: CssFinding | None) -> None:
        if f is not None:
            self.found.append(f)

    def values(self, tokens: Iterable[Any], where: str) -> None:
        for t in tokens:
            kind = t.type
            line = getattr(t, "source_line", 1)
            if kind == "url":
                self.add(_url_finding(t.value, f"url() in {where}", line))
            elif kind == "function":
                name = t.lower_name
                if name in ("url", "src") or name in IMAGE_FUNCTIONS:
                    strings = [a.value for a in t.arguments if a.type == "string"]
                    if not strings and name in ("url", "src"):  # url(\75 ...) or odd tokens
                        strings = [tinycss2.serialize(t.arguments)]
                    for value in strings:
                        self.add(_url_finding(value, f"{name}() in {where}", line))
                elif name == "expression":
                    self.found.append(
                        CssFinding(
                            "script", f"CSS expression() in {where}", t.serialize()[:120], line
                        )
                    )
                self.values(t.arguments, where)
            elif kind in ("() block", "[] block", "{} block"):
                self.values(t.content, where)
            elif kind == "string":
                norm = normalise(t.value)
                if script_substring(norm) or absolute_url(norm):
                    self.add(_url_finding(t.value, f"a string in {where}", line))

    def declarations(self, nodes: Iterable[Any], where: str) -> None:
        for node in nodes:
            kind = node.type
            if kind == "declaration":
                name = node.lower_name
                bare = re.sub(r"^-(?:webkit|moz|ms|o)-", "", name)
                if bare.startswith(("animation", "transition")):
                    value = tinycss2.serialize(node.value).strip()[:120]
                    self.found.append(
                        CssFinding("animation", f"CSS {name} in {where}", value, node.source_line)
                    )
                self.values(node.value, f"{name} in {where}")
            elif kind == "qualified-rule":
                self.values(node.prelude, where)
                self.declarations(tinycss2.parse_blocks_contents(node.content), where)
            elif kind == "at-rule":
                self.at_rule(node, where)

    def at_rule(self, node: Any, where: str) -> None:
        kw = node.lower_at_keyword
        line = node.source_line
        text = f"@{node.at_keyword} {tinycss2.serialize(node.prelude).strip()}"[:120]
        if kw == "import":
            self.found.append(CssFinding("external-ref", f"@import in {where}", text, line))
        elif kw.endswith("keyframes"):
            self.found.append(CssFinding("animation", f"@{kw} in {where}", text, line))
        if kw == "namespace":
            return
        label = f"@{kw} in {where}"
        self.values(node.prelude, label)
        if node.content is not None:
            self.declarations(tinycss2.parse_blocks_contents(node.content), label)

    def rules(self, nodes: Iterable[Any], where: str) -> None:
        for node in nodes:
            if node.type == "qualified-rule":
                self.values(node.prelude, where)
                self.declarations(tinycss2.parse_blocks_contents(node.content), where)
            elif node.type == "at-rule":
                self.at_rule(node, where)


_NAMESPACE_RULE = re.compile(r"@namespace\b[^;{}]*;?", re.I)
MAP_COMMENT = re.compile(r"[#@]\s*source(?:Mapping)?URL\s*=\s*(\S+)", re.I)


def _raw_pass(css: str, where: str, seen: set[str]) -> list[CssFinding]:
    """Second look at the escape-decoded text for URLs the tokenizer walk did not report."""
    out: list[CssFinding] = []
    for m in MAP_COMMENT.finditer(css):
        out.append(CssFinding("external-ref", f"source map URL in {where}", m.group()[:120], 1))
    norm = normalise(_NAMESPACE_RULE.sub("", css_unescape(css)))
    hit = script_substring(norm)
    if hit and "javascript-url" not in seen:
        out.append(CssFinding("javascript-url", f"{hit} in {where}", hit, 1))
    hit = absolute_url(norm)
    if hit and "external-ref" not in seen:
        out.append(CssFinding("external-ref", f"absolute URL in {where}", hit[:120], 1))
    return out


def scan_css(css: str, where: str, mode: str) -> list[CssFinding]:
    """Findings in CSS text, parsed according to where the text came from.

    ``mode`` is ``sheet`` (a <style> element), ``declarations`` (a ``style=`` attribute) or
    ``value`` (a presentation attribute such as ``fill="url(...)"``).
    """
    walker = _CssWalker()
    try:
        if mode == "declarations":
            walker.declarations(tinycss2.parse_blocks_contents(css), where)
        elif mode == "value":
            walker.values(tinycss2.parse_component_value_list(css), where)
        else:
            walker.rules(tinycss2.parse_stylesheet(css, skip_whitespace=True), where)
    except Exception as exc:  # tinycss2 is robust, but a check must never raise
        walker.found.append(CssFinding("external-ref", f"CSS in {where} not scanned: {exc}", "", 1))
    seen = {f.check for f in walker.found}
    return walker.found + _raw_pass(css, where, seen)
