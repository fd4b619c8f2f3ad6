"""The built-in static checks. Each registers through the same registry a plugin would use."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from operator import attrgetter

from lxml import etree

from checks.depth import PARSER_MAX_DEPTH
from checks.outcomes import Outcome, constant, memoized, result_of
from checks.parse import Document
from checks.registry import register_check
from checks.scan import element_path, nesting_depth
from checks.types import CheckResult, Evidence, clip
from checks.urls import UrlKind, classify_url
from checks.vocab import SVG_NS, attr_items, attr_name, local_name, src_line
from checks.xmltext import line_of
from tasks import OutputConstraints, TaskSpec

CheckFn = Callable[[Document, TaskSpec], Outcome]

# Standard SVG DTDs (public id → system id). Declaring one is harmless: nothing is ever loaded.
STANDARD_DTDS = {
    "-//W3C//DTD SVG 1.1//EN": "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd",
    "-//W3C//DTD SVG 1.0//EN": "http://www.w3.org/TR/2001/REC-SVG-20010904/DTD/svg10.dtd",
    "-//W3C//DTD SVG 20010904//EN": "http://www.w3.org/TR/2001/REC-SVG-20010904/DTD/svg10.dtd",
    "-//W3C//DTD SVG 1.1 Basic//EN": "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11-basic.dtd",
    "-//W3C//DTD SVG 1.1 Tiny//EN": "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11-tiny.dtd",
}
USE_EXPANSION_CAP = 10_000_000
_LATE_DTD = re.compile(r"<!(DOCTYPE|ENTITY|ATTLIST|ELEMENT)\b", re.I)
_NUMBER_SEP = re.compile(r"[\s,]+")


@dataclass(frozen=True, slots=True)
class BuiltinCheck:
    """A built-in check: an id, a version and a pure function (document, task) → outcome."""

    id: str
    version: str
    needs_tree: bool
    fn: CheckFn

    def run(self, doc: Document, task: TaskSpec) -> CheckResult:
        """Evaluate ``doc`` under ``task``."""
        return result_of(self.id, self.version, self.fn(doc, task))


_ROOT_OUTCOMES: dict[tuple[str, int | None], Outcome] = {}
_VIEWBOX_OUTCOMES: dict[tuple[str, str | None, int | None, str | None], Outcome] = {}


def builtin(check_id: str, version: str, needs_tree: bool = True) -> Callable[[CheckFn], CheckFn]:
    """Register a function as a built-in check."""

    def wrap(fn: CheckFn) -> CheckFn:
        register_check(BuiltinCheck(check_id, version, needs_tree, fn))
        return fn

    return wrap


def _line_text(text: str, line: int | None) -> str | None:
    if not line or line < 1:
        return None
    lines = text.split("\n", line)
    return clip(lines[line - 1]) if len(lines) >= line else None


_PARSED = constant("pass", "well-formed XML (hardened parser: no entities, DTD or network)")
_PARSED_NEUTRALISED = constant(
    "pass",
    "well-formed XML (hardened parser: no entities, DTD or network)"
    "; the DOCTYPE's internal subset was neutralised, never expanded",
)
_NO_DOCTYPE = constant("pass", "no DOCTYPE")
_HARMLESS_DOCTYPE = constant(
    "pass", "DOCTYPE without entities (standard SVG DTD or none; never loaded)"
)
_NO_REQUIRED_IDS = constant("not_applicable", "the task requires no ids")


@builtin("parse", "2", needs_tree=False)
def check_parse(doc: Document, task: TaskSpec) -> Outcome:
    """Well-formed XML under the hardened parser (entities unexpanded, no DTD, no network)."""
    del task  # every check is called with the task; this one does not depend on it
    if doc.error is not None and doc.error.depth is not None:
        depth, line = doc.error.depth
        msg = (
            f"not parsed: nesting depth {depth} is past the parser's limit of {PARSER_MAX_DEPTH};"
            " the size check reports it against the task's depth limit"
        )
        return "not_applicable", (Evidence(msg, line, None, _line_text(doc.text, line)),)
    if doc.error is not None:
        where = f" (column {doc.error.column})" if doc.error.column else ""
        ev = Evidence(f"not well-formed XML: {doc.error.message}{where}", doc.error.line, None,
                      _line_text(doc.text, doc.error.line))  # fmt: skip
        return "fail", (ev,)
    return _PARSED_NEUTRALISED if doc.neutralised else _PARSED


@builtin("root", "1")
def check_root(doc: Document, task: TaskSpec) -> Outcome:
    """The root element is ``svg`` in the SVG namespace."""
    del task  # every check is called with the task; this one does not depend on it
    assert doc.root is not None
    tag, line = str(doc.root.tag), src_line(doc.root)
    return memoized(_ROOT_OUTCOMES, (tag, line), lambda: _root_outcome(tag, line))


def _root_outcome(tag: str, line: int | None) -> Outcome:
    if tag == f"{{{SVG_NS}}}svg":
        return "pass", (Evidence("root element is svg in the SVG namespace", line),)
    ns, _, local = tag[1:].partition("}") if tag.startswith("{") else ("", "", tag)
    msg = f"root element is {local!r} in namespace {ns or '(none)'}; expected 'svg' in {SVG_NS}"
    return "fail", (Evidence(msg, line, "/" + local),)


def _numbers(text: str) -> list[float] | None:
    try:
        return [float(t) for t in _NUMBER_SEP.split(text.strip()) if t]
    except ValueError:
        return None


@builtin("viewbox", "1")
def check_viewbox(doc: Document, task: TaskSpec) -> Outcome:
    """The root ``viewBox`` is four numbers with positive size, equal to the task's when given."""
    root = doc.root
    assert root is not None
    key = (str(root.tag), root.get("viewBox"), src_line(root), task.output.required_viewbox)
    return memoized(_VIEWBOX_OUTCOMES, key, lambda: _viewbox_outcome(*key))


