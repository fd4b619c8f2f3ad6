"""The careful path of the shared walk: one node inspected attribute by attribute.

The walk (:mod:`checks.scan`) sends here every element with a dangerous name or an attribute
outside the plain list, every element whose pooled plain values look suspicious, and the
comments, processing instructions and entity references that may hide something. CSS is
tokenised once per distinct text and place: a document that repeats a ``style`` value hundreds
of times costs one tokenisation.
"""

from __future__ import annotations

from typing import cast

from lxml import etree

from checks.findings import Scan, element_path
from checks.types import Evidence, clip
from checks.urls import (
    MAP_COMMENT,
    CssFinding,
    UrlKind,
    absolute_url,
    classify_url,
    normalise,
    scan_css,
    script_substring,
)
from checks.vocab import (
    CSS_HINTS,
    HIDDEN_HANDLER,
    HIDDEN_TAG,
    IMAGE_ELEMENTS,
    LIST_URL_ATTRS,
    LOCAL_URL,
    SMIL_VALUE_ATTRS,
    URL_ATTRS,
    attr_items,
    attr_name,
    src_line,
)

CSS_SCAN_BUDGET = 500_000
_CSS_MEMO_MAX = 256
TagInfo = tuple[str, str, str, bool]
"""(local name, lower-cased local name, kind or "", whether the walk keeps its elements)."""


class Inspector:
    """Careful inspection of single nodes, recording into one :class:`Scan`."""

    def __init__(self, text: str, scan: Scan, start: int | None = None) -> None:
        """Inspect nodes of the document parsed from ``text``, recording into ``scan``.

        ``start``: where the root element begins in ``text``, when the text may be read for
        what it shows of the tree (None: ask the tree only).
        """
        self.scan = scan
        self.text = text
        self.start = start
        self.css_budget = CSS_SCAN_BUDGET
        self._css_memo: dict[tuple[str, str, str], list[CssFinding]] = {}
        # '<' reaches a text node or attribute value only through these (or inside a comment).
        # (a one-character search before each longer one: most texts have neither "&" nor "D")
        self.escaped_lt = ("&" in text and ("&lt;" in text or "&#" in text)) or (
            "D" in text and "CDATA" in text
        )

    def css(self, el: etree._Element, css: str, where: str, mode: str) -> None:
        """Record what the CSS text ``css`` found at ``el`` (``where``, ``mode``) holds."""
        if len(css) > self.css_budget:
            for check in ("external-ref", "animation", "javascript-url"):
                self.scan.add(check, el, f"CSS in {where} over the scan budget (fail closed)")
            return
        self.css_budget -= len(css) + 500  # also bounds the number of tokenizer calls
        key = (css, where, mode)
        found = self._css_memo.get(key)
        if found is None:
            found = scan_css(css, where, mode)
            if len(self._css_memo) < _CSS_MEMO_MAX:
                self._css_memo[key] = found
        base = (src_line(el) or 1) - 1
        for f in found:
            line = base + f.line if mode == "sheet" else src_line(el)
            self.scan.add(f.check, el, f.message, f.detail, line=line)

    def url(self, el: etree._Element, name: str, value: str, lname: str) -> None:
        """Record what following the URL ``value`` of attribute ``name`` would do."""
        kind, detail = classify_url(value)
        snippet = f'{name}="{value}"'
        add = self.scan.add
        if kind is UrlKind.SCRIPT:
            add("javascript-url", el, f"{detail} URL in {name}", snippet)
            if absolute_url(normalise(value)):
                add("external-ref", el, f"{detail} URL in {name} fetches a URL", snippet)
        elif kind is UrlKind.DATA_IMAGE:
            add("raster-image", el, f"embedded {detail} image", snippet)
        elif kind in (UrlKind.EXTERNAL, UrlKind.DATA_OTHER):
            what = "outside the file" if lname == "use" else f"a {detail} resource"
            add("external-ref", el, f"<{lname}> {name} points to {what}", snippet)
            if lname in IMAGE_ELEMENTS:
                add("raster-image", el, "image element loads a picture", snippet)
        elif kind is UrlKind.LOCAL and lname == "use":
            self.scan.uses_local_refs = True

    def hidden(self, node: etree._Element, text: str, where: str) -> None:
        """Record markup in ``text`` that would run if the SVG were parsed as HTML."""
        found = hidden_markup(text)
        if found is None:
            return
        check, at = found
        msg = f"markup in {where} that would run if the SVG were parsed as HTML"
        path = element_path(node) if isinstance(node.tag, str) else None
        snippet = clip(text[max(0, at - 20) : at + 60])
        self.scan.add(check, Evidence(msg, src_line(node), path, snippet))

    def special(self, el: etree._Element, info: TagInfo) -> None:
        """An element whose name alone matters: script, frame, XSLT, foreignObject, SMIL, style."""
        local, lname, kind, _tracked = info
        add = self.scan.add
        if kind == "script":
            text = "".join(cast(list[str], list(el.itertext())))
            add("script", el, f"<{local}> element", f"<{local}>{text}")
            for m in MAP_COMMENT.finditer(text):
                add("external-ref", el, "source map URL in a script", m.group())
        elif kind == "frame":
            add("script", el, f"<{local}> opens a nested browsing context", f"<{local}>")
        elif kind == "xslt":
            add("script", el, "XSLT instruction (runs in an XSLT processor)", local)
        elif kind == "foreign":
            add("foreign-object", el, "<foreignObject> embeds non-SVG content")
        elif kind == "smil":
            self.smil(el, lname)
        elif kind == "style":
            sheet = "".join(cast(list[str], list(el.itertext())))
            if css_worthy(sheet):
                self.css(el, sheet, "<style>", "sheet")

    def smil(self, el: etree._Element, lname: str) -> None:
        """A SMIL element: what it animates, and any URL or CSS it assigns."""
        self.scan.add("animation", el, f"SMIL <{lname}> element", f"<{lname}>")
        target = attr_name((el.get("attributeName") or "").strip())
        target = "href" if target == "xlink:href" else target.rpartition(":")[2]
        if target.startswith("on"):
            msg = f"<{lname}> animates the event handler attribute {target}"
            self.scan.add("event-handler", el, msg, f'attributeName="{target}"')
        if target in URL_ATTRS or target == "style":
            for key in SMIL_VALUE_ATTRS:
                raw = el.get(key)
                for part in (raw or "").split(";") if key == "values" else (raw or "",):
                    if target == "style":
                        self.css(el, part, f"{key} (assigned to style)", "declarations")
                    else:
                        self.url(el, f"{key} (assigned to {target})", part, lname)

    def attributes(self, el: etree._Element, lname: str) -> None:
        """The careful path: every attribute of one element, one by one."""
        scan = self.scan
        for name, value in attr_items(el):
            aname = attr_name(name)
            if "<" in value:
                self.hidden(el, value, f"attribute {aname}")
            if aname.startswith("on") and len(aname) > 2:
                scan.add("event-handler", el, f"event handler {aname}", f'{aname}="{value}"')
            elif aname == "srcdoc":
                scan.add("script", el, "srcdoc embeds an HTML document", value)
            if aname in URL_ATTRS:
                parts = value.replace(",", " ").split() if aname in LIST_URL_ATTRS else [value]
                for part in parts:
                    self.url(el, aname, part, lname)
            elif ":" in value:
                norm = normalise(value)
                hit = script_substring(norm)
                if hit:
                    msg = f"{hit} in attribute {aname}"
                    scan.add("javascript-url", el, msg, f'{aname}="{value}"')
                if aname != "style" and absolute_url(norm):
                    msg = f"attribute {aname} carries an absolute URL"
                    scan.add("external-ref", el, msg, f'{aname}="{value}"')
            if aname == "style":
                if css_worthy(value):
                    self.css(el, value, "style attribute", "declarations")
            elif "(" in value and ("\\" in value or "url" in LOCAL_URL.sub("", value.lower())):
                self.css(el, value, f"{aname} attribute", "value")

    def other(self, node: etree._Element) -> None:
        """A comment, processing instruction or unexpanded entity reference."""
        if isinstance(node, etree._Comment):
            if node.text and "<" in node.text:
                self.hidden(node, node.text, "a comment")
        elif isinstance(node, etree._ProcessingInstruction):
            if node.text and "<" in node.text:
                self.hidden(node, node.text, "a processing instruction")
            target = str(node.target or "")
            if target.lower() == "xml-stylesheet":
                snippet = clip(f"<?{target} {node.text or ''}?>")
                msg = "xml-stylesheet processing instruction loads a stylesheet"
                self.scan.add("external-ref", Evidence(msg, src_line(node), None, snippet))
        elif isinstance(node, etree._Entity):
            msg = f"unexpanded entity reference {node.text}"
            self.scan.add("doctype", Evidence(msg, src_line(node), None, node.text))


