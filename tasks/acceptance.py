"""Acceptance checks a generated or authored task passes before it enters a pool.

A check is anything with an ``id`` and a ``run(subject)`` returning a :class:`CheckOutcome`
(:class:`AcceptanceCheck`); checks register in one registry, the spec-level ones below like
any plugin. ``judges`` adds the perturbation-set check, the service the reference-drawing check
(it renders); ``regua tasks check FILE [--reference SVG]`` runs them all.

Built-in spec-level checks (pure):

* ``spec-valid`` — the YAML text validates as a :class:`~tasks.model.TaskSpec`.
* ``criteria-stated`` — every applicable *necessary* criterion is stated in the prompt (a
  criterion with ``applicable: false`` is reported ``not_applicable`` and exempt; an optional
  criterion only describes, so it need not be asked for). The rule:

  - a criterion that lists ``states`` phrases is stated when *every* phrase occurs in the prompt;
  - the delivery rules (``F1``, decided by the static checks) are stated when the prompt asks
    for an SVG and states every rule the task adds to "an SVG": its required viewBox, each
    feature it forbids (scripts, foreignObject, embedded bitmaps, animation; external resources
    never reach the sandbox, so "an SVG" already excludes them) and each required part id;
  - otherwise it is stated when at least two thirds of its *key terms* occur in the prompt. Key
    terms are the distinct words of four letters or more of its question's condition, minus
    common function words (:data:`STOP_WORDS`) and words that judge or observe rather than state
    a condition (:data:`JUDGEMENT_WORDS`: "recognisable", "clearly", "sampled" ...). What the
    question adds to define its condition (in parentheses, or after "that is" / "i.e.") says
    how it is judged, not what is asked, and is left out. A term occurs when a prompt word
    starts with the term's first five letters (so ``pedals`` matches ``pedal`` and ``turns``
    matches ``turn``).

  Comparisons ignore case, hyphens and line breaks.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from regua.errors import TaskError
from regua.registry import Registry
from tasks.model import Criterion, CriterionKind, TaskSpec
from tasks.registry import load_task_text

Status = Literal["pass", "fail", "skip"]
KEY_TERM_SHARE = 2 / 3
_STOP_TEXT = (
    "does there with that this from each every their them they have been into onto than when "
    "what which while about above below other only shown show seen most least both also very "
    "some more such your will would could should must"
)
STOP_WORDS = frozenset([*_STOP_TEXT.split(), "across", "along"])
JUDGEMENT_WORDS = frozenset(
    [
        "recognisable",
        "recognizable",
        "recognisably",
        "recognizably",
        "identifiable",
        "clear",
        "clearly",
        "plausible",
        "plausibly",
        "convincing",
        "convincingly",
        "evident",
        "apparent",
        "obvious",
        "obviously",
        "sampled",
        "sample",
        "samples",
        "time",
        "times",
        "frames",
    ]
)
"""Words of a question that say how its condition is judged or observed, never the condition:
a prompt need not repeat them (asking for "a pelican" asks for a recognisable one)."""
RULE_CRITERION = "F1"
"""The delivery rules every task has (one SVG document within the limits), decided by the
static checks from the task's ``output`` constraints."""
FORBIDDEN_WORDS: dict[str, tuple[str, ...]] = {
    "scripts": ("script",),
    "foreign_object": ("foreignobject",),
    "raster_images": ("bitmap", "raster", "image"),
    "animation": ("animat", "static"),
}
"""A feature the task forbids, and the words of which one must be in the prompt to state it."""
_ELABORATION = re.compile(r"\([^)]*\)|,?\s*\b(?:that is|i\.e\.)[,:]?\s.*$", re.I)


@dataclass(frozen=True)
class AcceptanceSubject:
    """What is checked: the task's YAML text, its parsed spec (None if invalid), a drawing."""

    source: str
    text: str
    spec: TaskSpec | None
    spec_error: str | None = None
    reference_svg: str | None = None

    @classmethod
    def from_text(
        cls, text: str, source: str = "<text>", reference_svg: str | None = None
    ) -> AcceptanceSubject:
        """Parse ``text`` (a parse error is kept as the ``spec-valid`` failure, not raised)."""
        try:
            return cls(source, text, load_task_text(text, source), None, reference_svg)
        except TaskError as exc:
            return cls(source, text, None, str(exc), reference_svg)


@dataclass(frozen=True)
class CheckOutcome:
    """One check's result: ``pass``, ``fail`` or ``skip``, with the reason a person reads."""

    check: str
    status: Status
    reason: str


class AcceptanceCheck(Protocol):
    """An acceptance check (``id`` names it in reports)."""

    @property
    def id(self) -> str:
        """Stable id of the check."""

    def run(self, subject: AcceptanceSubject) -> CheckOutcome:
        """Check the subject."""


ACCEPTANCE_CHECKS: Registry[AcceptanceCheck] = Registry(
    "acceptance check", content=type, entry_point_group="regua.acceptance_checks"
)
"""Acceptance checks by id in registration order; two instances of one class are one check."""


def register_acceptance_check(check: AcceptanceCheck) -> AcceptanceCheck:
    """Add a check to the registry, by id; built-ins register the same way."""
    return ACCEPTANCE_CHECKS.register(check.id, check)


def registered_acceptance_checks() -> tuple[AcceptanceCheck, ...]:
    """Every registered check, in registration order."""
    return tuple(ACCEPTANCE_CHECKS.values())


