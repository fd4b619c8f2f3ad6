"""The hardened parse of untrusted SVG text into a :class:`Document` every check reads.

lxml runs with ``resolve_entities=False``, ``no_network=True``, ``load_dtd=False``,
``huge_tree=False`` (libxml2's depth and amplification limits stay on) and a hard byte cap.
(``collect_ids=False`` is deliberately not set: with lxml 6 / libxml2 2.14 it makes libxml2 try to
load the external DTD subset.)
libxml2 still substitutes internal entities inside attribute values, so a DOCTYPE with an internal
subset is *neutralised* before lxml sees it: the declaration is replaced by an external-id-only
DOCTYPE that is never loaded, keeping every line number. Declared entities therefore stay
unexpanded references; the ``doctype`` check reports what was declared.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field

from lxml import etree

from checks.depth import is_depth_error, text_depth
from checks.scan import Scan, scan_document
from checks.xmltext import Prolog, scan_prolog, to_text

PARSE_MAX_BYTES = 2_000_000
NEUTRAL_SYSTEM_ID = "urn:regua:internal-subset-removed"
_local = threading.local()
_POSITION_SUFFIX = re.compile(r"(?:, line \d+, column \d+)+(?: \(<string>, line \d+\))?$")


def hardened_parser() -> etree.XMLParser:
    """A per-thread lxml parser with every network, DTD and entity feature switched off."""
    parser: etree.XMLParser | None = getattr(_local, "parser", None)
    if parser is None:
        parser = etree.XMLParser(
            resolve_entities=False,
            no_network=True,
            load_dtd=False,
            dtd_validation=False,
            attribute_defaults=False,
            huge_tree=False,
            remove_comments=False,
            remove_pis=False,
            recover=False,
            encoding="utf-8",
        )
        _local.parser = parser
    return parser


@dataclass(frozen=True, slots=True)
class ParseError:
    """Why the text is not well-formed XML (or was not parsed at all)."""

    message: str
    line: int | None
    column: int | None
    depth: tuple[int, int] | None = None
    """When the parser stopped at its nesting limit: the depth measured on the text and the
    line where it is reached (the document may be well-formed; the size check reports it)."""


@dataclass(slots=True)
class Document:
    """Untrusted SVG text, its prolog scan, and its tree when it parsed."""

    text: str
    byte_length: int
    prolog: Prolog
    root: etree._Element | None
    error: ParseError | None
    neutralised: bool
    _scan: Scan | None = field(default=None, repr=False)

    @property
    def scan(self) -> Scan:
        """The shared one-pass scan of the tree (computed once, on first use)."""
        if self._scan is None:
            dt = self.prolog.doctype  # an internal subset could declare attribute types
            start = self.prolog.root_start if dt is None or dt.subset is None else None
            self._scan = scan_document(self.text, self.root, start)
        return self._scan

    def elements(self, tag: str) -> list[etree._Element]:
        """Every element with this exact tag (``{namespace}local``), in document order.

        Read from the shared walk when the tag is tracked (:func:`checks.scan.track_tag`) and the
        walk saw the whole tree; otherwise the tree is searched.
        """
        if self.root is None:
            return []
        scan = self.scan
        if tag in scan.tracking and not scan.truncated:
            return list(scan.tracked.get(tag, ()))
        return list(self.root.iter(tag))


def _neutralise(text: str, prolog: Prolog) -> tuple[str, bool]:
    dt = prolog.doctype
    if dt is None or dt.subset is None or not dt.complete:
        return text, False
    original = text[dt.start : dt.end]
    name = dt.name if dt.name and dt.name.replace(":", "").replace("-", "").isalnum() else "svg"
    replacement = f'<!DOCTYPE {name} SYSTEM "{NEUTRAL_SYSTEM_ID}">' + "\n" * original.count("\n")
    return text[: dt.start] + replacement + text[dt.end :], True


def parse_document(svg: str | bytes) -> Document:
    """Parse untrusted SVG text or bytes. Never raises; a failure is recorded in ``error``."""
    text, enc, bom = to_text(svg)
    byte_length = len(svg) if isinstance(svg, bytes) else len(text.encode("utf-8", "replace"))
    prolog = scan_prolog(text)
    if byte_length > PARSE_MAX_BYTES:
        err = ParseError(
            f"not parsed: {byte_length} bytes is over the parser's hard cap of {PARSE_MAX_BYTES}",
            None,
            None,
        )
        return Document(text, byte_length, prolog, None, err, False)
    feed, neutralised = _neutralise(text, prolog)
    try:
        # valid UTF-8 bytes without a BOM are what encoding their text again would give
        same = isinstance(svg, bytes) and enc == "utf-8" and not bom and not neutralised
        data = svg if same and isinstance(svg, bytes) else feed.encode("utf-8", "replace")
        root = etree.fromstring(data, hardened_parser())
    except etree.XMLSyntaxError as exc:
        line, col = exc.position if exc.position else (None, None)
        msg = _POSITION_SUFFIX.sub("", str(exc.msg or exc))
        if "amplification" in msg or "entity reference loop" in msg:
            msg += " (entity expansion refused: parser bomb)"
        depth = text_depth(feed) if is_depth_error(msg) else None
        err = ParseError(msg, line, col, depth)
        return Document(text, byte_length, prolog, None, err, neutralised)
    except Exception as exc:  # lxml can raise ValueError/MemoryError-like errors on odd input
        err = ParseError(f"not parsed: {type(exc).__name__}: {exc}", None, None)
        return Document(text, byte_length, prolog, None, err, neutralised)
    if root is None:
        err = ParseError("not parsed: empty document", None, None)
        return Document(text, byte_length, prolog, None, err, neutralised)
    return Document(text, byte_length, prolog, root, None, neutralised)
