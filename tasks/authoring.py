"""Users' own task files: YAML or JSON text into a :class:`TaskSpec`, errors located by line.

Pure: callers read the file; this module only parses text. A YAML syntax error names its line and
column; a field the schema refuses is named by its path (``criteria.1.kind``) and, where the
document has it, the line it is on.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import yaml
from pydantic import ValidationError

from regua.errors import InvalidTaskError
from regua.safe_yaml import compose_yaml, load_yaml_with_nodes
from regua.storable import NotStorableError, check_storable
from tasks.model import TaskSpec

TASK_TEXT_MAX = 20_000
"""The longest string a task document may hold (its prompt included)."""


def parse_document(text: str, source: str) -> tuple[Any, yaml.Node | None]:
    """The data of a YAML (or JSON) text and its node tree (for line numbers).

    Raises :class:`InvalidTaskError` naming the line and column of a syntax error. A text that
    starts with ``{`` is read as JSON (tabs and all), its node tree taken from YAML when it can be.
    """
    if text.lstrip().startswith("{"):
        return _parse_json(text, source)
    try:
        data, node = load_yaml_with_nodes(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "somewhere"
        raise InvalidTaskError(f"{source}: not valid YAML/JSON at {where}: {exc.problem}") from exc
    except yaml.YAMLError as exc:
        raise InvalidTaskError(f"{source}: not valid YAML/JSON: {exc}") from exc
    return data, node


def _parse_json(text: str, source: str) -> tuple[Any, yaml.Node | None]:
    """A JSON document, and its YAML node tree for line numbers (None when YAML cannot read it)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno}, column {exc.colno}"
        raise InvalidTaskError(f"{source}: not valid JSON at {where}: {exc.msg}") from exc
    try:
        node = compose_yaml(text)
    except yaml.YAMLError:
        node = None
    return data, node


def node_line(node: yaml.Node | None, loc: Sequence[int | str]) -> int | None:
    """The 1-based line of the deepest node of ``loc`` found in the document (None: unknown)."""
    line = None if node is None else node.start_mark.line + 1
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            found = [v for k, v in node.value if getattr(k, "value", None) == str(part)]
            if not found:
                return line
            key = next(k for k, v in node.value if v is found[0])
            node, line = found[0], key.start_mark.line + 1
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            if part >= len(node.value):
                return line
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            return line
    return line


def located_errors(exc: ValidationError, node: yaml.Node | None) -> list[str]:
    """One line per validation error: ``field.path (line N): message``."""
    out = []
    for err in exc.errors():
        loc = [p for p in err["loc"] if isinstance(p, int | str)]
        path = ".".join(str(p) for p in loc) or "(document)"
        line = node_line(node, loc)
        where = f" (line {line})" if line is not None else ""
        out.append(f"{path}{where}: {err['msg']}")
    return out


def spec_from_data(data: Any, node: yaml.Node | None, source: str) -> TaskSpec:
    """Validate parsed data into a :class:`TaskSpec`; the error lists every field, located."""
    if not isinstance(data, dict):
        kind = type(data).__name__ if data is not None else "nothing"
        raise InvalidTaskError(
            f"{source}: a task file holds one mapping (id, version, ...), got {kind}"
        )
    try:
        check_storable(data, max_chars=TASK_TEXT_MAX)
    except NotStorableError as exc:
        line = node_line(node, exc.loc)
        where = f" (line {line})" if line is not None else ""
        raise InvalidTaskError(
            f"{source}: invalid task spec:\n  {exc.field or '(document)'}{where}: {exc.problem}"
        ) from None
    try:
        return TaskSpec.model_validate(data)
    except ValidationError as exc:
        lines = located_errors(exc, node)
        raise InvalidTaskError(f"{source}: invalid task spec:\n  " + "\n  ".join(lines)) from exc


def parse_task(text: str, source: str = "<text>") -> TaskSpec:
    """One task document (YAML or JSON text) into a :class:`TaskSpec`, errors located.

    The document is what ``GET /v1/tasks/{ref}`` returns under ``spec`` (export, edit, import).
    """
    data, node = parse_document(text, source)
    return spec_from_data(data, node, source)
