"""The one exception hierarchy of regua.

Every error a user can meet derives from :class:`ReguaError`. Each class says *what kind* of
problem it is; HTTP status codes are attached to these classes only in ``service/``.
"""

from __future__ import annotations

from pathlib import Path


class ReguaError(Exception):
    """Base of every error regua raises on purpose."""


class ConfigurationError(ReguaError):
    """Settings or a profile are missing or inconsistent."""


class NotFoundError(ReguaError):
    """A referenced thing (task, run, artifact, profile, set) does not exist."""


class TaskError(ReguaError):
    """A task spec is invalid or a task reference cannot be resolved."""


class UnknownTaskError(TaskError, NotFoundError):
    """``ID@VERSION`` names no registered task."""

    def __init__(self, ref: str, known: list[str]) -> None:
        """Name the unknown reference and the tasks that are known."""
        self.ref = ref
        self.known = known
        super().__init__(f"unknown task {ref!r}; known tasks: {', '.join(known) or '(none)'}")


class TaskIntegrityError(TaskError):
    """A registered task version changed after it was frozen (content hash mismatch)."""


class InputError(ReguaError):
    """Input given by a user cannot be used (unreadable, binary, wrong shape)."""


class ExtractionError(InputError):
    """No usable SVG could be taken from a raw reply."""


class SandboxError(ReguaError):
    """The sandbox could not start or run a job (machinery failure, never a fail of the work)."""


class SandboxUnavailableError(SandboxError):
    """The sandbox backend is not usable on this machine (binary missing, namespaces refused)."""


class JobTimeoutError(SandboxError):
    """A sandboxed job ran past its wall-clock limit and was killed."""


class WorkerCrashedError(SandboxError):
    """A sandboxed worker died (killed, crashed, out of memory) while holding a job."""


class OutputTooLargeError(SandboxError):
    """A sandboxed job produced more output than the cap allows."""


class RenderError(ReguaError):
    """The renderer failed inside the sandbox."""


class TimingSelfTestError(RenderError):
    """The animation timing self-test failed; the worker refuses to serve."""


class JudgeError(ReguaError):
    """A judge could not produce a verdict (API down, timeout, unparseable reply)."""


class CalibrationError(ReguaError):
    """A calibration set or run is invalid."""


class GateDemotionError(CalibrationError):
    """A calibration would demote a trusted judge on a smaller set than the one that earned it.

    Stored only when asked to replace (``--replace``, ``"replace": true``); the message names
    both sets and their sizes.
    """


class StorageError(ReguaError):
    """The database or artifact store refused an operation."""


class ServiceUnreachableError(ReguaError):
    """No regua service answers at the URL a command was pointed at (the message says why)."""


class ApiError(ReguaError):
    """A regua service answered a client's request with an error (:mod:`regua.client`).

    ``status`` and ``body`` are as received (``body`` decoded from JSON when it was JSON); the
    message names the body's ``detail``.
    """

    def __init__(self, status: int, body: object) -> None:
        """Keep the status and the decoded body."""
        self.status = status
        self.body = body
        detail = body.get("detail") if isinstance(body, dict) else body
        super().__init__(f"HTTP {status}: {detail}")


class ImmutableRecordError(StorageError):
    """An attempt to overwrite something append-only."""


class AuthError(ReguaError):
    """Missing or invalid credentials."""


class PermissionDeniedError(AuthError):
    """Valid credentials, but outside the caller's role."""


class BackpressureError(ReguaError):
    """The queue is full; retry later."""

    def __init__(self, message: str, retry_after_s: int) -> None:
        """Carry the number of seconds the caller should wait before retrying."""
        self.retry_after_s = retry_after_s
        super().__init__(message)


class QueueShareError(BackpressureError):
    """One submitter's unfinished runs already fill its share of the queue; retry later."""


class RateLimitedError(BackpressureError):
    """A token sent more submissions than its rate allows; retry later."""


class BatchTooLargeError(InputError):
    """A batch larger than the queue (or a submitter's share of it) can never be accepted."""


class ArtifactIntegrityError(StorageError):
    """Stored artifact bytes no longer hash to their address (changed or damaged in the store)."""


class InvalidTaskError(TaskError, InputError):
    """A user's task file or template is not a valid task (the field and line are named)."""


class ExperimentFileError(InputError):
    """An experiment file (YAML) is unreadable or breaks its schema (the field is named)."""


class GenerationError(ReguaError):
    """A model provider gave no reply (HTTP error, timeout); the run is ``incomplete``."""


class GenerationSetupError(InputError):
    """A generation cannot be sent as asked (unknown API, API key variable not set)."""


class ModelReplyError(GenerationError):
    """A model asked for a workflow's data (proposals) gave no usable reply (HTTP 502)."""


class PanelNotSeatedError(InputError):
    """An experiment's panel cannot be seated: a judge not configured or not trusted (named)."""


def read_text(path: Path, error: type[ReguaError]) -> str:
    """``path``'s UTF-8 text; a file that cannot be read raises ``error`` naming it and why."""
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise error(f"{path}: cannot read: {exc.strerror or exc}") from exc
