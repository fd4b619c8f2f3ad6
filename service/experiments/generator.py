"""Where an experiment's model outputs come from: the :class:`Generator` protocol and registry.

A generator turns (task version, model parameters, repeats, case keys) into stored runs. Its one
promise is the one resuming needs: a case key it has already generated returns that run's id
without asking the model again. The service's built-in generator is the generation runner
(``service.generation.runner.generate_runs``, the ``generations`` table); a plug-in registers
another one under a name, like judges and panels do.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, NotRequired, Protocol, TypedDict, Unpack

from regua.registry import Registry
from service.experiments.spec import ModelParams
from service.generation.revise import ReviseOptions

if TYPE_CHECKING:
    from service.context import ServiceContext


@dataclass(frozen=True)
class GenerationFacts:
    """What one generation measured (``None``: unknown)."""

    run_id: str
    latency_ms: float | None
    cost_usd: float | None
    timed_out: bool
    prompt_sha256: str | None
    input_tokens: int | None = None
    output_tokens: int | None = None


class CaseOptions(TypedDict):
    """The keyword arguments of :meth:`Generator.generate` (besides task, model and repeats)."""

    token_id: int | None
    prompt: str | None
    """Replaces the task's prompt (a prompt variant)."""
    panel: str | None
    """The judge panel the runs ask for (None: the task's default)."""
    case_keys: Sequence[str]
    on_progress: NotRequired[Callable[[int, int], None] | None]
    revise: NotRequired[ReviseOptions | None]
    """Render-and-revise rounds after each first answer (the returned ids stay the first
    answers'; the rounds are linked to them in ``run_revisions``)."""
    job: NotRequired[str | None]
    """The job the model calls belong to (the experiment): calls sent again count under it."""


class Generator(Protocol):
    """Generates (or finds already generated) runs by case key."""

    name: str

    def generate(
        self,
        ctx: ServiceContext,
        task_ref: str,
        params: ModelParams,
        repeats: int,
        **options: Unpack[CaseOptions],
    ) -> list[str]:
        """The run ids of ``case_keys`` in order; a stored key is never generated again."""
        ...

    def facts(self, ctx: ServiceContext, run_ids: Sequence[str]) -> Mapping[str, GenerationFacts]:
        """What each run's generation measured, by run id."""
        ...

    def check(
        self, ctx: ServiceContext, task_ref: str, params: ModelParams, *, is_admin: bool
    ) -> None:
        """Refuse, before anything is stored, an arm this caller may not or cannot run."""
        ...


GENERATORS: Registry[Generator] = Registry(
    "experiment generator",
    builtins=("service.experiments.builtin",),
    entry_point_group="regua.experiment_generators",
)
"""Generators by name; the generation runner registers ``runner`` (:mod:`.builtin`)."""
DEFAULT = "runner"
"""The generator experiments use unless one is named: the service's generation runner."""


def register_generator(generator: Generator, *, replace: bool = False) -> Generator:
    """Register ``generator`` under its name."""
    return GENERATORS.register(generator.name, generator, replace=replace)


def get_generator(name: str | None = None) -> Generator:
    """The generator named ``name`` (default :data:`DEFAULT`)."""
    return GENERATORS.get(name or DEFAULT)
