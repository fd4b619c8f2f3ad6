"""The ``regua`` command line. Each area registers its commands from its own module.

Errors a user can fix end a command with one ``error: ...`` line and exit status 2, through one
hook (:class:`service.cli.errors.ReguaGroup`); commands do not catch them one by one.
"""

from __future__ import annotations

import typer

from service.cli import (
    bundle_cmd,
    calibrate_cmd,
    check_cmd,
    doctor_cmd,
    experiment_cmd,
    gate_cmd,
    generate_cmd,
    judge_cmd,
    judges_cmd,
    judges_propose_cmd,
    labels_cmd,
    pairwise_cmd,
    proposals_cmd,
    render_cmd,
    report_cmd,
    rescore_cmd,
    review_cmd,
    service_cmd,
    task_files_cmd,
    tasks_cmd,
    token_cmd,
)
from service.cli.errors import ReguaGroup

app = typer.Typer(
    name="regua",
    cls=ReguaGroup,
    help="Sandboxed, evidence-first evaluation of SVG drawings produced by language models.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.callback()(judges_cmd.load_judges_folder)

for _module in (
    tasks_cmd,
    check_cmd,
    render_cmd,
    judge_cmd,
    judges_cmd,
    judges_propose_cmd,
    service_cmd,
    token_cmd,
    calibrate_cmd,
    gate_cmd,
    rescore_cmd,
    review_cmd,
    labels_cmd,
    report_cmd,
    doctor_cmd,
    pairwise_cmd,
    task_files_cmd,
    proposals_cmd,
    experiment_cmd,
    generate_cmd,
    bundle_cmd,
):
    _module.register(app)


def main() -> None:
    """Entry point of the ``regua`` console script."""
    app()
