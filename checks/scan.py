"""One pass over a parsed document that collects what every built-in check needs.

Walking the tree once (instead of once per check) keeps the suite within a small multiple of the
bare parse time. Elements whose attribute names are all known-harmless take a fast path: their
values are pooled and inspected together at the end; if anything in the pool looks like a URL,
script, CSS function or escape, those elements are walked again attribute by attribute
(:mod:`checks.inspect`). Findings are grouped by the id of the check they concern. The walk also
keeps the elements of the tags other checks asked for (:func:`track_tag`), so they need no walk
of their own. The common document is walked by the optional compiled module ``checks._walkc``
when it is built (``scripts/setup.sh``): the same decisions on libxml2's strings, Python objects
only for what the Python side must see; anything it cannot decide is left to the Python walk.
"""

from __future__ import annotations

import logging
from itertools import chain, compress, islice
from operator import attrgetter, methodcaller
from typing import Any

from lxml import etree

from checks.findings import MAX_EVIDENCE, Scan, element_path, ev
from checks.inspect import Inspector, TagInfo, css_worthy, hidden_markup, suspicious
from checks.vocab import (
    CSS_HINTS,
    FRAME_ELEMENTS,
    PLAIN_ATTRS,
    SCRIPT_ELEMENTS,
    SECURITY_CHECKS,
    SMIL_ELEMENTS,
    XSLT_NS,
    attr_values,
)

__all__ = [
    "MAX_EVIDENCE",
    "SCAN_MAX_ELEMENTS",
    "Scan",
    "css_worthy",
    "element_path",
    "ev",
    "hidden_markup",
    "nesting_depth",
    "scan_document",
    "track_tag",
]

SCAN_MAX_ELEMENTS = 10_000  # keeps every document well under a second; beyond, fail closed
_KINDS = {n: "script" for n in SCRIPT_ELEMENTS} | {n: "frame" for n in FRAME_ELEMENTS}
_KINDS |= {n: "smil" for n in SMIL_ELEMENTS} | {"foreignobject": "foreign", "style": "style"}
_TAGS: dict[str, TagInfo] = {}
_QUIET_TAGS: set[str] = set()  # tags of _TAGS neither special (a kind) nor tracked
_TRACKED: set[str] = set()
_TRACKING: list[frozenset[str]] = [frozenset()]  # _TRACKED frozen, shared by every scan
_LOG = logging.getLogger(__name__)


def track_tag(tag: str) -> None:
    """Have the walk keep every element with this exact tag (``{namespace}local``).

    A check that needs the elements of a few tags reads them with ``Document.elements(tag)``
    instead of walking the tree again. Call it at import time (registration).
    """
    if tag not in _TRACKED:
        _TRACKED.add(tag)
        _TRACKING[0] = frozenset(_TRACKED)
        _TAGS.clear()
        _QUIET_TAGS.clear()


def _tag_info(tag: str) -> TagInfo:
    """(local name, lower-cased local name, kind or "", tracked) of an element tag, cached."""
    info = _TAGS.get(tag)
    if info is None:
        ns, _, local = tag[1:].partition("}") if tag.startswith("{") else ("", "", tag)
        lname = local.lower()
        kind = "xslt" if ns == XSLT_NS else _KINDS.get(lname, "")
        info = (local, lname, kind, tag in _TRACKED)
        if len(_TAGS) < 4096:
            _TAGS[tag] = info
            if not kind and not info[3]:
                _QUIET_TAGS.add(tag)
    return info


try:
    from checks._walkc import configure as _configure
    from checks._walkc import walk as _compiled_walk
except ImportError:  # not built (no compiler when scripts/setup.sh ran): the Python walk only
    _COMPILED = False
    _LOG.debug("checks._walkc is not built: the shared walk runs in Python only")
else:
    _COMPILED = True
    _configure(PLAIN_ATTRS, CSS_HINTS, _tag_info, suspicious)

_TAG = attrgetter("tag")
_TEXT = attrgetter("text")
_TAIL = attrgetter("tail")
_KEYS = methodcaller("keys")
_VALUES = methodcaller("values")