def _viewbox_outcome(
    tag: str, value: str | None, line: int | None, required: str | None
) -> Outcome:
    if local_name(tag) != "svg":  # the namespace is the root check's business
        return "fail", (Evidence("no svg root element, so no viewBox", line),)
    where = f"/{local_name(tag)}[1]"  # element_path of a root
    if value is None:
        if required is None:
            return "pass", (Evidence("no viewBox (the task requires none)", line, where),)
        return "fail", (Evidence(f'missing viewBox; required "{required}"', line, where),)
    snippet = clip(f'viewBox="{value}"')
    nums = _numbers(value)
    if nums is None or len(nums) != 4 or nums[2] <= 0 or nums[3] <= 0:
        msg = "viewBox is not four numbers with positive width and height"
        return "fail", (Evidence(msg, line, where, snippet),)
    if required is not None and nums != _numbers(required):
        msg = f'viewBox differs from the required "{required}"'
        return "fail", (Evidence(msg, line, where, snippet),)
    return "pass", (Evidence("viewBox as required", line, where, snippet),)


def _id_map(root: etree._Element) -> dict[str, list[etree._Element]]:
    """Elements by ``id`` (and ``xml:id``), in document order."""
    ids: dict[str, list[etree._Element]] = {}
    for el in root.iter("*"):
        for key in ("id", "{http://www.w3.org/XML/1998/namespace}id"):
            value = el.get(key)
            if value is not None:
                ids.setdefault(value, []).append(el)
    return ids


def _use_expansion(root: etree._Element) -> tuple[int, Evidence | None]:
    """Element instances after expanding every internal ``use`` (a render-time amplifier)."""
    ids = _id_map(root)
    memo: dict[etree._Element, int] = {}
    visiting: set[etree._Element] = set()
    cycle: list[Evidence] = []

    def weight(el: etree._Element, depth: int) -> int:
        if el in memo:
            return memo[el]
        if el in visiting or depth > 100:
            if not cycle:
                cycle.append(Evidence("use references form a cycle (render loop)", src_line(el),
                                      element_path(el)))  # fmt: skip
            return USE_EXPANSION_CAP
        visiting.add(el)
        total = 0
        for node in el.iter("*"):
            total += 1
            if local_name(str(node.tag)) == "use":
                href = node.get("{http://www.w3.org/1999/xlink}href") or node.get("href") or ""
                kind, _ = classify_url(href)
                targets = ids.get(href.strip()[1:]) if kind is UrlKind.LOCAL else None
                if targets:
                    total += weight(targets[0], depth + 1)
            if total >= USE_EXPANSION_CAP:
                total = USE_EXPANSION_CAP
                break
        visiting.discard(el)
        memo[el] = total
        return total

    return weight(root, 0), (cycle[0] if cycle else None)


