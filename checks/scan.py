"""One pass over a parsed document that collects what every built-in check needs.

Walking the tree once (instead of once per check) keeps the suite within a small multiple of the
bare parse time. Elements whose attribute names are all known-harmless take a fast path: their
values are pooled and inspected together at the end; if anything in the pool looks like a URL,
script, CSS function or escape, those elements are walked again attribute by attribute. Findings
are grouped by the id of the check they concern.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, cast

from lxml import etree

from checks.types import Evidence, clip
from checks.urls import (
    MAP_COMMENT,
    UrlKind,
    absolute_url,
    classify_url,
    normalise,
    scan_css,
    script_substring,
)
from checks.vocab import (
    CSS_HINTS,
    FRAME_ELEMENTS,
    HIDDEN_HANDLER,
    HIDDEN_TAG,
    IMAGE_ELEMENTS,
    LIST_URL_ATTRS,
    LOCAL_URL,
    PLAIN_ATTRS,
    SCRIPT_ELEMENTS,
    SECURITY_CHECKS,
    SMIL_ELEMENTS,
    SMIL_VALUE_ATTRS,
    URL_ATTRS,
    XSLT_NS,
    attr_items,
    attr_name,
    attr_values,
    local_name,
    src_line,
)

MAX_EVIDENCE = 25
SCAN_MAX_ELEMENTS = 10_000  # keeps every document well under a second; beyond, fail closed
CSS_SCAN_BUDGET = 500_000
_KINDS = {n: "script" for n in SCRIPT_ELEMENTS} | {n: "frame" for n in FRAME_ELEMENTS}
_KINDS |= {n: "smil" for n in SMIL_ELEMENTS} | {"foreignobject": "foreign", "style": "style"}
_TAGS: dict[str, tuple[str, str, str]] = {}


def _tag_info(tag: str) -> tuple[str, str, str]:
    """(local name, lower-cased local name, kind or "") of an element tag, cached."""
    info = _TAGS.get(tag)
    if info is None:
        ns, _, local = tag[1:].partition("}") if tag.startswith("{") else ("", "", tag)
        lname = local.lower()
        info = (local, lname, "xslt" if ns == XSLT_NS else _KINDS.get(lname, ""))
        if len(_TAGS) < 4096:
            _TAGS[tag] = info
    return info


def element_path(el: etree._Element) -> str:
    """A readable path such as ``/svg[1]/g[2]/path[1]`` (local names, same-name index)."""
    parts: list[str] = []
    node: etree._Element | None = el
    while node is not None:
        tag = node.tag
        if isinstance(tag, str):
            index = 1 + sum(1 for _ in node.itersiblings(tag, preceding=True))
            parts.append(f"{local_name(tag)}[{index}]")
        else:
            parts.append("node()")
        node = node.getparent()
    return "/" + "/".join(reversed(parts))


@dataclass(slots=True)
class Scan:
    """Everything the built-in checks read, gathered in one walk."""

    findings: dict[str, list[Evidence]] = field(default_factory=dict)
    overflow: dict[str, int] = field(default_factory=dict)
    element_count: int = 0
    longest_value: int = 0
    uses_local_refs: bool = False
    truncated: bool = False

    def add(
        self,
        check: str,
        where: etree._Element | Evidence,
        message: str = "",
        snippet: str | None = None,
        line: int | None = None,
    ) -> None:
        """Record evidence for a check: an Evidence, or an element plus message and snippet.

        The element path is only computed for the first MAX_EVIDENCE items; the rest are counted.
        """
        items = self.findings.setdefault(check, [])
        if len(items) >= MAX_EVIDENCE:
            self.overflow[check] = self.overflow.get(check, 0) + 1
        elif isinstance(where, Evidence):
            items.append(where)
        else:
            found = ev(where, message, snippet)
            items.append(found if line is None else replace(found, line=line))

    def get(self, check: str) -> tuple[Evidence, ...]:
        """Evidence recorded for a check (with a trailing note when some were left out)."""
        items = tuple(self.findings.get(check, ()))
        more = self.overflow.get(check, 0)
        if more:
            items += (Evidence(f"... and {more} more of the same kind"),)
        return items


def ev(el: etree._Element, message: str, snippet: str | None = None) -> Evidence:
    """Evidence located at an element (line and path), with an optional clipped snippet."""
    return Evidence(message, src_line(el), element_path(el), clip(snippet) if snippet else None)


class _Walker:
    def __init__(self, text: str, scan: Scan) -> None:
        self.scan = scan
        self.css_budget = CSS_SCAN_BUDGET
        # '<' reaches a text node or attribute value only through these (or inside a comment).
        self.escaped_lt = "&lt;" in text or "&#" in text or "CDATA" in text

    def css(self, el: etree._Element, css: str, where: str, mode: str) -> None:
        if len(css) > self.css_budget:
            for check in ("external-ref", "animation", "javascript-url"):
                self.scan.add(check, el, f"CSS in {where} over the scan budget (fail closed)")
            return
        self.css_budget -= len(css) + 500  # also bounds the number of tokenizer calls
        base = (src_line(el) or 1) - 1
        for f in scan_css(css, where, mode):
            line = base + f.line if mode == "sheet" else src_line(el)
            self.scan.add(f.check, el, f.message, f.detail, line=line)

    def url(self, el: etree._Element, name: str, value: str, lname: str) -> None:
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
        found = hidden_markup(text)
        if found is None:
            return
        check, at = found
        msg = f"markup in {where} that would run if the SVG were parsed as HTML"
        path = element_path(node) if isinstance(node.tag, str) else None
        snippet = clip(text[max(0, at - 20) : at + 60])
        self.scan.add(check, Evidence(msg, src_line(node), path, snippet))

    def special(self, el: etree._Element, info: tuple[str, str, str]) -> None:
        local, lname, kind = info
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

    def walk(self, root: etree._Element) -> None:
        """Scan the nodes around ``root``, then every element under it, in document order."""
        self._siblings(root)
        scan = self.scan
        pooled: list[Any] = []  # attribute values (str); Any keeps the hot loop free of casts
        fast: list[etree._Element] = []
        escaped = self.escaped_lt
        count = 0
        for node in root.iter():
            tag = node.tag
            if not isinstance(tag, str):
                self.other(node)
                continue
            count += 1
            if count > SCAN_MAX_ELEMENTS:
                self._truncate(node)
                count -= 1
                break
            info = _TAGS.get(tag) or _tag_info(tag)
            if info[2]:
                self.special(node, info)
            if escaped:
                if node.text and "<" in node.text and info[2] != "script":
                    self.hidden(node, node.text, f"the text of <{info[0]}>")
                if node.tail and "<" in node.tail:
                    self.hidden(node, node.tail, f"text after <{info[0]}>")
            keys = node.keys()
            if keys:
                if PLAIN_ATTRS.issuperset(keys):
                    pooled.extend(node.values())
                    fast.append(node)
                else:
                    self.attributes(node, info[1])
                    scan.longest_value = max(scan.longest_value, *map(len, attr_values(node)))
        scan.element_count = count
        if pooled:
            self._pooled(pooled, fast)

    def _siblings(self, root: etree._Element) -> None:
        """Scan the comments, processing instructions and entities before and after the root."""
        for sib in root.itersiblings(preceding=True):
            self.other(sib)
        for sib in root.itersiblings():
            self.other(sib)

    def _truncate(self, node: etree._Element) -> None:
        """Stop the scan at ``node``, failing every security check closed."""
        self.scan.truncated = True
        msg = f"scan stopped after {SCAN_MAX_ELEMENTS} elements; the rest is unchecked"
        for check in SECURITY_CHECKS:
            self.scan.add(check, node, msg + " (fail closed)")

    def _pooled(self, pooled: list[Any], fast: list[etree._Element]) -> None:
        """Account for the plain attribute values pooled by :meth:`walk`.

        Their elements' attributes are checked one by one only when the pooled text looks
        suspicious.
        """
        self.scan.longest_value = max(self.scan.longest_value, *map(len, pooled))
        if _suspicious('"'.join(pooled)):
            for node in fast:
                self.attributes(node, _tag_info(str(node.tag))[1])


def nesting_depth(root: etree._Element) -> tuple[int, etree._Element]:
    """The deepest element nesting (root = 1) and the first element at that depth."""
    depth = best = 0
    deepest = root
    for event, node in etree.iterwalk(root, events=("start", "end")):
        if event == "start":
            depth += 1
            if depth > best:
                best, deepest = depth, node
        else:
            depth -= 1
    return best, deepest


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


def _suspicious(joined: str) -> bool:
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
    return any(h in low for h in CSS_HINTS)


def scan_document(text: str, root: etree._Element | None) -> Scan:
    """Walk a document's tree ``root`` (parsed from ``text``) once; no tree gives an empty scan."""
    scan = Scan()
    if root is not None:
        _Walker(text, scan).walk(root)
    return scan
