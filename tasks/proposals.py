"""Generated cases: asking a model for template variants, to be reviewed before any is used.

A template (:mod:`tasks.variants`) may leave some dimensions for a model to fill::

    template: pelican-personas
    dimensions:
      persona: [retired-sailor]        # examples; the model proposes values
      style: []                        # nothing declared: the model proposes every value
      language: [en, pt, es]
    weights:
      language: {en: 0.6, pt: 0.3, es: 0.1}   # usage shares: 60 % of the variants in English
    spec: {id: "pelican-{persona}-{style}-{language}", ...}

``propose N`` with ``--dimensions persona,style,language`` gives the model N slots: a dimension
with declared ``weights`` is allocated by them (largest remainder), never invented; another
named dimension is the model's to propose; a dimension not named is spread evenly over its
declared values. The prompt, the reply and each variant (with the problem that keeps it from
being a valid task, if any) are what the service stores as proposals; only a person's
acceptance registers one as a frozen task version. Pure: no I/O.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from regua.errors import InputError, InvalidTaskError
from tasks.authoring import spec_from_data
from tasks.model import TaskSpec
from tasks.variants import NAME, PLACEHOLDER, fill, template_document

SLUG = re.compile(r"^[a-z0-9][a-z0-9-]{0,39}$")
"""A proposed value: it becomes part of task ids, so a short slug."""
MAX_PROPOSALS = 200
PROMPT_VERSION = "propose-variants@1"
_FENCE = re.compile(r"^\s*```(?:json)?\s*\n(?P<body>.*?)\n?\s*```\s*$", re.DOTALL)


@dataclass(frozen=True)
class ProposalTemplate:
    """A template read for proposing: declared values, weights and the spec body."""

    name: str
    text: str
    dimensions: Mapping[str, tuple[str, ...]]
    """Every placeholder of the spec → its declared values (possibly none)."""
    weights: Mapping[str, Mapping[str, float]]
    body: Mapping[str, Any]

    @property
    def sha256(self) -> str:
        """sha256 of the template text as given."""
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


def _placeholders(value: Any) -> set[str]:
    if isinstance(value, str):
        return set(PLACEHOLDER.findall(value))
    if isinstance(value, dict):
        return set().union(*(_placeholders(v) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(_placeholders(v) for v in value)) if value else set()
    return set()


def _values(raw: Any, source: str) -> dict[str, tuple[str, ...]]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise InvalidTaskError(f"{source}: dimensions: a mapping of name: [values]")
    out: dict[str, tuple[str, ...]] = {}
    for name, values in raw.items():
        if not isinstance(name, str) or not NAME.match(name):
            raise InvalidTaskError(f"{source}: dimensions.{name}: names look like 'persona'")
        if values is None:
            values = []
        if not isinstance(values, list):
            raise InvalidTaskError(f"{source}: dimensions.{name}: give a list of values")
        out[name] = tuple(str(v) for v in values)
    return out


def _weights(
    raw: Any, dims: Mapping[str, tuple[str, ...]], source: str
) -> dict[str, dict[str, float]]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise InvalidTaskError(f"{source}: weights: a mapping of dimension: {{value: share}}")
    out: dict[str, dict[str, float]] = {}
    for name, shares in raw.items():
        where = f"{source}: weights.{name}"
        if name not in dims or not dims[name]:
            raise InvalidTaskError(f"{where}: weigh only a dimension with declared values")
        if not isinstance(shares, dict) or not shares:
            raise InvalidTaskError(f"{where}: give value: share pairs")
        unknown = sorted(set(map(str, shares)) - set(dims[name]))
        if unknown:
            raise InvalidTaskError(f"{where}: {unknown[0]!r} is not one of {list(dims[name])}")
        parsed = {str(k): v for k, v in shares.items()}
        if any(
            isinstance(v, bool) or not isinstance(v, int | float) or v < 0 for v in parsed.values()
        ):
            raise InvalidTaskError(f"{where}: shares are numbers >= 0")
        if sum(parsed.values()) <= 0:
            raise InvalidTaskError(f"{where}: the shares add up to nothing")
        out[name] = {v: float(parsed.get(v, 0.0)) for v in dims[name]}
    return out


def read_proposal_template(text: str, source: str = "<template>") -> ProposalTemplate:
    """A template text read for proposing (:class:`InvalidTaskError` names the field)."""
    data, _node, name = template_document(text, source)
    declared = _values(data.get("dimensions"), source)
    used = _placeholders(data["spec"])
    extra = sorted(set(declared) - used)
    if extra:
        raise InvalidTaskError(f"{source}: dimensions.{extra[0]}: no placeholder uses it")
    dims = {n: declared.get(n, ()) for n in sorted(used)}
    return ProposalTemplate(
        name, text, dims, _weights(data.get("weights"), dims, source), data["spec"]
    )


def allocate(n: int, shares: Mapping[str, float]) -> dict[str, int]:
    """``n`` slots over values in proportion to their shares (largest remainder, ties in order)."""
    total = sum(shares.values())
    quotas = {v: n * w / total for v, w in shares.items()}
    counts = {v: int(q) for v, q in quotas.items()}
    order = sorted(shares, key=lambda v: (-(quotas[v] - counts[v]), list(shares).index(v)))
    for v in order[: n - sum(counts.values())]:
        counts[v] += 1
    return counts


@dataclass(frozen=True)
class Plan:
    """Which dimensions the model proposes, and each slot's fixed values of the others."""

    proposed: tuple[str, ...]
    slots: tuple[Mapping[str, str], ...]