def run_acceptance(
    subject: AcceptanceSubject, checks: Iterable[AcceptanceCheck] | None = None
) -> list[CheckOutcome]:
    """Run ``checks`` (default: every registered one) on the subject, in order."""
    return [c.run(subject) for c in (registered_acceptance_checks() if checks is None else checks)]


def needs_spec(check: str, subject: AcceptanceSubject) -> CheckOutcome | None:
    """The ``skip`` outcome of a check that needs a valid spec, when the spec is invalid."""
    if subject.spec is None:
        return CheckOutcome(check, "skip", "the spec does not validate (see spec-valid)")
    return None


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[-\u2010\u2011]+", " ", text.casefold()).split())


def _terms(text: str) -> tuple[str, ...]:
    words = re.findall(r"[a-z]{4,}", _norm(text))
    skip = STOP_WORDS | JUDGEMENT_WORDS
    return tuple(dict.fromkeys(w for w in words if w not in skip))


def key_terms(question: str) -> tuple[str, ...]:
    """The key terms of a criterion question's condition (see the module docstring)."""
    condition = _ELABORATION.sub(" ", question)
    return _terms(condition) or _terms(question)


def _occurs(term: str, words: set[str]) -> bool:
    stem = term[:5]
    return any(w.startswith(stem) for w in words)


def unstated_rules(spec: TaskSpec) -> str | None:
    """Why the prompt does not state the task's delivery rules, or None when it does."""
    text = _norm(spec.prompt)
    squashed = text.replace(" ", "")
    missing = [] if re.search(r"\bsvg\b", text) else ["the word SVG"]
    out = spec.output
    if out.required_viewbox and _norm(out.required_viewbox) not in text:
        missing.append(f"viewBox {out.required_viewbox!r}")
    allowed = out.allowed.model_dump()
    for feature, words in FORBIDDEN_WORDS.items():
        if not allowed[feature] and not any(w in squashed for w in words):
            missing.append(f"that {feature.replace('_', ' ')} are forbidden")
    absent = [i for i in out.required_ids if _norm(i) not in text]
    if absent:
        missing.append(f"the required ids {absent}")
    if not missing:
        return None
    return f"the prompt does not state {', '.join(missing)}"


def unstated(criterion: Criterion, prompt: str, spec: TaskSpec | None = None) -> str | None:
    """Why a criterion is not stated in the prompt, or None when it is.

    ``spec`` (the task) lets the delivery rules be checked against its output constraints.
    """
    text = _norm(prompt)
    if criterion.states:
        missing = [p for p in criterion.states if _norm(p) not in text]
        return f"phrases not in the prompt: {missing}" if missing else None
    if criterion.id == RULE_CRITERION and spec is not None:
        return unstated_rules(spec)
    terms = key_terms(criterion.question)
    if not terms:
        return "its question has no key term and it lists no `states` phrase"
    words = set(re.findall(r"[a-z]+", text))
    found = [t for t in terms if _occurs(t, words)]
    if len(found) >= KEY_TERM_SHARE * len(terms):
        return None
    absent = [t for t in terms if t not in found]
    return (
        f"only {len(found)} of {len(terms)} key terms in the prompt (absent: {', '.join(absent)})"
        " - state it in the prompt, list the prompt `states` phrases, or mark it applicable: false"
    )


class SpecValid:
    """``spec-valid``: the text validates as a task spec."""

    id = "spec-valid"

    def run(self, subject: AcceptanceSubject) -> CheckOutcome:
        """Pass when the spec parsed."""
        if subject.spec is None:
            return CheckOutcome(self.id, "fail", subject.spec_error or "not a task spec")
        return CheckOutcome(self.id, "pass", f"{subject.spec.ref} validates")


class CriteriaStated:
    """``criteria-stated``: every applicable necessary criterion is stated in the prompt."""

    id = "criteria-stated"

    def run(self, subject: AcceptanceSubject) -> CheckOutcome:
        """Fail naming each criterion the prompt does not state, and why."""
        skipped = needs_spec(self.id, subject)
        if skipped is not None or subject.spec is None:
            return skipped or CheckOutcome(self.id, "skip", "no spec")
        spec = subject.spec
        problems = [
            f"{c.id}: {why}"
            for c in spec.criteria
            if c.applicable
            and c.kind is CriterionKind.NECESSARY
            and (why := unstated(c, spec.prompt, spec)) is not None
        ]
        exempt = [c.id for c in spec.criteria if not c.applicable]
        optional = [
            c.id for c in spec.criteria if c.applicable and c.kind is CriterionKind.OPTIONAL
        ]
        if problems:
            return CheckOutcome(self.id, "fail", "; ".join(problems))
        notes = [f"{', '.join(exempt)} not_applicable"] if exempt else []
        if optional:
            notes.append(f"{', '.join(optional)} optional: descriptive, need not be asked for")
        note = f" ({'; '.join(notes)})" if notes else ""
        return CheckOutcome(
            self.id, "pass", f"every applicable necessary criterion is stated{note}"
        )


def outcome_lines(outcomes: Sequence[CheckOutcome]) -> list[str]:
    """One ``STATUS check: reason`` line per outcome (what the CLI prints)."""
    return [f"{o.status.upper():4} {o.check}: {o.reason}" for o in outcomes]


register_acceptance_check(SpecValid())
register_acceptance_check(CriteriaStated())