def hidden_markup(text: str) -> tuple[str, int] | None:
    """(check id, offset) of markup that is inert as XML text but live as HTML, if any.

    Linear: each event-handler-like match looks back at most 256 characters for an opening ``<``.
    """
    m = HIDDEN_TAG.search(text)
    if m is not None:
        return "script", m.start()
    for count, h in enumerate(HIDDEN_HANDLER.finditer(text)):
        lt = text.rfind("<", max(0, h.start() - 256), h.start())
        if lt >= 0 and text.find(">", lt, h.start()) < 0:
            return "event-handler", lt
        if count > 100:
            break
    at = text.lower().find("javascript:")
    return ("javascript-url", at) if at >= 0 else None


def suspicious(joined: str) -> bool:
    """Could any of these pooled attribute values fetch, run, animate or hide something?"""
    if "<" in joined:  # markup smuggled through &lt; (inert as XML, live as HTML)
        return True
    if ":" in joined:
        norm = normalise(joined)
        if script_substring(norm) or absolute_url(norm):
            return True
    return css_worthy(joined)


def css_worthy(value: str) -> bool:
    """Whether this CSS (or attribute text) may hold something that could fetch, animate or run.

    Anything but local ``url(#id)`` references counts. Without a hint it cannot, and tokenizing
    it is skipped.
    """
    if "\\" in value:
        return True
    low = value.lower()
    if "url" in low:
        low = LOCAL_URL.sub("", low)
    if low.isascii():
        # Deleting every character that is in no hint keeps each occurrence of a hint whole (its
        # characters are all kept and were adjacent), so a remainder without a hint proves the
        # text has none; the remainder is short (path data is mostly digits, spaces, commas).
        kept = low.encode("ascii").translate(None, _NOT_HINT).decode("ascii")
        if not any(map(kept.__contains__, CSS_HINTS)):
            return False
    return any(map(low.__contains__, CSS_HINTS))


_NOT_HINT = bytes(c for c in range(128) if chr(c) not in "".join(CSS_HINTS))
"""The ASCII characters no CSS hint contains (deleted before the hints are searched)."""