def plan_slots(template: ProposalTemplate, named: Sequence[str], n: int) -> Plan:
    """The slots of a proposal: which dimensions the model proposes, the others' values.

    A dimension with weights is allocated by them, another named one is proposed, the rest
    are spread evenly over their declared values; each allocated dimension is shuffled with a
    seed from the template text and its name, so dimensions are not lined up with each other.
    """
    if not 1 <= n <= MAX_PROPOSALS:
        raise InputError(f"--n must be 1 to {MAX_PROPOSALS} (got {n})")
    unknown = [d for d in named if d not in template.dimensions]
    if unknown:
        known = ", ".join(template.dimensions)
        raise InputError(f"dimension {unknown[0]!r} is no placeholder of the template ({known})")
    proposed = tuple(d for d in named if d not in template.weights)
    fixed: dict[str, list[str]] = {}
    for dim, values in template.dimensions.items():
        if dim in proposed:
            continue
        if not values:
            raise InputError(
                f"dimension {dim!r} has no declared values: name it in --dimensions so the "
                "model proposes them, or declare values"
            )
        shares = template.weights.get(dim) or {v: 1.0 for v in values}
        column = [v for v, k in allocate(n, shares).items() for _ in range(k)]
        seed = hashlib.sha256(f"{template.sha256}:{dim}".encode()).hexdigest()
        random.Random(seed).shuffle(column)
        fixed[dim] = column
    slots = tuple({d: fixed[d][i] for d in fixed} for i in range(n))
    return Plan(proposed, slots)


def proposal_prompt(template: ProposalTemplate, plan: Plan) -> str:
    """The prompt asking a model for the plan's variants (the template quoted as data)."""
    n = len(plan.slots)
    prompt = str(template.body.get("prompt", ""))
    lines = [
        "You propose test cases for a benchmark of drawings (SVG) made by language models.",
        "The task template, quoted as data (placeholders in braces):",
        "<<<",
        prompt.strip(),
        ">>>",
        f"Propose exactly {n} variants. For each, give a value for: {', '.join(plan.proposed)}.",
        "Each value is a short slug of lowercase letters, digits and hyphens (it becomes part "
        'of a task id), e.g. "retired-sailor". Make the variants varied and realistic.',
    ]
    for dim in plan.proposed:
        if template.dimensions[dim]:
            lines.append(f"Examples of {dim}: {', '.join(template.dimensions[dim])}")
    if plan.slots and plan.slots[0]:
        lines.append("Keep these fixed values of the other placeholders, variant by variant:")
        for i, slot in enumerate(plan.slots, 1):
            lines.append(f"{i}. " + ", ".join(f"{k}={v}" for k, v in slot.items()))
    keys = ", ".join(f'"{d}": "..."' for d in plan.proposed)
    lines.append(
        f'Reply with one JSON object and nothing else: {{"variants": [{{{keys}, '
        '"rationale": "<one sentence>"}, ...]}, in the order above.'
    )
    return "\n".join(lines)


@dataclass(frozen=True)
class Variant:
    """One proposed variant: every dimension's value, why, and what it makes."""

    values: Mapping[str, str]
    rationale: str
    spec: TaskSpec | None
    problem: str | None


def parse_reply(text: str, plan: Plan) -> list[tuple[dict[str, str], str]]:
    """The variants a reply holds, slot by slot: (proposed values, rationale).

    Raises :class:`InputError` when the reply is no JSON object with a ``variants`` list.
    An entry that is not an object gives empty values (its variant carries the problem).
    """
    fenced = _FENCE.match(text)
    try:
        doc = json.loads(fenced.group("body") if fenced else text)
    except json.JSONDecodeError as exc:
        raise InputError(f"the model's reply is not JSON ({exc.msg}): {text[:200]!r}") from None
    items = doc.get("variants") if isinstance(doc, dict) else None
    if not isinstance(items, list):
        raise InputError(f'the model\'s reply has no "variants" list: {text[:200]!r}')
    out = []
    for item in items[: len(plan.slots)]:
        entry = item if isinstance(item, dict) else {}
        values = {d: str(entry[d]) for d in plan.proposed if isinstance(entry.get(d), str | int)}
        out.append((values, str(entry.get("rationale", ""))[:1000]))
    return out


def build_variant(
    template: ProposalTemplate,
    fixed: Mapping[str, str],
    proposed: Mapping[str, str],
    rationale: str,
) -> Variant:
    """The task version a variant makes, or the problem that keeps it from being one."""
    values = {**fixed, **proposed}
    missing = [d for d in template.dimensions if d not in values]
    if missing:
        return Variant(values, rationale, None, f"no value for {', '.join(missing)}")
    bad = [f"{d}={v!r}" for d, v in proposed.items() if not SLUG.match(v)]
    if bad:
        return Variant(values, rationale, None, f"not a short slug: {', '.join(bad)}")
    try:
        filled = fill(dict(template.body), values) | {
            "template": template.name,
            "dimensions": values,
        }
        spec = spec_from_data(filled, None, f"{template.name} {values}")
    except InvalidTaskError as exc:
        return Variant(values, rationale, None, str(exc)[:2000])
    return Variant(values, rationale, spec, None)
