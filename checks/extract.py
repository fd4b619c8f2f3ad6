"""Extraction: find the SVG document in a raw model reply (procedure ``extract``).

Candidates come from (1) the whole reply when it is nothing but markup, (2) fenced code blocks
(```svg, ```xml, bare ```, ~~~), (3) ``<svg …>…</svg>`` elements in the prose, each extended back
over an adjacent XML declaration, DOCTYPE, comments and processing instructions, and (4) an XML
document that starts at ``<?xml`` or ``<!DOCTYPE`` when no ``<svg`` is present. A truncated
``<svg`` without its end tag runs to the end of its block (the parser will then say why it fails).

The declared policy picks one candidate: prefer one containing ``<svg``, then a complete one, then
a fenced block tagged svg/xml, then untagged fences and prose, then the largest, then the last.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from checks.types import CandidateInfo, Extraction
from checks.xmltext import prolog_start, to_text

PROCEDURE_ID = "extract"
PROCEDURE_VERSION = "1"
POLICY = "has-svg>complete>fence-lang>largest>last@1"

_FENCE_OPEN = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})[ \t]*([^\n]*)$", re.M)
_SVG_OPEN = re.compile(r"<(?:[A-Za-z_][\w.-]*:)?svg(?=[\s/>])", re.I)
_SVG_TOKEN = re.compile(
    r"<(?:[A-Za-z_][\w.-]*:)?svg(?=[\s/>])|</(?:[A-Za-z_][\w.-]*:)?svg\s*>", re.I
)
_TAG_END = re.compile(r"(?:[^>\"']++|\"[^\"]*+\"|'[^']*+')*+>")  # possessive: no backtracking
_XML_START = re.compile(r"<\?xml[\s?]|<!(?:DOCTYPE|ENTITY|ATTLIST|ELEMENT)\b", re.I)
_MARKUP_START = re.compile(r"<[?!A-Za-z_]")
_LANG_RANK = {"svg": 2, "xml": 2, "image/svg+xml": 2, "": 1, "html": 1, "xhtml": 1}
_WS = " \t\r\n\ufeff"
MAX_CANDIDATES = 100  # more than any honest reply has; bounds the work on hostile input
_TAG_WINDOW = 2048  # a longer start tag is treated as not self-closing (its end tag still counts)


@dataclass(frozen=True, slots=True)
class _Candidate:
    start: int
    end: int
    method: str
    complete: bool
    has_svg: bool
    lang_rank: int


def _is_markup(text: str, lo: int, hi: int) -> tuple[int, int] | None:
    """(start, end) of ``text[lo:hi]`` stripped, when that whole stretch is markup."""
    while lo < hi and text[lo] in _WS:
        lo += 1
    while hi > lo and text[hi - 1] in _WS:
        hi -= 1
    if hi - lo < 3 or not _MARKUP_START.match(text, lo) or text[hi - 1] != ">":
        return None
    return lo, hi


def _svg_elements(text: str, lo: int, hi: int, prefix: str, rank: int) -> list[_Candidate]:
    """Top-level ``<svg>`` elements within ``text[lo:hi]`` (nesting-aware, quote-aware tags)."""
    out: list[_Candidate] = []
    depth = 0
    start = -1
    for m in _SVG_TOKEN.finditer(text, lo, hi):
        if len(out) >= MAX_CANDIDATES:
            break
        tok = m.group()
        if tok[1] != "/":
            window = min(hi, m.end() + _TAG_WINDOW)
            gt = text.find(">", m.end(), window)
            tail = _TAG_END.match(text, m.end(), window) if gt >= 0 else None
            self_closing = tail is not None and tail.group().endswith("/>")
            if depth == 0:
                start = m.start()
            if self_closing and tail is not None:
                if depth == 0:
                    out.append(
                        _Candidate(start, tail.end(), prefix + "svg-element", True, True, rank)
                    )
            else:
                depth += 1
        elif depth > 0:
            depth -= 1
            if depth == 0:
                out.append(_Candidate(start, m.end(), prefix + "svg-element", True, True, rank))
    if depth > 0 and start >= 0:
        end = hi
        while end > start and text[end - 1] in _WS:
            end -= 1
        out.append(_Candidate(start, end, prefix + "svg-element-unterminated", False, True, rank))
    fixed: list[_Candidate] = []
    floor = lo
    for c in out:
        s = prolog_start(text, floor, c.start)
        fixed.append(_Candidate(s, c.end, c.method, c.complete, c.has_svg, c.lang_rank))
        floor = c.end
    return fixed


def _from_region(text: str, lo: int, hi: int, prefix: str, rank: int) -> list[_Candidate]:
    """Candidates inside one region (a fenced block's content or the prose between fences)."""
    whole = _is_markup(text, lo, hi)
    if whole is not None and prefix:
        s, e = whole
        has_svg = _SVG_OPEN.search(text, s, e) is not None
        return [_Candidate(s, e, prefix + "block", True, has_svg, rank)]
    found = _svg_elements(text, lo, hi, prefix, rank)
    if found:
        return found
    m = _XML_START.search(text, lo, hi)
    if m is not None:
        end = hi
        while end > m.start() and text[end - 1] in _WS:
            end -= 1
        return [_Candidate(m.start(), end, prefix + "xml-document", True, False, rank)]
    return []


def _fenced_blocks(text: str) -> list[tuple[int, int, int, int, str]]:
    """(block start, content start, content end, block end, lang) of every fenced block."""
    blocks: list[tuple[int, int, int, int, str]] = []
    pos = 0
    while True:
        m = _FENCE_OPEN.search(text, pos)
        if m is None:
            return blocks
        fence, info = m.group(1), m.group(2).strip()
        lang = info.split()[0].lower() if info and not info.startswith("<") else ""
        content_start = m.end() + 1 if m.end() < len(text) else m.end()
        lt = info.find("<")
        if lt >= 0:  # content on the opening line itself: ```svg <svg ...
            content_start = m.start(2) + m.group(2).find("<")
            lang = info[:lt].strip().lower()
        close = re.compile(
            r"^[ \t]{0,3}" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}[ \t]*$", re.M
        )
        c = close.search(text, content_start)
        if c is not None:
            blocks.append((m.start(), content_start, c.start(), c.end(), lang))
            pos = c.end()
            continue
        inline = text.find(fence, content_start)
        if inline >= 0:
            blocks.append((m.start(), content_start, inline, inline + len(fence), lang))
            pos = inline + len(fence)
            continue
        blocks.append((m.start(), content_start, len(text), len(text), lang))
        return blocks


