"""Task templates: declared dimensions and a spec body with ``{placeholders}`` → frozen variants.

A template file (YAML or JSON)::

    template: birds-on-vehicles        # the template's id, recorded in every variant
    dimensions:                        # name -> the values it takes
      subject: [pelican, heron]
      vehicle: [bicycle, skateboard]
    variants: all                      # every combination (default), or a list of mappings
    weights: {vehicle: {bicycle: 0.7, skateboard: 0.3}}  # optional: shares for proposals
    spec:                              # a task spec; "{subject}" etc. are replaced in every text
      id: "{subject}-{vehicle}"
      family: birds-on-vehicles
      prompt: "Draw an SVG of a {subject} riding a {vehicle}."
      ...

Each variant is its own task version with ``template`` and ``dimensions`` recorded in it, so
reports can weigh by family and slice by any dimension. Pure: no I/O.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping
from typing import Any

import yaml

from regua.errors import InvalidTaskError
from tasks.authoring import node_line, parse_document, spec_from_data
from tasks.model import TaskSpec

PLACEHOLDER = re.compile(r"\{([a-z][a-z0-9_]*)\}")
NAME = re.compile(r"^[a-z][a-z0-9_]*$")


def _child(node: yaml.Node | None, key: str) -> yaml.Node | None:
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            if getattr(k, "value", None) == key and isinstance(v, yaml.Node):
                return v
    return None


def _dimensions(raw: Any, source: str) -> dict[str, list[str]]:
    """The declared dimensions: names to non-empty lists of distinct text values."""
    if not isinstance(raw, dict) or not raw:
        raise InvalidTaskError(f"{source}: dimensions: declare at least one name: [values, ...]")
    out: dict[str, list[str]] = {}
    for name, values in raw.items():
        if not isinstance(name, str) or not NAME.match(name):
            raise InvalidTaskError(f"{source}: dimensions.{name}: names look like 'vehicle'")
        if not isinstance(values, list) or not values:
            raise InvalidTaskError(f"{source}: dimensions.{name}: give a list of values")
        texts = [str(v) for v in values]
        if len(set(texts)) != len(texts):
            raise InvalidTaskError(f"{source}: dimensions.{name}: values repeat: {texts}")
        out[name] = texts
    return out


def _combinations(raw: Any, dims: dict[str, list[str]], source: str) -> list[dict[str, str]]:
    """Every combination (``all``), or the declared list checked against the dimensions."""
    if raw is None or raw == "all":
        names = list(dims)
        return [dict(zip(names, combo, strict=True)) for combo in itertools.product(*dims.values())]
    if not isinstance(raw, list) or not raw:
        raise InvalidTaskError(f"{source}: variants: 'all' or a list of {{name: value}} mappings")
    out = []
    for i, entry in enumerate(raw):
        if not isinstance(entry, dict) or set(entry) != set(dims):
            raise InvalidTaskError(
                f"{source}: variants.{i}: give a value for each of {', '.join(dims)}"
            )
        combo = {str(k): str(v) for k, v in entry.items()}
        for name, value in combo.items():
            if value not in dims[name]:
                raise InvalidTaskError(
                    f"{source}: variants.{i}.{name}: {value!r} is not one of {dims[name]}"
                )
        out.append(combo)
    return out


def fill(value: Any, combo: Mapping[str, str], where: str = "spec") -> Any:
    """``value`` with every ``{name}`` in its texts replaced; an undeclared name is refused."""
    if isinstance(value, str):

        def sub(m: re.Match[str]) -> str:
            if m.group(1) not in combo:
                raise InvalidTaskError(
                    f"{where}: {{{m.group(1)}}} is not a declared dimension "
                    f"(declared: {', '.join(combo)})"
                )
            return combo[m.group(1)]

        return PLACEHOLDER.sub(sub, value)
    if isinstance(value, dict):
        return {k: fill(v, combo, f"{where}.{k}") for k, v in value.items()}
    if isinstance(value, list):
        return [fill(v, combo, f"{where}.{i}") for i, v in enumerate(value)]
    return value


def template_document(text: str, source: str) -> tuple[dict[str, Any], Any, str]:
    """A template text's mapping, its YAML node and its ``template`` id, its keys checked.

    Raises :class:`InvalidTaskError` naming the source for a text that is not a template or has
    keys a template does not take.
    """
    data, node = parse_document(text, source)
    if not isinstance(data, dict) or not isinstance(data.get("spec"), dict):
        raise InvalidTaskError(f"{source}: a template needs 'template', 'dimensions' and 'spec'")
    unknown = set(data) - {"template", "dimensions", "variants", "spec", "weights"}
    if unknown:
        raise InvalidTaskError(f"{source}: unknown template keys: {', '.join(sorted(unknown))}")
    name = data.get("template")
    if not isinstance(name, str) or not name:
        raise InvalidTaskError(f"{source}: template: give the template's id (text)")
    return data, node, name


def expand_template(text: str, source: str = "<template>") -> list[TaskSpec]:
    """Every variant of a template text, validated, in declaration order.

    Raises :class:`InvalidTaskError` naming the field (and line) of a bad template, an undeclared
    placeholder, or two variants that would share one ``ID@VERSION``.
    """
    data, node, name = template_document(text, source)
    dims = _dimensions(data.get("dimensions"), source)
    body, body_node = data["spec"], _child(node, "spec")
    seen: dict[str, dict[str, str]] = {}
    out = []
    for combo in _combinations(data.get("variants"), dims, source):
        filled = fill(body, combo) | {"template": name, "dimensions": combo}
        label = f"{source} [{', '.join(f'{k}={v}' for k, v in combo.items())}]"
        spec = spec_from_data(filled, body_node, label)
        if spec.ref in seen:
            raise InvalidTaskError(
                f"{source}: variants {seen[spec.ref]} and {combo} are both {spec.ref}; put "
                f"the dimensions in spec.id (line {node_line(body_node, ['id'])})"
            )
        seen[spec.ref] = combo
        out.append(spec)
    return out
