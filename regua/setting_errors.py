"""How settings read from the environment are parsed and how a bad one is reported.

A list setting accepts a JSON list (``["a", "b"]``) or comma-separated items (``a,b``; blanks
around items are dropped). A setting that does not parse is reported in one line naming the
environment variable, the value it had and the form it expects, e.g.
``REGUA_PORT='eighty': expected a whole number``; several bad settings give several lines.
"""

from __future__ import annotations

import json
import os
import types
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails
from pydantic_settings import SettingsConfigDict

from regua.errors import ConfigurationError

MAX_SHOWN = 80
"""Longest value echoed back in an error line (longer values are cut)."""

_FORMS: Mapping[type, str] = {
    bool: "true or false",
    int: "a whole number",
    float: "a number",
    Path: "a path",
    str: "text",
}


_BOUNDS = (("gt", "greater than"), ("ge", "at least"), ("lt", "less than"), ("le", "at most"))
"""Bound attributes of pydantic's field constraints (``annotated_types``) and their words."""


def split_list(text: str) -> list[Any] | str:
    """The items of a list setting given as text: a JSON list, or comma-separated items.

    Text that starts like JSON but is not a JSON list is returned as it is, so validation
    reports it as not a list.
    """
    stripped = text.strip()
    if stripped.startswith("["):
        try:
            items = json.loads(stripped)
        except json.JSONDecodeError:
            return text
        return items if isinstance(items, list) else text
    return [item.strip() for item in stripped.split(",") if item.strip()]


def expected_form(field: FieldInfo) -> str:
    """The form a setting's value must have, in words (type, choices and bounds)."""
    return _form_of(field.annotation) + _bounds(field)


def _form_of(annotation: Any) -> str:
    origin = get_origin(annotation)
    if origin is Literal:
        return "one of " + ", ".join(str(a) for a in get_args(annotation))
    if origin is list:
        return "a comma-separated list (a,b) or a JSON list"
    if origin in (Union, types.UnionType):
        forms = [_form_of(a) for a in get_args(annotation) if a is not type(None)]
        return " or ".join(forms) + " (or unset)"
    return _FORMS.get(annotation, getattr(annotation, "__name__", str(annotation)))


def _bounds(field: FieldInfo) -> str:
    words = [
        f"{phrase} {getattr(rule, attr)}"
        for rule in field.metadata
        for attr, phrase in _BOUNDS
        if getattr(rule, attr, None) is not None
    ]
    return (" " + " and ".join(words)) if words else ""


def settings_error(
    exc: ValidationError, fields: Mapping[str, FieldInfo], config: SettingsConfigDict
) -> ConfigurationError:
    """One line per setting that did not parse: variable, value and the form it expects."""
    prefix = str(config.get("env_prefix") or "")
    lines: dict[str, str] = {}
    for error in exc.errors(include_url=False):
        name = str(error["loc"][0]) if error["loc"] else ""
        field = fields.get(name)
        if field is None or name in lines:
            continue
        variable = f"{prefix}{name}".upper()
        shown = _shown(os.environ.get(variable, error.get("input")), secret=not field.repr)
        lines[name] = f"{variable}={shown}: {_expected(error, field)}"
    if not lines:
        return ConfigurationError(f"invalid settings: {exc.error_count()} error(s)")
    return ConfigurationError("\n".join(lines.values()))


def _expected(error: ErrorDetails, field: FieldInfo) -> str:
    """What the setting must be: a validator's own words, else the field's type and bounds."""
    if error["type"] == "value_error":
        return str(error.get("ctx", {}).get("error", error["msg"]))
    return f"expected {expected_form(field)}"


def _shown(value: Any, *, secret: bool) -> str:
    if secret:
        return "(hidden)"
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    if len(text) > MAX_SHOWN:
        text = text[:MAX_SHOWN] + "…"
    return repr(text)