def _long_values(root: etree._Element, out: OutputConstraints) -> list[Evidence]:
    """The attribute values over the attribute or path-data limits, located."""
    found: list[Evidence] = []
    for el in root.iter("*"):
        for name, value in attr_items(el):
            limit = out.max_path_data_length if name == "d" else out.max_attribute_length
            if len(value) > limit:
                what = "path data" if name == "d" else f"attribute {attr_name(name)}"
                msg = f"{what}: {len(value)} characters > limit {limit}"
                found.append(Evidence(msg, src_line(el), element_path(el)))
                if len(found) >= 5:
                    return found
    return found


@builtin("size", "2", needs_tree=False)
def check_size(doc: Document, task: TaskSpec) -> Outcome:
    """Bytes, element count, depth, attribute and path-data length, and ``use`` expansion."""
    out = task.output
    fails: list[Evidence] = []
    if doc.byte_length > out.max_bytes:
        fails.append(Evidence(f"{doc.byte_length} bytes > limit {out.max_bytes}"))
    measured = [f"{doc.byte_length} bytes"]
    if doc.error is not None and doc.error.depth is not None:  # too deep for the parser
        depth, line = doc.error.depth
        if depth > out.max_depth:
            fails.append(Evidence(f"depth {depth} over the limit of {out.max_depth}", line))
    if doc.root is not None:
        scan = doc.scan
        at_least = "at least " if scan.truncated else ""
        measured.append(f"{scan.element_count} elements")
        if scan.element_count > out.max_elements:
            msg = f"{at_least}{scan.element_count} elements > limit {out.max_elements}"
            fails.append(Evidence(msg))
        if scan.element_count > out.max_depth:  # depth <= element count: only then measure it
            depth, el = nesting_depth(doc.root)
            measured.append(f"depth {depth}")
            if depth > out.max_depth:
                fails.append(Evidence(f"depth {depth} over the limit of {out.max_depth}",
                                      src_line(el), element_path(el)))  # fmt: skip
        shortest_limit = min(out.max_attribute_length, out.max_path_data_length)
        if scan.value_bound > shortest_limit and scan.longest_value > shortest_limit:
            fails.extend(_long_values(doc.root, out))
        if scan.uses_local_refs and not scan.truncated:
            expanded, cycle = _use_expansion(doc.root)
            if cycle is not None:
                fails.append(cycle)
            elif expanded > out.max_elements:
                at_least = "at least " if expanded >= USE_EXPANSION_CAP else ""
                msg = f"<use> references expand to {at_least}{expanded} element instances > limit"
                fails.append(Evidence(f"{msg} {out.max_elements}"))
            measured.append(f"{expanded} instances after <use> expansion")
    if fails:
        return "fail", tuple(fails)
    return "pass", (Evidence("within limits: " + ", ".join(measured)),)


@dataclass(frozen=True, slots=True)
class SecurityCheck:
    """A built-in security check: fails with what the shared walk recorded under its id.

    Its results for a document without findings and for a task allowing the feature are built
    once and shared (they never vary).
    """

    id: str
    version: str
    needs_tree: bool
    allowed: Callable[[TaskSpec], bool]
    passed: CheckResult
    not_applicable: CheckResult

    def run(self, doc: Document, task: TaskSpec) -> CheckResult:
        """Evaluate ``doc`` under ``task``."""
        if self.allowed(task):
            return self.not_applicable
        found = doc.scan.get(self.id)
        return CheckResult(self.id, self.version, "fail", found) if found else self.passed


def _security(check_id: str, feature: str, allowed: Callable[[TaskSpec], bool], clean: str) -> None:
    passed = CheckResult(check_id, "1", "pass", (Evidence(clean),))
    not_applicable = CheckResult(
        check_id, "1", "not_applicable", (Evidence(f"the task allows {feature}"),)
    )
    register_check(SecurityCheck(check_id, "1", True, allowed, passed, not_applicable))


