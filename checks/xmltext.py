"""Text-level helpers shared by extraction and parsing: decoding, prolog and DOCTYPE scanning.

Nothing here builds a tree or expands anything; every scan is linear in the input.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_DECL_ENCODING = re.compile(rb"^\s*<\?xml[^>]{0,200}?encoding\s*=\s*[\"']([A-Za-z0-9._-]{1,40})")
# Single-byte and Unicode encodings we honour when declared; anything else (utf-7, ...) is refused.
_HONOURED = {
    "utf-8",
    "utf8",
    "us-ascii",
    "ascii",
    "latin1",
    "latin-1",
    "windows-1252",
    "cp1252",
    "utf-16",
    "utf-16le",
    "utf-16be",
} | {f"iso-8859-{n}" for n in range(1, 16)}


def decode_bytes(raw: bytes) -> tuple[str, str, bool]:
    """Decode untrusted bytes to text. Returns (text, encoding used, had a BOM).

    A BOM wins; then a declared encoding from a small allow-list; then UTF-8; undecodable bytes
    become U+FFFD (the caller sees ``utf-8+replace``) rather than an exception.
    """
    for bom, name in _BOMS:
        if raw.startswith(bom):
            return raw[len(bom) :].decode(name, "replace"), name, True
    m = _DECL_ENCODING.match(raw)
    if m is not None:
        declared = m.group(1).decode("ascii").lower()
        if declared in _HONOURED and declared not in {"utf-8", "utf8"}:
            try:
                return raw.decode(declared), declared, False
            except (UnicodeDecodeError, LookupError):
                pass
    try:
        return raw.decode("utf-8"), "utf-8", False
    except UnicodeDecodeError:
        return raw.decode("utf-8", "replace"), "utf-8+replace", False


def to_text(raw: str | bytes) -> tuple[str, str, bool]:
    """Text of ``raw`` without a leading BOM, the encoding used, and whether a BOM was present."""
    if isinstance(raw, bytes):
        return decode_bytes(raw)
    if raw.startswith("\ufeff"):
        return raw[1:], "str", True
    return raw, "str", False


# Inside a DOCTYPE: quoted literals, comments, PIs and the brackets / closing angle that matter.
MAX_DECLARATIONS = 200
_DT_STOP = re.compile(r"[\"'\[\]>]|<!--|<\?")
_DT_HEAD = re.compile(
    r"<!DOCTYPE\s+([^\s\[>]*)\s*(?:(SYSTEM)\s+(\"[^\"]*\"|'[^']*')|(PUBLIC)\s+(\"[^\"]*\"|'[^']*')"
    r"(?:\s+(\"[^\"]*\"|'[^']*'))?)?",
    re.I | re.S,
)
_DECLARATION = re.compile(r"<!(ENTITY|ATTLIST|ELEMENT|NOTATION)\b(?:\"[^\"]*\"|'[^']*'|[^>\"'])*>?")
_ENTITY = re.compile(
    r"<!ENTITY\s+(%\s+)?([^\s\"'>]+)\s+(?:(?:SYSTEM|PUBLIC\s+(?:\"[^\"]*\"|'[^']*'))\s+"
    r"(\"[^\"]*\"|'[^']*')|(\"[^\"]*\"|'[^']*'))",
    re.I,
)
_PE_REF = re.compile(r"%[A-Za-z_:][\w.:-]*;")


@dataclass(frozen=True, slots=True)
class EntityDecl:
    """One ``<!ENTITY>`` declaration found in an internal subset (never expanded)."""

    name: str
    parameter: bool
    value: str | None
    system_id: str | None
    line: int
    text: str


@dataclass(frozen=True, slots=True)
class Doctype:
    """A DOCTYPE declaration as written: its span, external id and internal subset."""

    start: int
    end: int
    complete: bool
    name: str
    public_id: str | None
    system_id: str | None
    subset: str | None
    declarations: tuple[tuple[str, int, str], ...]
    entities: tuple[EntityDecl, ...]
    pe_refs: tuple[str, ...]


def _unquote(lit: str | None) -> str | None:
    return None if lit is None else lit[1:-1]


def line_of(text: str, pos: int) -> int:
    """1-based line number of a character offset."""
    return text.count("\n", 0, pos) + 1


def _doctype_head(text: str, pos: int) -> tuple[str, str | None, str | None]:
    """The root name, public id and system id written in the DOCTYPE at ``pos``."""
    head = _DT_HEAD.match(text, pos)
    name = head.group(1) if head else ""
    public_id = _unquote(head.group(5)) if head and head.group(4) else None
    system_id = None
    if head:
        system_id = _unquote(head.group(3)) if head.group(2) else _unquote(head.group(6))
    return name, public_id, system_id


def _doctype_extent(text: str, pos: int) -> tuple[int, bool, int, int]:
    """Where the DOCTYPE at ``pos`` ends, whether it is closed, and its subset's bounds.

    Returns ``(end, complete, subset_start, subset_end)``; a subset bound is -1 when absent.
    """
    in_subset = False
    subset_start = -1
    subset_end = -1
    end = len(text)
    complete = False
    i = pos + 9
    n = len(text)
    while True:  # every step moves forward with str.find: linear even on hostile input
        m = _DT_STOP.search(text, i)
        if m is None:
            break
        tok = m.group()
        if tok in ('"', "'", "<!--", "<?"):
            closer = {"<!--": "-->", "<?": "?>"}.get(tok, tok)
            j = text.find(closer, m.end())
            if j < 0:
                break
            i = j + len(closer)
            continue
        i = m.end()
        if tok == "[" and not in_subset and subset_start < 0:
            in_subset = True
            subset_start = i
        elif tok == "]" and in_subset:
            in_subset = False
            subset_end = m.start()
        elif tok == ">" and not in_subset:
            end = i
            complete = True
            break
    return min(end, n), complete, subset_start, subset_end


def _subset_declarations(
    text: str, subset: str, base: int
) -> tuple[list[tuple[str, int, str]], list[EntityDecl]]:
    """The declarations (kind, line, text) and entities of an internal subset at ``base``.

    At most :data:`MAX_DECLARATIONS` are listed; a ``MORE`` entry marks the cut.
    """
    decls: list[tuple[str, int, str]] = []
    ents: list[EntityDecl] = []
    line, at = line_of(text, base), base
    for d in _DECLARATION.finditer(subset):
        line += text.count("\n", at, base + d.start())  # incremental: linear overall
        at = base + d.start()
        if len(decls) >= MAX_DECLARATIONS:
            decls.append(("MORE", line, "... further declarations not listed"))
            break
        decls.append((d.group(1).upper(), line, d.group()))
        e = _ENTITY.match(d.group())
        if e is not None:
            ents.append(
                EntityDecl(
                    name=e.group(2),
                    parameter=bool(e.group(1)),
                    value=_unquote(e.group(4)),
                    system_id=_unquote(e.group(3)),
                    line=line,
                    text=d.group(),
                )
            )
        elif d.group(1).upper() == "ENTITY":
            ents.append(EntityDecl("?", False, None, None, line, d.group()))
    return decls, ents


def scan_doctype(text: str, pos: int) -> Doctype:
    """Scan the DOCTYPE that starts at ``pos`` (``<!DOCTYPE``): linear, quote- and comment-aware."""
    name, public_id, system_id = _doctype_head(text, pos)
    end, complete, subset_start, subset_end = _doctype_extent(text, pos)
    subset: str | None = None
    if subset_start >= 0:
        subset = text[subset_start : subset_end if subset_end >= 0 else end]
    decls: list[tuple[str, int, str]] = []
    ents: list[EntityDecl] = []
    refs: tuple[str, ...] = ()
    if subset:
        decls, ents = _subset_declarations(text, subset, subset_start)
        refs = tuple(dict.fromkeys(_PE_REF.findall(_DECLARATION.sub("", subset))))
    return Doctype(
        start=pos,
        end=end,
        complete=complete,
        name=name,
        public_id=public_id,
        system_id=system_id,
        subset=subset,
        declarations=tuple(decls),
        entities=tuple(ents),
        pe_refs=refs,
    )


_PROLOG_ITEM = re.compile(r"\s+|<\?.*?\?>|<!--.*?-->|(?P<dt><!DOCTYPE\b)", re.S | re.I)


@dataclass(frozen=True, slots=True)
class Prolog:
    """What precedes the root element: XML declaration, PIs, comments and the DOCTYPE."""

    root_start: int
    xml_decl: str | None
    pis: tuple[tuple[int, str], ...]
    doctype: Doctype | None


def scan_prolog(text: str) -> Prolog:
    """Walk the prolog of ``text`` (which has no BOM) up to the first element start tag."""
    pos = 0
    n = len(text)
    xml_decl: str | None = None
    pis: list[tuple[int, str]] = []
    doctype: Doctype | None = None
    while pos < n:
        if text[pos] == "\ufeff":
            pos += 1
            continue
        m = _PROLOG_ITEM.match(text, pos)
        if m is None:
            break
        if m.group("dt") is not None:
            doctype = scan_doctype(text, pos)
            pos = doctype.end
            continue
        tok = m.group()
        if tok.startswith("<?"):
            if tok[2:5].lower() == "xml" and (len(tok) < 6 or tok[5] in " \t\r\n?"):
                xml_decl = tok if pos == 0 else xml_decl
                if pos != 0:
                    pis.append((pos, tok))
            else:
                pis.append((pos, tok))
        pos = m.end()
    return Prolog(root_start=pos, xml_decl=xml_decl, pis=tuple(pis), doctype=doctype)


def prolog_start(text: str, lo: int, root: int) -> int:
    """Earliest offset in ``[lo, root)`` from which only prolog items and whitespace follow.

    ``root`` is the ``<svg`` of a candidate. Used to keep an XML declaration or DOCTYPE in front.
    """
    best = root
    pos = root
    lo = max(lo, root - 65536)
    for _ in range(64):
        k = pos
        while k > lo and (text[k - 1].isspace() or text[k - 1] == "\ufeff"):
            k -= 1
        if k <= lo or text[k - 1] != ">":
            break
        found = -1
        for opener in ("<!--", "<?", "<!DOCTYPE", "<!doctype"):
            j = text.rfind(opener, lo, k)
            tries = 0
            while j >= 0 and tries < 8:
                tries += 1
                if opener.startswith("<!D") or opener.startswith("<!d"):
                    ok = scan_doctype(text, j).end == k
                else:
                    closer = "-->" if opener == "<!--" else "?>"
                    ok = text.find(closer, j + len(opener) - 1) + len(closer) == k
                if ok:
                    found = j if found < 0 else min(found, j)
                    break
                j = text.rfind(opener, lo, j)
        if found < 0:
            break
        best = pos = found
    return best