def find_candidates(text: str) -> list[_Candidate]:
    """Every candidate document in ``text`` (BOM already removed), in reply order."""
    whole = _is_markup(text, 0, len(text))
    # a one-character search (memchr) first: far cheaper than a search for three characters
    fenced = ("`" in text and "```" in text) or ("~" in text and "~~~" in text)
    if whole is not None and not fenced:
        s, e = whole
        has_svg = _SVG_OPEN.search(text, s, e) is not None
        return [_Candidate(s, e, "whole-document", True, has_svg, 1)]
    out: list[_Candidate] = []
    pos = 0
    for b_start, c_start, c_end, b_end, lang in _fenced_blocks(text):
        if len(out) >= MAX_CANDIDATES:
            return out[:MAX_CANDIDATES]
        out.extend(_from_region(text, pos, b_start, "", 1))
        rank = _LANG_RANK.get(lang, 0)
        out.extend(_from_region(text, c_start, c_end, f"fence:{lang or 'plain'}:", rank))
        pos = b_end
    out.extend(_from_region(text, pos, len(text), "", 1))
    return out[:MAX_CANDIDATES]


def _key(indexed: tuple[int, _Candidate]) -> tuple[int, int, int, int, int]:
    i, c = indexed
    return (int(c.has_svg), int(c.complete), c.lang_rank, c.end - c.start, i)


def _candidate_infos(text: str, cands: list[_Candidate]) -> tuple[CandidateInfo, ...]:
    """What the extraction reports about each candidate (with its line), in ``cands`` order."""
    infos: list[CandidateInfo] = []
    line, at = 1, 0
    for c in sorted(cands, key=lambda c: c.start):  # lines counted incrementally: linear
        line += text.count("\n", at, c.start) if c.start > at else 0
        at = max(at, c.start)
        infos.append(CandidateInfo(c.method, c.start, c.end, line, c.complete, c.has_svg))
    by_start = {(i.start, i.end, i.method): i for i in infos}
    return tuple(by_start[(c.start, c.end, c.method)] for c in cands)


def _choice_notes(cands: list[_Candidate], index: int, chosen: _Candidate) -> tuple[str, ...]:
    """Notes on how the chosen candidate was picked and what may be wrong with it."""
    notes: list[str] = []
    if len(cands) > 1:
        notes.append(f"{len(cands)} candidates; policy {POLICY} chose #{index}")
    if len(cands) >= MAX_CANDIDATES:
        notes.append(f"stopped looking after {MAX_CANDIDATES} candidates")
    if not chosen.complete:
        notes.append("the chosen <svg> has no end tag (truncated reply?)")
    return tuple(notes)


def _nothing_found(
    raw: str | bytes, notes: tuple[str, ...], encoding: str = "utf-8", bom: bool = False
) -> Extraction:
    """The extraction of ``raw`` that found no SVG, saying why (what a find fills in)."""
    return Extraction(
        status="no_svg",
        svg_text=None,
        method=None,
        candidates=0,
        chosen_index=None,
        policy=POLICY,
        procedure_id=PROCEDURE_ID,
        procedure_version=PROCEDURE_VERSION,
        encoding=encoding,
        bom=bom,
        raw_length=len(raw),
        notes=notes,
    )


def extract_svg(raw: str | bytes) -> Extraction:
    """Find the SVG document in a raw reply. Never raises; no SVG gives status ``no_svg``."""
    try:
        text, encoding, bom = to_text(raw)
        cands = find_candidates(text)
    except Exception as exc:  # defensive: extraction must never take the process down
        return _nothing_found(raw, (f"extraction error: {type(exc).__name__}",))
    if not cands:
        note = "no <svg element, markup document or XML document found"
        return _nothing_found(raw, (note,), encoding, bom)
    index, chosen = max(enumerate(cands), key=_key)
    return replace(
        _nothing_found(raw, _choice_notes(cands, index, chosen), encoding, bom),
        status="found",
        svg_text=text[chosen.start : chosen.end],
        method=chosen.method,
        candidates=len(cands),
        chosen_index=index,
        candidate_info=_candidate_infos(text, cands),
    )
