"""The built-in generator: the service's generation runner (``generate_runs``, ``generations``).

Registered as ``runner`` (the default) when this module is imported, as plug-ins register.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Unpack

from sqlalchemy import select

from service.experiments.generator import CaseOptions, GenerationFacts, register_generator
from service.experiments.spec import ModelParams
from service.generation.policy import check_allowed
from service.generation.request import GenerationParams
from service.generation.revise import generate_and_revise
from service.generation.runner import RunOptions, check_generation, generate_runs
from service.storage import GenerationRow

if TYPE_CHECKING:
    from service.context import ServiceContext


def _params(params: ModelParams) -> GenerationParams:
    return GenerationParams(**params.model_dump())


class RunnerGenerator:
    """Generates through :func:`service.generation.runner.generate_runs` (providers, mock)."""

    name = "runner"

    def generate(
        self,
        ctx: ServiceContext,
        task_ref: str,
        params: ModelParams,
        repeats: int,
        **options: Unpack[CaseOptions],
    ) -> list[str]:
        """Call the model for the case keys not generated yet (see ``generate_runs``).

        With ``revise``, each first answer's revision rounds follow (a chain stored in part
        continues from its last round); the first answers' run ids are returned.
        """
        gen, revise = _params(params), options.get("revise")
        run: RunOptions = {
            "token_id": options["token_id"],
            "prompt": options["prompt"],
            "panel": options["panel"],
            "case_keys": options["case_keys"],
            "on_progress": options.get("on_progress"),
            "job": options.get("job"),
        }
        if revise is None:
            return generate_runs(ctx, task_ref, gen, repeats, **run)
        chains = generate_and_revise(ctx, task_ref, gen, repeats, revise, **run)
        return [c.first_run_id for c in chains]

    def check(
        self, ctx: ServiceContext, task_ref: str, params: ModelParams, *, is_admin: bool
    ) -> None:
        """Apply the generation endpoint's rules to an arm.

        A key variable goes only to the endpoints it is bound to, a submitter's base URL and
        key variable must be on the service's allow-lists (403); the API must be known and an
        admin's key variable set (422).
        """
        gen = _params(params)
        check_allowed(ctx.settings, gen, is_admin=is_admin)
        check_generation(ctx, task_ref, gen)

    def facts(self, ctx: ServiceContext, run_ids: Sequence[str]) -> Mapping[str, GenerationFacts]:
        """Latency, cost, timeout, prompt hash and tokens from each run's ``generations`` row."""
        with ctx.db.read() as s:
            rows = s.scalars(select(GenerationRow).where(GenerationRow.run_id.in_(list(run_ids))))
            return {
                r.run_id: GenerationFacts(
                    r.run_id,
                    r.latency_ms,
                    r.cost_usd,
                    r.timed_out,
                    r.prompt_sha256,
                    r.input_tokens,
                    r.output_tokens,
                )
                for r in rows
            }


RUNNER = register_generator(RunnerGenerator())
