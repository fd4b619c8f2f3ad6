"""``judges.evaluate``: the one function that turns a run's evidence into verdicts and an outcome.

It seats the panel's judges (each under the identity it votes and is calibrated under), asks
every one of them about each applicable criterion it answers, then lets the jury decide each
criterion and the run (:mod:`judges.jury`). Re-scoring calls it with another panel; review calls
it with the previous evaluation's answers and the people's verdicts.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

from judges.adjudication import adjudicate_all
from judges.adjudication_record import Adjudication
from judges.base import Judge, JudgeRegistry
from judges.default_registry import registry
from judges.graded_jury import LevelStatus
from judges.inputs import EvalInput
from judges.jury import (
    Eligibility,
    broken_rules,
    decide_criterion,
    decide_outcome,
    is_eligible,
    needs_recognition,
    recognises,
)
from judges.model import (
    CriterionOutcome,
    JudgeAnswers,
    JudgeFailure,
    JudgeProfile,
    Outcome,
    PanelRecord,
    PanelResult,
    SeatedJudge,
    Verdict,
)
from judges.panel import JudgePanel
from judges.rubric_score import RubricScore, score_rubric
from regua.settings import Settings
from tasks import Criterion, TaskSpec


def seat_panel(
    panel: JudgePanel,
    settings: Settings | None = None,
    judge_registry: JudgeRegistry | None = None,
) -> dict[str, Judge]:
    """Instantiate the panel's judges, keyed by the profile id the panel names.

    A judge may complete its profile (a vision judge takes its model from settings) and then
    votes under that effective profile: ``judge.profile`` is its identity.
    """
    reg = judge_registry or registry()
    return {pid: reg.create(pid, settings) for pid in panel.profile_ids()}


def panel_record(panel: JudgePanel, seated: Mapping[str, Judge]) -> PanelRecord:
    """The panel as recorded on an evaluation, with the identity of every seated judge."""
    return PanelRecord(
        id=panel.id,
        family=panel.family,
        assignments=dict(panel.assignments),
        content_hash=panel.content_hash(),
        judges=tuple(
            SeatedJudge(pid, j.profile.id, j.profile.content_hash(), j.profile.kind)
            for pid, j in sorted(seated.items())
        ),
        adjudicator=panel.adjudicator,
    )


def judge_provider(profile: JudgeProfile) -> str | None:
    """The provider a judge profile declares (``params.provider``), lower-cased, or None."""
    value = profile.params.get("provider")
    return str(value).strip().lower() or None if value else None


def excluded_judges(
    inp: EvalInput, panel: JudgePanel, seated: Mapping[str, Judge]
) -> frozenset[str]:
    """Panel profile ids kept off this run because they share the work's provider.

    Only when the panel says so (``exclude_own_provider``) and the run names its provider.
    """
    if not panel.exclude_own_provider or not inp.provider:
        return frozenset()
    own = inp.provider.strip().lower()
    return frozenset(pid for pid, j in seated.items() if judge_provider(j.profile) == own)


def ask_judges(inp: EvalInput, panel: JudgePanel, seated: Mapping[str, Judge]) -> JudgeAnswers:
    """Every seated judge's answer on each applicable criterion it answers.

    A judge that raises is recorded as a :class:`JudgeFailure` with cause ``judge_crashed``;
    nothing here raises for a judge's sake. A judge returning ``None`` abstains. A judge of the
    work's own provider is not asked when the panel excludes it (:func:`excluded_judges`).
    """
    verdicts: list[Verdict] = []
    failures: list[JudgeFailure] = []
    skip = excluded_judges(inp, panel, seated)
    for criterion in inp.task.criteria:
        if not criterion.applicable:
            continue
        judge_input = inp.for_criterion(criterion)
        for pid in panel.profiles_for(criterion.id):
            if pid in skip:
                continue
            judge = seated[pid]
            if not judge.answers(inp.task, criterion):
                continue
            started = time.perf_counter()
            try:
                result = judge.judge(judge_input)
            except Exception as exc:  # a broken judge is a judge failure, never a verdict
                ms = (time.perf_counter() - started) * 1000.0
                detail = f"{type(exc).__name__}: {exc}"
                result = JudgeFailure(criterion.id, judge.profile.id, "judge_crashed", detail, ms)
            if isinstance(result, Verdict):
                verdicts.append(result)
            elif isinstance(result, JudgeFailure):
                failures.append(result)
    return JudgeAnswers(tuple(verdicts), tuple(failures))


def evaluate(
    inp: EvalInput,
    panel: JudgePanel,
    eligibility: Eligibility = None,
    human_verdicts: Sequence[Verdict] = (),
    *,
    settings: Settings | None = None,
    judge_registry: JudgeRegistry | None = None,
    answers: JudgeAnswers | None = None,
    seated: Mapping[str, Judge] | None = None,
) -> PanelResult:
    """Judge one run with ``panel`` and decide every criterion and the outcome.

    Args:
        inp: the run's evidence (checks, render log, frames, masks, measurement memo).
        panel: which judge profiles are asked about which criteria.
        eligibility: who earned a vote (see :data:`judges.jury.Eligibility`).
        human_verdicts: people's verdicts (kind ``human``); they decide their criteria.
        settings: endpoints, models and keys for judges that need them.
        judge_registry: where profiles and kinds are looked up (the process-wide one by
            default).
        answers: the judges' answers to reuse instead of asking them again (review builds on
            the previous evaluation this way); the jury and the outcome rule still apply.
        seated: judges already instantiated by :func:`seat_panel` (re-scoring seats them once
            for many runs).

    Returns:
        The verdicts (humans' included), judge failures, criterion outcomes and the outcome.
    """
    judges = seated if seated is not None else seat_panel(panel, settings, judge_registry)
    reusing = answers is not None
    if answers is None:
        answers = ask_judges(inp, panel, judges)
    else:
        answers = _without(
            answers, {judges[p].profile.id for p in excluded_judges(inp, panel, judges)}
        )
    profiles = _voting_profiles(judges, answers, human_verdicts)
    outcomes = [
        _decide(inp, criterion, answers, human_verdicts, profiles, eligibility, panel)
        for criterion in inp.task.criteria
    ]
    outcomes, adjudications = _adjudicate(
        inp, panel, judges, answers, outcomes, eligibility, reuse=reusing
    )
    rubric = score_rubric(inp.task, {c.criterion: c.level for c in outcomes})
    outcome = _outcome(inp, outcomes, rubric)
    return PanelResult(
        task_ref=inp.task.ref,
        panel=panel_record(panel, judges),
        verdicts=answers.verdicts + tuple(human_verdicts),
        failures=answers.failures,
        criteria=tuple(outcomes),
        outcome=outcome,
        adjudications=tuple(adjudications),
        rubric=rubric,
    )


def _outcome(
    inp: EvalInput, outcomes: Sequence[CriterionOutcome], rubric: RubricScore | None
) -> Outcome:
    return decide_outcome(
        outcomes,
        broken_rules=broken_rules(inp.checks, inp.render),
        machinery_failure=inp.machinery_failure(),
        rubric=rubric,
    )


def _adjudicate(
    inp: EvalInput,
    panel: JudgePanel,
    seated: Mapping[str, Judge],
    answers: JudgeAnswers,
    outcomes: list[CriterionOutcome],
    eligibility: Eligibility,
    *,
    reuse: bool,
) -> tuple[list[CriterionOutcome], list[Adjudication]]:
    """Disputed criteria settled by the panel's adjudicator (:mod:`judges.adjudication`)."""
    if panel.adjudicator is None:
        return outcomes, []
    judge = seated.get(panel.adjudicator)
    if judge is None or panel.adjudicator in excluded_judges(inp, panel, seated):
        return outcomes, []
    profile = judge.profile

    def trusted(criterion_id: str) -> bool:
        return is_eligible(eligibility, profile, criterion_id, inp.task.family)

    return adjudicate_all(
        inp.for_criterion,
        inp.task.criteria,
        outcomes,
        answers.verdicts,
        judge=None if reuse else judge,
        trusted=trusted,
        rule=panel.disagreement,
        level_status=lambda cid: _level_status(inp.task, cid),
        reused={a.criterion: a for a in answers.adjudications} if reuse else None,
    )


def _level_status(task: TaskSpec, criterion_id: str) -> LevelStatus:
    def status_of(level: int) -> str:
        return task.level_status(criterion_id, level)

    return status_of


def _without(answers: JudgeAnswers, judge_ids: set[str]) -> JudgeAnswers:
    """Reused answers minus those of judges kept off this run."""
    if not judge_ids:
        return answers
    return JudgeAnswers(
        tuple(v for v in answers.verdicts if v.judge_profile_id not in judge_ids),
        tuple(f for f in answers.failures if f.judge_profile_id not in judge_ids),
        tuple(a for a in answers.adjudications if a.adjudicator_id not in judge_ids),
    )


def _voting_profiles(
    seated: Mapping[str, Judge], answers: JudgeAnswers, humans: Sequence[Verdict]
) -> dict[str, JudgeProfile]:
    """The profile behind every id that answered.

    Covers seated judges, people, and (for reused answers) judges no longer on the panel, which
    are known by id only.
    """
    profiles = {j.profile.id: j.profile for j in seated.values()}
    for h in humans:
        profiles.setdefault(h.judge_profile_id, JudgeProfile(h.judge_profile_id, "human"))
    for pid in {v.judge_profile_id for v in answers.verdicts} | {
        f.judge_profile_id for f in answers.failures
    }:
        profiles.setdefault(pid, JudgeProfile(pid, "unknown"))
    return profiles


def _decide(
    inp: EvalInput,
    criterion: Criterion,
    answers: JudgeAnswers,
    humans: Sequence[Verdict],
    profiles: Mapping[str, JudgeProfile],
    eligibility: Eligibility,
    panel: JudgePanel,
) -> CriterionOutcome:
    def eligible(pid: str) -> bool:
        return is_eligible(eligibility, profiles[pid], criterion.id, inp.task.family)

    def recognising(pid: str) -> bool:
        return recognises(profiles[pid])

    return decide_criterion(
        criterion,
        [v for v in answers.verdicts if v.criterion == criterion.id],
        [f for f in answers.failures if f.criterion == criterion.id],
        eligible,
        humans=[h for h in humans if h.criterion == criterion.id],
        recognising=recognising if needs_recognition(criterion) else None,
        rule=panel.disagreement,
        level_status=_level_status(inp.task, criterion.id),
        max_level_spread=panel.max_level_spread,
    )
