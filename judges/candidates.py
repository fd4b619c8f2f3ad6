"""Candidate judges for one criterion: the same vision judge in several prompt wordings.

``regua judges propose`` writes N candidate profiles that differ only in one rule line of the
prompt: ``strict``, ``balanced``, ``lenient`` (the frozen templates of
:mod:`judges.vision.templates`) and ``rubric``, whose rule quotes the task's own text for the
criterion (its question, the prompt phrases that state it, when it does not apply). Everything
else — model, endpoint, key variable, parameters — is the base profile's, so calibration
compares wordings and nothing else. The candidates are ordinary judge-file profiles (frozen,
versioned, hashed); the gate decides which of them earn a vote. Pure: no I/O.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from judges.frozen import plain
from judges.model import JudgeProfile
from judges.profiles import ProfileDoc, build_profile
from judges.vision.templates import BALANCED, template_with_rule
from regua.errors import InputError
from tasks import Criterion, TaskSpec

STANCES: tuple[str, ...] = ("strict", "balanced", "lenient", "rubric")
"""Candidate wordings, in the order ``--n`` takes them."""
TEMPLATE_OF = {
    "strict": "criterion-json-strict@1",
    "balanced": BALANCED,
    "lenient": "criterion-json-lenient@1",
}
MOVED_TO_FIELDS = ("api", "base_url", "api_key_env", "provider")
"""Parameters a judge file writes as profile fields rather than under ``params``."""


def rubric_rule(criterion: Criterion) -> str:
    """The rubric wording's extra rule: the task's own text for the criterion, quoted as data."""
    parts = [
        f"- Judge this criterion exactly as the task's acceptance table writes it: \""
        f'{criterion.question.strip()}" ({criterion.kind.value}).'
    ]
    if criterion.states:
        quoted = "; ".join(f'"{s}"' for s in criterion.states)
        parts.append(f"  The task's prompt states it in these words: {quoted}.")
    if criterion.not_applicable_when:
        parts.append(f"  It does not apply when: {criterion.not_applicable_when.strip()}.")
    parts.append(
        '  Answer "pass" only when the frames show every part of that text, "fail" when they '
        'show a part of it is not met, "uncertain" when they do not show enough.'
    )
    return "\n".join(parts)


def rubric_template(criterion: Criterion) -> tuple[str, str]:
    """(prompt version, template text) of the rubric wording for one task criterion.

    The version names the criterion and a digest of the text, so another task text is another
    version, never the same one with other words.
    """
    text = template_with_rule(rubric_rule(criterion))
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
    return f"criterion-json-rubric-{criterion.id.lower()}-{digest}@1", text


def _doc_fields(base: JudgeProfile) -> dict[str, Any]:
    """The base profile as judge-file fields (the prompt left out: the candidates set it)."""
    if base.kind != "vision-llm":
        raise InputError(f"candidate judges vary a vision prompt; {base.id} is a {base.kind} judge")
    params = dict(plain(base.params))
    fields: dict[str, Any] = {name: params.pop(name) for name in MOVED_TO_FIELDS if name in params}
    return {"kind": base.kind, "model": base.model, **fields, "params": params}


@dataclass(frozen=True)
class Candidate:
    """One candidate: its wording, the declaration written to the judge file, the profile."""

    stance: str
    doc: ProfileDoc
    profile: JudgeProfile


def free_id(name: str, profile: JudgeProfile, taken: Mapping[str, JudgeProfile]) -> str:
    """``NAME@k``: the version already holding this content, else the first free one."""
    version = 1
    while True:
        ident = f"{name}@{version}"
        held = taken.get(ident)
        if held is None or held.content_hash() == profile.content_hash():
            return ident
        version += 1


def candidates(
    base: JudgeProfile,
    task: TaskSpec,
    criterion_id: str,
    n: int,
    *,
    prefix: str,
    taken: Iterable[JudgeProfile] = (),
) -> list[Candidate]:
    """The first ``n`` wordings of :data:`STANCES` as profiles named ``PREFIX-STANCE@k``."""
    if not 1 <= n <= len(STANCES):
        raise InputError(f"--n must be 1 to {len(STANCES)} (wordings: {', '.join(STANCES)})")
    criterion = next((c for c in task.criteria if c.id == criterion_id), None)
    if criterion is None:
        known = ", ".join(c.id for c in task.criteria)
        raise InputError(f"{task.ref} has no criterion {criterion_id!r} ({known})")
    fields = _doc_fields(base)
    registered = {p.id: p for p in taken}
    out = []
    for stance in STANCES[:n]:
        if stance == "rubric":
            version, text = rubric_template(criterion)
            prompt: dict[str, Any] = {"prompt_version": version, "prompt_template": text}
        else:
            prompt = {"prompt_version": TEMPLATE_OF[stance]}
        description = f"candidate ({stance} wording) for {task.ref} {criterion.id}, from {base.id}"
        draft = ProfileDoc(id=f"{prefix}-{stance}@1", **fields, **prompt, description=description)
        profile = build_profile(draft, f"candidate {stance}")
        ident = free_id(f"{prefix}-{stance}", profile, registered)
        doc = draft.model_copy(update={"id": ident})
        out.append(Candidate(stance, doc, build_profile(doc, f"candidate {ident}")))
    return out


def judge_file_text(found: Sequence[Candidate], header: str = "") -> str:
    """The judge file declaring the candidates (YAML, ready for ``regua judges add``)."""
    docs = [c.doc.model_dump(mode="json", exclude_none=True, exclude_defaults=True) for c in found]
    for doc, c in zip(docs, found, strict=True):
        doc["id"], doc["kind"] = c.doc.id, c.doc.kind
    body = yaml.safe_dump({"profiles": docs}, sort_keys=False, allow_unicode=True, width=100)
    return (header + body) if header else body