_SECURITY = (
    ("script", "scripts", "no script/handler elements, frames, srcdoc, XSLT or CSS expression()"),
    ("event-handler", "scripts", "no on* event handler attributes (nor SMIL targeting one)"),
    ("javascript-url", "scripts", "no javascript:/data:text/html URL in attributes, SMIL or CSS"),
    ("external-ref", "external resources", "no reference outside the file (href, CSS, PIs)"),
    ("foreign-object", "foreignObject", "no foreignObject"),
    ("raster-image", "raster images", "no image elements or data: images"),
    ("animation", "animation", "no SMIL elements, CSS @keyframes, animation or transition"),
)
_ALLOWED: dict[str, Callable[[TaskSpec], bool]] = {
    "scripts": attrgetter("output.allowed.scripts"),
    "external resources": attrgetter("output.allowed.external_resources"),
    "foreignObject": attrgetter("output.allowed.foreign_object"),
    "raster images": attrgetter("output.allowed.raster_images"),
    "animation": attrgetter("output.allowed.animation"),
}
for _id, _feature, _clean in _SECURITY:
    _security(_id, _feature, _ALLOWED[_feature], _clean)


@builtin("doctype", "1", needs_tree=False)
def check_doctype(doc: Document, task: TaskSpec) -> Outcome:
    """No DOCTYPE declaring entities or anything else, no external DTD but the standard SVG ones."""
    del task  # every check is called with the task; this one does not depend on it
    dt = doc.prolog.doctype
    fails: list[Evidence] = []
    if dt is not None:
        line = line_of(doc.text, dt.start)
        head = clip(doc.text[dt.start : min(dt.end, dt.start + 200)])
        if dt.public_id is not None or dt.system_id is not None:
            std = STANDARD_DTDS.get(dt.public_id or "")
            if std is None or (dt.system_id is not None and dt.system_id != std):
                ext = dt.system_id or dt.public_id
                fails.append(Evidence(f"external DTD {ext!r} (never loaded)", line, None, head))
        for e in dt.entities:
            kind = "parameter entity" if e.parameter else "entity"
            what = f"SYSTEM {e.system_id!r}" if e.system_id is not None else "internal value"
            msg = f"DOCTYPE declares {kind} {e.name!r} ({what}); entities are never expanded"
            fails.append(Evidence(msg, e.line, None, clip(e.text)))
        other = [d for d in dt.declarations if d[0] != "ENTITY"]
        for kind, dline, text in other[:5]:
            fails.append(
                Evidence(f"DOCTYPE internal subset declares {kind}", dline, None, clip(text))
            )
        if dt.pe_refs:
            refs = ", ".join(dt.pe_refs[:5])
            fails.append(Evidence(f"parameter entity references {refs}", line, None, head))
        if not fails and dt.subset and dt.subset.strip():
            fails.append(Evidence("DOCTYPE has a non-empty internal subset", line, None, head))
        if not dt.complete:
            fails.append(Evidence("unterminated DOCTYPE", line, None, head))
    late = _LATE_DTD.search(doc.text, doc.prolog.root_start)
    if late is not None:
        where = line_of(doc.text, late.start())
        fails.append(Evidence(f"<!{late.group(1)} after the prolog", where, None,
                              clip(doc.text[late.start() : late.start() + 120])))  # fmt: skip
    if doc.root is not None:
        fails.extend(doc.scan.get("doctype"))
    if fails:
        return "fail", tuple(fails)
    if dt is None:
        return _NO_DOCTYPE
    return _HARMLESS_DOCTYPE


@builtin("required-ids", "1")
def check_required_ids(doc: Document, task: TaskSpec) -> Outcome:
    """Every required id is present exactly once (a claim, verified later on the render)."""
    required = task.output.required_ids
    if not required:
        return _NO_REQUIRED_IDS
    assert doc.root is not None
    ids = _id_map(doc.root)
    fails: list[Evidence] = []
    missing = [i for i in required if i not in ids]
    if missing:
        fails.append(Evidence(f"missing required ids: {', '.join(missing)}"))
    for i in required:
        els = ids.get(i, [])
        if len(els) > 1:
            msg = f"id {i!r} used {len(els)} times"
            fails.append(Evidence(msg, src_line(els[1]), element_path(els[1])))
    if fails:
        return "fail", tuple(fails)
    msg = f"all {len(required)} required ids present (claims only; checked against the render)"
    return "pass", (Evidence(msg),)
