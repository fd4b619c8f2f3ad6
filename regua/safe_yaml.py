"""The one YAML loader for every file a user gives regua (tasks, experiments, judges, banks).

``yaml.safe_load`` constructs no objects, but it still expands anchors and aliases: a 125 KB
document whose keys all alias one 100 KB string becomes gigabytes once stored as JSON, and
``[[[[...`` nested a few thousand deep exhausts Python's stack. This loader refuses, before
anything is built:

- a text longer than :data:`MAX_CHARS` characters;
- nesting deeper than :data:`MAX_DEPTH` collections;
- more than :data:`MAX_ALIASES` aliases (``*name``);
- a document whose aliases expand it past :data:`MAX_CHARS` characters of scalars.

Each refusal is a :class:`YamlLimitError`, a ``yaml.MarkedYAMLError``: every caller that turns
YAML syntax errors into its own error (naming the file, line and column) does so for these too.
"""

from __future__ import annotations

from typing import Any

import yaml

__all__ = [
    "MAX_ALIASES",
    "MAX_CHARS",
    "MAX_DEPTH",
    "YamlLimitError",
    "compose_yaml",
    "load_yaml",
    "load_yaml_with_nodes",
]

MAX_CHARS = 2_000_000
"""The longest YAML text read, and the most scalar characters its aliases may expand it to."""
MAX_DEPTH = 64
"""The deepest nesting of mappings and sequences."""
MAX_ALIASES = 64
"""The most aliases one document may use (anchors alone cost nothing)."""


class YamlLimitError(yaml.MarkedYAMLError):
    """A YAML text over one of the loader's limits (the mark names its line and column)."""

    def __init__(self, problem: str, mark: Any = None) -> None:
        """Say which limit was passed, and where."""
        super().__init__(problem=problem, problem_mark=mark)


class _BoundedLoader(yaml.SafeLoader):
    """A safe loader that counts nesting and aliases while it composes the node tree."""

    def __init__(self, stream: str, max_chars: int) -> None:
        super().__init__(stream)
        self.depth = 0
        self.aliases = 0
        self.max_chars = max_chars

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        """Compose one node, refusing one alias or nesting level too many."""
        event = self.peek_event()  # type: ignore[no-untyped-call]
        if isinstance(event, yaml.AliasEvent):
            self.aliases += 1
            if self.aliases > MAX_ALIASES:
                raise YamlLimitError(
                    f"more than {MAX_ALIASES} aliases (*{event.anchor}); write the values out",
                    event.start_mark,
                )
        elif isinstance(event, yaml.CollectionStartEvent):
            if self.depth >= MAX_DEPTH:
                raise YamlLimitError(f"nested more than {MAX_DEPTH} deep", event.start_mark)
            self.depth += 1
            try:
                return super().compose_node(parent, index)
            finally:
                self.depth -= 1
        return super().compose_node(parent, index)


def _expanded_chars(node: yaml.Node, memo: dict[int, int]) -> int:
    """Scalar characters of ``node`` with every alias written out (linear in the node graph)."""
    known = memo.get(id(node))
    if known is not None:
        return known
    if isinstance(node, yaml.ScalarNode):
        size = len(str(node.value)) + 1
    elif isinstance(node, yaml.SequenceNode):
        size = 1 + sum(_expanded_chars(child, memo) for child in node.value)
    else:
        size = 1 + sum(_expanded_chars(k, memo) + _expanded_chars(v, memo) for k, v in node.value)
    memo[id(node)] = size
    return size


def _compose(text: str, max_chars: int) -> tuple[_BoundedLoader, yaml.Node | None]:
    if len(text) > max_chars:
        raise YamlLimitError(f"the text is {len(text)} characters (at most {max_chars})")
    loader = _BoundedLoader(text, max_chars)
    try:
        node = loader.get_single_node()
    except RecursionError as exc:  # pragma: no cover - the depth limit comes first
        raise YamlLimitError(f"nested more than {MAX_DEPTH} deep") from exc
    if node is not None and loader.aliases:
        size = _expanded_chars(node, {})
        if size > max_chars:
            raise YamlLimitError(
                f"its aliases expand it to {size} characters (at most {max_chars}); "
                "write the values out",
                node.start_mark,
            )
    return loader, node


def compose_yaml(text: str, *, max_chars: int = MAX_CHARS) -> yaml.Node | None:
    """The node tree of one YAML document (for line numbers), within the loader's limits."""
    loader, node = _compose(text, max_chars)
    loader.dispose()
    return node


def load_yaml_with_nodes(text: str, *, max_chars: int = MAX_CHARS) -> tuple[Any, yaml.Node | None]:
    """The data of one YAML document and its node tree, within the loader's limits.

    Raises :class:`YamlLimitError` (a ``yaml.MarkedYAMLError``) over a limit, and PyYAML's own
    errors for a text that is not YAML.
    """
    loader, node = _compose(text, max_chars)
    try:
        data = None if node is None else loader.construct_document(node)
    finally:
        loader.dispose()
    return data, node


def load_yaml(text: str, *, max_chars: int = MAX_CHARS) -> Any:
    """The data of one YAML document, within the loader's limits (see the module)."""
    return load_yaml_with_nodes(text, max_chars=max_chars)[0]