class _Walker(Inspector):
    def walk(self, root: etree._Element) -> None:
        """Scan the nodes around ``root``, then every element under it, in document order."""
        self._siblings(root)
        self.scan.tracking = _TRACKING[0]
        if _COMPILED and self._walk_compiled(root):
            return
        if not self._walk_columns(root):
            self._walk_nodes(root)

    def _walk_columns(self, root: etree._Element) -> bool:
        """The walk done a column at a time (tags, then keys, then values: C-level loops).

        Only for the common document where nothing but elements can hold a finding: no
        processing instruction or entity reference inside the root, no comment or (escaped) text
        with a ``<``, at most :data:`SCAN_MAX_ELEMENTS` elements. Then the findings are those of
        the elements with a dangerous name or a non-plain attribute, in document order, and of
        the pooled values, exactly as :meth:`_walk_nodes` would record them. Returns False
        (nothing recorded) for any other document.
        """
        els = list(islice(root.iter(etree.Element), SCAN_MAX_ELEMENTS + 1))
        if len(els) > SCAN_MAX_ELEMENTS:
            return False
        text, start = self.text, self.start or 0
        # one-character searches first ("?", "&"): far cheaper than a search for "<?"
        pi = text.find("?", start) >= 0 and text.find("<?", start) >= 0
        if (pi or text.find("&", start) >= 0) and next(
            root.iter(etree.ProcessingInstruction, etree.Entity), None
        ) is not None:
            return False
        if text.find("<!--", start) >= 0 and "<" in "".join(
            filter(None, map(_TEXT, root.iter(etree.Comment)))
        ):
            return False
        if self.escaped_lt and "<" in "".join(
            filter(None, chain(map(_TEXT, els), map(_TAIL, els)))
        ):
            return False
        tags: list[str] = list(map(_TAG, els))
        distinct = set(tags)
        # the common document: no special element, none of a tracked tag (no infos needed)
        quiet = _QUIET_TAGS.issuperset(distinct)
        infos = {} if quiet else {tag: _TAGS.get(tag) or _tag_info(tag) for tag in distinct}
        scan = self.scan
        for tag, info in infos.items():
            if info[3]:
                scan.tracked[tag] = [el for el, t in zip(els, tags, strict=True) if t == tag]
        plain: list[bool] | None = None  # None: every element's attribute names are plain
        plain_els = els
        if not PLAIN_ATTRS.issuperset(chain.from_iterable(map(_KEYS, els))):
            plain = list(map(PLAIN_ATTRS.issuperset, map(_KEYS, els)))
            plain_els = list(compress(els, plain))
        if plain is not None or any(info[2] for info in infos.values()):
            for i, tag in enumerate(tags):
                info = infos.get(tag) or _tag_info(tag)
                if info[2]:
                    self.special(els[i], info)
                if plain is not None and not plain[i]:
                    self.attributes(els[i], info[1])
                    scan.note_values(attr_values(els[i]))
        scan.element_count = len(els)
        joined = '"'.join(chain.from_iterable(map(_VALUES, plain_els)))
        if joined and self._pooled_suspicious(joined, plain_els):
            for el in plain_els:
                self.attributes(el, _tag_info(str(el.tag))[1])
        return True

    def _walk_compiled(self, root: etree._Element) -> bool:
        """The walk of :meth:`_walk_columns` with its decisions made in C (``checks._walkc``).

        Records exactly what :meth:`_walk_columns` records, for the documents where the pooled
        values are not suspicious; returns False (nothing recorded) for any other document.
        """
        found = _compiled_walk(root, SCAN_MAX_ELEMENTS, self.escaped_lt)
        if found is None:
            return False
        count, notes, joined_length, longest = found
        scan = self.scan
        for el, odd in notes:  # a special or tracked tag, or an attribute name that is not plain
            tag = str(el.tag)
            info = _TAGS.get(tag) or _tag_info(tag)
            if info[3]:
                scan.tracked.setdefault(tag, []).append(el)
            if info[2]:
                self.special(el, info)
            if odd:
                self.attributes(el, info[1])
                scan.note_values(attr_values(el))
        scan.element_count = count
        if joined_length:
            scan.pool_measured(joined_length, longest)
        return True

    def _walk_nodes(self, root: etree._Element) -> None:
        """Every node under ``root`` one at a time, in document order (any document)."""
        scan = self.scan
        pooled: list[Any] = []  # attribute values (str); Any keeps the hot loop free of casts
        fast: list[etree._Element] = []
        escaped = self.escaped_lt
        known = _TAGS.get
        plain = PLAIN_ATTRS.issuperset
        count = 0
        for node in root.iter():
            tag = node.tag
            info = known(tag)  # a comment's tag is a function: None
            if info is None:
                if not isinstance(tag, str):
                    self.other(node)
                    continue
                info = _tag_info(tag)
            count += 1
            if count > SCAN_MAX_ELEMENTS:
                self._truncate(node)
                count -= 1
                break
            if info[2]:
                self.special(node, info)
            if info[3]:
                scan.tracked.setdefault(tag, []).append(node)
            if escaped:
                if node.text and "<" in node.text and info[2] != "script":
                    self.hidden(node, node.text, f"the text of <{info[0]}>")
                if node.tail and "<" in node.tail:
                    self.hidden(node, node.tail, f"text after <{info[0]}>")
            keys = node.keys()
            if keys:
                if plain(keys):
                    pooled += node.values()
                    fast.append(node)
                else:
                    self.attributes(node, info[1])
                    scan.note_values(attr_values(node))
        scan.element_count = count
        joined = '"'.join(pooled)
        if joined and self._pooled_suspicious(joined, fast):
            for node in fast:
                self.attributes(node, _tag_info(str(node.tag))[1])

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

    def _pooled_suspicious(self, joined: str, elements: list[etree._Element]) -> bool:
        """Account for the pooled attribute values of ``elements`` (``joined`` with ``"``).

        Whether they look suspicious: then the attributes of those elements are checked one by
        one.
        """
        self.scan.pool_values(elements, len(joined))
        return suspicious(joined)


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


def scan_document(text: str, root: etree._Element | None, start: int | None = None) -> Scan:
    """Walk a document's tree ``root`` (parsed from ``text``) once; no tree gives an empty scan.

    ``start`` is where the root element's start tag begins in ``text`` when the attributes may
    be read from the text (:mod:`checks.attrtext`); None leaves every question to the tree.
    """
    scan = Scan()
    if root is not None:
        _Walker(text, scan, start).walk(root)
    return scan
