"""Acceptance checks a generated or authored task passes before it enters a pool.

A check is anything with an ``id`` and a ``run(subject)`` returning a :class:`CheckOutcome`
(:class:`AcceptanceCheck`); checks register in one registry, the spec-level ones below like
any plugin. ``judges`` adds the perturbation-set check, the service the reference-drawing check
(it renders); ``regua tasks check FILE [--reference SVG]`` runs them all.

Built-in spec-level checks (pure):

* ``spec-valid`` — the YAML text validates as a :class:`~tasks.model.TaskSpec`.
* ``criteria-stated`` — every applicable criterion is stated in the prompt (a criterion with
  ``applicable: false`` is reported ``not_applicable`` and exempt). The rule:

  - a criterion that lists ``states`` phrases is stated when *every* phrase occurs in the prompt;
  - otherwise it is stated when at least two thirds of its *key terms* occur in the prompt. Key
    terms are the distinct words of four letters or more of its question, minus common function
    words (:data:`STOP_WORDS`); a term occurs when a prompt word starts with the term's first
    five letters (so ``pedals`` matches ``pedal``).

  Comparisons ignore case, hyphens and line breaks.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from regua.errors import TaskError
from regua.registry import Registry
from tasks.model import Criterion, TaskSpec
from tasks.registry import load_task_text

Status = Literal["pass", "fail", "skip"]
KEY_TERM_SHARE = 2 / 3
_STOP_TEXT = (
    "does there with that this from each every their them they have been into onto than when "
    "what which while about above below other only shown show seen most least both also very "
    "some more such your will would could should must"
)
STOP_WORDS = frozenset(_STOP_TEXT.split())


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


def key_terms(question: str) -> tuple[str, ...]:
    """The key terms of a criterion question (see the module docstring)."""
    words = re.findall(r"[a-z]{4,}", _norm(question))
    return tuple(dict.fromkeys(w for w in words if w not in STOP_WORDS))


def unstated(criterion: Criterion, prompt: str) -> str | None:
    """Why a criterion is not stated in the prompt, or None when it is."""
    text = _norm(prompt)
    if criterion.states:
        missing = [p for p in criterion.states if _norm(p) not in text]
        return f"phrases not in the prompt: {missing}" if missing else None
    terms = key_terms(criterion.question)
    if not terms:
        return "its question has no key term and it lists no `states` phrase"
    stems = {w[:5] for w in re.findall(r"[a-z]+", text)}
    found = [t for t in terms if t[:5] in stems]
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
    """``criteria-stated``: every applicable criterion is stated in the prompt."""

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
            if c.applicable and (why := unstated(c, spec.prompt)) is not None
        ]
        exempt = [c.id for c in spec.criteria if not c.applicable]
        if problems:
            return CheckOutcome(self.id, "fail", "; ".join(problems))
        note = f" ({', '.join(exempt)} not_applicable)" if exempt else ""
        return CheckOutcome(self.id, "pass", f"every applicable criterion is stated{note}")


def outcome_lines(outcomes: Sequence[CheckOutcome]) -> list[str]:
    """One ``STATUS check: reason`` line per outcome (what the CLI prints)."""
    return [f"{o.status.upper():4} {o.check}: {o.reason}" for o in outcomes]


register_acceptance_check(SpecValid())
register_acceptance_check(CriteriaStated())
